import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { inject } from 'vitest';
import { parseClusterNodes } from '../../src/config/redis-cluster-nodes.js';
import { connectRedis, connectRedisCluster, waitUntilReady } from '../../src/store/redis/connect.js';
import type { RedisClient } from '../../src/store/redis/mget-by-slot.js';
import { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { deleteByPrefix } from './redis-server.js';
import type { StoreOptions } from './store-under-test.js';

export interface TestStore {
  store: RedisEventStore;
  client: RedisClient;
  prefix: string;
  /** The single Redis's URL; on a cluster run, the seed nodes as REDIS_CLUSTER_NODES takes them. */
  url: string;
  /** A second store on the same Redis and prefix, as after a restart of the process. */
  reopen(): Promise<RedisEventStore>;
  /** Another connection to the same Redis (or cluster), ready; the caller disconnects it. */
  connectAdmin(): Promise<RedisClient>;
  /** Deletes every key under this store's prefix and closes the connection. */
  cleanup(): Promise<void>;
}

/** The Redis Cluster of a cluster run (`npm run test:cluster`), or undefined. */
export function testClusterNodes(): string[] | undefined {
  const nodes = inject('redisClusterNodes');
  return nodes.length > 0 ? nodes : undefined;
}

/**
 * The environment `serve`, `import` and `sync` need to reach the run's store: REDIS_URL, or
 * REDIS_CLUSTER_NODES on a cluster run, the other unset (it may be exported: both is a config error).
 */
export function storeEnv(prefix: string): Record<string, string | undefined> {
  const nodes = testClusterNodes();
  return nodes
    ? { REDIS_CLUSTER_NODES: nodes.join(','), REDIS_URL: undefined, REDIS_KEY_PREFIX: prefix }
    : { REDIS_URL: inject('redisUrl'), REDIS_CLUSTER_NODES: undefined, REDIS_KEY_PREFIX: prefix };
}

/** Where a test store lives: a single Redis's URL, or a cluster's seeds as REDIS_CLUSTER_NODES takes them. */
type Where = { url: string } | { seeds: string };

function connectClient(where: Where, timeoutMs: number): RedisClient {
  if ('url' in where) return connectRedis({ url: where.url, timeoutMs });
  const seeds = parseClusterNodes(where.seeds);
  if (typeof seeds === 'string') throw new Error(seeds);
  return connectRedisCluster({ ...seeds, timeoutMs });
}

/** A client to `where`, its errors left to the tests, ready within `readyMs` (else disconnected, and the failure thrown). */
async function openClient(where: Where, readyMs: number): Promise<RedisClient> {
  const client = connectClient(where, 2000);
  client.on('error', () => {});
  client.on('node error', () => {});
  try {
    await waitUntilReady(client, readyMs);
  } catch (error) {
    client.disconnect();
    throw error;
  }
  return client;
}

async function connect(where: Where, prefix: string, { publicUrl, pendingTtlSeconds, followBucketSize, noteSearch }: StoreOptions = {}) {
  const client = await openClient(where, 5000);
  return { client, store: new RedisEventStore(client, prefix, { publicUrl, pendingTtlSeconds, followBucketSize, timeoutMs: 2000, noteSearch: noteSearch ?? true }) };
}

/**
 * A store under a key prefix of its own, with store options (PUBLIC_URL…): on `url` if given, else
 * on the run's Redis, or on its Redis Cluster in a cluster run.
 */
export async function createTestStore(url?: string, options: StoreOptions = {}): Promise<TestStore> {
  const nodes = url === undefined ? testClusterNodes() : undefined;
  const where: Where = nodes ? { seeds: nodes.join(',') } : { url: url ?? inject('redisUrl') };
  const prefix = `test:${randomUUID()}:`;
  const { client, store } = await connect(where, prefix, options);
  const cleanup = async () => {
    await store.close().catch(() => {});
    // A connection of its own: the store's may be closed, or its Redis gone.
    try {
      await deleteEverywhere(where, prefix);
    } catch {
      // Redis is gone (outage tests): nothing left to clean.
    }
  };
  return {
    store,
    client,
    prefix,
    url: 'url' in where ? where.url : where.seeds,
    reopen: async () => (await connect(where, prefix, options)).store,
    connectAdmin: () => openClient(where, 5000),
    cleanup,
  };
}

/** Deletes every key under `prefix`, on each master of a cluster. */
async function deleteEverywhere(where: Where, prefix: string): Promise<void> {
  const admin = await openClient(where, 2000);
  try {
    const nodes = admin instanceof Cluster ? admin.nodes('master') : [admin as Redis];
    await Promise.all(nodes.map((node) => deleteByPrefix(node, prefix)));
  } finally {
    admin.disconnect();
  }
}
