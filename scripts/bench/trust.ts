// `npx tsx scripts/bench/trust.ts`: a reader's web of trust (store/trust-webs.ts), in one run, side
// by side on both stores: a viewer following --follows pubkeys who follow --each pubkeys apiece
// (drawn from a pool of --pool, so that hop 2 overlaps as real graphs do), and a note with --replies
// replies and --reactions reactions by authors half in the web. GraphQL over HTTP on loopback: the
// first `replies(viewer:)` (the web built cold), then later ones against the same read without a
// viewer; the first `stats(viewer:)` of a second viewer following the same (its web cold), then later
// ones against `stats` without a viewer; sequential requests, interleaved, median and p99 of --rounds
// each; and the web's bytes per member. Redis is measured twice: without the hot cache, and with it
// at its default size (HOT_CACHE_MB=64, as `serve` runs), which holds the relating events unpacked.
//
//   npx tsx scripts/bench/trust.ts --follows 1000 --each 500 --pool 200000 --replies 100 --reactions 100 --rounds 200
//
// The events are written straight into the stores (putEvents trusts its callers: no signatures
// are made or checked; what is measured is reads). Uses a private redis-server unless REDIS_URL is set.
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { NostrEvent } from '../../src/nostr/event.js';
import { trustWebsOf } from '../../src/schema/trust.js';
import type { LmdbEventStore } from '../../src/store/embedded/lmdb-event-store.js';
import { connectHotCache } from '../../src/store/redis/connect.js';
import { HotCache } from '../../src/store/redis/hot-cache.js';
import { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { startTestServer } from '../../test/support/test-server.js';
import { fixed, openStorePair, printTable, type Timing, timeRequests } from './store-pair.js';
import { seeded } from './recall/network/random.js';

const { values: options } = parseArgs({
  options: {
    follows: { type: 'string', default: '1000' },
    each: { type: 'string', default: '500' },
    pool: { type: 'string', default: '200000' },
    replies: { type: 'string', default: '100' },
    reactions: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '200' },
  },
});

const PREFIX = 'trust0:';
const hex = (text: string) => createHash('sha256').update(text).digest('hex');
const T = 1_700_000_000;

function unsigned(pubkey: string, kind: number, createdAt: number, tags: string[][], content: string, salt: string): NostrEvent {
  return { id: hex(`${pubkey} ${kind} ${createdAt} ${salt}`), pubkey, created_at: createdAt, kind, tags, content, sig: '0'.repeat(128) };
}

interface World {
  viewer: string;
  /** Follows whom `viewer` follows: its web is built by its first read (stats). */
  secondViewer: string;
  note: NostrEvent;
  events: NostrEvent[];
}

function makeWorld(follows: number, each: number, poolSize: number, replies: number, reactions: number): World {
  const next = seeded(48);
  const pool = Array.from({ length: poolSize }, (_, n) => hex(`pool ${n}`));
  const viewer = hex('the viewer');
  const hopOne = Array.from({ length: follows }, (_, n) => hex(`followed ${n}`));
  const secondViewer = hex('the second viewer');
  const events: NostrEvent[] = [viewer, secondViewer].map((reader) => unsigned(reader, 3, T, hopOne.map((pubkey) => ['p', pubkey]), '', `follows of ${reader}`));
  for (const [n, pubkey] of hopOne.entries()) {
    const named = new Set<string>();
    while (named.size < each) named.add(pool[Math.floor(next() * pool.length)] as string);
    events.push(unsigned(pubkey, 3, T, [...named].map((other) => ['p', other]), '', `list ${n}`));
  }
  const note = unsigned(viewer, 1, T, [], 'the note', 'note');
  events.push(note);
  for (let n = 0; n < replies; n++) {
    // Half by pool members (most in the web at these sizes), half by strangers.
    const author = n % 2 === 0 ? (pool[Math.floor(next() * pool.length)] as string) : hex(`stranger ${n}`);
    events.push(unsigned(author, 1, T + 1 + n, [['e', note.id, '', 'root'], ['p', viewer]], `reply ${n}`, `reply ${n}`));
  }
  for (let n = 0; n < reactions; n++) {
    const author = n % 2 === 0 ? (pool[Math.floor(next() * pool.length)] as string) : hex(`reacting stranger ${n}`);
    events.push(unsigned(author, 7, T + 1 + n, [['e', note.id], ['p', viewer]], ['+', '🤙', '-'][n % 3] as string, `reaction ${n}`));
  }
  return { viewer, secondViewer, note, events };
}

