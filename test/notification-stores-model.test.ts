import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'lmdb';
import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { NOTIFICATION_TYPES } from '../src/nostr/notifications.js';
import { LmdbEventStore } from '../src/store/embedded/lmdb-event-store.js';
import type { EventStore } from '../src/store/event-store.js';
import { checkRelations, type RelationCheck } from '../src/store/relation-check.js';
import { replyPositionOf } from '../src/store/relation-index.js';
import { pubkeyOf, signed } from './support/events.js';
import { createTestStore } from './support/test-store.js';

/**
 * Both stores keep a recipient's notifications the same way (store/notification-index.ts): an
 * event with one live reason as its page-order entry alone, others with a record of reasons. Random
 * worlds (replies, quotes, mentions, reactions, reposts, follow lists that may quote, deletions of
 * notifying events and of the recipient's notes; shuffled, in batches, one event sometimes sent
 * twice) go to LMDB and to Redis in the same batches: the two read the same notifications and
 * counts, `relations check` finds nothing on either, and LMDB reads the same after a reopen. In
 * half the worlds, LMDB's record-less entries are turned into the earlier form (a record, an empty
 * entry) midway, as a directory written before kept them, and the rest is written over them.
 */

/** Worlds per run (FUZZ_RUNS for a long run), from FUZZ_SEED. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const SEED = Number(process.env.FUZZ_SEED ?? 4747);

const NAMES = ['model v', 'model a', 'model b', 'model c'] as const;
const V = pubkeyOf('model v');
const T0 = 1_700_000_000;

/** A small deterministic generator (a linear congruential one): a failing seed replays. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
}

function world(seed: number, draw: () => number): NostrEvent[] {
  const pick = <T>(items: readonly T[]) => items[Math.floor(draw() * items.length)] as T;
  const notes = Array.from({ length: 1 + Math.floor(draw() * 3) }, (_, n) => signed('model v', { created_at: T0 + n, content: `v ${seed} ${n}` }));
  const other = signed(pick(['model a', 'model b']), { created_at: T0 + 1, content: `other ${seed}` });
  const targets = [...notes, other];
  const target = () => pick(targets).id;
  const notifying: NostrEvent[] = [];
  for (let n = 4 + Math.floor(draw() * 8); n > 0; n--) {
    const author = draw() < 0.1 ? 'model v' : pick(['model a', 'model b', 'model c']);
    const at = T0 + 5 + Math.floor(draw() * 5);
    const tags: string[][] = [];
    const shape = draw();
    if (shape < 0.35) {
      // A reply, a quote, a mention, or several at once.
      if (draw() < 0.6) tags.push(['e', target(), '', 'root']);
      if (draw() < 0.3) tags.push(['e', target(), '', 'reply']);
      if (draw() < 0.4) tags.push(['q', target()]);
      if (draw() < 0.5) tags.push(['p', pick([V, V, pubkeyOf('model a')])]);
      notifying.push(signed(author, { created_at: at, content: `note ${seed} ${n}`, tags }));
    } else if (shape < 0.62) {
      tags.push(['e', target()]);
      if (draw() < 0.5) tags.push(['p', V]);
      notifying.push(signed(author, { kind: shape < 0.5 ? 7 : 6, created_at: at, content: `+${seed}.${n}`, tags }));
    } else {
      // A follow list (a later one by the same author replaces it), which may quote.
      for (let p = Math.floor(draw() * 3); p > 0; p--) tags.push(['p', pick([V, pubkeyOf('model a'), pubkeyOf('model b')])]);
      if (draw() < 0.4) tags.push(['q', target()]);
      notifying.push(signed(author, { kind: 3, created_at: at, content: `list ${seed}.${n}`, tags }));
    }
  }
  const deletions = Array.from({ length: Math.floor(draw() * 4) }, (_, n) => {
    const victim = draw() < 0.3 ? pick(notes) : pick(notifying);
    const author = NAMES.find((name) => pubkeyOf(name) === victim.pubkey) as string;
    return signed(author, { kind: 5, created_at: T0 + 20 + n, content: `delete ${seed}.${n}`, tags: [['e', victim.id]] });
  });
  const events = [...targets, ...notifying, ...deletions];
  for (let index = events.length - 1; index > 0; index--) {
    const other = Math.floor(draw() * (index + 1));
    [events[index], events[other]] = [events[other] as NostrEvent, events[index] as NostrEvent];
  }
  if (draw() < 0.3) events.push(pick(events));
  return events;
}

async function notificationsOf(store: EventStore) {
  const entries = await store.relations.notifications(V, NOTIFICATION_TYPES, null, 1000);
  return { entries: entries.map(({ id, type, token }) => `${id}:${type}:${token}`), counts: await store.relations.notificationCounts(V) };
}

/** Every difference `relations check` reports, of any kind (notifications, counts, follows, …). */
function differencesOf(check: RelationCheck): unknown[] {
  return Object.entries(check).flatMap(([name, value]) => (name.endsWith('ifferences') && Array.isArray(value) ? value : []));
}

/** LMDB's record-less entries written back in the earlier form: a record of the token, an empty entry. */
function toEarlierForm(store: LmdbEventStore): void {
  const db = (store.relations as unknown as { db: Database<string, string> }).db;
  const entries = [...db.getRange({ start: 'nz:', end: 'nz;' })];
  for (const { key, value } of entries) {
    const [, recipient, letter, place] = key.split(':') as [string, string, string, string];
    const record = `nr:${recipient}:${replyPositionOf(place).id}`;
    if (db.get(record) !== undefined) continue;
    db.putSync(record, letter + value);
    db.putSync(key, '');
  }
}

describe('notifications: LMDB and Redis keep the same, and relations check agrees (random worlds)', () => {
  it(`${RUNS} worlds from seed ${SEED}`, async () => {
    const failures: string[] = [];
    for (let run = 0; run < RUNS; run++) {
      const seed = SEED + run;
      const draw = random(seed);
      const events = world(seed, draw);
      const earlierAt = run % 2 === 1 ? Math.floor(draw() * events.length) : -1;
      const dir = mkdtempSync(join(tmpdir(), 'notification-model-'));
      const lmdb = new LmdbEventStore(dir);
      const redis = await createTestStore();
      try {
        for (let at = 0; at < events.length; ) {
          if (earlierAt >= 0 && at >= earlierAt && at - earlierAt < 4) toEarlierForm(lmdb);
          const batch = events.slice(at, at + 1 + Math.floor(draw() * 4));
          at += batch.length;
          await lmdb.putEvents(batch);
          await redis.store.putEvents(batch);
        }
        const fromLmdb = await notificationsOf(lmdb);
        const fromRedis = await notificationsOf(redis.store);
        const differences = [...differencesOf(await checkRelations(lmdb)), ...differencesOf(await checkRelations(redis.store))];
        await lmdb.close();
        const reopened = new LmdbEventStore(dir);
        const again = await notificationsOf(reopened);
        await reopened.close();
        if (JSON.stringify(fromLmdb) !== JSON.stringify(fromRedis) || differences.length > 0 || JSON.stringify(again) !== JSON.stringify(fromLmdb)) {
          failures.push(`seed ${seed}: ${JSON.stringify({ lmdb: fromLmdb, redis: fromRedis, differences, reopened: again })}`);
        }
      } finally {
        await lmdb.close().catch(() => {});
        await redis.cleanup();
        rmSync(dir, { recursive: true, force: true });
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);
});
