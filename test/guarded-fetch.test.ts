import { createServer, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_HTTP_LIMITS } from '../src/config/env.js';
import { createGuardedFetcher, type Deadline, type GuardedFetcher, slotKey } from '../src/net/guarded-fetch.js';
import { fetchNostrJson } from '../src/nip05/fetch-nostr-json.js';
import { parseNip05Name, type Nip05Name } from '../src/nostr/identifiers.js';
import { askPayEndpoint, lud16Url, MAX_LNURL_PAY_BYTES } from '../src/zaps/lnurl-provider.js';
import { pubkeyOf, signed } from './support/events.js';
import { type Nip05Server, startNip05Server } from './support/nip05-server.js';
import { getJson, hosts, startTestServer, type TestServer } from './support/test-server.js';
import { createTestStore, type TestStore } from './support/test-store.js';
import { lnurlPayResponse, zapReceipt } from './support/zaps.js';

/**
 * The one guarded fetcher of NIP-05 domains and LNURL pay endpoints (net/guarded-fetch.ts): its caps
 * are per address the names resolve to, not per name, and both kinds of exchange share them and its
 * rules. Names are mapped to loopback by the fetcher's lookup (`hosts`), as a hosts file or wildcard
 * DNS would; what the server saw is counted on a real socket.
 */

