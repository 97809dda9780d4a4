import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { connectRedis, RedisEventStore, waitUntilReady } from '../../src/store/redis/redis-event-store.js';
import { deleteByPrefix } from './redis-server.js';
import type { StoreOptions } from './store-under-test.js';

export interface TestStore {
  store: RedisEventStore;
  client: ReturnType<typeof connectRedis>;
  prefix: string;
  url: string;
  /** A second store on the same Redis and prefix, as after a restart of the process. */
  reopen(): Promise<RedisEventStore>;
  /** Deletes every key under this store's prefix and closes the connection. */
  cleanup(): Promise<void>;
}

async function connect(url: string, prefix: string, { publicUrl, pendingTtlSeconds }: StoreOptions = {}) {
  const client = connectRedis({ url, keyPrefix: prefix, timeoutMs: 2000 });
  client.on('error', () => {});
  await waitUntilReady(client, 5000);
  return { client, store: new RedisEventStore(client, prefix, publicUrl, pendingTtlSeconds) };
}

/** A store on the run's Redis (or `url`) under a key prefix of its own, with store options (PUBLIC_URL…). */
export async function createTestStore(url: string = inject('redisUrl'), options: StoreOptions = {}): Promise<TestStore> {
  const prefix = `test:${randomUUID()}:`;
  const { client, store } = await connect(url, prefix, options);
  const cleanup = async () => {
    await store.close().catch(() => {});
    // A connection of its own: the store's may be closed, or its Redis gone.
    const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    admin.on('error', () => {});
    try {
      await admin.connect();
      await deleteByPrefix(admin, prefix);
    } catch {
      // Redis is gone (outage tests): nothing left to clean.
    } finally {
      admin.disconnect();
    }
  };
  return { store, client, prefix, url, reopen: async () => (await connect(url, prefix, options)).store, cleanup };
}
