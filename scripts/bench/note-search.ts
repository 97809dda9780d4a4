// `npx tsx scripts/bench/note-search.ts`: search of notes (schema/note-search.ts), in one run, side by
// side on both stores:
// - the import: --import notes written into the stores with the index (NOTE_SEARCH) and the same
//   notes into twins without it, chunks alternating, events/s of each (until 2026-12-04 the twins
//   were written kind 1111, which no home timeline holds: the index was charged for those too);
// - the index's size against the indexed text's bytes (Redis: MEMORY USAGE of its keys; LMDB: the
//   pages of its database, `note-search`);
// - over --notes notes (words drawn from a Zipf vocabulary; one word, `often`, in half of them), first
//   pages of 20 over GraphQL on loopback against a `profile(pubkey)` read, median and p99 of --rounds,
//   interleaved: two words, a word in half the notes with another, that word alone, a prefix.
//
//   npx tsx scripts/bench/note-search.ts --notes 1000000 --import 100000 --rounds 200 [--stores redis|lmdb]
//
// The events are written straight into the stores (putEvents trusts its callers: no signatures are
// made or checked). Uses a private redis-server unless REDIS_URL is set.
import { parseArgs } from 'node:util';
import type { NostrEvent } from '../../src/nostr/event.js';
import { LmdbEventStore } from '../../src/store/embedded/lmdb-event-store.js';
import type { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { RedisEventStore as RedisStore } from '../../src/store/redis/redis-event-store.js';
import { fixed, lmdbBytes, openStorePair, printTable, rate, type Timing, timeRequests } from './store-pair.js';
import { hex, note, T, texts, textsOf, wordOf } from './note-texts.js';
import { totalUsage } from './redis-memory.js';
import { deleteByPrefix } from '../../test/support/redis-server.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { values: options } = parseArgs({
  options: {
    notes: { type: 'string', default: '1000000' },
    import: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '200' },
    // --stores redis (or lmdb): one store only, for an A/B of a change to it.
    stores: { type: 'string', default: 'redis,lmdb' },
  },
});
const measured = new Set(options.stores.split(','));
if (![...measured].every((name) => name === 'redis' || name === 'lmdb') || measured.size === 0) throw new Error('--stores: redis, lmdb or both');

const BATCH = 2000;

