import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_HTTP_LIMITS } from '../../src/config/env.js';
import { errorBody } from '../../src/errors.js';
import { profile, pubkeyOf } from '../support/events.js';
import { type Nip05Server, startNip05Server } from '../support/nip05-server.js';
import { getJson, startTestServer, type TestServer, type TestServerOptions } from '../support/test-server.js';
import { createTestStore, type TestStore } from '../support/test-store.js';

/**
 * NIP-05 names cost outgoing HTTPS
 * exchanges with domains a client chooses, so they are held to what relay misses are held to. Each
 * test counts what the domain (a real HTTPS server on loopback) saw.
 */

const BOB = pubkeyOf('flood bob');

let domain: Nip05Server;
let testStore: TestStore;
const servers: TestServer[] = [];

const serve = async (options: TestServerOptions = {}) => {
  const server = await startTestServer(testStore.store, { ...options, nip05: { allowPrivate: true, ...options.nip05 } });
  servers.push(server);
  return server;
};

/** Requests the domain has had for names starting with `prefix`. */
const hitsOf = (prefix: string) => [...domain.hits].filter(([name]) => name.startsWith(prefix)).reduce((sum, [, count]) => sum + count, 0);

beforeAll(async () => {
  domain = await startNip05Server();
  testStore = await createTestStore();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});
afterAll(async () => {
  await domain.close();
  await testStore.cleanup();
});

describe('NIP-05 resolutions under the limits of relay misses', () => {
  it('MISS_RATE_LIMIT=1: a burst of distinct names fetches at most the allowance; the rest are 429 rate_limited (REST and GraphQL), with RELAYS empty', async () => {
    // No relays at all (RELAYS=): NIP-05 is then the only outside traffic, and still limited.
    const server = await serve({ rateLimits: { misses: { perSecond: 1, burst: 1 }, trustProxy: false } });
    for (let n = 0; n < 30; n++) domain.route(`burst${n}`, { json: { names: { [`burst${n}`]: BOB } } });
    const started = performance.now();
    const answers = [];
    for (let n = 0; n < 30; n++) answers.push(await getJson(`${server.url}/user-profile?pubkey=burst${n}@${domain.domain}`));
    const seconds = (performance.now() - started) / 1000;
    // One a second, and the window of the first: at most the seconds the burst took, plus one.
    const allowed = Math.ceil(seconds) + 1;
    expect(hitsOf('burst')).toBeLessThanOrEqual(allowed);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(30 - allowed);
    expect(refused[0]?.body).toEqual(errorBody('rate_limited'));
    expect(Number(refused[0]?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // GraphQL, six names in one request (the window may have turned meanwhile): the same code, and when to try again.
    for (let n = 0; n < 6; n++) domain.route(`graph${n}`, { json: { names: { [`graph${n}`]: BOB } } });
    const query = Array.from({ length: 6 }, (_, n) => `p${n}: profile(pubkey: "graph${n}@${domain.domain}") { pubkey }`).join(' ');
    const graphql = await getJson(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `{ ${query} }` }) });
    const errors = (graphql.body as { errors: { extensions: { code: string; retryAfter?: number } }[] }).errors;
    expect(errors.length).toBeGreaterThanOrEqual(4);
    for (const error of errors) expect(error.extensions).toEqual({ code: 'rate_limited', retryAfter: expect.any(Number) });
    expect(hitsOf('graph')).toBeLessThanOrEqual(2);
    // A name the store holds an answer for costs nothing: answered while the client is limited.
    const cached = answers.findIndex((answer) => answer.status !== 429);
    expect((await getJson(`${server.url}/user-profile?pubkey=burst${cached}@${domain.domain}`)).status).not.toBe(429);
    expect(hitsOf('burst')).toBeLessThanOrEqual(allowed + 1);
  });

  it('40 clients resolving names at a domain that hangs hold at most the per-domain cap of connections to it, and are answered within the deadline', async () => {
    const server = await serve({
      nip05: { maxConcurrent: 16, maxPerDomain: 2 },
      // Every client its own address (X-Forwarded-For); the HTTP side must not be what refuses them.
      rateLimits: { trustProxy: true },
      http: { ...DEFAULT_HTTP_LIMITS, maxConnectionsPerClient: 0 },
    });
    const names = Array.from({ length: 40 }, (_, client) => Array.from({ length: 8 }, (_, n) => `hang${client}x${n}`));
    // Accepts the connection, reads the request, never answers.
    for (const name of names.flat()) domain.route(name, () => {});
    const before = { ...domain.connections };
    const started = performance.now();
    const answers = await Promise.all(
      names.flatMap((mine, client) =>
        mine.map((name) => getJson(`${server.url}/user-profile?pubkey=${name}@${domain.domain}`, { headers: { 'x-forwarded-for': `203.0.113.${client + 1}` } })),
      ),
    );
    const elapsed = performance.now() - started;
    const opened = domain.connections.accepted - before.accepted;
    console.log(`320 resolutions at a hanging domain: ${opened} connections opened, at most ${domain.connections.peak} at once, all answered in ${Math.round(elapsed)} ms`);
    expect(domain.connections.peak).toBeLessThanOrEqual(2);
    // Waves of 2 (those that waited their turn), not one connection per name.
    expect(opened).toBeLessThanOrEqual(64);
    // Every one answered: the domain could not be used (NIP05_TIMEOUT_MS is 1 s in tests), nothing hangs.
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([404]));
    expect(answers[0]?.body).toEqual(errorBody('nip05_unresolvable'));
    // About 1.5 s on an idle machine; what is past the deadline is the machine's load.
    expect(elapsed).toBeLessThan(15_000);
  });
});

