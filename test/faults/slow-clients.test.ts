import { describe, expect, it } from 'vitest';
import { DEFAULT_HTTP_LIMITS } from '../../src/config/env.js';
import { profile } from '../support/events.js';
import { get, openRaw, statusesOf } from '../support/raw-http.js';
import { getJson, useTestServer } from '../support/test-server.js';

const alice = profile('slow-alice', { name: 'alice' });
const LIMITS = { ...DEFAULT_HTTP_LIMITS, requestTimeoutMs: 1000, maxConnectionsPerClient: 300, maxRequestsPerConnection: 4 };
const context = useTestServer([alice], { http: LIMITS });

describe('slow and greedy clients do not hold the service', () => {
  it('slowloris: 200 connections that never finish their headers are closed 408 within the request timeout (+1 s check); others are served meanwhile', async () => {
    const started = Date.now();
    const slow = await Promise.all(Array.from({ length: 200 }, () => openRaw(context.server.url)));
    for (const connection of slow) connection.write('GET /user-profile?pubkey=');
    // Meanwhile, an ordinary client is answered at once.
    const served = Date.now();
    const response = await getJson(`${context.server.url}/user-profile?pubkey=${alice.pubkey}`);
    expect(response.status).toBe(200);
    expect(Date.now() - served).toBeLessThan(500);
    const endings = await Promise.all(slow.map((connection) => connection.closed));
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(LIMITS.requestTimeoutMs - 100);
    expect(elapsed).toBeLessThan(LIMITS.requestTimeoutMs + 2500);
    for (const ending of endings) {
      expect(statusesOf(ending)).toEqual([408]);
      expect(ending).toContain('"code":"request_timeout"');
    }
  });

  it('half a body: a POST that announces 1,000 bytes and sends 10 is closed 408 within the request timeout', async () => {
    const connection = await openRaw(context.server.url);
    const started = Date.now();
    connection.write('POST /graphql HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"query":');
    const ending = await connection.closed;
    expect(Date.now() - started).toBeLessThan(LIMITS.requestTimeoutMs + 2500);
    expect(statusesOf(ending)).toEqual([408]);
  });

  it('pipelining: 20 requests sent at once on one connection run 4 at a time; the excess is answered 429 in the error shape', async () => {
    const connection = await openRaw(context.server.url);
    connection.write(Array.from({ length: 20 }, () => get(`/user-profile?pubkey=${alice.pubkey}`)).join(''));
    await expect.poll(() => statusesOf(connection.received()).length, { timeout: 5000 }).toBe(20);
    const statuses = statusesOf(connection.received());
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(4);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(0);
    expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);
    expect(connection.received()).toContain('{"error":{"status":429,"code":"too_many_requests"');
    // Every answer has its request id and CORS, the 429s too (found by review: hooks ran before them).
    const answers = connection.received().split('HTTP/1.1 ').slice(1);
    for (const answer of answers) {
      expect(answer.toLowerCase()).toContain('x-request-id: ');
      expect(answer.toLowerCase()).toContain('access-control-allow-origin: *');
    }
    connection.socket.destroy();
  });

  it('a slow reader that pipelines without reading does not stall other clients', async () => {
    const readers = await Promise.all(Array.from({ length: 50 }, () => openRaw(context.server.url)));
    for (const reader of readers) {
      reader.socket.pause();
      reader.write(Array.from({ length: 20 }, () => get(`/event?id=${'a'.repeat(64)}`)).join(''));
    }
    const started = Date.now();
    const response = await getJson(`${context.server.url}/user-profile?pubkey=${alice.pubkey}`);
    expect(response.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
    for (const reader of readers) reader.socket.destroy();
  });
});

describe('connections per client are capped', () => {
  const capped = useTestServer([alice], { http: { ...LIMITS, maxConnectionsPerClient: 5 } });

  it('the 6th connection from one address gets 503 too_many_connections and is closed; the 5 others are served', async () => {
    const open = await Promise.all(Array.from({ length: 5 }, () => openRaw(capped.server.url)));
    const sixth = await openRaw(capped.server.url);
    const ending = await sixth.closed;
    expect(statusesOf(ending)).toEqual([503]);
    expect(ending).toContain('{"error":{"status":503,"code":"too_many_connections"');
    open[0]?.write(get(`/user-profile?pubkey=${alice.pubkey}`));
    await expect.poll(() => statusesOf(open[0]?.received() ?? ''), { timeout: 2000 }).toEqual([200]);
    for (const connection of open) connection.socket.destroy();
    // Once they are gone, the client may connect again.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await getJson(`${capped.server.url}/healthz`)).status).toBe(200);
  });
});
