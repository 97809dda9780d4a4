// `npm run bench:follows`: the follow index, in one run, side by side:
// 1. import of follow lists (kind 3, --follows each, over a pool of --pool pubkeys, popular ones
//    first: a Zipf-like draw) on each store against signature verification alone of the same lists;
// 2. bytes per follow edge: Redis (MEMORY USAGE of the index's follow keys) and LMDB (the
//    `relations` database's pages);
// 3. GraphQL over HTTP on loopback: followersCount of a pubkey with --popular followers against one
//    with 10, and a page of 100 followers against a page of 10 (sequential requests, interleaved).
//
//   npm run bench:follows -- --lists 10000 --follows 1000 --pool 100000 --popular 100000
//
// The --popular followers of step 3 are related straight into the index (relateStored: the lists
// need no signatures to be related), to measure reads, not signing. Uses a private redis-server
// unless REDIS_URL is set.
import { closeSync, createReadStream, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { finalizeEvent } from 'nostr-tools/wasm';
import { importEvents } from '../../src/import/import-events.js';
import { type NostrEvent, serializeEvent } from '../../src/nostr/event.js';
import { verifyNostrEvent } from '../../src/nostr/verify-event.js';
import type { EventStore } from '../../src/store/event-store.js';
import { followedPool, hex, identity, makeFollowLists as makeLists } from './dataset.js';
import { totalUsage } from './redis-memory.js';
import { fixed, lmdbBytes, medianGraphqlTimes, openStorePair, printTable, rate } from './store-pair.js';

const { values: options } = parseArgs({
  options: {
    lists: { type: 'string', default: '10000' },
    follows: { type: 'string', default: '1000' },
    pool: { type: 'string', default: '100000' },
    popular: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '200' },
  },
});

/**
 * Seconds to import the lists' file (read as `import` reads one; written before the clock starts, as
 * verification alone is timed on lines already read).
 */
async function importAll(store: EventStore, file: string, lists: number): Promise<number> {
  const started = performance.now();
  const summary = await importEvents(createReadStream(file), store);
  if (summary.stored !== lists) throw new Error(`stored ${summary.stored} of ${lists}`);
  return (performance.now() - started) / 1000;
}

/**
 * Seconds to verify the file's lines alone (parse + verify, one thread), timed once they are read:
 * they are dropped on return (this process holds nothing of them while the stores import the file).
 */
function verifyAlone(file: string): number {
  const lines = linesOf(file);
  const started = performance.now();
  for (const line of lines) if (!verifyNostrEvent(JSON.parse(line)).ok) throw new Error('does not verify');
  return (performance.now() - started) / 1000;
}

/** The first `count` lines of a file (all of them unless told), read 8 MB at a time until they are there. */
function linesOf(file: string, count = Number.POSITIVE_INFINITY): string[] {
  const fd = openSync(file, 'r');
  try {
    const lines: string[] = [];
    let pending = Buffer.alloc(0);
    const chunk = Buffer.alloc(8 * 1024 * 1024);
    for (let read = readSync(fd, chunk); read > 0 && lines.length < count; read = readSync(fd, chunk)) {
      pending = Buffer.concat([pending, chunk.subarray(0, read)]);
      let start = 0;
      for (let newline = pending.indexOf(10); newline !== -1 && lines.length < count; newline = pending.indexOf(10, start)) {
        lines.push(pending.toString('utf8', start, newline));
        start = newline + 1;
      }
      pending = pending.subarray(start);
    }
    if (lines.length < count && pending.length > 0) lines.push(pending.toString('utf8'));
    return lines;
  } finally {
    closeSync(fd);
  }
}

