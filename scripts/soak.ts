// `npm run soak`: minutes of steady mixed load on the built service, per store, watching for what a
// benchmark does not see: memory, handles, file descriptors or stored data that grow with time, and
// latency or errors that creep up.
//
//   npx tsx scripts/soak.ts --minutes 10 --store both --sample-seconds 10 --connections 16
//
// For each store (Redis, then the embedded store) it imports a data set (sample/events.jsonl and a
// generated one) with `node dist/cli/main.js import`, starts `node dist/cli/main.js serve` as a
// child process (LOG_LEVEL=warn; RELAYS is a loopback relay this script runs, holding the sample,
// so that every random-id miss asks it and leaves a miss mark that expires after NEGATIVE_TTL=5 s:
// the marks must come and go, not pile up, on Redis by TTL and on the embedded store by its sweeper;
// --no-relay turns that off), drives it with
// autocannon for --minutes (a hostile client among the others unless --no-hostile: events that cost
// the most to serve, and the requests that ask for them; see makeHostile), and every
// --sample-seconds prints one line:
//
//   elapsed, req/s, p99 latency (of that interval), errors (5xx, other non-2xx/4xx, socket errors and
//   timeouts), unexpected answers (a status other than the one its request must get), the service's
//   RSS (/proc/<pid>/status VmRSS, and RssAnon, the part that is not mapped files such as LMDB's data
//   file; both read right after the probe's GC), its V8 heap after a full GC, its
//   active handles (sockets, servers, pipes…) and active timers, counted apart (see PROBE), its open
//   file descriptors (/proc/<pid>/fd), and the store's size: keys under the run's prefix (SCAN) on
//   Redis, bytes in DATA_DIR on the embedded store.
//
// At the end, one verdict per metric (see `verdict` for the rule) and the exit code: 0 when nothing
// grows, no request failed and the service stopped cleanly on SIGTERM; 1 otherwise.
//
// Redis: REDIS_URL if set, else redis://127.0.0.1:6379; keys go under `soak:<random>:` and are deleted
// afterwards. Embedded: a fresh DATA_DIR in a temporary directory, removed afterwards. Builds dist/
// first if it is missing (`npm run soak` always builds).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Command, InvalidArgumentError, Option } from 'commander';
import { Redis } from 'ioredis';
import { type NostrEvent, serializeEvent } from '../src/nostr/event.js';
import { startLoopbackRelay } from '../test/support/loopback-relay.js';
import { deleteByPrefix, freePort } from '../test/support/redis-server.js';
import { finalizeEvent } from 'nostr-tools/wasm';
import { identity, makeNotes, makeProfiles } from './bench/dataset.js';
import { killGroup, liveGroups } from './support/process-groups.js';

type StoreName = 'redis' | 'embedded';

interface Options {
  minutes: number;
  store: StoreName | 'both';
  sampleSeconds: number;
  connections: number;
  profiles: number;
  notes: number;
  probe: boolean;
  relay: boolean;
  hostile: boolean;
}

function positiveNumber(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new InvalidArgumentError('must be a positive number');
  return parsed;
}

function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new InvalidArgumentError('must be a whole number from 1');
  return parsed;
}

function nonNegativeInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new InvalidArgumentError('must be a whole number from 0');
  return parsed;
}

const options = new Command()
  .name('soak')
  .description('steady mixed load on the built service; reports whether memory, handles or data grow')
  .option('--minutes <n>', 'minutes of load per store', positiveNumber, 10)
  .addOption(new Option('--store <store>', 'which store').choices(['redis', 'embedded', 'both']).default('both'))
  .option('--sample-seconds <s>', 'seconds between samples', positiveNumber, 10)
  .option('--connections <c>', 'concurrent connections of the load generator', positiveInteger, 16)
  .option('--profiles <n>', 'generated profiles imported besides sample/events.jsonl', nonNegativeInteger, 2000)
  .option('--notes <n>', 'generated notes (5 relevant pubkeys each) imported besides the sample', nonNegativeInteger, 4000)
  .option('--no-probe', 'do not preload the heap/handle probe into the service (RSS and fds are still read)')
  .option('--no-relay', 'no loopback relay: misses are answered from the index alone and write nothing')
  .option('--no-hostile', 'no hostile client (events that cost the most to serve, and the requests that ask for them)')
  .parse()
  .opts<Options>();

