import { createServer } from 'node:net';
import { bech32 } from '@scure/base';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Deadline, GuardedFetcher } from '../src/net/guarded-fetch.js';
import {
  askPayEndpoint,
  type LnurlProviderAnswer,
  lnurlPayEndpoint,
  lud06Url,
  lud16Url,
  MAX_LNURL_PAY_BYTES,
  providerAllows,
  providerVerdict,
  readLnurlPayResponse,
} from '../src/zaps/lnurl-provider.js';
import { pubkeyOf } from './support/events.js';
import { type Nip05Server, startNip05Server } from './support/nip05-server.js';
import { lnurlPayResponse } from './support/zaps.js';

/**
 * The provider check of NIP-57 zaps: the pay endpoint a profile names (LUD-16, LUD-06), read over
 * the guarded fetcher of NIP-05 from a real HTTPS server on loopback with the test CA
 * (NODE_EXTRA_CA_CERTS, set in vitest.config.ts), as the NIP-05 tests do.
 */

const PROVIDER = pubkeyOf('lnurl provider');
const OTHER = pubkeyOf('lnurl someone else');

/** A bech32 LNURL of `url` (LUD-01), as wallets write them: in capitals. */
const lnurlOf = (url: string) => bech32.encode('lnurl', bech32.toWords(new TextEncoder().encode(url)), false).toUpperCase();

const deadline = (ms: number): Deadline => ({ signal: AbortSignal.timeout(ms), endsAt: performance.now() + ms });

const payResponse = (overrides: Record<string, unknown> = {}) => lnurlPayResponse(PROVIDER, overrides);

