import { afterEach, describe, expect, it } from 'vitest';
import { RESUME_OVERLAP_SECONDS, RelaySync, syncCursorName } from '../src/fill/relay-sync.js';
import type { NostrEvent } from '../src/nostr/event.js';
import { type EventStore, StoreUnavailableError, type WriteOutcome } from '../src/store/event-store.js';
import { type RunningCli, spawnCli } from './support/cli.js';
import { profile, signed } from './support/events.js';
import { captureLogs } from './support/logs.js';
import { type LoopbackRelay, startLoopbackRelay } from './support/loopback-relay.js';
import { freePort } from './support/redis-server.js';
import { createTestStore, storeEnv, type TestStore } from './support/test-store.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function relay(events: NostrEvent[] = []): Promise<LoopbackRelay> {
  const started = await startLoopbackRelay({ events });
  cleanups.push(() => started.stop());
  return started;
}

async function store(): Promise<TestStore> {
  const created = await createTestStore();
  cleanups.push(() => created.cleanup());
  return created;
}

const now = () => Math.floor(Date.now() / 1000);

/** `nostr-lookup sync` as a user runs it, killed after the test if still running. */
function sync(testStore: TestStore, env: Record<string, string>, args: string[] = []): RunningCli {
  const running = spawnCli(['sync', ...args], { ...storeEnv(testStore.prefix), ...env });
  cleanups.push(async () => {
    running.child.kill('SIGKILL');
    await running.exited;
  });
  return running;
}

async function held(testStore: TestStore, event: NostrEvent): Promise<boolean> {
  return (await testStore.store.getEvents([event.id]))[0] !== null;
}

