import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelaySync } from '../../src/fill/relay-sync.js';
import { importEvents } from '../../src/import/import-events.js';
import { type NostrEvent, serializeEvent } from '../../src/nostr/event.js';
import { connectRedis, waitUntilReady } from '../../src/store/redis/connect.js';
import { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { signed } from '../support/events.js';
import { captureLogs } from '../support/logs.js';
import { type LoopbackRelay, startLoopbackRelay } from '../support/loopback-relay.js';
import { type PrivateRedis, startPrivateRedis } from '../support/redis-server.js';
import { expectExact } from '../support/relation-conformance.js';

// `sync` and `import` writing while Redis hangs (SIGSTOP), its clients are killed (CLIENT KILL)
// and the relay drops its connections: every event ends up stored, and the relationship figures
// equal their rebuild (`relations check`). Before a `duplicate` put related its event again, a
// put that Redis ran but whose reply was lost left its reactions uncounted (in 2 of 6 such runs,
// 260 and 290 of 300). Each round on a fresh key prefix, on a Redis of this file's own.
// The sync scenario runs 2 rounds in `npm run test:slow` (scripts/faulted-sync.sh runs as many as asked).
// On 2026-12-02 one round of 37 ended undercounted (255 of 300), its cause not found; after the
// deadlines that could never fire were mended (abortable.ts timeoutSignal), 50 rounds of 50 ended exact.

const SYNC_ROUNDS = Number(process.env.FAULTED_SYNC_ROUNDS ?? 2);
/** The sync scenario: 3,000 notes and 300 reactions (one per author) to one note. */
const SYNC_NOTES = 3000;
const SYNC_REACTIONS = 300;
/** REDIS_TIMEOUT_MS as sync has it by default: both hangs below outlast it. */
const SYNC_TIMEOUT_MS = 1000;
const ROUNDS = 3;
const NOTES = 200;
const REACTIONS = 120;
const TIMEOUT_MS = 300;

let redis: PrivateRedis;
let admin: ReturnType<typeof connectRedis>;
let note: NostrEvent;
let events: NostrEvent[];
let syncNote: NostrEvent;
let syncEvents: NostrEvent[];

beforeAll(async () => {
  redis = await startPrivateRedis();
  admin = connectRedis({ url: redis.url, timeoutMs: 10_000 });
  admin.on('error', () => {});
  await waitUntilReady(admin, 5000);
  const at = Math.floor(Date.now() / 1000) - 600;
  note = signed('faulted-alice', { content: 'the note', created_at: at });
  // Notes and one reaction per author to the note, interleaved, as a relay would pass them on.
  events = [note];
  for (let n = 0; n < Math.max(NOTES, REACTIONS); n++) {
    if (n < NOTES) events.push(signed(`faulted-writer ${n % 40}`, { content: `note ${n}`, created_at: at + 1 + n }));
    if (n < REACTIONS) events.push(signed(`faulted-reactor ${n}`, { kind: 7, content: n % 3 ? '+' : '🤙', created_at: at + 1 + n, tags: [['e', note.id]] }));
  }
  syncNote = signed('synced-alice', { content: 'the synced note', created_at: at });
  syncEvents = [syncNote];
  for (let n = 0; n < SYNC_NOTES; n++) {
    syncEvents.push(signed(`synced-writer ${n % 300}`, { content: `note ${n}`, created_at: at + 1 + n }));
    // One reaction after every tenth note.
    if (n % (SYNC_NOTES / SYNC_REACTIONS) === 9) {
      const r = Math.floor(n / 10);
      syncEvents.push(signed(`synced-reactor ${r}`, { kind: 7, content: r % 3 ? '+' : '🤙', created_at: at + 1 + n, tags: [['e', syncNote.id]] }));
    }
  }
}, 60_000);

afterAll(async () => {
  redis.signal('SIGCONT');
  admin.disconnect();
  await redis.stop();
});

/** Redis hangs longer than the deadline twice, and every client but the admin is killed once. */
async function storeFaults(): Promise<void> {
  await sleep(600);
  redis.signal('SIGSTOP');
  await sleep(2 * TIMEOUT_MS + 100);
  redis.signal('SIGCONT');
  await sleep(250);
  await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
  await sleep(250);
  redis.signal('SIGSTOP');
  await sleep(TIMEOUT_MS + 200);
  redis.signal('SIGCONT');
}

/**
 * A store whose connection is lost once right after its `lostAt`-th event write was sent, Redis
 * hanging meanwhile: Redis runs the writes that reached it, and their replies never come (the
 * window the faults above hit by chance; here every round).
 */
async function openStore(prefix: string, lostAt = 40): Promise<{ store: RedisEventStore; close(): void }> {
  const client = connectRedis({ url: redis.url, timeoutMs: TIMEOUT_MS });
  client.on('error', () => {});
  await waitUntilReady(client, 5000);
  const store = new RedisEventStore(client, prefix, { timeoutMs: TIMEOUT_MS });
  const put = client.nostrPutRegular.bind(client);
  let puts = 0;
  client.nostrPutRegular = (...args: Parameters<typeof put>) => {
    const sent = put(...args);
    if (++puts === lostAt) {
      redis.signal('SIGSTOP');
      client.stream.destroy();
      setTimeout(() => redis.signal('SIGCONT'), TIMEOUT_MS + 100);
    }
    return sent;
  };
  return { store, close: () => client.disconnect() };
}

async function allHeld(store: RedisEventStore, wanted = events): Promise<boolean> {
  try {
    return (await store.getEvents(wanted.map((event) => event.id))).every((held) => held !== null && !('deleted' in held));
  } catch {
    return false;
  }
}

async function expectExactFigures(store: RedisEventStore, target = note, reactions = REACTIONS): Promise<void> {
  // The counts of events by kind are left out: a fault between a write and its relations leaves
  // them off until `relations rebuild` (docs/operations.md).
  await expectExact(store, { kinds: false });
  const [stats] = await store.relations.stats([target.id]);
  expect(stats?.reactions.pubkeys).toBe(reactions);
}

/**
 * The sync scenario's faults, from when publishing starts: Redis hangs 2.5 s, then every client
 * is killed, then Redis hangs 1.5 s (both past SYNC_TIMEOUT_MS: the client gives up on what was
 * in flight, which Redis then runs), and the relay drops every connection once in between.
 */
async function syncFaults(relay: LoopbackRelay): Promise<void> {
  await sleep(400);
  redis.signal('SIGSTOP');
  await sleep(2500);
  redis.signal('SIGCONT');
  await sleep(300);
  await relay.stop();
  await relay.start();
  await sleep(300);
  await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
  await sleep(300);
  redis.signal('SIGSTOP');
  await sleep(1500);
  redis.signal('SIGCONT');
}

describe('relationship figures under store faults', () => {
  it.runIf(SYNC_ROUNDS > 0)(`sync: pauses, killed connections and a relay that drops every connection leave them equal to the rebuild (${SYNC_ROUNDS} rounds)`, async () => {
    const elapsed: number[] = [];
    for (let round = 0; round < SYNC_ROUNDS; round++) {
      const relay = await startLoopbackRelay();
      const client = connectRedis({ url: redis.url, timeoutMs: SYNC_TIMEOUT_MS });
      client.on('error', () => {});
      await waitUntilReady(client, 5000);
      const store = new RedisEventStore(client, `faults-sync-${round}:`, { timeoutMs: SYNC_TIMEOUT_MS });
      const sync = new RelaySync({ relays: [relay.url], kinds: [1, 7], store, logger: captureLogs('silent').logger });
      try {
        sync.start();
        await expect.poll(() => relay.requests.length, { timeout: 5000, interval: 20 }).toBeGreaterThan(0);
        const started = Date.now();
        const faulted = syncFaults(relay);
        // Published over about 3 s, 110 events every 100 ms, while the faults happen.
        for (let start = 0; start < syncEvents.length; start += 110) {
          relay.add(...syncEvents.slice(start, start + 110));
          await sleep(100);
        }
        await faulted;
        // Within about 10 s of the first published, most rounds; reconnecting backs off after each
        // failed write (1 s, 2 s, 4 s...), so some take 25 s on a loaded machine.
        await expect.poll(() => allHeld(store, syncEvents), { timeout: 45_000, interval: 250 }).toBe(true);
        elapsed.push(Date.now() - started);
        await expect.poll(() => sync.unwritten, { timeout: 10_000, interval: 50 }).toBe(0);
        await sync.stop();
        await expectExactFigures(store, syncNote, SYNC_REACTIONS);
      } finally {
        redis.signal('SIGCONT');
        await sync.stop();
        await relay.stop();
        client.disconnect();
      }
    }
    console.info(`faulted sync: every event held after ${elapsed.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s`);
  }, 30_000 + SYNC_ROUNDS * 55_000);

  it('import: pauses and killed connections during the batches leave them equal to the rebuild', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { store, close } = await openStore(`faults-import-${round}:`);
      try {
        // Read over about 1.5 s, in batches of 20, so that the faults fall on the writes.
        const lines = async function* () {
          for (let start = 0; start < events.length; start += 20) {
            yield `${events.slice(start, start + 20).map(serializeEvent).join('\n')}\n`;
            await sleep(60);
          }
        };
        const [summary] = await Promise.all([importEvents(Readable.from(lines()), store, { batchSize: 20, writeAttempts: 20 }), storeFaults()]);
        expect(summary.stored + summary.duplicate).toBe(events.length);
        await expectExactFigures(store);
      } finally {
        close();
      }
    }
  }, 120_000);

  it('import of follow lists, their replacements and deletions by `a` tag, the connection lost right after a slot changed hands: the follows equal the rebuild', async () => {
    const at = Math.floor(Date.now() / 1000) - 600;
    const pool = Array.from({ length: 30 }, (_, index) => signed(`followed ${index}`).pubkey);
    const listOf = (author: number, version: number) =>
      signed(`list-author ${author}`, { kind: 3, created_at: at + version, tags: pool.filter((_, index) => (index * 7 + author + version * 3) % 5 < 3).map((pubkey) => ['p', pubkey]) });
    // 40 authors' lists, each replaced twice, and every fourth author's deleted by `a` tag at the end.
    const lists = [0, 1, 2].flatMap((version) => Array.from({ length: 40 }, (_, author) => listOf(author, version)));
    const deletions = Array.from({ length: 10 }, (_, n) => signed(`list-author ${4 * n}`, { kind: 5, created_at: at + 10, tags: [['a', `3:${listOf(4 * n, 0).pubkey}:`]] }));
    const written = [...lists, ...deletions];
    for (const [round, lostAt] of [7, 45, 83].entries()) {
      const client = connectRedis({ url: redis.url, timeoutMs: TIMEOUT_MS });
      client.on('error', () => {});
      await waitUntilReady(client, 5000);
      const store = new RedisEventStore(client, `faults-lists-${round}:`, { timeoutMs: TIMEOUT_MS });
      // The `lostAt`-th change of a slot reaches Redis, which runs it; its reply never comes.
      const replace = client.nostrReplaceEvent.bind(client);
      let replaces = 0;
      client.nostrReplaceEvent = (...args: Parameters<typeof replace>) => {
        const sent = replace(...args);
        if (++replaces === lostAt) {
          redis.signal('SIGSTOP');
          client.stream.destroy();
          setTimeout(() => redis.signal('SIGCONT'), TIMEOUT_MS + 100);
        }
        return sent;
      };
      try {
        const lines = async function* () {
          for (let start = 0; start < written.length; start += 10) {
            yield `${written.slice(start, start + 10).map(serializeEvent).join('\n')}\n`;
            await sleep(20);
          }
        };
        const summary = await importEvents(Readable.from(lines()), store, { batchSize: 10, writeAttempts: 20 });
        expect(summary.read).toBe(written.length);
        expect(summary.rejected).toBe(0);
        expect(replaces).toBeGreaterThan(lostAt);
        await expectExact(store, { kinds: false });
        // Every pubkey's followers: the authors whose last list names it, less the deleted ones.
        const counts = await store.relations.followCounts(pool);
        const expected = pool.map((pubkey) => Array.from({ length: 40 }, (_, author) => author).filter((author) => author % 4 !== 0 && listOf(author, 2).tags.some((tag) => tag[1] === pubkey)).length);
        expect(counts.map((count) => count.followers)).toEqual(expected);
      } finally {
        redis.signal('SIGCONT');
        client.disconnect();
      }
    }
  }, 120_000);
});
