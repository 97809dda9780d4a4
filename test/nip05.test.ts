import { createServer } from 'node:net';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS, errorBody } from '../src/errors.js';
import { readNostrJson } from '../src/nip05/fetch-nostr-json.js';
import { decodeResolution, encodeResolution } from '../src/nip05/nip05-resolver.js';
import { parseNip05Name, parseProfilePointer } from '../src/nostr/identifiers.js';
import { BOTH_STORES, type OpenedStore } from './support/both-stores.js';
import { profile, pubkeyOf } from './support/events.js';
import { startLoopbackRelay } from './support/loopback-relay.js';
import { type Nip05Server, startNip05Server } from './support/nip05-server.js';
import { getJson, startTestServer, type TestServer, type TestServerOptions } from './support/test-server.js';

const BOB = pubkeyOf('nip05 bob');
const CAROL = pubkeyOf('nip05 carol');
const bobProfile = profile('nip05 bob', { name: 'bob' });

describe('NIP-05 identifiers: the one parser (NIP-05: local part a-z0-9-_., case-insensitive)', () => {
  it.each([
    ['bob@example.com', 'bob', 'example.com'],
    ['Bob.Smith_1-x@Example.COM', 'bob.smith_1-x', 'example.com'],
    ['_@example.com', '_', 'example.com'],
    ['bob@localhost:8443', 'bob', 'localhost:8443'],
    ['bob@127.0.0.1:8443', 'bob', '127.0.0.1:8443'],
    ['bob@[::1]:8443', 'bob', '[::1]:8443'],
    // The default port is dropped: one identifier, one spelling (cache keys, comparisons).
    ['bob@example.com:443', 'bob', 'example.com'],
    ['  bob@example.com  ', 'bob', 'example.com'],
  ])('%j → name %j at %j', (raw, name, domain) => {
    expect(parseNip05Name(raw)).toEqual({ name, domain, identifier: `${name}@${domain}` });
  });

  it.each([
    '@example.com',
    'bob@',
    'bob',
    'bob smith@example.com',
    'bob@exa mple.com',
    'bob@example.com/path',
    'bob@example.com?name=x',
    'bob@example.com#x',
    'bob@user:pw@example.com',
    'bob@.example.com',
    'bob@example..com',
    'bob@example.com.',
    'böb@example.com',
    'bob@exämple.com',
    'bob@example.com:99999',
    'bob@example.com:',
    `${'a'.repeat(65)}@example.com`,
    `bob@${'a'.repeat(260)}.com`,
    'bob@[::1',
    'bob@https://example.com',
  ])('%j is not a NIP-05 identifier', (raw) => {
    expect(parseNip05Name(raw)).toBeUndefined();
  });

  it('a lone domain is `_@domain` only where a profile declares it (bareDomain), never as input', () => {
    expect(parseNip05Name('example.com', { bareDomain: true })).toEqual({ name: '_', domain: 'example.com', identifier: '_@example.com' });
    expect(parseNip05Name('example.com')).toBeUndefined();
    expect(parseNip05Name('bob', { bareDomain: true })).toBeUndefined();
    expect(() => parseProfilePointer('example.com')).toThrow(expect.objectContaining({ code: 'invalid_pubkey' }));
  });

  it('as a profile pointer: names and pubkeys both parse; a secret key inside a name is refused', () => {
    expect(parseProfilePointer('nostr:bob@example.com')).toEqual({ name: 'bob', domain: 'example.com', identifier: 'bob@example.com' });
    expect(parseProfilePointer(BOB)).toEqual({ pubkey: BOB, relays: [] });
    const nsec = 'nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5';
    expect(() => parseProfilePointer(`${nsec}@example.com`)).toThrow(expect.objectContaining({ code: 'secret_key_refused' }));
    expect(() => parseProfilePointer('bob@exa mple.com')).toThrow(expect.objectContaining({ code: 'invalid_pubkey' }));
  });

  it('never throws on any text, and what it accepts is canonical (parsing it again gives the same)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[A-Za-z0-9._-]{0,8}@[a-z0-9.:[\]-]{0,20}$/)), (raw) => {
        const parsed = parseNip05Name(raw);
        if (parsed) expect(parseNip05Name(parsed.identifier)).toEqual(parsed);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 2000) },
    );
  });
});