describe('a domain busy with others', () => {
  it('a name past the waiting line is unresolvable at once and not remembered; a verification past it stays NOT_CHECKED and is checked on a later read', async () => {
    const vera = profile('flood vera', { name: 'vera', nip05: `vera@${domain.domain}` });
    await testStore.store.putEvents([vera]);
    domain.route('vera', { json: { names: { vera: vera.pubkey } } });
    domain.route('extra', { json: { names: { extra: BOB } } });
    domain.route('holder', { json: { names: { holder: BOB } }, delayMs: 1500 });
    const server = await serve({ nip05: { maxConcurrent: 1, maxPerDomain: 1, timeoutMs: 3000 } });
    const ask = (name: string) => getJson(`${server.url}/user-profile?pubkey=${name}@${domain.domain}`);
    // One exchange holds the only slot, four wait in line (4 per slot): the line is full.
    const holder = ask('holder');
    await expect.poll(() => domain.hits.get('holder') ?? 0).toBe(1);
    const waiting = Array.from({ length: 4 }, (_, n) => ask(`inline${n}`));
    await new Promise((done) => setTimeout(done, 400));
    const started = performance.now();
    expect((await ask('extra')).body).toEqual(errorBody('nip05_unresolvable'));
    // At once: in the line it would have waited for the holder, a second more.
    expect(performance.now() - started).toBeLessThan(1000);
    const query = JSON.stringify({ query: `{ profile(pubkey: "${vera.pubkey}") { nip05Verification { status } } }` });
    const verification = async () =>
      ((await getJson(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: query })).body as {
        data: { profile: { nip05Verification: { status: string } } };
      }).data.profile.nip05Verification.status;
    expect(await verification()).toBe('NOT_CHECKED');
    await Promise.all([holder, ...waiting]);
    expect(domain.hits.get('extra')).toBeUndefined();
    // Nothing was remembered of the domain: asked now, it answers.
    expect((await ask('extra')).body).toEqual(errorBody('profile_not_found'));
    // The check that found no slot gave its claim back: a later read checks again.
    await expect.poll(verification, { timeout: 3000, interval: 50 }).toBe('VERIFIED');
  });
});

