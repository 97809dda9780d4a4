import { connectHotCache, connectRedis, waitUntilReady } from '../../src/store/redis/connect.js';
import { HotCache } from '../../src/store/redis/hot-cache.js';
import { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { until } from './polling.js';
import { startTestServer, type TestServer, type TestServerOptions } from './test-server.js';

export interface CachedInstance {
  store: RedisEventStore;
  cache: HotCache;
  server: TestServer;
  close(): Promise<void>;
}

/** An instance of the service on a writer's Redis and prefix, with a hot cache, served over HTTP. */
export async function cachedInstance(url: string, prefix: string, maxBytes = 4 * 2 ** 20, options: TestServerOptions = {}): Promise<CachedInstance> {
  const client = connectRedis({ url, timeoutMs: 2000 });
  client.on('error', () => {});
  await waitUntilReady(client, 5000);
  const { reader, subscriber } = connectHotCache({ url, timeoutMs: 2000 });
  const cache = new HotCache({ reader, subscriber }, maxBytes);
  const store = new RedisEventStore(client, prefix, { timeoutMs: 2000, hotCache: cache });
  await until(() => cache.active);
  const server = await startTestServer(store, options);
  return {
    store,
    cache,
    server,
    close: async () => {
      await server.close();
      await store.close();
    },
  };
}