/** A server that accepts TCP connections and never answers (no TLS handshake): every exchange hangs until its deadline. */
async function startHangingServer() {
  const sockets = new Set<Socket>();
  const seen = { accepted: 0, open: 0, peak: 0 };
  const server = createServer((socket) => {
    sockets.add(socket);
    seen.accepted++;
    let counted = false;
    socket.on('error', () => {});
    // Read (and drop) what arrives, so that the client's close is seen (an unread socket never ends).
    socket.resume();
    socket.once('close', () => {
      sockets.delete(socket);
      if (counted) seen.open--;
      counted = false;
    });
    // Counted on the next turn, as nip05-server.ts does: a client that closes one connection and
    // opens the next sent the close first, but both may arrive in one turn.
    setTimeout(() => {
      if (socket.closed) return;
      counted = true;
      seen.peak = Math.max(seen.peak, ++seen.open);
    }, 0);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  return {
    port,
    seen,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
}

const deadline = (ms: number): Deadline => ({ signal: AbortSignal.timeout(ms), endsAt: performance.now() + ms });
const nameAt = (text: string) => parseNip05Name(text) as Nip05Name;

let hanging: Awaited<ReturnType<typeof startHangingServer>>;
let tls: Nip05Server;
beforeAll(async () => {
  [hanging, tls] = await Promise.all([startHangingServer(), startNip05Server()]);
});
afterAll(async () => {
  await Promise.all([hanging.close(), tls.close()]);
});

describe('slots are per address', () => {
  it('an IPv4 address is its own slot (IPv4-mapped IPv6 as the IPv4 it carries); an IPv6 one, its /64', () => {
    expect(slotKey('127.0.0.1')).toBe('127.0.0.1');
    expect(slotKey('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(slotKey('2001:db8::1')).toBe(slotKey('2001:0db8:0:0:ffff::2'));
    expect(slotKey('2001:db8::1')).not.toBe(slotKey('2001:db8:0:1::1'));
  });

  describe('through the service (a real server on a real port)', () => {
    let testStore: TestStore;
    const servers: TestServer[] = [];
    const before = { accepted: 0 };
    beforeAll(async () => {
      testStore = await createTestStore();
    });
    afterEach(async () => {
      await Promise.all(servers.splice(0).map((server) => server.close()));
      // Connections of one test are closed before the next counts.
      await expect.poll(() => hanging.seen.open, { timeout: 5000 }).toBe(0);
    });
    afterAll(async () => {
      await testStore.cleanup();
    });

    const serve = async (table: Record<string, string | string[]>) => {
      const server = await startTestServer(testStore.store, {
        nip05: { allowPrivate: true, maxConcurrent: 16, maxPerDomain: 2 },
        zaps: { timeoutMs: 1000 },
        resolve: hosts(table),
        // Every client its own address: neither the per-client caps nor the HTTP side refuse them.
        rateLimits: { trustProxy: true },
        http: { ...DEFAULT_HTTP_LIMITS, maxConnectionsPerClient: 0 },
      });
      servers.push(server);
      hanging.seen.peak = hanging.seen.open;
      before.accepted = hanging.seen.accepted;
      return server;
    };
    const lookUp = (server: TestServer, identifier: string, client: number) =>
      getJson(`${server.url}/user-profile?pubkey=${identifier}`, { headers: { 'x-forwarded-for': `10.1.0.${client}` } });

    it('five names of one address (wildcard DNS): NIP-05 lookups hold at most NIP05_MAX_PER_DOMAIN connections to it, all five names together', async () => {
      const names = ['a', 'b', 'c', 'd', 'e'].map((label) => `${label}.wildcard.example`);
      const server = await serve(Object.fromEntries(names.map((name) => [name, '127.0.0.1'])));
      const answers = await Promise.all(names.flatMap((name, n) => [0, 1].map((k) => lookUp(server, `u${k}@${name}:${hanging.port}`, 2 * n + k))));
      // Each ends by its deadline (NIP05_TIMEOUT_MS is 1 s in tests): no answer, not an error of ours.
      expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(404));
      // Keyed by name, each name had 2: 10 connections at once.
      expect(hanging.seen.peak).toBeLessThanOrEqual(2);
      expect(hanging.seen.accepted - before.accepted).toBeGreaterThanOrEqual(2);
    });

    it("a pay endpoint and a NIP-05 domain on one address share its cap: the zap provider check gets no connection while NIP-05's hold it", async () => {
      const server = await serve({ 'names.example': '127.0.0.1', 'pay.example': '127.0.0.1' });
      const note = signed('shared-cap alice', { content: 'zap me' });
      await testStore.store.putEvents([
        signed('shared-cap alice', { kind: 0, content: JSON.stringify({ name: 'alice', lud16: `alice@pay.example:${hanging.port}` }) }),
        note,
        zapReceipt({ sender: 'shared-cap bob', recipient: 'shared-cap alice', provider: 'shared-cap zapper', target: note.id, msats: 21_000 }),
      ]);
      const lookups = Promise.all([0, 1].map((k) => lookUp(server, `u${k}@names.example:${hanging.port}`, 100 + k)));
      await expect.poll(() => hanging.seen.open, { timeout: 2000 }).toBe(2);
      // A read of the zaps starts the provider check in the background, at an address whose slots are taken.
      const zaps = await getJson(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ profile(pubkey: "${pubkeyOf('shared-cap alice')}") { zapsReceived { pending } } }` }),
      });
      expect(zaps.body).toEqual({ data: { profile: { zapsReceived: { pending: 1 } } } });
      await new Promise((done) => setTimeout(done, 300));
      await lookups;
      // With a fetcher of its own, the check opened a third connection.
      expect(hanging.seen.accepted - before.accepted).toBe(2);
      expect(hanging.seen.peak).toBeLessThanOrEqual(2);
    });
  });
});

describe('NIP-05 and LNURL through one fetcher: one set of rules', () => {
  let fetcher: GuardedFetcher;
  afterEach(() => fetcher.close());
  const strict = (table: Record<string, string | string[]>) => (fetcher = createGuardedFetcher({ allowPrivate: false, maxConcurrent: 8, maxPerDomain: 2 }, hosts(table)));

  it('a name resolving to a private address, or to a public and a private one (rebinding), is refused for both, before any connection', async () => {
    strict({ 'private.example': '127.0.0.1', 'mixed.example': ['93.184.216.34', '127.0.0.1'] });
    const accepted = hanging.seen.accepted;
    for (const host of [`private.example:${hanging.port}`, `mixed.example:${hanging.port}`, `127.0.0.1:${hanging.port}`]) {
      expect(await fetchNostrJson(fetcher, nameAt(`bob@${host}`), deadline(1000)), host).toEqual({ kind: 'unresolvable', reason: 'not a public address' });
      expect(await askPayEndpoint(fetcher, lud16Url(`bob@${host}`) as URL, deadline(1000)), host).toEqual({ refused: 'not a public address' });
    }
    expect(hanging.seen.accepted).toBe(accepted);
  });

  it('a name that does not resolve: no answer (ask again later) for both', async () => {
    strict({});
    expect(await fetchNostrJson(fetcher, nameAt('bob@nowhere.example'), deadline(1000))).toEqual({ kind: 'unresolvable', reason: 'ENOTFOUND' });
    expect(await askPayEndpoint(fetcher, lud16Url('bob@nowhere.example') as URL, deadline(1000))).toEqual({ unavailable: 'ENOTFOUND' });
  });

  it('a body past the cap is cut off for both (512 KiB), as it arrives', async () => {
    fetcher = createGuardedFetcher({ allowPrivate: true, maxConcurrent: 8, maxPerDomain: 2 });
    const huge = JSON.stringify({ ...lnurlPayResponse(pubkeyOf('zapper')), names: { bob: pubkeyOf('bob') }, padding: 'x'.repeat(MAX_LNURL_PAY_BYTES) });
    const send = (_request: unknown, response: import('node:http').ServerResponse) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      for (let offset = 0; offset < huge.length; offset += 64 * 1024) response.write(huge.slice(offset, offset + 64 * 1024));
      response.end();
    };
    tls.route('bob', send);
    tls.routePath('/.well-known/lnurlp/bob', send);
    expect(await fetchNostrJson(fetcher, nameAt(`bob@${tls.domain}`), deadline(2000))).toEqual({ kind: 'unresolvable', reason: 'too large' });
    expect(await askPayEndpoint(fetcher, lud16Url(`bob@${tls.domain}`) as URL, deadline(2000))).toEqual({ refused: 'too large' });
  });

  it('names resolved by the fetcher are dialled at the address, with the name checked by TLS (localhost: in the certificate)', async () => {
    fetcher = createGuardedFetcher({ allowPrivate: true, maxConcurrent: 8, maxPerDomain: 2 }, hosts({ localhost: '127.0.0.1', 'elsewhere.example': '127.0.0.1' }));
    tls.route('carol', { json: { names: { carol: pubkeyOf('carol') } } });
    expect(await fetchNostrJson(fetcher, nameAt(`carol@localhost:${tls.port}`), deadline(2000))).toEqual({ kind: 'found', pubkey: pubkeyOf('carol'), relays: [] });
    // The same address under a name the certificate does not hold: the TLS check refuses it.
    expect(await fetchNostrJson(fetcher, nameAt(`carol@elsewhere.example:${tls.port}`), deadline(2000))).toMatchObject({ kind: 'unresolvable' });
    expect(tls.hits.get('carol')).toBe(1);
  });

  it("kept connections count against the address's cap too, whatever name kept them: one per address, at most, with a cap of 1", async () => {
    fetcher = createGuardedFetcher({ allowPrivate: true, maxConcurrent: 8, maxPerDomain: 1 }, hosts({ localhost: '127.0.0.1' }));
    tls.route('dan', { json: { names: { dan: pubkeyOf('dan') } } });
    await expect.poll(() => tls.connections.open, { timeout: 5000 }).toBe(0);
    tls.connections.peak = 0;
    // Kept alive after each answer: under `localhost`, then under `127.0.0.1`, then `localhost` again.
    for (const host of [`localhost:${tls.port}`, tls.domain, `localhost:${tls.port}`]) {
      expect(await fetchNostrJson(fetcher, nameAt(`dan@${host}`), deadline(2000)), host).toMatchObject({ kind: 'found' });
    }
    expect(tls.connections.peak).toBe(1);
  });
});
