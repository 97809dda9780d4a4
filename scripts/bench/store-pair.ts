// What the relationship benchmarks (relations.ts, follows.ts) share: both stores side by side on a
// private redis-server (unless REDIS_URL is set) and a temporary directory, an LMDB database's size,
// GraphQL queries timed interleaved over HTTP on loopback, and the printed table.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { LmdbEventStore } from '../../src/store/embedded/lmdb-event-store.js';
import { connectRedis, waitUntilReady } from '../../src/store/redis/connect.js';
import { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { deleteByPrefix, type PrivateRedis, startPrivateRedis } from '../../test/support/redis-server.js';
import { startTestServer } from '../../test/support/test-server.js';

export const rate = (count: number, seconds: number) => count / seconds;
export const fixed = (value: number, digits = 0) => value.toFixed(digits);

export interface StorePair {
  redis: RedisEventStore;
  lmdb: LmdbEventStore;
  /** A connection of its own, for MEMORY USAGE and the like. */
  admin: Redis;
  /** The Redis client of `redis`, for more stores under other prefixes. */
  client: ReturnType<typeof connectRedis>;
  /** The LMDB store's directory. */
  dir: string;
  /** The Redis both stores' figures come from (a private redis-server unless REDIS_URL is set). */
  url: string;
  close(): Promise<void>;
}

/** A Redis store under `prefix` and an LMDB store in a fresh directory (`noteSearch`: both keep the note search index). */
export async function openStorePair(prefix: string, directoryName: string, { noteSearch = false }: { noteSearch?: boolean } = {}): Promise<StorePair> {
  let privateRedis: PrivateRedis | undefined;
  const redisUrl = process.env.REDIS_URL ?? (privateRedis = await startPrivateRedis()).url;
  const admin = new Redis(redisUrl);
  const client = connectRedis({ url: redisUrl, timeoutMs: 60_000 });
  await waitUntilReady(client, 5000);
  const redis = new RedisEventStore(client, prefix, { noteSearch });
  const dir = mkdtempSync(join(tmpdir(), directoryName));
  const lmdb = new LmdbEventStore(dir, { noteSearch });
  const close = async () => {
    await deleteByPrefix(admin, prefix);
    admin.disconnect();
    await redis.close();
    await lmdb.close();
    rmSync(dir, { recursive: true, force: true });
    await privateRedis?.stop();
  };
  return { redis, lmdb, admin, client, dir, url: redisUrl, close };
}

/**
 * The size of an LMDB database in pages (branch, leaf and overflow) times the page size. `binary`:
 * a database of binary keys and values (opened with the store's own encodings: opening one a second
 * time with other encodings broke the store's range reads of it for the rest of the process).
 */
export function lmdbBytes(store: LmdbEventStore, name: string, binary = false): number {
  const options = binary ? { name, keyEncoding: 'binary', encoding: 'binary' } : { name, encoding: 'string' };
  const db = (store as unknown as { root: { openDB(options: object): { getStats(): Record<string, number> } } }).root.openDB(options);
  const stats = db.getStats();
  return ((stats.treeBranchPageCount ?? 0) + (stats.treeLeafPageCount ?? 0) + (stats.overflowPages ?? 0)) * (stats.pageSize ?? 4096);
}

/**
 * What the entries of a string database under some key prefixes hold: the bytes of their keys and
 * values, and with LMDB's own cost of a leaf entry (an 8-byte node header and a 2-byte pointer on
 * its page; pages are not full, so the pages themselves hold more).
 */
export function lmdbEntryBytes(store: LmdbEventStore, name: string, prefixes: readonly string[]): { entries: number; bytes: number } {
  const db = (store as unknown as { root: { openDB(options: object): { getRange(options: object): Iterable<{ key: string; value: string }> } } }).root.openDB({ name, encoding: 'string' });
  let entries = 0;
  let bytes = 0;
  for (const prefix of prefixes) {
    const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
    for (const { key, value } of db.getRange({ start: prefix, end })) {
      entries += 1;
      bytes += Buffer.byteLength(key) + Buffer.byteLength(value) + 10;
    }
  }
  return { entries, bytes };
}

/**
 * Each query's median time over `rounds` rounds, the queries interleaved within a round, sequential
 * requests to the service's app on a loopback port over `store`. A query that fails, or answers
 * without `data`, stops the run.
 */
export async function medianGraphqlTimes(store: RedisEventStore | LmdbEventStore, queries: readonly [label: string, query: string][], rounds: number): Promise<Map<string, number>> {
  const server = await startTestServer(store);
  try {
    const times = new Map<string, number[]>(queries.map(([label]) => [label, []]));
    for (let round = 0; round < rounds; round++) {
      for (const [label, query] of queries) {
        const started = performance.now();
        const response = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
        const body = (await response.json()) as { errors?: unknown; data?: unknown };
        if (response.status !== 200 || body.errors || !body.data) throw new Error(`${label}: ${response.status} ${JSON.stringify(body)}`);
        times.get(label)?.push(performance.now() - started);
      }
    }
    return new Map(
      [...times].map(([label, all]) => {
        const sorted = [...all].sort((a, b) => a - b);
        return [label, sorted[Math.floor(sorted.length / 2)] as number];
      }),
    );
  } finally {
    await server.close();
  }
}

export interface Timing {
  median: number;
  p99: number;
}

/** A request of `timeRequests`: a GraphQL query (with its variables), or a GET path. */
export type TimedRequest = { query: string; variables?: Record<string, unknown> } | { path: string };

/**
 * Each request's median and p99 over `rounds` rounds (after ten that warm up), the requests
 * interleaved within a round, sequential, to the service's app on a loopback port over `store`. A
 * request that fails, or a GraphQL answer with errors, stops the run.
 */
export async function timeRequests(store: RedisEventStore | LmdbEventStore, requests: readonly [label: string, request: TimedRequest][], rounds: number): Promise<Map<string, Timing>> {
  const server = await startTestServer(store, { graphql: { maxCost: 20_000 } });
  try {
    const times = new Map<string, number[]>(requests.map(([label]) => [label, []]));
    for (let round = -10; round < rounds; round++) {
      // Each round starts one request later: what a request leaves behind (garbage to collect, a
      // warm cache) falls on a different one each round, not always on the one after it.
      const start = ((round % requests.length) + requests.length) % requests.length;
      for (const [label, request] of [...requests.slice(start), ...requests.slice(0, start)]) {
        const started = performance.now();
        const response =
          'path' in request
            ? await fetch(`${server.url}${request.path}`)
            : await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
        const text = await response.text();
        if (response.status !== 200 || ('query' in request && (JSON.parse(text) as { errors?: unknown }).errors)) throw new Error(`${label}: ${response.status} ${text.slice(0, 500)}`);
        if (round >= 0) times.get(label)?.push(performance.now() - started);
      }
    }
    return new Map(
      [...times].map(([label, all]) => {
        const sorted = [...all].sort((a, b) => a - b);
        return [label, { median: sorted[Math.floor(sorted.length / 2)] as number, p99: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] as number }];
      }),
    );
  } finally {
    await server.close();
  }
}

/** The rows on stderr as they are, and the command with its table on stdout (for BENCHMARKS.md). */
export function printTable(command: string, rows: readonly string[]): void {
  process.stderr.write(`${rows.join('\n')}\n`);
  process.stdout.write(`\n${command}\n\n| what | figure | ratio |\n| --- | --- | --- |\n${rows.join('\n')}\n`);
}
