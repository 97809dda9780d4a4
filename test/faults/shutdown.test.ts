import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveCli } from '../support/cli.js';
import { profile, signed } from '../support/events.js';
import { startLoopbackRelay, type LoopbackRelay } from '../support/loopback-relay.js';
import { get, openRaw, statusesOf } from '../support/raw-http.js';
import { createTestStore, type TestStore } from '../support/test-store.js';

// SIGTERM under load, as an orchestrator sends it.
const alice = profile('shutdown-alice', { name: 'alice' });
const slowNote = signed('shutdown-alice', { content: 'the relay takes 800 ms to send this' });
let testStore: TestStore;
let relay: LoopbackRelay;

beforeAll(async () => {
  testStore = await createTestStore();
  await testStore.store.putEvents([alice]);
  relay = await startLoopbackRelay({ events: [slowNote], delayMs: 800 });
});
afterAll(async () => {
  await relay.stop();
  await testStore.cleanup();
});

describe('SIGTERM', () => {
  it('finishes the request in flight on a keep-alive connection, answers the one pipelined behind it 503 shutting_down, closes the socket, exits 0 at once', async () => {
    const served = await serveCli({
      REDIS_URL: testStore.url,
      REDIS_KEY_PREFIX: testStore.prefix,
      RELAYS: relay.url,
      RELAY_TIMEOUT_MS: '3000',
    });
    const { url } = served;
    try {
      const connection = await openRaw(url);
      // The profile's answer kept (the hot cache on, as by default), so that the fast lane serves
      // it: the one asked during shutdown below must still get the 503.
      const servedAgain = async () => {
        await fetch(`${url}/user-profile?pubkey=${alice.pubkey}`);
        const text = await (await fetch(`${url}/metrics`)).text();
        return Number(/^nostr_lookup_hot_cache_answers_served_total (\d+)/m.exec(text)?.[1] ?? 0);
      };
      await expect.poll(servedAgain, { timeout: 5000, interval: 1100 }).toBeGreaterThan(0);
      // Keep-alive requests answered before the signal: the socket stays open, idle.
      for (let asked = 1; asked <= 3; asked++) {
        connection.write(get(`/user-profile?pubkey=${alice.pubkey}`));
        await expect.poll(() => statusesOf(connection.received()), { timeout: 3000 }).toEqual(Array.from({ length: asked }, () => 200));
      }
      // A slow request (the relay waits 800 ms), then SIGTERM while it is in flight.
      connection.write(get(`/event?id=${slowNote.id}`));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const signalled = Date.now();
      served.child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 100));
      // Pipelined behind it, during shutdown.
      connection.write(get(`/user-profile?pubkey=${alice.pubkey}`));
      const stream = await connection.closed;
      const code = await served.exited;
      const elapsed = Date.now() - signalled;
      expect(statusesOf(stream)).toEqual([200, 200, 200, 200, 503]);
      expect(stream).toContain(`"id":"${slowNote.id}"`);
      const shuttingDown = stream.split('HTTP/1.1 ')[5] ?? '';
      expect(shuttingDown).toContain('{"error":{"status":503,"code":"shutting_down","message":"The service is restarting. Try again shortly."}}');
      expect(shuttingDown.toLowerCase()).toContain('connection: close');
      expect(shuttingDown.toLowerCase()).toContain('content-type: application/json; charset=utf-8');
      expect(code).toBe(0);
      // The in-flight request took ~600 ms more; nothing waited for a keep-alive timeout or the 10 s force.
      expect(elapsed).toBeLessThan(3000);
    } finally {
      served.child.kill('SIGKILL');
    }
  });
});

describe('SIGTERM while a POST /graphql body is on its way (found by review: the fast lane, which reads it, was not waited for)', () => {
  it('answers both as if the signal came after: a kept answer by the lane, another by the route; exits 0 at once', async () => {
    const served = await serveCli({ REDIS_URL: testStore.url, REDIS_KEY_PREFIX: testStore.prefix, RELAYS: '' });
    const { url } = served;
    try {
      const query = 'query ($pubkey: String!) { profile(pubkey: $pubkey) { event { json } } }';
      const kept = JSON.stringify({ query, variables: { pubkey: alice.pubkey } });
      const other = JSON.stringify({ query: `{ profile(pubkey: "${alice.pubkey}") { name } }` });
      const answersServed = async () => Number(/^nostr_lookup_hot_cache_answers_served_total (\d+)/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1] ?? 0);
      const before = await answersServed();
      // Prepared, then kept (the second time it is made), then served as kept.
      await expect
        .poll(
          async () => {
            await fetch(`${url}/graphql`, { method: 'POST', body: kept, headers: { 'content-type': 'application/json' } });
            return answersServed();
          },
          { timeout: 5000, interval: 50 },
        )
        .toBeGreaterThan(before);
      const head = (body: string) => `POST /graphql HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
      const [lane, route] = await Promise.all([openRaw(url), openRaw(url)]);
      lane.write(head(kept));
      route.write(head(other));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const signalled = Date.now();
      served.child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 100));
      lane.write(kept);
      route.write(other);
      const [laneStream, routeStream] = await Promise.all([lane.closed, route.closed]);
      expect(await served.exited).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(3000);
      expect(statusesOf(laneStream)).toEqual([200]);
      expect(laneStream).toContain(alice.id);
      expect(statusesOf(routeStream)).toEqual([200]);
      expect(routeStream).toContain('{"data":{"profile":{"name":"alice"}}}');
    } finally {
      served.child.kill('SIGKILL');
    }
  });
});

describe('SIGTERM with idle and half-open connections (found by review: they held the close 10 s, exit 1)', () => {
  it('a connection that sent nothing and one that sent half a request do not delay the exit', async () => {
    const served = await serveCli({ REDIS_URL: testStore.url, REDIS_KEY_PREFIX: testStore.prefix, RELAYS: '' });
    const { url } = served;
    try {
      const silent = await openRaw(url);
      const half = await openRaw(url);
      half.write('GET /user-profile?pubkey=');
      await new Promise((resolve) => setTimeout(resolve, 200));
      const signalled = Date.now();
      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(2000);
      await Promise.all([silent.closed, half.closed]);
    } finally {
      served.child.kill('SIGKILL');
    }
  });
});
