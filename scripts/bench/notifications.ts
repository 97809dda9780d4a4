// `npx tsx scripts/bench/notifications.ts`: notifications (store/notification-index.ts), in one
// run, side by side on both stores: a recipient of --notifications notifications (half mentions,
// half reactions to its 100 notes, by as many authors) and one of 10, read over HTTP on loopback:
// a GraphQL page of 20, notificationCounts, and GET /notifications against the same page by its
// fixed GraphQL operation, each against a `profile(pubkey)` read, sequential requests, interleaved,
// median and p99 of --rounds each; then Redis bytes per notification (MEMORY USAGE of the keys).
//
//   npx tsx scripts/bench/notifications.ts --notifications 1000000 --rounds 200
//
// The events are written straight into the stores (putEvents trusts its callers: no signatures
// are made or checked; what is measured is reads). Uses a private redis-server unless REDIS_URL is set.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { LmdbEventStore } from '../../src/store/embedded/lmdb-event-store.js';
import { NOTIFICATION_KEY_TYPES } from '../../src/store/redis/keys.js';
import type { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { fixed, lmdbEntryBytes, openStorePair, printTable, type TimedRequest, type Timing, timeRequests } from './store-pair.js';
import { totalUsage } from './redis-memory.js';

const { values: options } = parseArgs({
  options: {
    notifications: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '200' },
  },
});

const hex = (text: string) => createHash('sha256').update(text).digest('hex');
const T = 1_700_000_000;
const SPREAD = 30 * 86_400;
const PREFIX = 'notif0:';

function unsigned(pubkey: string, kind: number, createdAt: number, tags: string[][], content: string, salt: string): NostrEvent {
  return { id: hex(`${pubkey} ${kind} ${createdAt} ${salt}`), pubkey, created_at: createdAt, kind, tags, content, sig: '0'.repeat(128) };
}

/** The recipient's profile and 100 notes, then `count` notifications: mentions and reactions, alternating. */
async function fill(store: RedisEventStore | LmdbEventStore, recipient: string, count: number, salt: string): Promise<void> {
  const notes = Array.from({ length: 100 }, (_, n) => unsigned(recipient, 1, T + n, [], `note ${n}`, `${salt} note ${n}`));
  await store.putEvents([unsigned(recipient, 0, T, [], '{"name":"recipient","about":"is notified"}', `${salt} profile`), ...notes]);
  const batch: NostrEvent[] = [];
  for (let n = 0; n < count; n++) {
    const author = hex(`${salt} author ${n % 50_000}`);
    const at = T + 100 + Math.floor((n / count) * SPREAD);
    batch.push(
      n % 2 === 0
        ? unsigned(author, 1, at, [['p', recipient]], `hello, a mention ${n}`, `${salt} ${n}`)
        : unsigned(author, 7, at, [['e', (notes[n % 100] as NostrEvent).id], ['p', recipient]], '+', `${salt} ${n}`),
    );
    if (batch.length >= 5000) await store.putEvents(batch.splice(0));
  }
  await store.putEvents(batch.splice(0));
}

async function main() {
  const count = Number(options.notifications);
  const rounds = Number(options.rounds);
  const big = hex('the popular recipient');
  const small = hex('the quiet recipient');
  const operation = readFileSync(new URL('../../src/http/operations/notifications.graphql', import.meta.url), 'utf8');
  const stores = await openStorePair(PREFIX, 'bench-notifications-');
  const rows: string[] = [];
  try {
    for (const [name, store] of [['Redis', stores.redis], ['LMDB', stores.lmdb]] as const) {
      const started = performance.now();
      await fill(store, big, count, 'big');
      await fill(store, small, 10, 'small');
      process.stderr.write(`${name}: ${count + 10} notifications written in ${fixed((performance.now() - started) / 1000, 1)} s\n`);
      const requests: [string, TimedRequest][] = [['profile', { query: `{ profile(pubkey: "${big}") { pubkey name about } }` }]];
      for (const [who, pubkey] of [
        [`${count}`, big],
        ['10', small],
      ] as const) {
        requests.push(
          [`page ${who}`, { query: `{ pubkey(pubkey: "${pubkey}") { notifications(first: 20) { edges { cursor node { type createdAt event { id kind content } target { id } } } pageInfo { hasNextPage endCursor } } } }` }],
          [`counts ${who}`, { query: `{ pubkey(pubkey: "${pubkey}") { notificationCounts { total zap reply quote repost reaction mention follow } } }` }],
          [`REST ${who}`, { path: `/notifications?pubkey=${pubkey}&limit=20` }],
          [`operation ${who}`, { query: operation, variables: { pubkey, first: 20 } }],
        );
      }
      const timing = await timeRequests(store, requests, rounds);
      const profile = timing.get('profile') as Timing;
      const against = (label: string, base: Timing, what: string) => {
        const figures = timing.get(label) as Timing;
        rows.push(`| ${name}: ${what} | median ${fixed(figures.median, 2)} ms, p99 ${fixed(figures.p99, 2)} ms vs median ${fixed(base.median, 2)} ms, p99 ${fixed(base.p99, 2)} ms | ${fixed(figures.median / base.median, 2)}× |`);
      };
      for (const who of [`${count}`, '10']) {
        against(`page ${who}`, profile, `GraphQL notifications(first: 20) of a recipient of ${who}, against profile(pubkey)`);
        against(`counts ${who}`, profile, `GraphQL notificationCounts of a recipient of ${who}, against profile(pubkey)`);
        against(`REST ${who}`, timing.get(`operation ${who}`) as Timing, `GET /notifications (limit 20) of a recipient of ${who}, against its fixed operation over /graphql`);
      }
    }
    // Redis bytes per notification: every key of the notification index (inbound records of the
    // 200 notes, the two recipients' records and page orders).
    let bytes = 0;
    const byType: string[] = [];
    for (const type of NOTIFICATION_KEY_TYPES) {
      const usage = (await totalUsage(stores.admin, `${PREFIX}${type}:{*`)).bytes;
      bytes += usage;
      byType.push(`\`${type}\` ${fixed(usage / (count + 10), 1)}`);
    }
    rows.push(`| Redis: bytes per notification (MEMORY USAGE of the notification index's keys over ${count + 10} notifications, by key type) | ${fixed(bytes / (count + 10), 1)} bytes (${byType.join(', ')}) | |`);
    // LMDB: its entries' keys and values (store/embedded/lmdb-notification-index.ts), by kind.
    const lmdbByType = ['ni:', 'nr:', 'nz:', 'nd:'].map((prefix) => ({ prefix, ...lmdbEntryBytes(stores.lmdb, 'relations', [prefix]) }));
    const lmdbTotal = lmdbByType.reduce((sum, { bytes: held }) => sum + held, 0);
    rows.push(
      `| LMDB: bytes per notification (keys, values and LMDB's 10 bytes an entry of the notification index's entries in \`relations\`, by kind; pages hold more) | ${fixed(lmdbTotal / (count + 10), 1)} bytes (${lmdbByType.map(({ prefix, bytes: held }) => `\`${prefix.slice(0, -1)}\` ${fixed(held / (count + 10), 1)}`).join(', ')}) | |`,
    );
    printTable(`npx tsx scripts/bench/notifications.ts --notifications ${options.notifications} --rounds ${options.rounds}`, rows);
  } finally {
    await stores.close();
  }
}

await main();