const root = fileURLToPath(new URL('../', import.meta.url));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const MiB = 1024 * 1024;

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// Cleanup: every child runs in its own process group (detached) and is killed as a group, also when
// this script fails or is interrupted.

const cleanups: (() => Promise<void>)[] = [];
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`\n${signal}: stopping the service and cleaning up`);
    void runCleanups().finally(() => process.exit(130));
  });
}

async function runCleanups(): Promise<void> {
  while (cleanups.length > 0) {
    const cleanup = cleanups.pop();
    try {
      await cleanup?.();
    } catch (error) {
      log(`cleanup failed: ${(error as Error).message}`);
    }
  }
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** SIGTERM to the child's group; SIGKILL after `graceMs`. Resolves with the exit code and the time it took. */
async function stopGroup(child: ChildProcess, graceMs = 15_000): Promise<{ code: number | null; ms: number; forced: boolean }> {
  const pid = child.pid;
  const started = performance.now();
  if (pid === undefined) return { code: child.exitCode, ms: 0, forced: false };
  const exited = exitOf(child);
  killGroup(pid, 'SIGTERM');
  let forced = false;
  const timer = setTimeout(() => {
    forced = true;
    killGroup(pid, 'SIGKILL');
  }, graceMs);
  const code = await exited;
  clearTimeout(timer);
  // Anything the service left in its group goes too.
  killGroup(pid, 'SIGKILL');
  liveGroups.delete(pid);
  return { code, ms: performance.now() - started, forced };
}

function spawnGroup(args: string[], env: Record<string, string>, ipc = false): ChildProcess {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid !== undefined) liveGroups.add(child.pid);
  child.once('exit', () => {
    // The group may outlive its leader only if the leader spawned something; stopGroup handles that.
    if (child.pid !== undefined && child.exitCode !== null) liveGroups.delete(child.pid);
  });
  return child;
}

