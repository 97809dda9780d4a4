import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NostrEvent } from '../../src/nostr/event.js';
import { connectRedis, waitUntilReady } from '../../src/store/redis/connect.js';
import { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { profile, signed } from '../support/events.js';
import { freePort, HOW_TO_GET_REDIS, hasRedisServerBinary, redisAnswers } from '../support/redis-server.js';
import { getJson, startTestServer, type TestServer } from '../support/test-server.js';

// Redis faults under load, with the numbers the service must hold. test/redis-outage.test.ts covers
// what a single request sees when Redis is down; this file adds a steady stream of requests and
// timing: a Redis that hangs (SIGSTOP) and one that dies (SIGKILL) and comes back empty.
//
// The Redis here is private (a redis-server of this file's own, in its own process group), so it can
// be paused and killed; the app runs in-process on a real port, its store with a short deadline.

const REDIS_TIMEOUT_MS = 300;
/** No request may take longer than the Redis deadline plus this. */
const SLACK_MS = 500;
const CLIENTS = 20;
const PREFIX = 'faults:';

interface OwnRedis {
  port: number;
  url: string;
  child: ChildProcess;
  signal(signal: NodeJS.Signals): void;
  /** SIGKILL to the whole group; resolves when the server has exited. */
  kill(): Promise<void>;
}

const liveGroups = new Set<number>();
const killGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal);
  } catch {
    // gone already
  }
};
// Should the worker exit without afterAll (a crash), no redis-server is left behind, paused or not.
const onExit = () => {
  for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
};
process.once('exit', onExit);

/** A throwaway redis-server (nothing on disk) in a process group of its own. */
async function startOwnRedis(port?: number): Promise<OwnRedis> {
  if (!hasRedisServerBinary()) throw new Error(HOW_TO_GET_REDIS);
  const chosen = port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-faults-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore', detached: true },
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('redis-server did not spawn');
  liveGroups.add(pid);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => {
    liveGroups.delete(pid);
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `redis://127.0.0.1:${chosen}`;
  const deadline = Date.now() + 10_000;
  while (!(await redisAnswers(url))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      killGroup(pid, 'SIGKILL');
      throw new Error(`redis-server did not start on ${chosen}`);
    }
    await sleep(20);
  }
  return {
    port: chosen,
    url,
    child,
    signal: (signal) => killGroup(pid, signal),
    kill: async () => {
      // SIGKILL also ends a stopped process; the group goes with it.
      killGroup(pid, 'SIGKILL');
      await exited;
    },
  };
}

/** Seeds `events` through a RedisEventStore of its own, then closes it. */
async function seed(url: string, events: readonly NostrEvent[]): Promise<void> {
  const client = connectRedis({ url, timeoutMs: 2000 });
  client.on('error', () => {});
  try {
    await waitUntilReady(client, 5000);
    await new RedisEventStore(client, PREFIX).putEvents(events);
  } finally {
    client.disconnect();
  }
}

interface Outcome {
  path: string;
  start: number;
  end: number;
  ms: number;
  status: number;
  /** The error code of an error body, or what went wrong when there was no answer. */
  code?: string;
}

/**
 * CLIENTS loops, each sending its next request as soon as the previous one answered (and 5 ms have
 * passed: the loops must not starve the in-process server when failures are instant). Times are
 * performance.now() of this process. A request that gets no answer in 5 s is recorded as status 0.
 */