describe('connections to a domain are reused', () => {
  it('20 resolutions of different names at one domain, one after another, take at most 2 TLS handshakes', async () => {
    const server = await serve();
    for (let n = 0; n < 20; n++) domain.route(`reuse${n}`, { json: { names: { [`reuse${n}`]: BOB } } });
    // A 404 from the domain (a name it does not know) leaves the connection usable too.
    for (let n = 0; n < 5; n++) domain.route(`reusegone${n}`, { json: {}, status: 404 });
    const before = domain.connections.handshakes;
    for (let n = 0; n < 20; n++) {
      const name = n % 4 === 3 ? `reusegone${n >> 2}` : `reuse${n}`;
      const response = await getJson(`${server.url}/user-profile?pubkey=${name}@${domain.domain}`);
      // No profile is stored for BOB: the name resolved, the profile is not known.
      expect(response.body, name).toEqual(errorBody(name.startsWith('reusegone') ? 'nip05_not_found' : 'profile_not_found'));
    }
    expect(domain.connections.handshakes - before).toBeLessThanOrEqual(2);
  });

  it('a kept connection the server drops as it is reused is replaced once, not taken for the domain\'s answer', async () => {
    const server = await serve();
    // Answers the first request of each connection; drops the connection on the next one.
    const served = new WeakSet<object>();
    const answerOnce = (name: string) => (request: IncomingMessage, response: ServerResponse) => {
      if (served.has(request.socket)) return void request.socket.destroy();
      served.add(request.socket);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ names: { [name]: BOB } }));
    };
    for (const name of ['drop1', 'drop2', 'drop3']) domain.route(name, answerOnce(name));
    for (const name of ['drop1', 'drop2', 'drop3']) {
      expect((await getJson(`${server.url}/user-profile?pubkey=${name}@${domain.domain}`)).body, name).toEqual(errorBody('profile_not_found'));
    }
    expect(domain.hits.get('drop2')).toBe(2);
  });

  it('idle connections are capped in all (NIP05_MAX_CONCURRENT), the longest idle closed first, and never make another domain wait', async () => {
    const other = await startNip05Server();
    try {
      const server = await serve({ nip05: { maxConcurrent: 1, maxPerDomain: 1 } });
      domain.route('idle', { json: { names: { idle: BOB } } });
      other.route('idle', { json: { names: { idle: BOB } } });
      expect((await getJson(`${server.url}/user-profile?pubkey=idle@${domain.domain}`)).body).toEqual(errorBody('profile_not_found'));
      await expect.poll(() => domain.connections.open).toBe(1);
      // The first domain's idle connection holds no slot: the other domain is asked at once (NIP05_TIMEOUT_MS is 1 s).
      const started = performance.now();
      expect((await getJson(`${server.url}/user-profile?pubkey=idle@${other.domain}`)).body).toEqual(errorBody('profile_not_found'));
      expect(performance.now() - started).toBeLessThan(500);
      await expect.poll(() => domain.connections.open).toBe(0);
      expect(other.connections.open).toBe(1);
    } finally {
      await other.close();
    }
  });
});

describe('a nostr.json is bounded work', () => {
  it('120,000 invalid relay strings for the name cost < 50 ms of CPU per lookup', async () => {
    // A deadline long enough for the slowest reading to finish: this test measures CPU, not time.
    const server = await serve({ nip05: { timeoutMs: 5000 } });
    const names = Array.from({ length: 13 }, (_, n) => `big${n}`);
    // Just under the 512 KiB cap; sent as prepared bytes, so that the server's own CPU is not counted.
    const body = Buffer.from(
      JSON.stringify({ names: Object.fromEntries(names.map((name) => [name, BOB])), relays: { [BOB]: Array.from({ length: 120_000 }, () => 'x') } }),
    );
    expect(body.length).toBeLessThan(512 * 1024);
    for (const name of names) domain.route(name, (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(body));
    // The first ones pay for the TLS handshake and warm the code up (cold, a lookup of a small document costs as much).
    for (const name of names.slice(0, 6)) expect((await getJson(`${server.url}/user-profile?pubkey=${name}@${domain.domain}`)).body).toEqual(errorBody('profile_not_found'));
    const costs: number[] = [];
    for (const name of names.slice(6)) {
      const cpu = process.cpuUsage();
      expect((await getJson(`${server.url}/user-profile?pubkey=${name}@${domain.domain}`)).body).toEqual(errorBody('profile_not_found'));
      const used = process.cpuUsage(cpu);
      costs.push((used.user + used.system) / 1000);
    }
    // The median: one garbage collection or a busy neighbour on the machine does not decide it.
    const median = costs.sort((a, b) => a - b)[Math.floor(costs.length / 2)] as number;
    console.log(`nostr.json with 120,000 relay strings: ${median.toFixed(1)} ms of CPU per lookup (median of ${costs.map((cost) => cost.toFixed(1)).join(', ')})`);
    expect(median).toBeLessThan(50);
  });
});