describe('nostr.json documents (hostile input)', () => {
  it.each([
    ['not JSON', 'not json', 'unresolvable'],
    ['an array', '[]', 'unresolvable'],
    ['no names', '{}', 'unresolvable'],
    ['names not an object', '{"names": ["bob"]}', 'unresolvable'],
    ['an npub instead of hex (NIP-05: hex only)', '{"names": {"bob": "npub1xyz"}}', 'unresolvable'],
    ['a pubkey too short', `{"names": {"bob": "${BOB.slice(2)}"}}`, 'unresolvable'],
    ['another name only', `{"names": {"alice": "${BOB}"}}`, 'not_found'],
    ['__proto__ games', `{"names": {"__proto__": {"bob": "${BOB}"}}}`, 'not_found'],
  ])('%s → %s', (_label, text, kind) => {
    expect(readNostrJson(text, 'bob').kind).toBe(kind);
  });

  it('finds a name in any case, lowercases hex, keeps valid relay URLs of that pubkey only (at most 10)', () => {
    const relays = ['wss://relay.one', 'not a url', 42, 'https://web.example', 'wss://relay.one/', ...Array.from({ length: 20 }, (_, index) => `wss://r${index}.example`)];
    const answer = readNostrJson(
      JSON.stringify({ names: { BOB: BOB.toUpperCase() }, relays: { [BOB]: relays, [CAROL]: ['wss://carol.example'] } }),
      'bob',
    );
    // Normalised as relay URLs are everywhere (relay-url.ts), so that one relay has one spelling.
    expect(answer).toEqual({ kind: 'found', pubkey: BOB, relays: ['wss://relay.one/', ...Array.from({ length: 9 }, (_, index) => `wss://r${index}.example/`)] });
  });

  it('reads at most the first 20 entries of the pubkey\'s relays, found under its key as written or in lowercase, never by a search of every key', () => {
    const junkFirst = [...Array.from({ length: 20 }, () => 'not a relay'), 'wss://late.example'];
    expect(readNostrJson(JSON.stringify({ names: { bob: BOB }, relays: { [BOB]: junkFirst } }), 'bob')).toEqual({ kind: 'found', pubkey: BOB, relays: [] });
    const upper = BOB.toUpperCase();
    expect(readNostrJson(JSON.stringify({ names: { bob: upper }, relays: { [upper]: ['wss://as-written.example'] } }), 'bob')).toMatchObject({
      relays: ['wss://as-written.example/'],
    });
    // Another spelling of the key is not looked for.
    expect(readNostrJson(JSON.stringify({ names: { bob: BOB }, relays: { [upper]: ['wss://upper.example'] } }), 'bob')).toMatchObject({ relays: [] });
  });

  it('never throws on any document', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.string()), fc.string(), (text, name) => {
        const answer = readNostrJson(text, name);
        expect(['found', 'not_found', 'unresolvable']).toContain(answer.kind);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 2000) },
    );
  });

  it('a cached resolution reads back as written; anything else is asked again', () => {
    const found = { answer: { kind: 'found' as const, pubkey: BOB, relays: ['wss://relay.one/'] }, checkedAt: 1_800_000_000 };
    expect(decodeResolution(encodeResolution(found))).toEqual(found);
    expect(decodeResolution(encodeResolution({ answer: { kind: 'not_found' }, checkedAt: 5 }))).toEqual({ answer: { kind: 'not_found' }, checkedAt: 5 });
    for (const junk of ['', 'x found', '5 found nothex', '5 maybe', '-1 not_found', '5 not_found extra']) expect(decodeResolution(junk)).toBeUndefined();
  });
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

const graphql = (url: string, query: string, variables: Record<string, unknown> = {}) =>
  getJson(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });

const VERIFICATION_QUERY = 'query ($p: String!) { profile(pubkey: $p) { pubkey nip05 nip05Verification { status checkedAt } } }';

