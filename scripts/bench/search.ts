// `npm run bench:search`: searchProfiles (target p99 ≤ 20 ms over 100,000 profiles), in
// one run, side by side on both stores:
// 1. latency of the store's search (one call, as the resolver makes it) and of the GraphQL field over
//    HTTP on loopback, p50 and p99 over a mix of queries: one letter, two, three, whole words,
//    two-word queries, NIP-05 domains, and words nobody has;
// 2. bytes of the search index per profile: Redis (MEMORY USAGE of its keys) and LMDB (pages of
//    the `relations` database, with and without the search index's keys).
//
//   npm run bench:search -- --profiles 100000 --lists 20000 --follows 100 --queries 2000
//
// Names are drawn from common first names, generated surnames and a few dozen domains, so that
// prefixes are as uneven as real ones (many "ma…", few "zy…"); followers from --lists follow lists
// of --follows each, popular pubkeys first (a Zipf-like draw). Events are related straight into the
// index (relateStored: search needs no signatures), to measure reads, not signing. Uses a private
// redis-server unless REDIS_URL is set.
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { NostrEvent } from '../../src/nostr/event.js';
import { queryWords } from '../../src/nostr/profile-search.js';
import type { EventStore } from '../../src/store/event-store.js';
import { totalUsage } from './redis-memory.js';
import { fixed, lmdbBytes, openStorePair, printTable } from './store-pair.js';
import { startTestServer } from '../../test/support/test-server.js';

const { values: options } = parseArgs({
  options: {
    profiles: { type: 'string', default: '100000' },
    lists: { type: 'string', default: '20000' },
    follows: { type: 'string', default: '100' },
    queries: { type: 'string', default: '2000' },
  },
});

const FIRST_NAMES = ['james', 'mary', 'john', 'patricia', 'robert', 'jennifer', 'michael', 'linda', 'william', 'elizabeth', 'david', 'barbara', 'richard', 'susan', 'joseph', 'jessica', 'thomas', 'sarah', 'charles', 'karen', 'christopher', 'nancy', 'daniel', 'lisa', 'matthew', 'betty', 'anthony', 'margaret', 'mark', 'sandra', 'donald', 'ashley', 'steven', 'kimberly', 'paul', 'emily', 'andrew', 'donna', 'joshua', 'michelle', 'jack', 'satoshi', 'hal', 'adam', 'nick', 'pablo', 'fiatjaf', 'will', 'derek', 'jeff', 'odell', 'lyn', 'gigi', 'max', 'marty', 'preston', 'vitor', 'karnage', 'rabble', 'jb', 'mike', 'alex', 'sam', 'ben', 'leo', 'zoe', 'yuki', 'hiro', 'chen', 'wei', 'ana', 'lucas', 'maria', 'jose', 'juan', 'ahmed', 'fatima', 'ivan', 'olga', 'pierre', 'hans', 'sven', 'raj', 'priya', 'kofi', 'amara'];
const SYLLABLES = ['ka', 'lo', 'mi', 'ran', 'ten', 'bur', 'ge', 'son', 'ley', 'vin', 'dor', 'sey', 'wa', 'ta', 'na', 'be', 'ro', 'qui', 'zy', 'xo', 'fen', 'mar', 'tin', 'el', 'ar', 'ish', 'ov', 'ski', 'berg', 'ston'];
const DOMAINS = ['nostr.com', 'primal.net', 'iris.to', 'nostrplebs.com', 'snort.social', 'getalby.com', 'damus.io', 'nostr.band', 'zaps.lol', 'stacker.news', 'bitcoiner.chat', 'nostrich.house', 'habla.news', 'nos.social', 'coracle.social', 'example.com', 'mostr.pub', 'nostr.wine', 'current.fyi', 'yakihonne.com'];

/** A deterministic random stream. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    return state / 2 ** 32;
  };
}

const hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** Unsigned events with the fields the index reads (relateStored relates what is stored already). */
function fake(kind: number, pubkey: string, created_at: number, tags: string[][], content: string, index: number): NostrEvent {
  return { id: hex(`search bench ${kind} ${index}`), pubkey, created_at, kind, tags, content, sig: '0'.repeat(128) };
}

interface World {
  profiles: NostrEvent[];
  lists: NostrEvent[];
  queries: string[];
}