describe('the pay endpoint a profile names', () => {
  it.each([
    ['alice@example.com', 'https://example.com/.well-known/lnurlp/alice'],
    ['Alice@Example.COM', 'https://example.com/.well-known/lnurlp/alice'],
    ['  bob.smith_1-x@wallet.example  ', 'https://wallet.example/.well-known/lnurlp/bob.smith_1-x'],
    ['bob+tips@wallet.example', 'https://wallet.example/.well-known/lnurlp/bob+tips'],
    ['bob@wallet.example:8443', 'https://wallet.example:8443/.well-known/lnurlp/bob'],
    ['bob@wallet.example:443', 'https://wallet.example/.well-known/lnurlp/bob'],
    ['bob@127.0.0.1:8443', 'https://127.0.0.1:8443/.well-known/lnurlp/bob'],
  ])('lud16 %j → %s', (address, url) => {
    expect(lud16Url(address)?.href).toBe(url);
  });

  it.each([
    '',
    'alice',
    '@example.com',
    'alice@',
    '.@example.com',
    '..@example.com',
    'a b@example.com',
    'alice@example.com/path',
    'alice@example.com?x=1',
    'alice@user:pw@example.com',
    'älice@example.com',
    'alice@exa mple.com',
    'alice@example..com',
    `${'a'.repeat(65)}@example.com`,
    'lnurl1dp68gurn8ghj7um5v93kketj9ehx2amn9uh8wetvdskkkmn0wahz7mrww4excup0dajx2mrv92x9xp',
  ])('lud16 %j is not a lightning address', (address) => {
    expect(lud16Url(address)).toBeUndefined();
  });

  it('lud06: the LUD-01 example, the NIP-57 example, lowercase or capitals, with a `lightning:` prefix', () => {
    const lud01 =
      'LNURL1DP68GURN8GHJ7UM9WFMXJCM99E3K7MF0V9CXJ0M385EKVCENXC6R2C35XVUKXEFCV5MKVV34X5EKZD3EV56NYD3HXQURZEPEXEJXXEPNXSCRVWFNV9NXZCN9XQ6XYEFHVGCXXCMYXYMNSERXFQ5FNS';
    expect((lud06Url(lud01) as URL).href).toBe('https://service.com/api?q=3fc3645b439ce8e7f2553a69e5267081d96dcd340693afabe04be7b0ccd178df');
    expect((lud06Url(`lightning:${lud01}`) as URL).href).toBe('https://service.com/api?q=3fc3645b439ce8e7f2553a69e5267081d96dcd340693afabe04be7b0ccd178df');
    const nip57 = 'lnurl1dp68gurn8ghj7um5v93kketj9ehx2amn9uh8wetvdskkkmn0wahz7mrww4excup0dajx2mrv92x9xp';
    expect((lud06Url(nip57) as URL).href).toBe('https://stacker.news/.well-known/lnurlp/odell');
  });

  it.each([
    [lnurlOf('http://example.com/.well-known/lnurlp/alice'), 'lud06 is not https'],
    [lnurlOf('http://abcdefghij.onion/lnurlp/alice'), 'lud06 is not https'],
    [lnurlOf('wss://example.com/'), 'lud06 is not https'],
    [lnurlOf('https://user:pw@example.com/lnurlp'), 'lud06 has credentials'],
    [lnurlOf('not a url'), 'lud06 is not a URL'],
    [bech32.encode('lnurl', [31, 31, 31], false), 'lud06 is not an LNURL'], // not whole bytes
    [bech32.encode('lnurl', bech32.toWords(Uint8Array.of(0xff, 0xfe)), false), 'lud06 is not an LNURL'], // not UTF-8
    [bech32.encode('npub', bech32.toWords(new TextEncoder().encode('https://example.com/')), false), 'lud06 is not an LNURL'],
    ['lnurl1qqqqqq', 'lud06 is not an LNURL'],
    ['alice@example.com', 'lud06 is not an LNURL'],
    [`LNURL1${'Q'.repeat(3000)}`, 'lud06 is too long'],
  ])('lud06 %s → refused (%s)', (lnurl, reason) => {
    expect(lud06Url(lnurl)).toEqual({ refused: reason });
  });

  it('lud16 first, else lud06 (a lud16 that is not a lightning address counts as absent); neither: refused', () => {
    const lud06 = lnurlOf('https://pay.example/lnurlp/carol');
    expect(lnurlPayEndpoint({ lud16: 'alice@example.com', lud06 })).toMatchObject({ field: 'lud16', value: 'alice@example.com', url: new URL('https://example.com/.well-known/lnurlp/alice') });
    expect(lnurlPayEndpoint({ lud16: 'not an address', lud06 })).toMatchObject({ field: 'lud06', value: lud06, url: new URL('https://pay.example/lnurlp/carol') });
    expect(lnurlPayEndpoint({ lud16: null, lud06 })).toMatchObject({ field: 'lud06' });
    expect(lnurlPayEndpoint({ lud16: 'not an address', lud06: null })).toEqual({ refused: 'lud16 is not a lightning address' });
    expect(lnurlPayEndpoint({ lud06: lnurlOf('http://pay.example/') })).toEqual({ refused: 'lud06 is not https' });
    expect(lnurlPayEndpoint({})).toEqual({ refused: 'no lud16 or lud06' });
  });

  it('never throws on any text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[a-zA-Z0-9.+_-]{0,8}@[a-z0-9.:[\]-]{0,20}$/), fc.string().map((text) => lnurlOf(text))), (text) => {
        const url = lud16Url(text);
        if (url) expect(url.protocol).toBe('https:');
        const decoded = lud06Url(text);
        if (decoded instanceof URL) expect(decoded.protocol).toBe('https:');
        else expect(typeof decoded.refused).toBe('string');
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 2000) },
    );
  });
});

