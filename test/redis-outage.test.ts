import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../src/store/redis/connect.js';
import { RedisEventStore } from '../src/store/redis/redis-event-store.js';
import { profile, signed } from './support/events.js';
import { freePort, type PrivateRedis, startPrivateRedis } from './support/redis-server.js';
import { getJson, startTestServer, type TestServer } from './support/test-server.js';
import { createTestStore, type TestStore } from './support/test-store.js';

// This file kills and restarts its own redis-server.
let redis: PrivateRedis;
let testStore: TestStore;
let server: TestServer;
const note = signed('author', { content: 'hello' });
const author = profile('author', { name: 'author' });

beforeAll(async () => {
  redis = await startPrivateRedis();
  testStore = await createTestStore(redis.url);
  await testStore.store.putEvents([note, author]);
  server = await startTestServer(testStore.store);
});
afterAll(async () => {
  await server?.close();
  await testStore?.store.close();
  await redis?.stop();
});

const INTERNAL = {
  status: 500,
  code: 'store_unavailable',
  message: 'The event index is unavailable. Try again shortly.',
};

/** GET that fails the test instead of hanging: a lookup must answer well within this. */
const timed = async (path: string) => {
  const started = performance.now();
  const response = await getJson(`${server.url}${path}`, { signal: AbortSignal.timeout(5000) });
  return { ...response, ms: performance.now() - started };
};

describe('when Redis goes away', () => {
  it('serves normally first', async () => {
    expect((await timed(`/event?id=${note.id}`)).status).toBe(200);
  });

  it('lookups answer 500 JSON at once, without internals; /healthz 200; /readyz 503', async () => {
    await redis.stop();
    for (const path of [`/event?id=${note.id}`, `/user-profile?pubkey=${author.pubkey}`]) {
      const response = await timed(path);
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.body).toEqual({ error: INTERNAL });
      expect(response.text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|redis|stack/i);
      expect(response.ms).toBeLessThan(3000);
    }
    expect((await timed('/healthz')).status).toBe(200);
    const ready = await timed('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ status: 'unavailable' });
    const graphql = await getJson(
      `${server.url}/graphql?query=${encodeURIComponent(`{ event(id: "${note.id}") { id } }`)}`,
      {
        headers: { accept: 'application/json' },
      },
    );
    expect(graphql.body).toMatchObject({
      data: { event: null },
      errors: [{ extensions: { code: 'store_unavailable' } }],
    });
    expect(graphql.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
  });

  it('the failure is logged with the request id', () => {
    const failures = server.logs
      .map(
        (line) =>
          JSON.parse(line) as { msg: string; reqId?: string; store?: string; err?: { type: string; message: string } },
      )
      .filter((log) => log.msg === 'lookup failed');
    expect(failures.length).toBeGreaterThan(0);
    expect(failures[0]?.reqId).toMatch(/^[0-9a-f-]{36}$/);
    // The log says what the body does not, in words: no stack, not the client's message.
    expect(failures[0]?.store).toBe('not connected');
    expect(failures[0]?.err).toBeUndefined();
  });

  it('recovers by itself when Redis is back (data is gone: this Redis keeps nothing on disk)', async () => {
    redis = await startPrivateRedis({ port: redis.port });
    const deadline = Date.now() + 10_000;
    while ((await timed('/readyz')).status !== 200) {
      if (Date.now() > deadline) throw new Error('did not recover');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await timed(`/event?id=${note.id}`)).status).toBe(404);
  });
});

describe('when Redis was never there', () => {
  it('the service still starts, lookups answer 500 and /readyz 503', async () => {
    const client = connectRedis({
      url: `redis://127.0.0.1:${await freePort()}`,
      timeoutMs: 500,
    });
    client.on('error', () => {});
    const store = new RedisEventStore(client, 'x:');
    const lonely = await startTestServer(store);
    try {
      const response = await getJson(`${lonely.url}/event?id=${note.id}`, {
        signal: AbortSignal.timeout(5000),
      });
      expect(response).toMatchObject({ status: 500, body: { error: INTERNAL } });
      expect((await getJson(`${lonely.url}/readyz`)).status).toBe(503);
      expect((await getJson(`${lonely.url}/healthz`)).status).toBe(200);
    } finally {
      await lonely.close();
      client.disconnect();
    }
  });
});