async function main() {
  const lists = Number(options.lists);
  const follows = Number(options.follows);
  const pool = followedPool(Number(options.pool));
  process.stderr.write(`signing ${lists} follow lists of ${follows} follows\n`);
  const signed = makeLists(lists, follows, pool);
  // The lists as a file, as `import` reads them; of the events only what their replacements take is
  // kept: a bench holding ten thousand parsed lists (gigabytes of heap) slowed every import's
  // garbage collection, which `import` itself never carries.
  const inputDir = mkdtempSync(join(tmpdir(), 'bench-follows-input-'));
  const file = join(inputDir, 'lists.jsonl');
  const fd = openSync(file, 'w');
  for (const event of signed) writeSync(fd, `${serializeEvent(event)}\n`);
  closeSync(fd);
  signed.length = 0;
  const verifyRate = rate(lists, verifyAlone(file));
  const rows: string[] = [`| signature verification alone (parse + verify), lists of ${follows} follows | ${fixed(verifyRate)} lists/s | |`];
  const edges = lists * follows;

  const prefix = 'fol0:';
  const stores = await openStorePair(prefix, 'bench-follows-');
  const { redis, lmdb, admin } = stores;
  try {
    for (const [name, store] of [['Redis', redis], ['LMDB', lmdb]] as const) {
      const importRate = rate(lists, await importAll(store, file, lists));
      rows.push(`| import into ${name}, follow index included | ${fixed(importRate)} lists/s (${fixed((importRate * follows) / 1000)}k follows/s) | ${fixed(importRate / verifyRate, 2)}× verification |`);
    }
    // Replacements: the first lists again, each with one follow more (how follow lists change);
    // read back from the file only now (their tags held through the imports, a million arrays, were
    // marked by every garbage collection of the imports).
    const replaced = linesOf(file, Math.min(1000, lists)).map((line, n) => {
      const event = JSON.parse(line) as NostrEvent;
      const author = identity(n);
      const next = finalizeEvent({ kind: 3, created_at: event.created_at + 1, tags: [...event.tags, ['p', hex(`new follow ${n}`)]], content: '' }, author.secretKey);
      return JSON.parse(serializeEvent(next)) as NostrEvent;
    });
    const replacedStarted = performance.now();
    for (const event of replaced) if (!verifyNostrEvent(JSON.parse(serializeEvent(event))).ok) throw new Error('does not verify');
    const replacedVerify = rate(replaced.length, (performance.now() - replacedStarted) / 1000);
    const replacedLines = replaced.map((event) => `${serializeEvent(event)}\n`);
    for (const [name, store] of [['Redis', redis], ['LMDB', lmdb]] as const) {
      const started = performance.now();
      const summary = await importEvents(Readable.from(replacedLines), store);
      if (summary.replaced !== replaced.length) throw new Error(`replaced ${summary.replaced} of ${replaced.length}`);
      const replaceRate = rate(replaced.length, (performance.now() - started) / 1000);
      rows.push(`| import into ${name} of ${replaced.length} newer versions of those lists, one follow more each (written as the difference) | ${fixed(replaceRate)} lists/s | ${fixed(replaceRate / replacedVerify, 2)}× verification (${fixed(replacedVerify)}/s) |`);
    }
    let followBytes = 0;
    for (const type of ['fl', 'fn', 'fs', 'fg']) followBytes += (await totalUsage(admin, `${prefix}${type}:*`)).bytes;
    const followedKeys = (await totalUsage(admin, `${prefix}fl:*`)).keys + (await totalUsage(admin, `${prefix}fn:*`)).keys;
    rows.push(
      `| Redis: the follow index (MEMORY USAGE of \`fl\`, \`fn\`, \`fs\` and \`fg\` keys; ${followedKeys} pubkeys followed) | ${fixed(followBytes / (edges + replaced.length))} bytes per follow | ${edges + replaced.length} follows |`,
      `| LMDB: the \`follower-logs\` and \`relations\` databases | ${fixed((lmdbBytes(lmdb, 'follower-logs', true) + lmdbBytes(lmdb, 'relations')) / (edges + replaced.length))} bytes per follow | |`,
    );

    // 3. A pubkey with --popular followers and one with 10, related straight into the index.
    const star = hex('the popular one');
    const quiet = hex('the quiet one');
    const popular = Number(options.popular);
    const fake = (n: number, followed: string): NostrEvent => ({ id: hex(`list ${followed} ${n}`), pubkey: hex(`fan ${n}`), created_at: 1_700_000_000, kind: 3, tags: [['p', followed]], content: '', sig: '0'.repeat(128) });
    for (const store of [redis, lmdb]) {
      for (let start = 0; start < popular; start += 5000) await store.relateStored(Array.from({ length: Math.min(5000, popular - start) }, (_, n) => fake(start + n, star)));
      await store.relateStored(Array.from({ length: 10 }, (_, n) => fake(n, quiet)));
    }
    const profile = (pubkey: string) => ({ id: hex(`profile ${pubkey}`), pubkey, created_at: 1_700_000_000, kind: 0, tags: [], content: '{"name":"x"}', sig: '0'.repeat(128) });
    const rounds = Number(options.rounds);
    const count = (pubkey: string) => `{ profile(pubkey: "${pubkey}") { followersCount } }`;
    const page = (first: number) => `{ profile(pubkey: "${star}") { followers(first: ${first}) { edges { pubkey } pageInfo { hasNextPage endCursor } totalCount } } }`;
    const queries: [string, string][] = [
      [`followersCount of ${popular}`, count(star)],
      ['followersCount of 10', count(quiet)],
      ['a page of 100 followers', page(100)],
      ['a page of 10 followers', page(10)],
    ];
    for (const [name, store] of [['Redis', redis], ['LMDB', lmdb]] as const) {
      // Profiles for the two (the queries read them), stored without verification.
      await store.putEvents([profile(star), profile(quiet)] as NostrEvent[]).catch(() => undefined);
      const median = await medianGraphqlTimes(store, queries, rounds);
      const ratio = (a: string, b: string) => `${fixed(median.get(a) ?? 0, 2)} ms vs ${fixed(median.get(b) ?? 0, 2)} ms | ${fixed((median.get(a) ?? 0) / (median.get(b) ?? 1), 2)}×`;
      rows.push(
        `| GraphQL on ${name}: followersCount of a pubkey with ${popular} followers, against one with 10 (median of ${rounds}) | ${ratio(`followersCount of ${popular}`, 'followersCount of 10')} |`,
        `| GraphQL on ${name}: a page of 100 of its followers, against a page of 10 | ${ratio('a page of 100 followers', 'a page of 10 followers')} |`,
      );
    }
    const starBytes = (await totalUsage(admin, `${prefix}f[lns]:{${Buffer.from(star, 'hex').toString('base64url')}}*`)).bytes;
    rows.push(`| Redis: the followers of the pubkey with ${popular} (their buckets) | ${fixed(Number(starBytes) / popular)} bytes per follower | ${fixed(Number(starBytes) / 2 ** 20, 1)} MiB |`);
    printTable(`npm run bench:follows -- --lists ${options.lists} --follows ${options.follows} --pool ${options.pool} --popular ${options.popular} --rounds ${options.rounds}`, rows);
  } finally {
    await stores.close();
    rmSync(inputDir, { recursive: true, force: true });
  }
}

await main();