describe('pay endpoint answers (LUD-06, NIP-57 appendix C)', () => {
  it.each([
    ['a good answer', JSON.stringify(payResponse()), { nostrPubkey: PROVIDER }],
    ['not JSON', '<html>hello</html>', { refused: 'not JSON' }],
    ['an array', '[]', { refused: 'not an object' }],
    ['a LUD-06 error', JSON.stringify({ status: 'ERROR', reason: 'no such user' }), { refused: 'provider error' }],
    ['allowsNostr false', JSON.stringify(payResponse({ allowsNostr: false })), { refused: 'allowsNostr is not true' }],
    ['allowsNostr "true" (a string)', JSON.stringify(payResponse({ allowsNostr: 'true' })), { refused: 'allowsNostr is not true' }],
    ['no allowsNostr', JSON.stringify(payResponse({ allowsNostr: undefined })), { refused: 'allowsNostr is not true' }],
    ['no nostrPubkey', JSON.stringify(payResponse({ nostrPubkey: undefined })), { refused: 'nostrPubkey is not a lowercase hex pubkey' }],
    ['nostrPubkey in capitals', JSON.stringify(payResponse({ nostrPubkey: PROVIDER.toUpperCase() })), { refused: 'nostrPubkey is not a lowercase hex pubkey' }],
    ['nostrPubkey as an npub', JSON.stringify(payResponse({ nostrPubkey: 'npub1xyz' })), { refused: 'nostrPubkey is not a lowercase hex pubkey' }],
    ['nostrPubkey too short', JSON.stringify(payResponse({ nostrPubkey: PROVIDER.slice(2) })), { refused: 'nostrPubkey is not a lowercase hex pubkey' }],
  ])('%s', (_label, text, answer) => {
    expect(readLnurlPayResponse(text)).toEqual(answer);
  });

  it('never throws on any document', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.string(), fc.anything().map((value) => JSON.stringify({ ...payResponse(), nostrPubkey: value }) ?? '')), (text) => {
        const answer = readLnurlPayResponse(text);
        expect('nostrPubkey' in answer || 'refused' in answer).toBe(true);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 2000) },
    );
  });

  it('the receipt counts only if its signer is the nostrPubkey; no answer yet is pending', () => {
    const signedBy = (provider: string) => ({ provider });
    expect(providerVerdict(signedBy(PROVIDER), { nostrPubkey: PROVIDER })).toBe('allowed');
    expect(providerAllows(signedBy(PROVIDER), { nostrPubkey: PROVIDER })).toBe(true);
    expect(providerVerdict(signedBy(OTHER), { nostrPubkey: PROVIDER })).toBe('refused');
    expect(providerAllows(signedBy(OTHER), { nostrPubkey: PROVIDER })).toBe(false);
    expect(providerVerdict(signedBy(PROVIDER), { refused: 'allowsNostr is not true' })).toBe('refused');
    expect(providerVerdict(signedBy(PROVIDER), { unavailable: 'timeout' })).toBe('pending');
    expect(providerAllows(signedBy(PROVIDER), { unavailable: 'timeout' })).toBe(false);
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

/** Pay endpoints asked through a guarded fetcher of their own (the service shares NIP-05's: test/guarded-fetch.test.ts). */
function payEndpoints(allowPrivate: boolean) {
  const guarded = new GuardedFetcher({ allowPrivate, maxConcurrent: 8, maxPerAddress: 2 });
  return {
    ask: (url: URL, within: Deadline): Promise<LnurlProviderAnswer> => askPayEndpoint(guarded, url, within),
    close: () => guarded.close(),
  };
}

describe('pay endpoints over HTTPS (a real server on loopback, the test CA)', () => {
  let server: Nip05Server;
  let fetcher: ReturnType<typeof payEndpoints>;
  /** The pay endpoint URL of `name` at the test server, as its lud16 names it. */
  const endpoint = (name: string) => lud16Url(`${name}@${server.domain}`) as URL;
  const hitsOf = (name: string) => server.paths.filter((path) => path === `/.well-known/lnurlp/${name}`).length;

  beforeAll(async () => {
    server = await startNip05Server();
    // RELAY_ALLOW_PRIVATE=true, as the NIP-05 tests run: the test server is on loopback.
    fetcher = payEndpoints(true);
  });
  afterAll(async () => {
    fetcher.close();
    await server.close();
  });

  it('a good answer: the nostrPubkey, by lud16 and by lud06; a receipt it signed is allowed, another is not', async () => {
    server.routePath('/.well-known/lnurlp/alice', { json: payResponse() });
    const answer = await fetcher.ask(endpoint('alice'), deadline(2000));
    expect(answer).toEqual({ nostrPubkey: PROVIDER });
    expect(providerAllows({ provider: PROVIDER }, answer)).toBe(true);
    expect(providerAllows({ provider: OTHER }, answer)).toBe(false);
    const viaLud06 = lnurlPayEndpoint({ lud06: lnurlOf(`https://${server.domain}/.well-known/lnurlp/alice?via=lud06`) });
    expect(viaLud06).toMatchObject({ field: 'lud06' });
    expect(await fetcher.ask((viaLud06 as { url: URL }).url, deadline(2000))).toEqual({ nostrPubkey: PROVIDER });
    expect(hitsOf('alice')).toBe(2);
  });

  it('a wrong nostrPubkey: another key is refused by the verdict, a malformed one by the answer', async () => {
    server.routePath('/.well-known/lnurlp/wrong', { json: payResponse({ nostrPubkey: OTHER }) });
    server.routePath('/.well-known/lnurlp/malformed', { json: payResponse({ nostrPubkey: 'npub1notahexkey' }) });
    const wrong = await fetcher.ask(endpoint('wrong'), deadline(2000));
    expect(wrong).toEqual({ nostrPubkey: OTHER });
    expect(providerVerdict({ provider: PROVIDER }, wrong)).toBe('refused');
    expect(await fetcher.ask(endpoint('malformed'), deadline(2000))).toEqual({ refused: 'nostrPubkey is not a lowercase hex pubkey' });
  });

  it('allowsNostr false, and an answer that is not JSON, are refused', async () => {
    server.routePath('/.well-known/lnurlp/nozaps', { json: payResponse({ allowsNostr: false }) });
    server.routePath('/.well-known/lnurlp/html', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html>not json</html>');
    });
    expect(await fetcher.ask(endpoint('nozaps'), deadline(2000))).toEqual({ refused: 'allowsNostr is not true' });
    expect(await fetcher.ask(endpoint('html'), deadline(2000))).toEqual({ refused: 'not JSON' });
  });

  it('slow past the deadline: unavailable (ask again later), in time', async () => {
    server.routePath('/.well-known/lnurlp/slow', { json: payResponse(), delayMs: 3000 });
    const started = performance.now();
    expect(await fetcher.ask(endpoint('slow'), deadline(500))).toEqual({ unavailable: 'timeout' });
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it('a huge body is cut off at the cap, with or without a Content-Length: refused', async () => {
    const huge = JSON.stringify(payResponse({ metadata: 'x'.repeat(MAX_LNURL_PAY_BYTES) }));
    server.routePath('/.well-known/lnurlp/huge', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      for (let offset = 0; offset < huge.length; offset += 64 * 1024) response.write(huge.slice(offset, offset + 64 * 1024));
      response.end();
    });
    server.routePath('/.well-known/lnurlp/hugelength', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(huge)) }).end(huge);
    });
    expect(await fetcher.ask(endpoint('huge'), deadline(2000))).toEqual({ refused: 'too large' });
    expect(await fetcher.ask(endpoint('hugelength'), deadline(2000))).toEqual({ refused: 'too large' });
  });

  it('redirects are not followed, to another host or not: refused', async () => {
    const elsewhere = await startNip05Server();
    try {
      elsewhere.routePath('/.well-known/lnurlp/moved', { json: payResponse() });
      server.routePath('/.well-known/lnurlp/moved', (_request, response) => {
        response.writeHead(302, { location: `https://${elsewhere.domain}/.well-known/lnurlp/moved` }).end();
      });
      server.routePath('/.well-known/lnurlp/samehost', (_request, response) => {
        response.writeHead(301, { location: '/.well-known/lnurlp/alice' }).end();
      });
      expect(await fetcher.ask(endpoint('moved'), deadline(2000))).toEqual({ refused: 'redirect' });
      const before = hitsOf('alice');
      expect(await fetcher.ask(endpoint('samehost'), deadline(2000))).toEqual({ refused: 'redirect' });
      expect(elsewhere.paths).toEqual([]);
      expect(hitsOf('alice')).toBe(before);
    } finally {
      await elsewhere.close();
    }
  });

  it('statuses: 404 (no such address) is refused; 500, 429 and 408 are unavailable', async () => {
    server.routePath('/.well-known/lnurlp/gone', { json: { status: 'ERROR', reason: 'not found' }, status: 404 });
    server.routePath('/.well-known/lnurlp/broken', { json: {}, status: 500 });
    server.routePath('/.well-known/lnurlp/throttled', { json: {}, status: 429 });
    server.routePath('/.well-known/lnurlp/timeout', { json: {}, status: 408 });
    expect(await fetcher.ask(endpoint('gone'), deadline(2000))).toEqual({ refused: 'status 404' });
    expect(await fetcher.ask(endpoint('broken'), deadline(2000))).toEqual({ unavailable: 'status 500' });
    expect(await fetcher.ask(endpoint('throttled'), deadline(2000))).toEqual({ unavailable: 'status 429' });
    expect(await fetcher.ask(endpoint('timeout'), deadline(2000))).toEqual({ unavailable: 'status 408' });
  });

  it('an http:// lud06 is refused before any request; an http:// URL given to the fetcher too', async () => {
    server.routePath('/.well-known/lnurlp/plain', { json: payResponse() });
    const plain = `http://${server.domain}/.well-known/lnurlp/plain`;
    expect(lnurlPayEndpoint({ lud06: lnurlOf(plain) })).toEqual({ refused: 'lud06 is not https' });
    expect(await fetcher.ask(new URL(plain), deadline(2000))).toEqual({ refused: 'not https' });
    expect(hitsOf('plain')).toBe(0);
  });

  it('a private or loopback address is refused without RELAY_ALLOW_PRIVATE (an IP literal, or a name resolving to one): no request is made', async () => {
    const strict = payEndpoints(false);
    try {
      server.routePath('/.well-known/lnurlp/private', { json: payResponse() });
      for (const host of [server.domain, `localhost:${server.port}`, `[::1]:${server.port}`]) {
        expect(await strict.ask(lud16Url(`private@${host}`) as URL, deadline(2000)), host).toEqual({ refused: 'not a public address' });
      }
      expect(hitsOf('private')).toBe(0);
    } finally {
      strict.close();
    }
  });

  it('nothing listening, or a certificate we do not trust for that name: unavailable', async () => {
    const port = await closedPort();
    expect(await fetcher.ask(new URL(`https://127.0.0.1:${port}/.well-known/lnurlp/alice`), deadline(2000))).toEqual({ unavailable: 'ECONNREFUSED' });
    // The test certificate names localhost, 127.0.0.1 and ::1, not 127.0.0.2.
    const answer = await fetcher.ask(new URL(`https://127.0.0.2:${server.port}/.well-known/lnurlp/alice`), deadline(2000));
    expect(answer).toHaveProperty('unavailable');
  });

  it('many checks at one domain hold at most maxPerDomain connections to it', async () => {
    server.routePath('/.well-known/lnurlp/busy', { json: payResponse(), delayMs: 100 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => fetcher.ask(endpoint('busy'), deadline(3000))));
    expect(answers.every((answer) => 'nostrPubkey' in answer)).toBe(true);
    expect(server.connections.peak).toBeLessThanOrEqual(2);
  });
});
