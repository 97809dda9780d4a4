// `npx tsx scripts/bench/feed.ts`: the home feed (schema/feed.ts), in one run, side by side on both
// stores: a pubkey following --authors authors who wrote --notes notes between them (kind 1, spread
// over 30 days), and GraphQL over HTTP on loopback: a feed page of 20 (the first page, and a page
// further on, from a cursor) against a `profile(pubkey)` read, sequential requests, interleaved,
// median and p99 of --rounds each; and `GET /feed` against its fixed operation (the same page, each
// event with its people's profiles) over /graphql.
//
//   npx tsx scripts/bench/feed.ts --authors 1000 --notes 200000 --rounds 200
//
// The events are written straight into the stores (putEvents trusts its callers: no signatures
// are made or checked; what is measured is reads). Uses a private redis-server unless REDIS_URL is set.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { LmdbEventStore } from '../../src/store/embedded/lmdb-event-store.js';
import type { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { startTestServer } from '../../test/support/test-server.js';
import { fixed, openStorePair, printTable, type Timing, timeRequests } from './store-pair.js';
import { seeded } from './recall/network/random.js';

const { values: options } = parseArgs({
  options: {
    authors: { type: 'string', default: '1000' },
    notes: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '200' },
  },
});

const hex = (text: string) => createHash('sha256').update(text).digest('hex');
const T = 1_700_000_000;
const SPREAD = 30 * 86_400;

function unsigned(pubkey: string, kind: number, createdAt: number, tags: string[][], content: string, salt: string): NostrEvent {
  return { id: hex(`${pubkey} ${kind} ${createdAt} ${salt}`), pubkey, created_at: createdAt, kind, tags, content, sig: '0'.repeat(128) };
}


async function fill(store: RedisEventStore | LmdbEventStore, viewer: string, authors: string[], notes: number): Promise<void> {
  const next = seeded(47);
  const batch: NostrEvent[] = [];
  const flush = async () => {
    await store.putEvents(batch.splice(0));
  };
  for (let n = 0; n < notes; n++) {
    const author = authors[Math.floor(next() * authors.length)] as string;
    batch.push(unsigned(author, 1, T + Math.floor(next() * SPREAD), [], `note ${n} of a thousand words or so`, String(n)));
    if (batch.length >= 5000) await flush();
  }
  batch.push(
    unsigned(viewer, 0, T, [], '{"name":"viewer","about":"reads a feed"}', 'profile'),
    unsigned(viewer, 3, T, authors.map((author) => ['p', author]), '', 'follows'),
  );
  await flush();
}

async function main() {
  const authorCount = Number(options.authors);
  const notes = Number(options.notes);
  const rounds = Number(options.rounds);
  const viewer = hex('the viewer');
  const authors = Array.from({ length: authorCount }, (_, n) => hex(`author ${n}`));
  const operation = readFileSync(new URL('../../src/http/operations/feed.graphql', import.meta.url), 'utf8');
  const stores = await openStorePair('feed0:', 'bench-feed-');
  const rows: string[] = [];
  try {
    for (const [name, store] of [['Redis', stores.redis], ['LMDB', stores.lmdb]] as const) {
      const started = performance.now();
      await fill(store, viewer, authors, notes);
      process.stderr.write(`${name}: ${notes} notes written in ${fixed((performance.now() - started) / 1000, 1)} s\n`);
      // A cursor some pages in: the 200th item of the feed.
      const deep = await fetchCursor(store, viewer);
      const feed = (after?: string) => `{ pubkey(pubkey: "${viewer}") { feed(first: 20${after ? `, after: "${after}"` : ''}) { edges { cursor node { id kind createdAt content } } pageInfo { hasNextPage endCursor } } } }`;
      const timing = await timeRequests(
        store,
        [
          ['profile', { query: `{ profile(pubkey: "${viewer}") { pubkey name about } }` }],
          ['feed', { query: feed() }],
          ['feed deep', { query: feed(deep) }],
          ['REST', { path: `/feed?pubkey=${viewer}&limit=20` }],
          ['operation', { query: operation, variables: { pubkey: viewer, first: 20 } }],
        ],
        rounds,
      );
      const profile = timing.get('profile') as Timing;
      for (const label of ['feed', 'feed deep']) {
        const figures = timing.get(label) as Timing;
        rows.push(
          `| GraphQL on ${name}: a feed page of 20${label === 'feed deep' ? ' after 200 items' : ''} of a pubkey following ${authorCount} authors over ${notes} notes, against profile(pubkey) (${rounds} rounds) | median ${fixed(figures.median, 2)} ms, p99 ${fixed(figures.p99, 2)} ms vs median ${fixed(profile.median, 2)} ms, p99 ${fixed(profile.p99, 2)} ms | ${fixed(figures.median / profile.median, 1)}× |`,
        );
      }
      const rest = timing.get('REST') as Timing;
      const fixedOperation = timing.get('operation') as Timing;
      rows.push(
        `| ${name}: GET /feed (limit 20) against its fixed operation over /graphql (${rounds} rounds) | median ${fixed(rest.median, 2)} ms, p99 ${fixed(rest.p99, 2)} ms vs median ${fixed(fixedOperation.median, 2)} ms, p99 ${fixed(fixedOperation.p99, 2)} ms | ${fixed(rest.median / fixedOperation.median, 2)}× (≤ 1.2×) |`,
      );
    }
    printTable(`npx tsx scripts/bench/feed.ts --authors ${options.authors} --notes ${options.notes} --rounds ${options.rounds}`, rows);
  } finally {
    await stores.close();
  }
}

/** The endCursor after ten pages of 20. */
async function fetchCursor(store: RedisEventStore | LmdbEventStore, viewer: string): Promise<string> {
  const server = await startTestServer(store);
  try {
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const query = `{ pubkey(pubkey: "${viewer}") { feed(first: 20${after ? `, after: "${after}"` : ''}) { pageInfo { endCursor } } } }`;
      const response = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
      const body = (await response.json()) as { data: { pubkey: { feed: { pageInfo: { endCursor: string } } } } };
      after = body.data.pubkey.feed.pageInfo.endCursor;
    }
    return after as string;
  } finally {
    await server.close();
  }
}

await main();