async function runToEnd(args: string[], env: Record<string, string>): Promise<string> {
  const child = spawnGroup(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const code = await exitOf(child);
  if (code !== 0) throw new Error(`node ${args.join(' ')} exited ${code}:\n${stderr}${stdout}`);
  return stdout;
}

// ---------------------------------------------------------------------------------------------
// The data set.

interface DataSet {
  file: string;
  pubkeys: string[];
  eventIds: string[];
  hostile: Hostile;
}

/**
 * What a hostile client stores and asks for, within what the service accepts: a profile of
 * 60 KB of `{}` (the costliest JSON to parse, just under MAX_PROFILE_BYTES) with 50 notes by its
 * author, notes of 200 KB of invalid `nostr:npub` mentions, and a relay list of 60 KB of junk `r`
 * tags for a pubkey without a profile (every lookup of it is a miss that reads the list).
 */
interface Hostile {
  authorNotes: string[];
  mentionNotes: string[];
  listAuthor: string;
}

/** Writes the generated events as JSON Lines; returns what the load can ask for (all present in the index). */
function prepareDataSet(dir: string): DataSet {
  const sample = readFileSync(join(root, 'sample/events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as NostrEvent);
  const identities = Array.from({ length: options.profiles }, (_, index) => identity(index));
  const profiles = makeProfiles(identities);
  const notes = identities.length > 5 ? makeNotes(identities, options.notes, 5, 7) : [];
  const hostile = makeHostile();
  const file = join(dir, 'generated.jsonl');
  writeFileSync(file, [...profiles, ...notes, ...(options.hostile ? hostile.events : [])].map((event) => `${serializeEvent(event)}\n`).join(''));
  // Older versions of a profile are replaced (404 by id), so profiles are looked up by pubkey only,
  // and events by the ids of notes and reposts (kinds 1 and 6, never replaced).
  const pubkeys = new Set([...sample, ...profiles].filter((event) => event.kind === 0).map((event) => event.pubkey));
  const eventIds = [...sample, ...notes].filter((event) => event.kind === 1 || event.kind === 6).map((event) => event.id);
  return { file, pubkeys: [...pubkeys], eventIds, hostile: hostile.asked };
}

function makeHostile(): { events: NostrEvent[]; asked: Hostile } {
  const [fat, mentioner, lister] = [identity(1_000_001), identity(1_000_002), identity(1_000_003)];
  const sign = (who: typeof fat, kind: number, created_at: number, tags: string[][], content: string) =>
    JSON.parse(serializeEvent(finalizeEvent({ kind, created_at, tags, content }, who.secretKey))) as NostrEvent;
  const profile = sign(fat, 0, 1_700_000_000, [], `{"name":"hostile","a":[${'{},'.repeat(20_000)}{}]}`);
  const authorNotes = Array.from({ length: 50 }, (_, n) => sign(fat, 1, 1_700_000_000 + n, [], `hostile note ${n}`));
  const mentionNotes = Array.from({ length: 5 }, (_, n) => sign(mentioner, 1, 1_700_000_000 + n, [], `nostr:npub1${'q'.repeat(58)} `.repeat(2_900)));
  const list = sign(lister, 10002, 1_700_000_000, Array.from({ length: 4_000 }, (_, n) => ['r', `junk-${n}`]), '');
  return {
    events: [profile, ...authorNotes, ...mentionNotes, list],
    asked: { authorNotes: authorNotes.map((note) => note.id), mentionNotes: mentionNotes.map((note) => note.id), listAuthor: lister.pubkey },
  };
}

async function importInto(env: Record<string, string>, files: string[]): Promise<void> {
  for (const file of files) {
    const summary = JSON.parse(await runToEnd(['dist/cli/main.js', 'import', file, '--json'], env)) as Record<string, number>;
    log(`  import ${file.startsWith(root) ? file.slice(root.length) : file}: ${JSON.stringify(summary)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// The service and what is read from it.

/**
 * Preloaded into the service (node --import) when --probe is on (default): on a message over the IPC
 * channel it runs a full GC (node --expose-gc) and answers with the heap in use and the number of
 * active handles and requests (process.getActiveResourcesInfo), timers apart from the rest. A
 * full GC every sample costs the service a pause of a few milliseconds; in exchange the heap figure
 * is the live heap, not wherever the sawtooth happened to be. The channel is unref'd so it does not
 * keep the service alive.
 */
const PROBE = `
process.on('message', (message) => {
  if (!message || message.soak !== 'sample') return;
  if (typeof globalThis.gc === 'function') globalThis.gc();
  const memory = process.memoryUsage();
  const kinds = {};
  for (const kind of process.getActiveResourcesInfo()) kinds[kind] = (kinds[kind] ?? 0) + 1;
  const timers = kinds.Timeout ?? 0;
  const handles = Object.entries(kinds).reduce((sum, [kind, n]) => (kind === 'Timeout' || kind === 'Immediate' ? sum : sum + n), 0);
  process.send?.({ soak: 'sample', heapUsed: memory.heapUsed, heapTotal: memory.heapTotal, external: memory.external, handles, timers, kinds });
});
process.channel?.unref();
`;

interface ProbeAnswer {
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** Active handles and requests other than timers: sockets, servers, pipes, file handles… */
  handles: number;
  /** Active timers (setTimeout): every Redis command in flight has one (ioredis' commandTimeout). */
  timers: number;
  kinds: Record<string, number>;
}

function askProbe(child: ChildProcess, timeoutMs = 3000): Promise<ProbeAnswer | undefined> {
  if (!child.connected) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (typeof message === 'object' && message !== null && (message as { soak?: unknown }).soak === 'sample') {
        done(message as ProbeAnswer);
      }
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    const done = (answer: ProbeAnswer | undefined) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(answer);
    };
    child.on('message', onMessage);
    child.send({ soak: 'sample' });
  });
}

/** VmRSS and the anonymous part of it (RssAnon: heap, malloc; the rest is mapped files, LMDB's included). */
function rssBytes(pid: number): { rss: number | undefined; anon: number | undefined } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kB = (field: string) => {
      const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
      return match ? Number(match[1]) * 1024 : undefined;
    };
    return { rss: kB('VmRSS'), anon: kB('RssAnon') };
  } catch {
    return { rss: undefined, anon: undefined };
  }
}

function fdCount(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

function directoryBytes(path: string): number {
  const stat = lstatSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, name) => sum + directoryBytes(join(path, name)), 0);
}

async function countKeys(admin: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let count = 0;
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    count += keys.length;
    cursor = next;
  } while (cursor !== '0');
  return count;
}

async function waitForReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the service did not become ready:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// ---------------------------------------------------------------------------------------------
// The load: one sequence per connection, looped, each request with the status it must get.

type Expected = 200 | 400 | 404;

interface Interval {
  responses: number;
  latencies: number[];
  errors: number;
  unexpected: number;
  byStatus: Map<number, number>;
}

const newInterval = (): Interval => ({ responses: 0, latencies: [], errors: 0, unexpected: 0, byStatus: new Map() });

function cycle<T>(items: readonly T[]): () => T {
  let index = 0;
  return () => items[index++ % items.length] as T;
}

const randomHex = () => randomBytes(32).toString('hex');

const EVENT_QUERY = 'query ($id: String!) { event(id: $id) { id kind relevantProfiles { pubkey name displayName event { json } } } }';
const PROFILES_QUERY = 'query ($pubkeys: [String!]!) { profiles(pubkeys: $pubkeys) { pubkey name nip05 event { createdAt } } }';

function loadRequests(data: DataSet, current: () => Interval): autocannon.Request[] {
  const nextPubkey = cycle(data.pubkeys);
  const nextId = cycle(data.eventIds);
  const badInput = cycle([
    '/user-profile?pubkey=npub1nope',
    '/event?id=not-an-id',
    '/event',
    `/user-profile?pubkey=${data.pubkeys[0]}&pubkey=${data.pubkeys[1]}`,
    `/event?id=${'g'.repeat(64)}`,
  ]);
  const expect =
    (status: Expected, graphql = false) =>
    (actual: number, body: string) => {
      // A GraphQL answer is 200 even with errors in it: those count as unexpected too.
      if (actual !== status || (graphql && body.includes('"errors"'))) current().unexpected++;
    };
  const get = (expected: Expected, path: () => string): autocannon.Request => ({
    setupRequest: (request) => ({ ...request, method: 'GET', path: path(), body: undefined, headers: {} }),
    onResponse: expect(expected),
  });
  const post = (query: string, variables: () => Record<string, unknown>): autocannon.Request => ({
    setupRequest: (request) => ({
      ...request,
      method: 'POST',
      path: '/graphql',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query, variables: variables() }),
    }),
    onResponse: expect(200, true),
  });
  const profileHit = () => get(200, () => `/user-profile?pubkey=${nextPubkey()}`);
  const eventHit = () => get(200, () => `/event?id=${nextId()}`);
  const { authorNotes, mentionNotes, listAuthor } = data.hostile;
  const nextMentionNote = cycle(mentionNotes);
  const aliases = (selection: string) => Array.from({ length: 15 }, (_, n) => `a${n}: ${selection}`).join(' ');
  // Answered (or refused by the parse budget, in the body): the status is what counts here.
  const hostilePost = (query: string, variables: Record<string, unknown>): autocannon.Request => ({
    setupRequest: (request) => ({ ...request, method: 'POST', path: '/graphql', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) }),
    onResponse: expect(200),
  });
  const hostile = options.hostile
    ? [
        hostilePost(`query ($ids: [String!]!) { events(ids: $ids) { ${aliases('author { name }')} } }`, { ids: authorNotes }),
        hostilePost(`query ($ids: [String!]!) { events(ids: $ids) { ${aliases('relevantPubkeys')} } }`, { ids: mentionNotes }),
        get(200, () => `/event?id=${nextMentionNote()}`),
        get(404, () => `/user-profile?pubkey=${listAuthor}`),
      ]
    : [];
  return [
    ...hostile,
    profileHit(),
    eventHit(),
    profileHit(),
    eventHit(),
    get(404, () => `/user-profile?pubkey=${randomHex()}`),
    get(404, () => `/event?id=${randomHex()}`),
    get(400, badInput),
    post(EVENT_QUERY, () => ({ id: nextId() })),
    profileHit(),
    post(PROFILES_QUERY, () => ({ pubkeys: [nextPubkey(), nextPubkey(), nextPubkey(), randomHex()] })),
  ];
}

// ---------------------------------------------------------------------------------------------
// Samples and verdicts.

interface Sample {
  elapsed: number;
  rps: number;
  p99: number | undefined;
  errors: number;
  unexpected: number;
  rss: number | undefined;
  rssAnon: number | undefined;
  heap: number | undefined;
  handles: number | undefined;
  timers: number | undefined;
  fds: number | undefined;
  storeSize: number | undefined;
}

function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

interface Metric {
  key: keyof Omit<Sample, 'elapsed'>;
  label: string;
  /** The bad direction: growing (memory, latency…) or falling (throughput). */
  bad: 'growing' | 'falling';
  /** Drift tolerated over the window, relative to the window's mean… */
  relative: number;
  /** …and at least this much in the metric's own unit (0.5 for counts: any net growth of one). */
  absolute: number;
  /** Noisy metrics must also trend clearly: the slope at least 2 standard errors from 0. */
  noisy: boolean;
  /** Also the floor must rise: the second half's minimum above the first half's by the same tolerance. */
  floor?: boolean;
  format: (value: number) => string;
}

const mib = (value: number) => `${(value / MiB).toFixed(1)} MiB`;
const count = (value: number) => value.toFixed(0);

function metricsFor(store: StoreName): Metric[] {
  return [
    { key: 'rps', label: 'req/s', bad: 'falling', relative: 0.25, absolute: 0, noisy: true, format: count },
    { key: 'p99', label: 'p99 latency', bad: 'growing', relative: 0.5, absolute: 5, noisy: true, format: (value) => `${value.toFixed(1)} ms` },
    { key: 'errors', label: 'errors', bad: 'growing', relative: 0, absolute: 0.5, noisy: false, format: count },
    { key: 'unexpected', label: 'unexpected status', bad: 'growing', relative: 0, absolute: 0.5, noisy: false, format: count },
    // RSS swings by ±15 % within a minute even after a full GC, upwards with the request rate
    // (buffers in flight, malloc arenas, the young generation): a leak also lifts its floor.
    { key: 'rss', label: 'RSS', bad: 'growing', relative: 0.1, absolute: 8 * MiB, noisy: true, floor: true, format: mib },
    { key: 'rssAnon', label: 'RSS anonymous', bad: 'growing', relative: 0.1, absolute: 8 * MiB, noisy: true, floor: true, format: mib },
    { key: 'heap', label: 'heap after GC', bad: 'growing', relative: 0.05, absolute: 2 * MiB, noisy: true, format: mib },
    { key: 'handles', label: 'active handles', bad: 'growing', relative: 0.05, absolute: 2, noisy: false, format: count },
    // Timers come and go with the requests in flight (one per Redis command, ioredis' commandTimeout):
    // only a trend beyond one per connection counts.
    { key: 'timers', label: 'active timers', bad: 'growing', relative: 0.05, absolute: options.connections, noisy: true, format: count },
    { key: 'fds', label: 'open fds', bad: 'growing', relative: 0.05, absolute: 2, noisy: false, format: count },
    // With the relay on, misses write marks that expire after 5 s: the count moves with the miss
    // rate, and only a trend beyond 10 % (and 1,000 keys, or 1 MiB) counts. Without it nothing writes.
    store === 'redis'
      ? { key: 'storeSize', label: 'Redis keys', bad: 'growing', relative: options.relay ? 0.1 : 0, absolute: options.relay ? 1000 : 0.5, noisy: options.relay, format: count }
      : { key: 'storeSize', label: 'DATA_DIR bytes', bad: 'growing', relative: options.relay ? 0.1 : 0, absolute: options.relay ? MiB : 0.5, noisy: options.relay, format: count },
  ];
}

/**
 * The verdict rule. Only the second half of the samples counts (the first holds warm-up: JIT, heap
 * and connection pools growing to their working size), and it needs at least 3 of them. A
 * least-squares line through (elapsed, value) gives the slope; the drift is slope × the window's
 * length, i.e. how much the trend says the metric moved over the window. The metric is "growing"
 * (or, for req/s, "falling") when that drift in the bad direction exceeds BOTH `relative` × the
 * window's mean AND `absolute`, and, for the noisy metrics (RSS, heap, timers, p99, req/s), the
 * slope is at least 2 standard errors from 0 (t ≥ 2: a trend, not the scatter of a few samples),
 * and, for RSS, the floor rose too (the second half's minimum above the first half's by more than
 * the same tolerance: RSS swings up with the request rate, a leak lifts the floor as well);
 * otherwise "flat". So RSS must trend up by more than 10 % and 8 MiB over the window, the heap after
 * GC by more than 5 % and 2 MiB, handles and fds by more than 5 % and 2, timers by more than one per
 * connection, keys or bytes in the store by any net amount (nothing writes during the load: RELAYS
 * is empty), latency p99 by more than 50 % and 5 ms (it is noisy on a shared machine), throughput
 * down by more than 25 %. A short run is less sensitive (a slow leak moves less in a short window)
 * and more easily fooled: RSS can wander up for a minute or two and come back, so a "growing" RSS
 * with a flat heap after GC in a run of a few minutes wants a longer run before it means anything.
 */
function verdict(samples: Sample[], metric: Metric): { verdict: string; bad: boolean; detail: string } {
  const points = samples
    .slice(Math.floor(samples.length / 2))
    .map((sample) => [sample.elapsed, sample[metric.key]] as const)
    .filter((point): point is readonly [number, number] => point[1] !== undefined);
  if (points.length < 3) return { verdict: 'n/a', bad: false, detail: `only ${points.length} samples in the second half` };
  const n = points.length;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const sxx = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  const sxy = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0);
  const slope = sxx === 0 ? 0 : sxy / sxx;
  const span = (points[n - 1]?.[0] ?? 0) - (points[0]?.[0] ?? 0);
  const drift = slope * span;
  const badDrift = metric.bad === 'growing' ? drift : -drift;
  // Standard error of the slope from the residuals (n - 2 degrees of freedom).
  const residuals = points.reduce((sum, [x, y]) => sum + (y - (meanY + slope * (x - meanX))) ** 2, 0);
  const standardError = n > 2 && sxx > 0 ? Math.sqrt(residuals / (n - 2) / sxx) : 0;
  const t = standardError === 0 ? (slope === 0 ? 0 : Number.POSITIVE_INFINITY) : Math.abs(slope) / standardError;
  const clear = !metric.noisy || t >= 2;
  let bad = clear && badDrift > Math.max(metric.relative * Math.abs(meanY), metric.absolute);
  let floorDetail = '';
  if (metric.floor) {
    const values = samples.map((sample) => sample[metric.key]).filter((value): value is number => value !== undefined);
    const half = Math.floor(values.length / 2);
    const before = Math.min(...values.slice(0, half));
    const after = Math.min(...values.slice(half));
    const rise = after - before;
    bad &&= rise > Math.max(metric.relative * before, metric.absolute);
    floorDetail = `, floor ${rise >= 0 ? '+' : '-'}${metric.format(Math.abs(rise))}`;
  }
  const sign = drift >= 0 ? '+' : '-';
  const detail = `second half: mean ${metric.format(meanY)}, trend ${sign}${metric.format(Math.abs(drift))} over ${span.toFixed(0)} s (${
    meanY === 0 ? 'n/a' : `${sign}${((Math.abs(drift) / Math.abs(meanY)) * 100).toFixed(1)} %`
  }, t ${Number.isFinite(t) ? t.toFixed(1) : '∞'}${floorDetail}), first ${metric.format(points[0]?.[1] ?? 0)}, last ${metric.format(points[n - 1]?.[1] ?? 0)}`;
  return { verdict: bad ? metric.bad : 'flat', bad, detail };
}

function formatSample(store: StoreName, sample: Sample): string {
  const opt = (value: number | undefined, format: (value: number) => string) => (value === undefined ? 'n/a' : format(value));
  return [
    `[${store.padEnd(8)}]`,
    `t=${sample.elapsed.toFixed(0).padStart(4)}s`,
    `req/s ${sample.rps.toFixed(0).padStart(6)}`,
    `p99 ${opt(sample.p99, (v) => `${v.toFixed(1)} ms`).padStart(8)}`,
    `errors ${String(sample.errors).padStart(3)}`,
    `unexpected ${String(sample.unexpected).padStart(3)}`,
    `rss ${opt(sample.rss, mib).padStart(10)} (anon ${opt(sample.rssAnon, mib)})`,
    `heap ${opt(sample.heap, mib).padStart(9)}`,
    `handles ${opt(sample.handles, count).padStart(3)}`,
    `timers ${opt(sample.timers, count).padStart(3)}`,
    `fds ${opt(sample.fds, count).padStart(4)}`,
    store === 'redis' ? `keys ${opt(sample.storeSize, count)}` : `data_dir ${opt(sample.storeSize, count)} B`,
  ].join('  ');
}

// ---------------------------------------------------------------------------------------------
// One store.

interface StoreResult {
  store: StoreName;
  samples: Sample[];
  failures: string[];
}

/** What the service is told about relays: a loopback relay holding the sample, or none. */
let relayEnv: Record<string, string> = { RELAYS: '' };

async function soakStore(store: StoreName, dir: string, data: DataSet): Promise<StoreResult> {
  const failures: string[] = [];
  const storeCleanups: (() => Promise<void>)[] = [];
  const cleanupCount = cleanups.length;
  const pushCleanup = (cleanup: () => Promise<void>) => {
    storeCleanups.push(cleanup);
    cleanups.push(cleanup);
  };
  try {
    let env: Record<string, string>;
    let storeSize: () => Promise<number | undefined>;
    if (store === 'redis') {
      const prefix = `soak:${randomBytes(6).toString('hex')}:`;
      const admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
      admin.on('error', () => {});
      pushCleanup(async () => {
        await deleteByPrefix(admin, prefix);
        admin.disconnect();
      });
      env = { REDIS_URL, REDIS_KEY_PREFIX: prefix };
      storeSize = () => countKeys(admin, prefix).catch(() => undefined);
      log(`[redis] ${REDIS_URL}, key prefix ${prefix}`);
    } else {
      const dataDir = mkdtempSync(join(dir, 'data-'));
      env = { REDIS_URL: '', DATA_DIR: dataDir };
      storeSize = async () => directoryBytes(dataDir);
      log(`[embedded] DATA_DIR ${dataDir}`);
    }
    env = { ...env, LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...relayEnv };

    await importInto(env, [join(root, 'sample/events.jsonl'), data.file]);

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const probe = options.probe ? ['--expose-gc', `--import=data:text/javascript,${encodeURIComponent(PROBE)}`] : [];
    const service = spawnGroup([...probe, 'dist/cli/main.js', 'serve'], { ...env, PORT: String(port) }, options.probe);
    let stopped: Awaited<ReturnType<typeof stopGroup>> | undefined;
    pushCleanup(async () => {
      stopped ??= await stopGroup(service);
    });
    // LOG_LEVEL=warn: whatever the service logs is worth seeing (request lines are info).
    const serviceLines: string[] = [];
    let partial = '';
    const collect = (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      serviceLines.push(...lines.filter((line) => line.trim() !== ''));
    };
    service.stdout?.on('data', collect);
    service.stderr?.on('data', collect);
    await waitForReady(url, service, () => serviceLines.join('\n'));
    const pid = service.pid as number;
    const startupLines = serviceLines.length;
    log(`[${store}] service pid ${pid} on ${url}; ${options.minutes} min of load, ${options.connections} connections, a sample every ${options.sampleSeconds} s`);

    let interval = newInterval();
    const loadErrors = new Map<string, number>();
    const instance = autocannon(
      {
        url,
        connections: options.connections,
        // Stopped after the last sample; the duration is only a backstop.
        duration: options.minutes * 60 + 60,
        timeout: 10,
        requests: loadRequests(data, () => interval),
      },
      () => {},
    );
    const finished = new Promise<void>((resolve) => instance.once('done', () => resolve()));
    instance.on('response', (_client: unknown, status: number, _bytes: number, responseTime: number) => {
      interval.responses++;
      interval.latencies.push(responseTime);
      interval.byStatus.set(status, (interval.byStatus.get(status) ?? 0) + 1);
      if (!((status >= 200 && status < 300) || (status >= 400 && status < 500))) interval.errors++;
    });
    instance.on('reqError', (error: Error) => {
      interval.errors++;
      loadErrors.set(error.message, (loadErrors.get(error.message) ?? 0) + 1);
    });

    const started = performance.now();
    let last = started;
    const samples: Sample[] = [];
    const total = options.minutes * 60;
    const sampleCount = Math.max(1, Math.floor(total / options.sampleSeconds + 1e-9));
    for (let index = 1; index <= sampleCount; index++) {
      const target = started + index * options.sampleSeconds * 1000;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, target - performance.now())));
      const now = performance.now();
      const done = interval;
      interval = newInterval();
      const seconds = (now - last) / 1000;
      last = now;
      const [answer, size] = await Promise.all([options.probe ? askProbe(service) : undefined, storeSize()]);
      // Read after the probe's full GC: the figure then moves less with the young generation's sawtooth.
      const memory = rssBytes(pid);
      const sample: Sample = {
        elapsed: (now - started) / 1000,
        rps: done.responses / seconds,
        p99: percentile(done.latencies, 99),
        errors: done.errors,
        unexpected: done.unexpected,
        rss: memory.rss,
        rssAnon: memory.anon,
        heap: answer?.heapUsed,
        handles: answer?.handles,
        timers: answer?.timers,
        fds: fdCount(pid),
        storeSize: size,
      };
      samples.push(sample);
      process.stdout.write(`${formatSample(store, sample)}\n`);
      if (service.exitCode !== null) {
        failures.push(`the service exited (${service.exitCode}) during the load`);
        break;
      }
    }
    instance.stop();
    await finished;

    // After the load: still ready, and a clean stop.
    const ready = await fetch(`${url}/readyz`).then((response) => response.status, () => 0);
    if (ready !== 200) failures.push(`/readyz answered ${ready} after the load`);
    const probeAfter = options.probe ? await askProbe(service) : undefined;
    stopped ??= await stopGroup(service);
    if (stopped.code !== 0 || stopped.forced) {
      failures.push(`SIGTERM: the service exited ${stopped.code}${stopped.forced ? ' (killed after 15 s)' : ''}`);
    }
    log(`[${store}] stopped by SIGTERM in ${stopped.ms.toFixed(0)} ms, exit code ${stopped.code}`);
    if (probeAfter) log(`[${store}] handles at the end: ${JSON.stringify(probeAfter.kinds)}`);
    if (loadErrors.size > 0) log(`[${store}] load generator errors: ${JSON.stringify(Object.fromEntries(loadErrors))}`);
    const logged = serviceLines.slice(startupLines).concat(partial ? [partial] : []);
    const noisy = logged.filter((line) => !/"msg":"(shutting down|stopped)"/.test(line));
    if (noisy.length > 0) {
      log(`[${store}] the service logged ${noisy.length} line(s) at warn or above during the run; the first ones:`);
      for (const line of noisy.slice(0, 5)) log(`    ${line.slice(0, 400)}`);
    }
    return { store, samples, failures };
  } finally {
    // This store's cleanups, newest first, and only those.
    for (const cleanup of storeCleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        log(`cleanup failed: ${(error as Error).message}`);
      }
    }
    cleanups.splice(cleanupCount);
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  if (!existsSync(join(root, 'dist/cli/main.js'))) {
    log('dist/ is missing: npm run build');
    const build = spawn('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
    const code = await exitOf(build);
    if (code !== 0) throw new Error(`npm run build exited ${code}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-soak-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const generating = performance.now();
  const data = prepareDataSet(dir);
  log(
    `data set: sample/events.jsonl + ${options.profiles} generated profiles and ${options.notes} notes ` +
      `(${((performance.now() - generating) / 1000).toFixed(1)} s); load over ${data.pubkeys.length} profiles, ${data.eventIds.length} events`,
  );

  if (options.relay) {
    // Misses ask this relay (it answers EOSE at once) and leave marks for NEGATIVE_TTL; the load
    // comes from one address, so the per-client miss cap is lifted.
    const events = readFileSync(join(root, 'sample/events.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as NostrEvent);
    const relay = await startLoopbackRelay({ events });
    cleanups.push(() => relay.stop());
    relayEnv = { RELAYS: relay.url, NEGATIVE_TTL: '5', MISS_CONCURRENCY_PER_CLIENT: '10000' };
    log(`relay: ${relay.url} (sample events), NEGATIVE_TTL=5`);
  }

  const stores: StoreName[] = options.store === 'both' ? ['redis', 'embedded'] : [options.store];
  const results: StoreResult[] = [];
  for (const store of stores) results.push(await soakStore(store, dir, data));

  let bad = false;
  process.stdout.write('\nverdicts (least-squares trend over the second half of the samples; see `verdict` in scripts/soak.ts)\n');
  for (const result of results) {
    process.stdout.write(`[${result.store}] ${result.samples.length} samples\n`);
    for (const metric of metricsFor(result.store)) {
      const outcome = verdict(result.samples, metric);
      bad ||= outcome.bad;
      process.stdout.write(`  ${metric.label.padEnd(18)} ${outcome.verdict.padEnd(8)} ${outcome.detail}\n`);
    }
    const errors = result.samples.reduce((sum, sample) => sum + sample.errors, 0);
    const unexpected = result.samples.reduce((sum, sample) => sum + sample.unexpected, 0);
    // Failed requests fail the soak even at a flat rate: a healthy service answers every one.
    if (errors > 0) result.failures.push(`${errors} request(s) failed (5xx, socket error or timeout)`);
    if (unexpected > 0) result.failures.push(`${unexpected} answer(s) with an unexpected status or GraphQL errors`);
    for (const failure of result.failures) process.stdout.write(`  FAIL: ${failure}\n`);
    bad ||= result.failures.length > 0;
  }
  process.stdout.write(bad ? '\nsoak: FAILED\n' : '\nsoak: OK, nothing grows\n');
  return bad ? 1 : 0;
}

main().then(
  async (code) => {
    await runCleanups();
    process.exit(code);
  },
  async (error: unknown) => {
    log(`soak: ${(error as Error).stack ?? String(error)}`);
    await runCleanups();
    process.exit(1);
  },
);