describe.each(BOTH_STORES)('NIP-05 over HTTP, on the $name store', ({ open }) => {
  let domain: Nip05Server;
  let opened: OpenedStore;
  const servers: TestServer[] = [];

  const serve = async (options: TestServerOptions = {}) => {
    const server = await startTestServer(opened.store, { ...options, nip05: { allowPrivate: true, ...options.nip05 } });
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    domain = await startNip05Server();
    opened = await open();
    await opened.store.putEvents([
      bobProfile,
      profile('nip05 carol', { name: 'carol', nip05: `carol@${domain.domain}` }),
      profile('nip05 dave', { name: 'dave', nip05: `dave@${domain.domain}` }),
      profile('nip05 erin', { name: 'erin', nip05: 'erin' }),
      profile('nip05 frank', { name: 'frank' }),
    ]);
    domain.route('bob', { json: { names: { bob: BOB } } });
    domain.route('_', { json: { names: { _: BOB } } });
    domain.route('carol', { json: { names: { carol: CAROL } } });
    // dave's domain says dave is bob: his profile's claim does not hold.
    domain.route('dave', { json: { names: { dave: BOB } } });
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  afterAll(async () => {
    await domain.close();
    await opened.cleanup();
  });

  it('/user-profile?pubkey=name@host:port answers the profile the domain names, in any case', async () => {
    const server = await serve();
    for (const name of [`bob@${domain.domain}`, `BOB@${domain.domain}`, `nostr:bob@${domain.domain}`, `_@${domain.domain}`]) {
      const response = await getJson(`${server.url}/user-profile?pubkey=${encodeURIComponent(name)}`);
      expect(response.status, name).toBe(200);
      expect(response.body).toEqual({ profile: bobProfile });
    }
    // NIP-05: GET https://<domain>/.well-known/nostr.json?name=<local-part>, the name lowercased.
    expect(domain.paths.every((path) => path === '/.well-known/nostr.json')).toBe(true);
    expect(domain.hits.has('BOB')).toBe(false);
  });

  it('caches resolutions in the store (positive and negative) and coalesces concurrent ones', async () => {
    const server = await serve();
    domain.route('cached', { json: { names: { cached: BOB } }, delayMs: 200 });
    const answers = await Promise.all(Array.from({ length: 6 }, () => getJson(`${server.url}/user-profile?pubkey=cached@${domain.domain}`)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(domain.hits.get('cached')).toBe(1);
    // A second instance on the same store reads the cached resolution.
    const other = await serve();
    expect((await getJson(`${other.url}/user-profile?pubkey=cached@${domain.domain}`)).status).toBe(200);
    expect(domain.hits.get('cached')).toBe(1);
    // Not found is remembered too (NEGATIVE_TTL).
    for (let round = 0; round < 3; round++) {
      const missing = await getJson(`${server.url}/user-profile?pubkey=nobody@${domain.domain}`);
      expect(missing).toMatchObject({ status: 404, body: errorBody('nip05_not_found') });
    }
    expect(domain.hits.get('nobody')).toBe(1);
  });

  it('an unknown name is 404 nip05_not_found; a 404 from the domain too', async () => {
    const server = await serve();
    domain.route('gone', { json: {}, status: 404 });
    for (const name of ['stranger', 'gone']) {
      const response = await getJson(`${server.url}/user-profile?pubkey=${name}@${domain.domain}`);
      expect(response.status).toBe(404);
      expect(response.body).toEqual(errorBody('nip05_not_found'));
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    }
  });

  it.each([
    ['slow past the deadline', { json: { names: { slow: BOB } }, delayMs: 3000 }],
    ['a server error', { json: {}, status: 500 }],
    ['a pubkey that is not hex', { json: { names: { npubby: 'npub1abc' } } }],
  ] as const)('%s → 404 nip05_unresolvable, in time', async (label, route) => {
    const server = await serve();
    const name = label === 'slow past the deadline' ? 'slow' : label === 'a server error' ? 'broken' : 'npubby';
    domain.route(name, route);
    const started = performance.now();
    const response = await getJson(`${server.url}/user-profile?pubkey=${name}@${domain.domain}`);
    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorBody('nip05_unresolvable'));
    // NIP05_TIMEOUT_MS is 1 s in tests.
    expect(performance.now() - started).toBeLessThan(2500);
  });

  it('a huge body is cut off at 512 KiB, with or without a Content-Length', async () => {
    const server = await serve();
    const huge = `{"names": {"huge": "${BOB}"}, "padding": "${'x'.repeat(600 * 1024)}"}`;
    domain.route('huge', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      // Chunked, no length: the cap is counted as it arrives.
      for (let offset = 0; offset < huge.length; offset += 64 * 1024) response.write(huge.slice(offset, offset + 64 * 1024));
      response.end();
    });
    domain.route('hugelength', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(huge)) });
      response.end(huge);
    });
    for (const name of ['huge', 'hugelength']) {
      const response = await getJson(`${server.url}/user-profile?pubkey=${name}@${domain.domain}`);
      expect(response.body, name).toEqual(errorBody('nip05_unresolvable'));
    }
  });

  it('redirects are not followed (NIP-05: fetchers MUST ignore redirects), to another host or not', async () => {
    const server = await serve();
    const elsewhere = await startNip05Server();
    try {
      elsewhere.route('moved', { json: { names: { moved: BOB } } });
      domain.route('moved', (_request, response) => {
        response.writeHead(302, { location: `https://${elsewhere.domain}/.well-known/nostr.json?name=moved` }).end();
      });
      domain.route('samehost', (_request, response) => {
        response.writeHead(301, { location: '/.well-known/nostr.json?name=bob' }).end();
      });
      for (const name of ['moved', 'samehost']) {
        const response = await getJson(`${server.url}/user-profile?pubkey=${name}@${domain.domain}`);
        expect(response.body, name).toEqual(errorBody('nip05_unresolvable'));
      }
      expect(elsewhere.hits.size).toBe(0);
      expect(domain.hits.get('bob') ?? 0).toBeLessThanOrEqual(1); // only the earlier test's own request, if any
    } finally {
      await elsewhere.close();
    }
  });

  it('a domain at a private address is refused by default (RELAY_ALLOW_PRIVATE unset): no request is made', async () => {
    const server = await serve({ nip05: { allowPrivate: false } });
    domain.route('private', { json: { names: { private: BOB } } });
    for (const host of [domain.domain, `localhost:${domain.port}`]) {
      const response = await getJson(`${server.url}/user-profile?pubkey=private@${host}`);
      expect(response.body, host).toEqual(errorBody('nip05_unresolvable'));
    }
    expect(domain.hits.get('private')).toBeUndefined();
  });

  it('a domain nothing answers at, or one without a certificate we trust, is unresolvable', async () => {
    const server = await serve();
    const port = await closedPort();
    expect((await getJson(`${server.url}/user-profile?pubkey=bob@127.0.0.1:${port}`)).body).toEqual(errorBody('nip05_unresolvable'));
    // The test certificate names localhost, 127.0.0.1 and ::1, not 127.0.0.2 (TLS name check).
    expect((await getJson(`${server.url}/user-profile?pubkey=bob@127.0.0.2:${domain.port}`)).body).toEqual(errorBody('nip05_unresolvable'));
  });

  it('GraphQL profile(pubkey:) takes names; errors carry the table codes; profiles(pubkeys:) refuses names', async () => {
    const server = await serve();
    const found = await graphql(server.url, 'query ($p: String!) { profile(pubkey: $p) { pubkey name } }', { p: `bob@${domain.domain}` });
    expect(found.body).toEqual({ data: { profile: { pubkey: BOB, name: 'bob' } } });
    const missing = await graphql(server.url, 'query ($p: String!) { profile(pubkey: $p) { pubkey } }', { p: `nobody2@${domain.domain}` });
    expect(missing.body).toMatchObject({ data: { profile: null }, errors: [{ message: ERRORS.nip05_not_found.message, extensions: { code: 'nip05_not_found' } }] });
    const list = await graphql(server.url, 'query ($p: [String!]!) { profiles(pubkeys: $p) { pubkey } }', { p: [`bob@${domain.domain}`] });
    expect(list.body).toMatchObject({ errors: [{ extensions: { code: 'invalid_pubkey' } }] });
  });

  it('nip05Verification: NOT_CHECKED at first, then VERIFIED / MISMATCH / UNREACHABLE after the background check', async () => {
    const server = await serve();
    const read = async (name: string) =>
      (await graphql(server.url, VERIFICATION_QUERY, { p: pubkeyOf(name) })).body as {
        data: { profile: { nip05: string | null; nip05Verification: { status: string; checkedAt: number | null } | null } };
      };
    const first = await read('nip05 carol');
    expect(first.data.profile.nip05Verification).toEqual({ status: 'NOT_CHECKED', checkedAt: null });
    const until = async (name: string, status: string) => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const verification = (await read(name)).data.profile.nip05Verification;
        if (verification?.status !== 'NOT_CHECKED') return verification;
        await new Promise((done) => setTimeout(done, 50));
      }
      throw new Error(`${name} never left NOT_CHECKED (wanted ${status})`);
    };
    const before = Math.floor(Date.now() / 1000) - 1;
    const carol = await until('nip05 carol', 'VERIFIED');
    expect(carol?.status).toBe('VERIFIED');
    expect(carol?.checkedAt).toBeGreaterThanOrEqual(before);
    expect((await until('nip05 dave', 'MISMATCH'))?.status).toBe('MISMATCH');
    // No nip05 declared: nothing to verify. Not an identifier: it cannot hold.
    expect((await read('nip05 frank')).data.profile.nip05Verification).toBeNull();
    expect((await read('nip05 erin')).data.profile.nip05Verification).toEqual({ status: 'MISMATCH', checkedAt: null });
    // Checked once per NIP05_TTL, however often it is read, by however many instances.
    const other = await serve();
    for (let round = 0; round < 5; round++) await graphql(other.url, VERIFICATION_QUERY, { p: CAROL });
    expect(domain.hits.get('carol')).toBe(1);
    // The REST body does not change.
    expect((await getJson(`${server.url}/user-profile?pubkey=${CAROL}`)).body).toEqual({
      profile: expect.objectContaining({ pubkey: CAROL, kind: 0 }),
    });
  });

  it('a declared domain that cannot be asked is UNREACHABLE', async () => {
    const port = await closedPort();
    await opened.store.putEvents([profile('nip05 gina', { name: 'gina', nip05: `gina@127.0.0.1:${port}` })]);
    const server = await serve();
    const gina = pubkeyOf('nip05 gina');
    let status = 'NOT_CHECKED';
    for (let attempt = 0; attempt < 100 && status === 'NOT_CHECKED'; attempt++) {
      const body = (await graphql(server.url, VERIFICATION_QUERY, { p: gina })).body as { data: { profile: { nip05Verification: { status: string } } } };
      status = body.data.profile.nip05Verification.status;
      if (status === 'NOT_CHECKED') await new Promise((done) => setTimeout(done, 50));
    }
    expect(status).toBe('UNREACHABLE');
  });

  it('relays the nostr.json lists for the pubkey are hints for its profile', async () => {
    const hidden = profile('nip05 hank', { name: 'hank' });
    const relay = await startLoopbackRelay({ events: [hidden] });
    const configured = await startLoopbackRelay();
    try {
      domain.route('hank', { json: { names: { hank: hidden.pubkey }, relays: { [hidden.pubkey]: [relay.url] } } });
      const server = await serve({ relays: { urls: [configured.url], allowPrivateHints: true } });
      const response = await getJson(`${server.url}/user-profile?pubkey=hank@${domain.domain}`);
      expect(response).toMatchObject({ status: 200, body: { profile: hidden } });
      expect(relay.requests.length).toBeGreaterThan(0);
    } finally {
      await Promise.all([relay.stop(), configured.stop()]);
    }
  });

  it('ten concurrent lookups of one name from one client are all 200, with one request to the domain', async () => {
    const server = await serve();
    for (let round = 0; round < 5; round++) {
      const name = `ten${round}`;
      domain.route(name, { json: { names: { [name]: CAROL } } });
      const answers = await Promise.all(Array.from({ length: 10 }, () => getJson(`${server.url}/user-profile?pubkey=${name}@${domain.domain}`)));
      expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
      expect(domain.hits.get(name)).toBe(1);
    }
    // With MISS_RATE_LIMIT (an allowance read in the store before the exchange starts): one name
    // takes one of the client's allowance, however many of its requests ask for it at once.
    const limited = await serve({ rateLimits: { misses: { perSecond: 0.01, burst: 1 }, trustProxy: false } });
    domain.route('tenlimited', { json: { names: { tenlimited: CAROL } } });
    const answers = await Promise.all(Array.from({ length: 10 }, () => getJson(`${limited.url}/user-profile?pubkey=tenlimited@${domain.domain}`)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    expect(domain.hits.get('tenlimited')).toBe(1);
    domain.route('another', { json: { names: { another: CAROL } } });
    expect((await getJson(`${limited.url}/user-profile?pubkey=another@${domain.domain}`)).status).toBe(429);
  });

  it('per client, at most MISS_CONCURRENCY_PER_CLIENT resolutions at once; past it 429', async () => {
    const server = await serve({ nip05: { maxPerClient: 2 } });
    for (const name of ['wait1', 'wait2', 'wait3']) domain.route(name, { json: { names: { [name]: BOB } }, delayMs: 400 });
    const answers = await Promise.all(['wait1', 'wait2', 'wait3'].map((name) => getJson(`${server.url}/user-profile?pubkey=${name}@${domain.domain}`)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 429]);
    expect(answers.find((answer) => answer.status === 429)?.body).toEqual(errorBody('too_many_requests'));
  });
});