async function main() {
  const [follows, each, poolSize, replyCount, reactionCount, rounds] = [options.follows, options.each, options.pool, options.replies, options.reactions, options.rounds].map(Number) as [number, number, number, number, number, number];
  const world = makeWorld(follows, each, poolSize, replyCount, reactionCount);
  const stores = await openStorePair(PREFIX, 'bench-trust-');
  const rows: string[] = [];
  let closeCached = async () => {};
  try {
    const { reader, subscriber } = connectHotCache({ url: stores.url, timeoutMs: 60_000 });
    const cache = new HotCache({ reader, subscriber }, 64 * 2 ** 20);
    // The same keys as `stores.redis`, written by it.
    const cached = new RedisEventStore(stores.client, PREFIX, { hotCache: cache });
    closeCached = () => cache.close();
    for (const [name, store, written] of [['Redis', stores.redis, false], ['Redis with the hot cache', cached, true], ['LMDB', stores.lmdb, false]] as const) {
      const started = performance.now();
      if (!written) for (let at = 0; at < world.events.length; at += 100) await store.putEvents(world.events.slice(at, at + 100));
      process.stderr.write(`${name}: ${world.events.length} events written in ${fixed((performance.now() - started) / 1000, 1)} s\n`);
      if (store === cached) while (!cache.active) await new Promise((resolve) => setTimeout(resolve, 10));
      const replies = (viewer: boolean) => `{ event(id: "${world.note.id}") { replies(first: 20${viewer ? `, viewer: "${world.viewer}"` : ''}) { edges { node { id pubkey content } } pageInfo { hasNextPage endCursor } } } }`;
      const stats = (reader?: string) => `{ event(id: "${world.note.id}") { stats${reader ? `(viewer: "${reader}")` : ''} { replies threadReplies quotes reposts reactions { pubkeys likes dislikes byContent { content pubkeys } } } } }`;
      const first = await firstRead(store, replies(true));
      const webs = trustWebsOf(store).stats;
      const members = webs.memberBytes / 8;
      const firstStats = await firstRead(store, stats(world.secondViewer));
      const timing = await timeRequests(
        store,
        [
          ['plain', { query: replies(false) }],
          ['viewer', { query: replies(true) }],
          ['plain stats', { query: stats() }],
          ['viewer stats', { query: stats(world.viewer) }],
        ],
        rounds,
      );
      const plain = timing.get('plain') as Timing;
      const viewer = timing.get('viewer') as Timing;
      const plainStats = timing.get('plain stats') as Timing;
      const viewerStats = timing.get('viewer stats') as Timing;
      rows.push(
        `| GraphQL on ${name}: the first replies(first: 20, viewer:) of a viewer following ${follows} who follow ${each} each (a web of ${members} members, built cold) | ${fixed(first, 0)} ms | ≤ 1,000 ms |`,
        `| GraphQL on ${name}: later replies(first: 20, viewer:) against the same read without a viewer (${rounds} rounds, ${replyCount} replies) | median ${fixed(viewer.median, 2)} ms, p99 ${fixed(viewer.p99, 2)} ms vs median ${fixed(plain.median, 2)} ms, p99 ${fixed(plain.p99, 2)} ms | ${fixed(viewer.median / plain.median, 1)}× (≤ 3×) |`,
        `| GraphQL on ${name}: the first stats(viewer:) of another viewer following the same (its web built cold; ${replyCount + reactionCount} events relate) | ${fixed(firstStats, 0)} ms | ≤ 1,000 ms |`,
        `| GraphQL on ${name}: later stats(viewer:) against stats without a viewer (${rounds} rounds) | median ${fixed(viewerStats.median, 2)} ms, p99 ${fixed(viewerStats.p99, 2)} ms vs median ${fixed(plainStats.median, 2)} ms, p99 ${fixed(plainStats.p99, 2)} ms | ${fixed(viewerStats.median / plainStats.median, 1)}× (≤ 3×) |`,
        `| ${name}: the web held | ${webs.memberBytes} bytes for ${members} members (${webs.bytes} with its bookkeeping) | ${fixed(webs.memberBytes / Math.max(1, members), 1)} bytes a member (≤ 8) |`,
      );
    }
    printTable(`npx tsx scripts/bench/trust.ts --follows ${options.follows} --each ${options.each} --pool ${options.pool} --replies ${options.replies} --reactions ${options.reactions} --rounds ${options.rounds}`, rows);
  } finally {
    await closeCached();
    await stores.close();
  }
}

/** One request on a fresh server of the store: its wall time in ms. */
async function firstRead(store: RedisEventStore | LmdbEventStore, query: string): Promise<number> {
  const server = await startTestServer(store);
  try {
    const started = performance.now();
    const response = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
    const body = (await response.json()) as { errors?: unknown };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return performance.now() - started;
  } finally {
    await server.close();
  }
}

await main();
