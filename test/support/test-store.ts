import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { connectRedis, RedisEventStore, waitUntilReady } from '../../src/store/redis/redis-event-store.js';

export interface TestStore {
  store: RedisEventStore;
  client: ReturnType<typeof connectRedis>;
  prefix: string;
  url: string;
  /** Deletes every key under this store's prefix and closes the connection. */
  cleanup(): Promise<void>;
}

/** A store on the run's Redis (or `url`) under a key prefix of its own. */
export async function createTestStore(url: string = inject('redisUrl')): Promise<TestStore> {
  const prefix = `test:${randomUUID()}:`;
  const client = connectRedis({ url, keyPrefix: prefix, timeoutMs: 2000 });
  client.on('error', () => {});
  await waitUntilReady(client, 5000);
  const store = new RedisEventStore(client, prefix);
  const cleanup = async () => {
    if (client.status === 'ready') {
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        if (keys.length > 0) await client.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
    await store.close();
  };
  return { store, client, prefix, url, cleanup };
}
