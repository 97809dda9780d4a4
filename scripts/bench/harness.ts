// What the benchmark scripts share: processes, autocannon rounds interleaved across targets, and
// the medians they report.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { Redis } from 'ioredis';

export interface Row {
  k: string;
  target: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  commandsPerRequest: number | undefined;
  bytes: number;
  /** CPU time per completed request, in µs: the target's process, Redis, the load generator. */
  cpu: CpuPerRequest;
}

export interface CpuPerRequest {
  server: number | undefined;
  redis: number | undefined;
  load: number;
}

export function log(message: string) {
  process.stderr.write(`${message}\n`);
}

export async function waitForHttp(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(url)).status < 500) return;
    } catch {
      // not yet listening
    }
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${url} did not come up`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function startProcess(command: string[], env: Record<string, string>, probe: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, command, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  return waitForHttp(probe, child).then(() => child);
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU time a process has used so far (user + system, all its threads), in ms, from /proc (Linux);
 * undefined elsewhere. Requests per second on a machine whose cores the load generator, Redis and
 * the server share move with whatever else runs; CPU time per request is what a fleet pays.
 */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** The process id of the Redis `admin` talks to, when it runs on this machine (else undefined). */
export async function localRedisPid(admin: Redis): Promise<number | undefined> {
  const pid = Number(/^process_id:(\d+)/m.exec(await admin.info('server'))?.[1]);
  return Number.isInteger(pid) && processCpuMs(pid) !== undefined ? pid : undefined;
}

/** Peak resident set size of a process, from /proc (Linux). */
export function peakRssMiB(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Commands Redis has run (INFO commandstats), but the INFO and CONFIG the harness sends itself. */
export async function totalCommands(admin: Redis): Promise<number> {
  const info = await admin.info('commandstats');
  let total = 0;
  for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (name !== 'info' && !name?.startsWith('config')) total += Number(calls);
  }
  return total;
}

export interface Target {
  name: string;
  url: string;
  /** A new request per call: path (and body for POST). */
  next: () => { path: string; method?: 'GET' | 'POST'; body?: string };
  /** Reads a running count of the store commands this target causes; absent: not counted. */
  commands?: () => Promise<number>;
  /** The server's process, for its CPU time per request (absent: not measured). */
  pid?: number;
  /** Redis' process, for its CPU time per request (absent: not measured). */
  redisPid?: number;
}

export interface Round {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  completed: number;
  commands: number;
  bytes: number;
  cpuMs: { server: number | undefined; redis: number | undefined; load: number };
}

/** One measured round of one target (after a short warm-up on the first). */
/** How long and how hard: autocannon's connections, the measured seconds per target, in rounds. */
export interface LoadSettings {
  connections: number;
  duration: number;
  rounds: number;
  /** Seconds of load before a target's first round (default 2): its caches filled, as in a service that has run a while. */
  warmUpSeconds?: number;
}

async function measureRound(target: Target, { connections, warmUpSeconds = 2 }: LoadSettings, seconds: number, warmUp: boolean): Promise<Round> {
  const requests = [
    {
      setupRequest: (request: { path: string; method?: string; body?: string; headers?: Record<string, string> }) => {
        const next = target.next();
        request.path = next.path;
        request.method = next.method ?? 'GET';
        if (next.body !== undefined) {
          request.body = next.body;
          request.headers = { 'content-type': 'application/json' };
        }
        return request;
      },
    },
  ];
  if (warmUp) await autocannon({ url: target.url, connections, duration: warmUpSeconds, requests: requests as never });
  const before = (await target.commands?.()) ?? 0;
  const serverBefore = processCpuMs(target.pid);
  const redisBefore = processCpuMs(target.redisPid);
  const loadBefore = process.cpuUsage();
  const result = await autocannon({ url: target.url, connections, duration: seconds, requests: requests as never });
  const load = process.cpuUsage(loadBefore);
  const serverAfter = processCpuMs(target.pid);
  const redisAfter = processCpuMs(target.redisPid);
  const after = (await target.commands?.()) ?? 0;
  const spent = (from: number | undefined, to: number | undefined) => (from === undefined || to === undefined ? undefined : to - from);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    completed: result.requests.total,
    commands: after - before,
    bytes: result.throughput.total,
    cpuMs: { server: spent(serverBefore, serverAfter), redis: spent(redisBefore, redisAfter), load: (load.user + load.system) / 1000 },
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * The targets of one group measured in interleaved rounds (A, B, C, A, B, C, …), each row the median
 * of its rounds: this machine's speed drifts over minutes, and interleaving lets every target see the
 * same drift, so the ratios hold even when the absolute figures move.
 */
export async function measureInterleaved(targets: Target[], k: string, settings: LoadSettings): Promise<Row[]> {
  const { rounds, duration } = settings;
  const results = targets.map(() => [] as Round[]);
  for (let round = 0; round < rounds; round++) {
    for (const [index, target] of targets.entries()) {
      results[index]?.push(await measureRound(target, settings, duration / rounds, round === 0));
    }
  }
  return targets.map((target, index) => {
    const measured = results[index] ?? [];
    const completed = measured.reduce((sum, round) => sum + round.completed, 0);
    const row: Row = {
      k,
      target: target.name,
      rps: median(measured.map((round) => round.rps)),
      p50: median(measured.map((round) => round.p50)),
      p99: median(measured.map((round) => round.p99)),
      errors: measured.reduce((sum, round) => sum + round.errors, 0),
      commandsPerRequest:
        target.commands && completed > 0 ? measured.reduce((sum, round) => sum + round.commands, 0) / completed : undefined,
      bytes: completed > 0 ? measured.reduce((sum, round) => sum + round.bytes, 0) / completed : 0,
      cpu: cpuPerRequest(measured, completed),
    };
    log(
      `  ${target.name.padEnd(32)} ${row.rps.toFixed(0).padStart(7)} req/s (${measured.map((round) => round.rps.toFixed(0)).join(', ')})  p50 ${row.p50} ms  p99 ${row.p99} ms  errors ${row.errors}` +
        (row.commandsPerRequest !== undefined ? `  redis ${row.commandsPerRequest.toFixed(2)}/req` : '') +
        `  CPU µs/req: server ${row.cpu.server?.toFixed(0) ?? '-'}, Redis ${row.cpu.redis?.toFixed(0) ?? '-'}, load ${row.cpu.load.toFixed(0)}`,
    );
    return row;
  });
}

/** CPU µs per completed request over all rounds (a process's total undefined if any round lacks it). */
function cpuPerRequest(measured: Round[], completed: number): CpuPerRequest {
  const perRequest = (pick: (round: Round) => number | undefined) => {
    if (completed === 0 || measured.some((round) => pick(round) === undefined)) return undefined;
    return (measured.reduce((sum, round) => sum + (pick(round) ?? 0), 0) * 1000) / completed;
  };
  return {
    server: perRequest((round) => round.cpuMs.server),
    redis: perRequest((round) => round.cpuMs.redis),
    load: perRequest((round) => round.cpuMs.load) ?? 0,
  };
}

export function cycle<T>(items: readonly T[]): () => T {
  let index = 0;
  return () => items[index++ % items.length] as T;
}


/**
 * Items drawn by a Zipf law of exponent `s` (the item of rank r with weight 1/r^s), ranks given to
 * the items in a shuffled order (seeded: every run and every target asks the same mix). A few items
 * take most requests, as a popular note or person does; `s` = 1.1 is a common fit for web traffic.
 */
export function zipf<T>(items: readonly T[], s: number, seed = 1): () => T {
  let state = seed >>> 0 || 1;
  const random = () => {
    // xorshift32: a fixed, cheap sequence.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const ranked = [...items];
  for (let index = ranked.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [ranked[index], ranked[other]] = [ranked[other] as T, ranked[index] as T];
  }
  const cumulative = new Float64Array(ranked.length);
  let total = 0;
  for (let rank = 0; rank < ranked.length; rank++) cumulative[rank] = total += 1 / (rank + 1) ** s;
  return () => {
    const wanted = random() * total;
    let low = 0;
    let high = ranked.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((cumulative[middle] as number) < wanted) low = middle + 1;
      else high = middle;
    }
    return ranked[low] as T;
  };
}

/**
 * The REST routes' lookups over /graphql (`npm run bench` and profile-lookup.ts post the same), each
 * event asked as `raw` (its JSON object, what REST sends) or `json` (a string).
 */
export function graphqlLookupQueries(field: string): { event: string; profile: string } {
  if (field !== 'raw' && field !== 'json') throw new Error('--graphql-field: raw or json');
  return {
    event: `query ($id: String!) { event(id: $id) { ${field} relevantProfiles { pubkey event { ${field} } } } }`,
    profile: `query ($pubkey: String!) { profile(pubkey: $pubkey) { event { ${field} } } }`,
  };
}