function startLoad(base: string, nextPath: () => string) {
  const outcomes: Outcome[] = [];
  let running = true;
  const loop = async () => {
    while (running) {
      const path = nextPath();
      const start = performance.now();
      let outcome: Outcome;
      try {
        const response = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(5000) });
        const text = await response.text();
        const end = performance.now();
        let code: string | undefined;
        if (response.status !== 200) code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
        outcome = { path, start, end, ms: end - start, status: response.status, code };
      } catch (error) {
        const end = performance.now();
        outcome = { path, start, end, ms: end - start, status: 0, code: (error as Error).name };
      }
      outcomes.push(outcome);
      await sleep(5);
    }
  };
  const loops = Array.from({ length: CLIENTS }, () => loop());
  return {
    outcomes,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Counts by "status code" (e.g. "200", "500 store_unavailable"), for readable failures. */
function tally(outcomes: readonly Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { status, code } of outcomes) {
    const key = code ? `${status} ${code}` : String(status);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

const slowest = (outcomes: readonly Outcome[]) => Math.max(0, ...outcomes.map((outcome) => outcome.ms));

const logBytes = () => (server?.logs ?? []).reduce((sum, chunk) => sum + chunk.length, 0);
const logLines = (message: string) =>
  (server?.logs ?? []).join('').split('\n').filter((line) => line.includes(`"msg":"${message}"`)).length;

/** FAULTS_REPORT=1 prints what each case measured (one line each). */
function report(name: string, figures: Record<string, unknown>): void {
  if (process.env.FAULTS_REPORT) process.stderr.write(`${name}: ${JSON.stringify(figures)}\n`);
}

async function timedGet(url: string) {
  const start = performance.now();
  const response = await getJson(url, { signal: AbortSignal.timeout(5000) });
  return { status: response.status, body: response.body, ms: performance.now() - start };
}

const authors = Array.from({ length: 20 }, (_, index) => `fault-author-${index}`);
const profiles = authors.map((name) => profile(name, { name }));
const notes = authors.map((name, index) =>
  signed(name, { content: `note ${index}`, tags: [['p', profiles[(index + 1) % profiles.length]?.pubkey ?? '']] }),
);
const seedEvents = [...profiles, ...notes];
let turn = 0;
const nextProfilePath = () => `/user-profile?pubkey=${profiles[turn++ % profiles.length]?.pubkey}`;
const nextMixedPath = () =>
  turn++ % 2 === 0
    ? `/user-profile?pubkey=${profiles[turn % profiles.length]?.pubkey}`
    : `/event?id=${notes[turn % notes.length]?.id}`;

let redis: OwnRedis | undefined;
let client: ReturnType<typeof connectRedis> | undefined;
let server: TestServer | undefined;

beforeAll(async () => {
  redis = await startOwnRedis();
  await seed(redis.url, seedEvents);
  client = connectRedis({ url: redis.url, timeoutMs: REDIS_TIMEOUT_MS });
  client.on('error', () => {}); // the service logs these; here they are expected
  await waitUntilReady(client, 5000);
  server = await startTestServer(new RedisEventStore(client, PREFIX));
});

afterAll(async () => {
  // Each step on its own: one failing must not leave the others undone.
  await server?.close().catch(() => {});
  client?.disconnect();
  await redis?.kill();
  process.off('exit', onExit);
});

describe('Redis paused (SIGSTOP) under a steady stream of /user-profile', () => {
  it(`answers 500 store_unavailable within ${REDIS_TIMEOUT_MS} + ${SLACK_MS} ms during the pause, and 200 within 1 s of SIGCONT`, async () => {
    const own = redis as OwnRedis;
    const base = (server as TestServer).url;
    const logsBefore = logBytes();
    const failuresBefore = logLines('lookup failed');
    const load = startLoad(base, nextProfilePath);
    let stopAt = 0;
    let contAt = 0;
    let readyDuringPause: Awaited<ReturnType<typeof timedGet>> | undefined;
    try {
      await sleep(500);
      stopAt = performance.now();
      own.signal('SIGSTOP');
      await sleep(1000);
      readyDuringPause = await timedGet(`${base}/readyz`);
      await sleep(Math.max(0, stopAt + 2000 - performance.now()));
      contAt = performance.now();
      own.signal('SIGCONT');
      await sleep(1500);
    } finally {
      own.signal('SIGCONT');
      await load.stop();
    }
    const all = load.outcomes;
    const before = all.filter((outcome) => outcome.end < stopAt);
    // Started once the signal had surely landed (50 ms), answered before SIGCONT.
    const paused = all.filter((outcome) => outcome.start >= stopAt + 50 && outcome.end <= contAt);
    const afterOneSecond = all.filter((outcome) => outcome.start >= contAt + 1000);
    const failedAfterCont = all.filter((outcome) => outcome.status !== 200 && outcome.end > contAt);
    const recoveryMs = Math.max(0, ...failedAfterCont.map((outcome) => outcome.end - contAt));

    report('SIGSTOP', {
      requests: all.length,
      before: tally(before),
      paused: tally(paused),
      all: tally(all),
      slowestMs: Math.round(slowest(all)),
      slowestPausedMs: Math.round(slowest(paused)),
      readyzDuringPause: readyDuringPause && { status: readyDuringPause.status, ms: Math.round(readyDuringPause.ms) },
      recoveryMs: Math.round(recoveryMs),
      afterOneSecond: tally(afterOneSecond),
      logKiB: Math.round((logBytes() - logsBefore) / 1024),
      lookupFailedLines: logLines('lookup failed') - failuresBefore,
    });
    expect(tally(before)).toEqual({ '200': before.length });
    expect(before.length).toBeGreaterThanOrEqual(CLIENTS);
    expect(tally(paused)).toEqual({ '500 store_unavailable': paused.length });
    // Each client waits out the deadline about 6 times in 2 s.
    expect(paused.length).toBeGreaterThanOrEqual(CLIENTS * 3);
    // Nothing else at any time: no other error, no request without an answer.
    expect(Object.keys(tally(all)).sort()).toEqual(['200', '500 store_unavailable']);
    expect(slowest(all)).toBeLessThanOrEqual(REDIS_TIMEOUT_MS + SLACK_MS);
    expect(readyDuringPause).toMatchObject({ status: 503, body: { status: 'unavailable' } });
    expect(readyDuringPause?.ms).toBeLessThanOrEqual(REDIS_TIMEOUT_MS + SLACK_MS);
    expect(recoveryMs).toBeLessThan(1000);
    expect(tally(afterOneSecond)).toEqual({ '200': afterOneSecond.length });
    expect(afterOneSecond.length).toBeGreaterThanOrEqual(CLIENTS);
    expect((await timedGet(`${base}/readyz`)).status).toBe(200);
  });
});

describe('Redis killed (SIGKILL) under load, then restarted empty on the same port', () => {
  it('fails fast (< 500 ms) with /readyz 503, and recovers by itself within 3 s of the restart', async () => {
    const base = (server as TestServer).url;
    const port = (redis as OwnRedis).port;
    const logsBefore = logBytes();
    const failuresBefore = logLines('lookup failed');
    const load = startLoad(base, nextMixedPath);
    let killAt = 0;
    let restartAt = 0;
    let seededAt = 0;
    let readyAt: number | undefined;
    let readyDuringOutage: Awaited<ReturnType<typeof timedGet>> | undefined;
    try {
      await sleep(500);
      killAt = performance.now();
      await (redis as OwnRedis).kill();
      await sleep(750);
      readyDuringOutage = await timedGet(`${base}/readyz`);
      await sleep(Math.max(0, killAt + 1500 - performance.now()));
      restartAt = performance.now();
      redis = await startOwnRedis(port);
      // This Redis keeps nothing on disk: the index is seeded again, as a deployment would restore it.
      await seed(redis.url, seedEvents);
      seededAt = performance.now();
      while (performance.now() < restartAt + 10_000) {
        if ((await timedGet(`${base}/readyz`)).status === 200) {
          readyAt = performance.now();
          break;
        }
        await sleep(50);
      }
      await sleep(Math.max(1000, restartAt + 4000 - performance.now()));
    } finally {
      await load.stop();
    }
    const all = load.outcomes;
    const before = all.filter((outcome) => outcome.end < killAt);
    const down = all.filter((outcome) => outcome.start >= killAt && outcome.end <= restartAt);
    // Requests that failed once Redis was back; 404s only until the seed was written.
    const failedAfterRestart = all.filter((outcome) => outcome.status !== 200 && outcome.end > restartAt);
    const recoveryMs = Math.max(0, ...failedAfterRestart.map((outcome) => outcome.end - restartAt));
    const notFound = all.filter((outcome) => outcome.status === 404);
    const recovered = all.filter((outcome) => outcome.start >= restartAt + 3000);

    report('SIGKILL', {
      requests: all.length,
      before: tally(before),
      down: tally(down),
      all: tally(all),
      slowestMs: Math.round(slowest(all)),
      slowestDownMs: Math.round(slowest(down)),
      // Requests over 100 ms: when they started and ended relative to the kill, and how they ended.
      slow: all
        .filter((outcome) => outcome.ms > 100)
        .map((outcome) => `${Math.round(outcome.start - killAt)}..${Math.round(outcome.end - killAt)} ${outcome.status}`),
      readyzDuringOutage: readyDuringOutage && { status: readyDuringOutage.status, ms: Math.round(readyDuringOutage.ms) },
      restartToSeededMs: Math.round(seededAt - restartAt),
      restartToReadyzMs: readyAt === undefined ? 'never' : Math.round(readyAt - restartAt),
      recoveryMs: Math.round(recoveryMs),
      recovered: tally(recovered),
      logKiB: Math.round((logBytes() - logsBefore) / 1024),
      lookupFailedLines: logLines('lookup failed') - failuresBefore,
    });
    expect(tally(before)).toEqual({ '200': before.length });
    expect(before.length).toBeGreaterThanOrEqual(CLIENTS);
    expect(tally(down)).toEqual({ '500 store_unavailable': down.length });
    expect(down.length).toBeGreaterThanOrEqual(CLIENTS * 10);
    expect(slowest(all)).toBeLessThan(500);
    expect(readyDuringOutage).toMatchObject({ status: 503, body: { status: 'unavailable' } });
    expect(readyDuringOutage?.ms).toBeLessThan(500);
    expect(notFound.filter((outcome) => outcome.start >= seededAt)).toEqual([]);
    // Nothing else at any time: no other error, no request without an answer.
    const allowed = ['200', '500 store_unavailable', '404 profile_not_found', '404 event_not_found'];
    expect(Object.keys(tally(all)).filter((key) => !allowed.includes(key))).toEqual([]);
    expect((readyAt ?? Number.POSITIVE_INFINITY) - restartAt).toBeLessThan(3000);
    expect(recoveryMs).toBeLessThan(3000);
    expect(tally(recovered)).toEqual({ '200': recovered.length });
    expect(recovered.length).toBeGreaterThanOrEqual(CLIENTS);
  });
});