function makeWorld(profiles: number, lists: number, follows: number, queries: number): World {
  const next = random(7);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T;
  const surname = () => Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(SYLLABLES)).join('');
  const pubkeys = Array.from({ length: profiles }, (_, index) => hex(`search bench pubkey ${index}`));
  const names: string[][] = [];
  const events = pubkeys.map((pubkey, index) => {
    const first = pick(FIRST_NAMES);
    const last = surname();
    const handle = next() < 0.5 ? `${first}${Math.floor(next() * 1000)}` : `${first}_${last}`;
    const fields: Record<string, string> = { name: handle, display_name: `${first[0]?.toUpperCase()}${first.slice(1)} ${last}` };
    if (next() < 0.6) fields.nip05 = `${handle}@${pick(DOMAINS)}`;
    names.push([first, last, handle]);
    return fake(0, pubkey, 1_700_000_000 + index, [], JSON.stringify({ ...fields, about: 'bench profile' }), index);
  });
  // Popular pubkeys first: a draw skewed toward the start of the pool.
  const followLists = Array.from({ length: lists }, (_, index) => {
    const followed = new Set<string>();
    while (followed.size < follows) followed.add(pubkeys[Math.floor(profiles * next() ** 3)] as string);
    return fake(3, hex(`search bench follower ${index}`), 1_700_000_000, [...followed].map((pubkey) => ['p', pubkey]), '', index);
  });
  const asked: string[] = [];
  for (let index = 0; index < queries; index++) {
    const [first, last, handle] = pick(names);
    const shapes = [
      () => (first as string).slice(0, 1),
      () => (first as string).slice(0, 2),
      () => (first as string).slice(0, 3),
      () => first as string,
      () => handle as string,
      () => `${first} ${(last as string).slice(0, 2)}`,
      () => `${(last as string).slice(0, 3)} ${(first as string).slice(0, 1)}`,
      () => pick(DOMAINS).split('.')[0] as string,
      () => `${first} ${pick(DOMAINS).split('.')[0]}`,
      () => `zz${Math.floor(next() * 1e6)}`,
    ];
    asked.push(pick(shapes)());
  }
  return { profiles: events, lists: followLists, queries: asked };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] as number;

async function timeStore(store: EventStore, queries: readonly string[]): Promise<number[]> {
  const times: number[] = [];
  for (const query of queries) {
    const started = performance.now();
    await store.relations.searchProfiles(queryWords(query), 20);
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

async function timeGraphql(store: Parameters<typeof startTestServer>[0], queries: readonly string[]): Promise<number[]> {
  const server = await startTestServer(store);
  try {
    const times: number[] = [];
    for (const query of queries) {
      const started = performance.now();
      const response = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'query ($q: String!) { searchProfiles(query: $q) { pubkey name followersCount } }', variables: { q: query } }),
      });
      const body = (await response.json()) as { errors?: unknown };
      if (response.status !== 200 || body.errors) throw new Error(`${query}: ${response.status} ${JSON.stringify(body)}`);
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b);
  } finally {
    await server.close();
  }
}

async function relateInBatches(store: EventStore, events: readonly NostrEvent[]): Promise<void> {
  for (let start = 0; start < events.length; start += 500) await store.relateStored(events.slice(start, start + 500));
}

async function main() {
  const profiles = Number(options.profiles);
  const world = makeWorld(profiles, Number(options.lists), Number(options.follows), Number(options.queries));
  const prefix = 'srch0:';
  const stores = await openStorePair(prefix, 'bench-search-');
  const { redis, lmdb, admin } = stores;
  const rows: string[] = [];
  try {
    const relationsBefore = lmdbBytes(lmdb, 'relations');
    for (const [name, store] of [['Redis', redis], ['LMDB', lmdb]] as const) {
      process.stderr.write(`${name}: relating ${profiles} profiles and ${world.lists.length} follow lists\n`);
      const started = performance.now();
      await relateInBatches(store, world.profiles);
      const profileSeconds = (performance.now() - started) / 1000;
      // A profile relates nothing but its words: what the index grew by is the search index.
      const searchBytes = name === 'Redis' ? (await totalUsage(admin, `${prefix}s:{s}:*`)).bytes : lmdbBytes(lmdb, 'relations') - relationsBefore;
      await relateInBatches(store, world.lists);
      const withFollowers = name === 'Redis' ? ` (${fixed((await totalUsage(admin, `${prefix}s:{s}:*`)).bytes / profiles)} B with every followed pubkey's count)` : '';
      rows.push(`| ${name}: search index | ${fixed(searchBytes / profiles)} B/profile${withFollowers} | |`);
      rows.push(`| ${name}: profiles indexed (relateStored, search index with the rest) | ${fixed(profiles / profileSeconds)} profiles/s | |`);
      // Warm, then measure: the store's call, then the GraphQL field over HTTP.
      await timeStore(store, world.queries.slice(0, 200));
      const direct = await timeStore(store, world.queries);
      const graphql = await timeGraphql(store, world.queries);
      rows.push(`| ${name}: searchProfiles, store call, p50 / p99 / max (${world.queries.length} queries) | ${fixed(percentile(direct, 50), 2)} / ${fixed(percentile(direct, 99), 2)} / ${fixed(direct.at(-1) as number, 1)} ms | |`);
      rows.push(`| ${name}: searchProfiles over GraphQL (HTTP, loopback), p50 / p99 | ${fixed(percentile(graphql, 50), 2)} / ${fixed(percentile(graphql, 99), 2)} ms | p99 ${fixed(percentile(graphql, 99) / 20, 2)}× the 20 ms target |`);
    }
    printTable(`npm run bench:search -- --profiles ${profiles} --lists ${options.lists} --follows ${options.follows} --queries ${options.queries}`, rows);
  } finally {
    await stores.close();
  }
}

await main();