describe('nostr-lookup sync', () => {
  it('exports its counts on METRICS_PORT (sync has no other port)', async () => {
    const alice = profile('sync-metrics', { name: 'M' }, now() - 100);
    const note = signed('sync-metrics', { created_at: now() - 50, content: 'counted' });
    const source = await relay([alice, note]);
    const testStore = await store();
    const port = await freePort();
    sync(testStore, { RELAYS: source.url, METRICS_PORT: String(port), HOST: '127.0.0.1' });
    await expect.poll(() => held(testStore, note), { timeout: 15_000, interval: 100 }).toBe(true);
    const counted = async () => {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      return Number(/^nostr_lookup_sync_events_total\{result="stored"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    };
    // The counts are read when scraped (a scrape is kept for a second).
    await expect.poll(counted, { timeout: 5000, interval: 300 }).toBeGreaterThanOrEqual(2);
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toMatch(/^nostr_lookup_sync_events_total\{result="received"\} \d+$/m);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('stores verified history and live events, stops cleanly on SIGTERM, and resumes from its cursor', async () => {
    const old = signed('sync-a', { created_at: now() - 600, content: 'history' });
    const alice = profile('sync-a', { name: 'A' }, now() - 500);
    // Reactions are in the default SYNC_KINDS (the relationship index counts them); reports are not.
    const reaction = signed('sync-a', { kind: 7, created_at: now() - 400, content: '+', tags: [['e', old.id]] });
    const report = signed('sync-a', { kind: 1984, created_at: now() - 400, tags: [['e', old.id, 'spam']] });
    const source = await relay([old, alice, reaction, report]);
    const testStore = await store();
    const first = sync(testStore, { RELAYS: source.url });

    await expect.poll(() => held(testStore, alice), { timeout: 15_000, interval: 100 }).toBe(true);
    expect(await held(testStore, old)).toBe(true);
    await expect.poll(() => held(testStore, reaction), { timeout: 5000, interval: 100 }).toBe(true);
    expect(await held(testStore, report)).toBe(false);
    const firstFilter = source.requests[0]?.[0];
    expect(firstFilter?.kinds).toEqual([0, 1, 5, 6, 7, 16, 62, 1111, 9735]);
    // No cursor yet: the last hour.
    expect(Math.abs((firstFilter?.since ?? 0) - (now() - 3600))).toBeLessThan(30);

    const live = signed('sync-a', { created_at: now(), content: 'live' });
    source.add(live);
    await expect.poll(() => held(testStore, live), { timeout: 5000, interval: 100 }).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1200)); // the batch after it moves the cursor

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('sync stopped');
    const cursor = await testStore.store.cursors.get(syncCursorName(source.url, [0, 1, 5, 6, 7, 16, 62, 1111, 9735]));
    expect(Number(cursor)).toBe(live.created_at);

    // While it was stopped, more was published; the restart asks from the cursor (with overlap) and gets it.
    const missed = signed('sync-b', { created_at: now(), content: 'published while sync was down' });
    source.add(missed);
    const second = sync(testStore, { RELAYS: source.url });
    await expect.poll(() => held(testStore, missed), { timeout: 15_000, interval: 100 }).toBe(true);
    expect(source.requests.at(-1)).toEqual([{ kinds: [0, 1, 5, 6, 7, 16, 62, 1111, 9735], since: live.created_at - RESUME_OVERLAP_SECONDS }]);
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
  });

  it('--since sets where a relay without a cursor starts (unix seconds or an ISO date)', async () => {
    const old = signed('sync-e', { created_at: 1_672_600_000, content: 'from 2023' });
    const source = await relay([old]);
    const testStore = await store();
    const run = sync(testStore, { RELAYS: source.url }, ['--since', '2023-01-01']);
    await expect.poll(() => held(testStore, old), { timeout: 15_000, interval: 100 }).toBe(true);
    expect(source.requests[0]).toEqual([{ kinds: [0, 1, 5, 6, 7, 16, 62, 1111, 9735], since: 1_672_531_200 }]);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it.each([['yesterday'], ['-5'], ['--5'], ['5 May'], ['2023-13-45'], ['2999-01-01'], ['99999999999'], ['']])('refuses --since %j with a clear message', async (since) => {
    const testStore = await store();
    const run = sync(testStore, { RELAYS: 'ws://127.0.0.1:9/' }, ['--since', since]);
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('must be unix seconds or an ISO date');
  });

  it('refuses to start without relays, and says why', async () => {
    const testStore = await store();
    const run = sync(testStore, { RELAYS: '' });
    // OFFLINE=true wins over RELAYS, and says so.
    const offline = sync(testStore, { RELAYS: 'ws://127.0.0.1:7777', OFFLINE: 'true' });
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('RELAYS is empty');
    expect(await offline.exited).toBe(1);
    expect(offline.output()).toContain('OFFLINE=true: there is nothing to follow');
  });
});

describe('RelaySync', () => {
  it('never stores what fails verification, counts it, and reconnects with backoff after the relay restarts', async () => {
    const good = signed('sync-c', { created_at: now() - 10, content: 'good' });
    const forged: NostrEvent = { ...signed('sync-c', { created_at: now() - 5, content: 'x' }), content: 'forged' };
    const source = await relay([good, forged]);
    const testStore = await store();
    const { chunks: lines, logger } = captureLogs();
    const subject = new RelaySync({ relays: [source.url], kinds: [1], store: testStore.store, logger, progressIntervalMs: 100 });
    subject.start();
    cleanups.push(() => subject.stop());

    await expect.poll(() => held(testStore, good), { timeout: 5000, interval: 50 }).toBe(true);
    expect(await held(testStore, forged)).toBe(false);
    // Counted once the store's write returns, a few round trips after the event is readable.
    await expect.poll(() => subject.counts.stored, { timeout: 5000, interval: 20 }).toBe(1);
    expect(subject.counts).toMatchObject({ received: 2, invalid: 1, stored: 1 });

    await source.stop();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await source.start();
    const afterRestart = signed('sync-c', { created_at: now(), content: 'after the relay came back' });
    source.add(afterRestart);
    await expect.poll(() => held(testStore, afterRestart), { timeout: 10_000, interval: 100 }).toBe(true);
    expect(lines.join('')).toContain('sync connection lost; reconnecting');
    expect(lines.join('')).toContain('"msg":"sync progress"');
  });

  it('a batch of an earlier connection written late never moves the cursor past the events that failed (found by review: 493 of 1,500 lost)', async () => {
    // 1,500 events 10 s apart: the relay sends them newest first, in three batches of 500.
    const start = now() - 20_000;
    const history = Array.from({ length: 1500 }, (_, n) => signed(`sync-race ${n % 20}`, { created_at: start + n * 10, content: `n${n}` }));
    const source = await relay(history);
    // The store as the writer sees a stalling Redis: the first write fails, the second (a later
    // batch of the same connection) answers late, after the next connection has begun; the fourth
    // (that connection's replay) fails too. Everything else answers at once.
    const plan: Record<number, [delayMs: number, ok: boolean]> = { 1: [200, false], 2: [2500, true], 4: [200, false] };
    const stored = new Set<string>();
    let cursor: string | undefined;
    let calls = 0;
    const scripted = {
      putEvents: async (events: NostrEvent[]) => {
        const [delayMs, ok] = plan[++calls] ?? [5, true];
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        if (!ok) throw new StoreUnavailableError();
        for (const event of events) stored.add(event.id);
        return events.map(() => 'stored' as WriteOutcome);
      },
      cursors: {
        get: async () => cursor,
        set: async (_name: string, value: string) => {
          cursor = value;
        },
      },
    } as unknown as EventStore;
    const subject = new RelaySync({ relays: [source.url], kinds: [1], store: scripted, logger: captureLogs('silent').logger, firstSince: start - 100 });
    subject.start();
    cleanups.push(() => subject.stop());
    const newest = history.at(-1)?.created_at as number;
    // The cursor reaches the newest event either way; then nothing below it may be missing.
    await expect.poll(() => cursor, { timeout: 20_000, interval: 100 }).toBe(String(newest));
    expect(history.filter((event) => !stored.has(event.id)).length).toBe(0);
  }, 30_000);

  it('behind a stalled store, holds a bounded number of events unwritten: the relay is no longer read meanwhile', async () => {
    const start = now() - 5000;
    const history = Array.from({ length: 1000 }, (_, n) => signed(`sync-slow ${n % 20}`, { created_at: start + n * 5, content: `s${n}` }));
    const source = await relay(history);
    // The store answers nothing until released (a store far slower than the relay).
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const stored = new Set<string>();
    const stalled = {
      putEvents: async (events: NostrEvent[]) => {
        await released;
        for (const event of events) stored.add(event.id);
        return events.map(() => 'stored' as WriteOutcome);
      },
      cursors: { get: async () => undefined, set: async () => {} },
    } as unknown as EventStore;
    const maxUnwritten = 200;
    const subject = new RelaySync({ relays: [source.url], kinds: [1], store: stalled, logger: captureLogs('silent').logger, firstSince: start - 100, maxUnwritten });
    subject.start();
    cleanups.push(async () => {
      release();
      await subject.stop();
    });
    await expect.poll(() => subject.counts.received, { timeout: 10_000, interval: 50 }).toBeGreaterThanOrEqual(maxUnwritten);
    // Given time to read everything (verification included), it has read up to the bound, and
    // what was already off the socket when it stopped reading.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(subject.counts.received).toBeLessThan(2 * maxUnwritten);
    expect(subject.unwritten).toBe(subject.counts.received);
    release();
    await expect.poll(() => stored.size, { timeout: 20_000, interval: 100 }).toBe(history.length);
    expect(subject.unwritten).toBe(0);
  }, 40_000);

  it('does not move the cursor before the relay has sent its history (EOSE)', async () => {
    const source = await startLoopbackRelay({ events: [signed('sync-d', { created_at: now() - 50 })], silent: true });
    cleanups.push(() => source.stop());
    const testStore = await store();
    const { logger } = captureLogs();
    const subject = new RelaySync({ relays: [source.url], kinds: [1], store: testStore.store, logger });
    subject.start();
    await expect.poll(() => source.requests.length, { timeout: 5000, interval: 50 }).toBe(1);
    // A live event arrives without an EOSE for the history first.
    source.silent = false;
    source.add(signed('sync-d', { created_at: now() }));
    await new Promise((resolve) => setTimeout(resolve, 1300));
    await subject.stop();
    expect(await testStore.store.cursors.get(syncCursorName(source.url, [1]))).toBeUndefined();
  });
});