async function main() {
  const noteCount = Number(options.notes);
  const importCount = Number(options.import);
  const rounds = Number(options.rounds);
  const rows: string[] = [];
  const stores = await openStorePair('ns0:', 'bench-note-search-', { noteSearch: true });
  // The twins, without the index (the stores' default): the same writes but the search index.
  const plainRedis = new RedisStore(stores.client, 'ns1:');
  const plainDir = mkdtempSync(join(tmpdir(), 'bench-note-search-plain-'));
  const plainLmdb = new LmdbEventStore(plainDir);
  try {
    const imported = texts(importCount, 5);
    const textBytes = imported.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
    for (const [name, indexed, plain] of (
      [
        ['Redis', stores.redis, plainRedis],
        ['LMDB', stores.lmdb, plainLmdb],
      ] as const
    ).filter(([name]) => measured.has(name.toLowerCase()))) {
      let indexedMs = 0;
      let plainMs = 0;
      for (let start = 0; start < importCount; start += BATCH) {
        const end = Math.min(importCount, start + BATCH);
        const ones = [];
        const twins = [];
        for (let n = start; n < end; n++) {
          ones.push(note(n, 1, imported[n] as string));
          twins.push(note(n, 1, imported[n] as string));
        }
        let started = performance.now();
        await indexed.putEvents(ones);
        indexedMs += performance.now() - started;
        started = performance.now();
        await plain.putEvents(twins);
        plainMs += performance.now() - started;
      }
      const indexedRate = rate(importCount, indexedMs / 1000);
      const plainRate = rate(importCount, plainMs / 1000);
      rows.push(`| ${name}: import of ${importCount} notes into a store with the search index against the same into one without it, batches of ${BATCH} alternating | ${fixed(indexedRate)} vs ${fixed(plainRate)} events/s | ${fixed(indexedRate / plainRate, 2)}× (≥ 0.75×) |`);
    }
    if (measured.has('redis')) {
      const redisIndex = await totalUsage(stores.admin, 'ns0:q:{*');
      rows.push(`| Redis: the search index of ${importCount} notes (${redisIndex.keys} keys, MEMORY USAGE) against their text (${textBytes} bytes) | ${fixed(redisIndex.bytes / 1e6, 1)} MB, ${fixed(redisIndex.bytes / importCount)} bytes a note | ${fixed(redisIndex.bytes / textBytes, 2)}× (≤ 1.5×) |`);
    }
    if (measured.has('lmdb')) {
      // Its own database's pages (the relationship database holds none of it).
      const lmdbIndex = lmdbBytes(stores.lmdb, 'note-search', true);
      rows.push(`| LMDB: the search index of ${importCount} notes (the pages of its database, \`note-search\`) against their text | ${fixed(lmdbIndex / 1e6, 1)} MB, ${fixed(lmdbIndex / importCount)} bytes a note | ${fixed(lmdbIndex / textBytes, 2)}× (≤ 1.5×) |`);
    }

    // The rest of the notes, for the queries.
    const restCount = noteCount - importCount;
    for (const [name, store] of (
      [
        ['Redis', stores.redis],
        ['LMDB', stores.lmdb],
      ] as const
    ).filter(([name]) => measured.has(name.toLowerCase()))) {
      const started = performance.now();
      const rest = textsOf(restCount, 6);
      let allText = textBytes;
      for (let start = 0; start < restCount; start += BATCH) {
        const batch: NostrEvent[] = [];
        for (let n = start; n < Math.min(restCount, start + BATCH); n++) {
          const text = rest.next().value as string;
          allText += Buffer.byteLength(text);
          batch.push(note(importCount + n, 1, text));
        }
        await store.putEvents(batch);
      }
      const restSeconds = (performance.now() - started) / 1000;
      process.stderr.write(`${name}: ${restCount} more notes written in ${fixed(restSeconds, 1)} s\n`);
      if (restCount > 0) {
        rows.push(`| ${name}: the other ${restCount} notes written (batches of ${BATCH}, with the index) | ${fixed(rate(restCount, restSeconds))} events/s | |`);
        // The index's size over every note (LMDB: a read of its page counts; on Redis a MEMORY USAGE a key is long at this size: the import's row says it).
        if (name === 'LMDB') {
          const pages = lmdbBytes(stores.lmdb, 'note-search', true);
          rows.push(`| LMDB: the search index of all ${noteCount} notes against their text (${allText} bytes) | ${fixed(pages / 1e6, 1)} MB, ${fixed(pages / noteCount)} bytes a note | ${fixed(pages / allText, 2)}× (≤ 1.5×) |`);
        }
      }
      const profileOf = hex('author 1');
      await store.putEvents([{ id: hex('profile'), pubkey: profileOf, created_at: T, kind: 0, tags: [], content: '{"name":"author one"}', sig: '0'.repeat(128) }]);
      const search = (query: string) => ({ query: `{ searchNotes(query: "${query}", first: 20) { edges { node { id createdAt content } } pageInfo { hasNextPage endCursor } } }` });
      // Ranks 300 and 301 are in about 0.3% of the notes each: a two-word query finds a few hundred.
      const two = `${wordOf(300)} ${wordOf(301)}`;
      const often = `often ${wordOf(40)}`;
      const prefix = wordOf(1000).slice(0, 5);
      const timing = await timeRequests(
        store as RedisEventStore | LmdbEventStore,
        [
          ['profile', { query: `{ profile(pubkey: "${profileOf}") { pubkey name } }` }],
          ['two', search(two)],
          ['often', search(often)],
          ['often alone', search('often')],
          ['prefix', search(prefix)],
        ],
        rounds,
      );
      const profile = timing.get('profile') as Timing;
      for (const [label, what] of [
        ['two', `two words ("${two}")`],
        ['often', `a word in half the notes and another ("${often}")`],
        ['often alone', 'a word in half the notes alone ("often")'],
        ['prefix', `a prefix ("${prefix}")`],
      ] as const) {
        const figures = timing.get(label) as Timing;
        rows.push(
          `| GraphQL on ${name}: searchNotes first page of 20 over ${noteCount} notes, ${what}, against profile(pubkey) (${rounds} rounds) | median ${fixed(figures.median, 2)} ms, p99 ${fixed(figures.p99, 2)} ms vs median ${fixed(profile.median, 2)} ms | ${fixed(figures.median / profile.median, 1)}× |`,
        );
      }
    }
    printTable(`npx tsx scripts/bench/note-search.ts --notes ${options.notes} --import ${options.import} --rounds ${options.rounds}${options.stores === 'redis,lmdb' ? '' : ` --stores ${options.stores}`}`, rows);
  } finally {
    // The twin shares the pair's Redis client (closed with the pair): its keys only.
    await deleteByPrefix(stores.admin, 'ns1:');
    await plainLmdb.close();
    rmSync(plainDir, { recursive: true, force: true });
    await stores.close();
  }
}

await main();
