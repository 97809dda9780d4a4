import fc from 'fast-check';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_HTTP_LIMITS, DEFAULT_INDEXER_RELAYS, DEFAULT_RELAYS, loadConfig } from '../src/config/env.js';
import { parseClusterNodes } from '../src/config/redis-cluster-nodes.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('configuration from the environment', () => {
  it('has working defaults: without REDIS_URL, the embedded store in ./data', () => {
    expect(loadConfig({})).toEqual({
      offline: false,
      rateLimits: { trustProxy: false },
      metrics: { enabled: true },
      http: { port: 8080, host: '127.0.0.1', landing: true, limits: DEFAULT_HTTP_LIMITS },
      store: { kind: 'embedded', dataDir: resolve('data'), noteSearch: false },
      log: { level: 'info' },
      lookup: { maxProfiles: 100, maxListLength: 100, trustSeeds: [] },
      relays: {
        urls: DEFAULT_RELAYS,
        timeoutMs: 3000,
        negativeTtlSeconds: 60,
        profileTtlSeconds: 300,
        allowPrivateHints: false,
        syncKinds: [0, 1, 5, 6, 7, 16, 62, 1111, 9735],
        missesPerClient: 8,
        maxKeysPerRequest: 500,
        indexerUrls: DEFAULT_INDEXER_RELAYS,
        searchUrls: [],
        outbox: { enabled: true, relaysPerPubkey: 2, maxRelays: 20 },
        maxConnections: 50,
        relations: { ttlSeconds: 300, maxEvents: 2000 },
        followers: { maxEvents: 5000 },
      },
      nip05: { timeoutMs: 3000, ttlSeconds: 3600, negativeTtlSeconds: 60, allowPrivate: false, maxPerClient: 8, maxConcurrent: 16, maxPerDomain: 2 },
      zaps: { ttlSeconds: 86400, timeoutMs: 3000 },
      graphql: { graphiql: true, maxCost: 20_000, maxResponseBytes: 4 * 1024 * 1024 },
    });
    expect(DEFAULT_HTTP_LIMITS).toEqual({
      requestTimeoutMs: 10_000,
      idleTimeoutMs: 5_000,
      maxConnections: 4096,
      maxConnectionsPerClient: 64,
      maxRequestsPerConnection: 8,
    });
  });

  it('reads every variable', () => {
    expect(
      loadConfig({
        PORT: '9000',
        HOST: '0.0.0.0',
        REDIS_URL: 'rediss://:pw@cache.internal:6380/2',
        REDIS_KEY_PREFIX: '{nostr}:',
        REDIS_TIMEOUT_MS: '250',
        REDIS_WAIT_REPLICAS: '1',
        HOT_CACHE_MB: '128',
        REDIS_PACK_EVENTS: 'false',
        LOG_LEVEL: 'debug',
        MAX_PROFILES: '20',
        MAX_LIST_LENGTH: '10',
        NODE_ENV: 'production',
        GRAPHIQL: 'true',
        RELAYS: ' wss://Relay.Example.com , ws://127.0.0.1:7777/,wss://relay.example.com/',
        RELAY_TIMEOUT_MS: '1500',
        NEGATIVE_TTL: '30',
        PROFILE_TTL: '600',
        RELATIONS_TTL: '120',
        RELATIONS_MAX_EVENTS: '500',
        FOLLOWERS_MAX_EVENTS: '700',
        RELAY_ALLOW_PRIVATE: 'true',
        SYNC_KINDS: '0, 1,30023',
        MISS_CONCURRENCY_PER_CLIENT: '3',
        INDEXER_RELAYS: 'wss://Index.Example.com,',
        SEARCH_RELAYS: 'wss://Search.Example.com',
        OUTBOX: 'false',
        OUTBOX_RELAYS_PER_PUBKEY: '3',
        OUTBOX_MAX_RELAYS: '8',
        MAX_RELAY_CONNECTIONS: '12',
        RELAY_MAX_KEYS_PER_REQUEST: '50',
        GRAPHQL_MAX_COST: '5000',
        MAX_RESPONSE_BYTES: '65536',
        HTTP_REQUEST_TIMEOUT_MS: '2000',
        HTTP_IDLE_TIMEOUT_MS: '1000',
        MAX_CONNECTIONS: '100',
        MAX_CONNECTIONS_PER_CLIENT: '0',
        MAX_REQUESTS_PER_CONNECTION: '2',
        NIP05_TIMEOUT_MS: '800',
        NIP05_TTL: '120',
        NIP05_MAX_CONCURRENT: '40',
        NIP05_MAX_PER_DOMAIN: '4',
        ZAP_PROVIDER_TTL: '600',
        OFFLINE: 'false',
        METRICS: 'true',
        METRICS_PORT: '9100',
        LANDING: 'false',
        RATE_LIMIT: '20',
        RATE_LIMIT_BURST: '100',
        MISS_RATE_LIMIT: '0.5',
        TRUST_PROXY: '10.0.0.0/8, 127.0.0.1',
        TRUST_SEEDS: ` ${'AB'.repeat(32)}, npub1zuuajd7u3sx8xu92yav9jwxpr839cs0kc3q6t56vd5u9q033xmhsk6c2uc,${'ab'.repeat(32)},`,
      }),
    ).toEqual({
      offline: false,
      rateLimits: { requests: { perSecond: 20, burst: 100 }, misses: { perSecond: 0.5, burst: 1 }, trustProxy: ['10.0.0.0/8', '127.0.0.1'] },
      metrics: { enabled: true, port: 9100 },
      http: {
        port: 9000,
        host: '0.0.0.0',
        landing: false,
        limits: {
          requestTimeoutMs: 2000,
          idleTimeoutMs: 1000,
          maxConnections: 100,
          maxConnectionsPerClient: 0,
          maxRequestsPerConnection: 2,
        },
      },
      store: { kind: 'redis', url: 'rediss://:pw@cache.internal:6380/2', keyPrefix: '{nostr}:', timeoutMs: 250, waitReplicas: 1, hotCacheMb: 128, packEvents: false, noteSearch: false },
      log: { level: 'debug' },
      lookup: { maxProfiles: 20, maxListLength: 10, trustSeeds: ['ab'.repeat(32), '1739d937dc8c0c7370aa27585938c119e25c41f6c441a5d34c6d38503e3136ef'] },
      relays: {
        urls: ['wss://relay.example.com/', 'ws://127.0.0.1:7777/'],
        timeoutMs: 1500,
        negativeTtlSeconds: 30,
        profileTtlSeconds: 600,
        allowPrivateHints: true,
        syncKinds: [0, 1, 30023],
        missesPerClient: 3,
        maxKeysPerRequest: 50,
        indexerUrls: ['wss://index.example.com/'],
        searchUrls: ['wss://search.example.com/'],
        outbox: { enabled: false, relaysPerPubkey: 3, maxRelays: 8 },
        maxConnections: 12,
        relations: { ttlSeconds: 120, maxEvents: 500 },
        followers: { maxEvents: 700 },
      },
      // NEGATIVE_TTL, RELAY_ALLOW_PRIVATE and MISS_CONCURRENCY_PER_CLIENT hold for NIP-05 domains as for relays.
      nip05: { timeoutMs: 800, ttlSeconds: 120, negativeTtlSeconds: 30, allowPrivate: true, maxPerClient: 3, maxConcurrent: 40, maxPerDomain: 4 },
      zaps: { ttlSeconds: 600, timeoutMs: 800 },
      graphql: { graphiql: true, maxCost: 5000, maxResponseBytes: 65536 },
    });
  });

  it('DATA_DIR places the embedded store; REDIS_URL takes precedence over it', () => {
    expect(loadConfig({ DATA_DIR: '/var/lib/nostr' }).store).toEqual({ kind: 'embedded', dataDir: '/var/lib/nostr', noteSearch: false });
    expect(loadConfig({ DATA_DIR: 'rel/dir' }).store).toEqual({ kind: 'embedded', dataDir: resolve('rel/dir'), noteSearch: false });
    expect(loadConfig({ DATA_DIR: '/x', REDIS_URL: 'redis://h:1' }).store.kind).toBe('redis');
  });

  it('PUBLIC_URL (requests to vanish naming it apply, NIP-62): an http(s) or ws(s) URL with a host, never echoed when refused', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://lookup.example.com/' }).store).toEqual({
      kind: 'embedded',
      dataDir: resolve('./data'),
      publicUrl: 'https://lookup.example.com/',
      noteSearch: false,
    });
    expect(loadConfig({ PUBLIC_URL: 'wss://lookup.example.com', REDIS_URL: 'redis://h:1' }).store.publicUrl).toBe('wss://lookup.example.com');
    expect(loadConfig({}).store.publicUrl).toBeUndefined();
    const refused = 'PUBLIC_URL must be an http(s):// or ws(s):// URL with a host and no credentials';
    for (const bad of ['ftp://lookup.example.com', 'lookup.example.com', 'https://user:secret@lookup.example.com', 'javascript:alert(1)', 'https://']) {
      const said = problems({ PUBLIC_URL: bad });
      expect(said).toEqual([refused]);
      expect(said.join()).not.toContain('secret');
    }
    expect(problems({ PUBLIC_URL: `https://${'a'.repeat(600)}.example.com` })).toEqual(['PUBLIC_URL must be at most 512 characters']);
  });

  it('RELAYS unset means the default public relays; RELAYS empty turns relay traffic off', () => {
    expect(loadConfig({}).relays.urls).toEqual(DEFAULT_RELAYS);
    expect(loadConfig({ RELAYS: '' }).relays.urls).toEqual([]);
    expect(loadConfig({ RELAYS: ' , ' }).relays.urls).toEqual([]);
  });

  it('refuses relay URLs that are not ws(s), have no host or carry credentials, without echoing them', () => {
    const refused = problems({ RELAYS: 'wss://ok.example, https://relay.example, wss://user:hunter2@relay.example,ws://, relay.example' });
    expect(refused).toEqual([
      'RELAYS: entry 2 is not a ws:// or wss:// URL with a host and no credentials',
      'RELAYS: entry 3 is not a ws:// or wss:// URL with a host and no credentials',
      'RELAYS: entry 4 is not a ws:// or wss:// URL with a host and no credentials',
      'RELAYS: entry 5 is not a ws:// or wss:// URL with a host and no credentials',
    ]);
    expect(refused.join()).not.toContain('hunter2');
    expect(problems({ RELAYS: `wss://${'a'.repeat(600)}.example` })).toHaveLength(1);
  });

  it('INDEXER_RELAYS unset means the default indexers, empty turns them off, and bad entries are refused by position', () => {
    expect(loadConfig({}).relays.indexerUrls).toEqual(DEFAULT_INDEXER_RELAYS);
    expect(loadConfig({ INDEXER_RELAYS: '' }).relays.indexerUrls).toEqual([]);
    expect(problems({ INDEXER_RELAYS: 'wss://ok.example,http://x.example,wss://u:secret@x.example' })).toEqual([
      'INDEXER_RELAYS: entry 2 is not a ws:// or wss:// URL with a host and no credentials',
      'INDEXER_RELAYS: entry 3 is not a ws:// or wss:// URL with a host and no credentials',
    ]);
  });

  it('SEARCH_RELAYS: none unless set; bad entries refused by position; off with OFFLINE; counted in the connection cap', () => {
    expect(loadConfig({}).relays.searchUrls).toEqual([]);
    expect(loadConfig({ SEARCH_RELAYS: 'wss://Search.Example/,wss://search.example' }).relays.searchUrls).toEqual(['wss://search.example/']);
    expect(loadConfig({ SEARCH_RELAYS: 'wss://search.example', OFFLINE: 'true' }).relays.searchUrls).toEqual([]);
    expect(problems({ SEARCH_RELAYS: 'https://search.example,wss://u:secret@search.example' })).toEqual([
      'SEARCH_RELAYS: entry 1 is not a ws:// or wss:// URL with a host and no credentials',
      'SEARCH_RELAYS: entry 2 is not a ws:// or wss:// URL with a host and no credentials',
    ]);
    expect(problems({ RELAYS: 'wss://a.example', INDEXER_RELAYS: '', SEARCH_RELAYS: 'wss://s.example', MAX_RELAY_CONNECTIONS: '2' })).toEqual([
      'MAX_RELAY_CONNECTIONS (2) must be above the number of RELAYS, INDEXER_RELAYS and SEARCH_RELAYS (2), to leave room for hints and learned relays',
    ]);
  });

  it('refuses hostile outbox settings, and a connection cap that leaves no room beyond the configured relays', () => {
    expect(problems({ OUTBOX: 'yes', OUTBOX_RELAYS_PER_PUBKEY: '0', OUTBOX_MAX_RELAYS: '100000', MAX_RELAY_CONNECTIONS: '-3' })).toEqual([
      'OUTBOX must be true or false',
      'OUTBOX_RELAYS_PER_PUBKEY must be at least 1',
      'OUTBOX_MAX_RELAYS must be at most 200',
      'MAX_RELAY_CONNECTIONS must be a whole number',
    ]);
    expect(problems({ RELAYS: 'wss://a.example,wss://b.example', INDEXER_RELAYS: 'wss://b.example', MAX_RELAY_CONNECTIONS: '2' })).toEqual([
      'MAX_RELAY_CONNECTIONS (2) must be above the number of RELAYS, INDEXER_RELAYS and SEARCH_RELAYS (2), to leave room for hints and learned relays',
    ]);
    expect(loadConfig({ OUTBOX: '' }).relays.outbox.enabled).toBe(true);
  });

  it('refuses bad relay timings, flags and kinds', () => {
    expect(
      problems({ RELAY_TIMEOUT_MS: '10', NEGATIVE_TTL: '0', PROFILE_TTL: 'soon', RELAY_ALLOW_PRIVATE: 'maybe', SYNC_KINDS: '1,70000' }),
    ).toEqual([
      'RELAY_TIMEOUT_MS must be at least 100',
      'NEGATIVE_TTL must be at least 1',
      'PROFILE_TTL must be a whole number',
      'RELAY_ALLOW_PRIVATE must be true or false',
      'SYNC_KINDS: not an event kind (0–65535): "70000"',
    ]);
    expect(problems({ SYNC_KINDS: '1,-2' })).toEqual(['SYNC_KINDS: not an event kind (0–65535): "-2"']);
  });

  it('RELATIONS_TTL and RELATIONS_MAX_EVENTS: defaults when unset or empty; zero, negative, fractional, non-numeric and huge values refused', () => {
    expect(loadConfig({ RELATIONS_TTL: '', RELATIONS_MAX_EVENTS: '' }).relays.relations).toEqual({ ttlSeconds: 300, maxEvents: 2000 });
    expect(loadConfig({ RELATIONS_TTL: ' 1 ', RELATIONS_MAX_EVENTS: '100000' }).relays.relations).toEqual({ ttlSeconds: 1, maxEvents: 100_000 });
    expect(loadConfig({ RELATIONS_TTL: String(86400 * 30), RELATIONS_MAX_EVENTS: '1' }).relays.relations).toEqual({ ttlSeconds: 2_592_000, maxEvents: 1 });
    expect(problems({ RELATIONS_TTL: '0', RELATIONS_MAX_EVENTS: '0' })).toEqual(['RELATIONS_TTL must be at least 1', 'RELATIONS_MAX_EVENTS must be at least 1']);
    for (const bad of ['-5', '1.5', '1e3', 'soon', '0x10', 'Infinity', 'NaN', '3 00']) {
      expect(problems({ RELATIONS_TTL: bad, RELATIONS_MAX_EVENTS: bad })).toEqual([
        'RELATIONS_TTL must be a whole number',
        'RELATIONS_MAX_EVENTS must be a whole number',
      ]);
    }
    expect(problems({ RELATIONS_TTL: String(86400 * 30 + 1), RELATIONS_MAX_EVENTS: '100001' })).toEqual([
      'RELATIONS_TTL must be at most 2592000',
      'RELATIONS_MAX_EVENTS must be at most 100000',
    ]);
    // Twenty digits: past Number.MAX_SAFE_INTEGER, still one clear message each.
    expect(problems({ RELATIONS_TTL: '9'.repeat(20), RELATIONS_MAX_EVENTS: '9'.repeat(400) })).toEqual([
      'RELATIONS_TTL must be at most 2592000',
      'RELATIONS_MAX_EVENTS must be at most 100000',
    ]);
  });

  it('FOLLOWERS_MAX_EVENTS: 5000 when unset or empty; 1 to 100000, anything else refused with one clear message', () => {
    expect(loadConfig({}).relays.followers).toEqual({ maxEvents: 5000 });
    expect(loadConfig({ FOLLOWERS_MAX_EVENTS: '' }).relays.followers).toEqual({ maxEvents: 5000 });
    expect(loadConfig({ FOLLOWERS_MAX_EVENTS: '1' }).relays.followers).toEqual({ maxEvents: 1 });
    expect(problems({ FOLLOWERS_MAX_EVENTS: '0' })).toEqual(['FOLLOWERS_MAX_EVENTS must be at least 1']);
    expect(problems({ FOLLOWERS_MAX_EVENTS: '100001' })).toEqual(['FOLLOWERS_MAX_EVENTS must be at most 100000']);
    for (const bad of ['1.5', '-3', 'many', '0x10', '9'.repeat(400)]) expect(problems({ FOLLOWERS_MAX_EVENTS: bad }), bad).toHaveLength(1);
  });

  it('SYNC_KINDS defaults to profiles, notes, reposts, reactions, comments and what deletes them, sorted', () => {
    expect(loadConfig({}).relays.syncKinds).toEqual([0, 1, 5, 6, 7, 16, 62, 1111, 9735]);
    expect(loadConfig({ SYNC_KINDS: ' ' }).relays.syncKinds).toEqual([0, 1, 5, 6, 7, 16, 62, 1111, 9735]);
  });

  it('TRUST_SEEDS: pubkeys (hex or npub), at most 16 distinct; anything else refused by position, a secret key never echoed', () => {
    const nsec = 'nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5';
    expect(problems({ TRUST_SEEDS: `${'ab'.repeat(32)},${nsec}` })).toEqual(['TRUST_SEEDS: entry 2 is not a pubkey (64 hex digits or npub1…)']);
    expect(problems({ TRUST_SEEDS: `${nsec}` }).join(' ')).not.toContain(nsec.slice(5, 20));
    for (const hostile of ['x', 'ab'.repeat(31), `${'ab'.repeat(32)}0`, 'note1zuuajd7u3sx8xu92yav9jwxpr839cs0kc3q6t56vd5u9q033xmhsk6c2uc', '\u0000']) {
      expect(problems({ TRUST_SEEDS: hostile }), hostile).toEqual(['TRUST_SEEDS: entry 1 is not a pubkey (64 hex digits or npub1…)']);
    }
    const seventeen = Array.from({ length: 17 }, (_, n) => n.toString(16).padStart(64, '0')).join(',');
    expect(problems({ TRUST_SEEDS: seventeen })).toEqual(['TRUST_SEEDS: at most 16 pubkeys']);
  });

  it('refuses bad NIP-05 timings', () => {
    expect(problems({ NIP05_TIMEOUT_MS: '50', NIP05_TTL: '0' })).toEqual(['NIP05_TIMEOUT_MS must be at least 100', 'NIP05_TTL must be at least 1']);
    expect(problems({ NIP05_TIMEOUT_MS: '1e4', NIP05_TTL: String(86400 * 31) })).toEqual([
      'NIP05_TIMEOUT_MS must be a whole number',
      'NIP05_TTL must be at most 2592000',
    ]);
  });

  it('ZAP_PROVIDER_TTL: a whole number of seconds from a minute to 30 days; hostile values refused', () => {
    expect(loadConfig({ ZAP_PROVIDER_TTL: '3600' }).zaps.ttlSeconds).toBe(3600);
    expect(problems({ ZAP_PROVIDER_TTL: '59' })).toEqual(['ZAP_PROVIDER_TTL must be at least 60']);
    expect(problems({ ZAP_PROVIDER_TTL: String(86400 * 31) })).toEqual(['ZAP_PROVIDER_TTL must be at most 2592000']);
    for (const hostile of ['-1', '1e5', '0x100', 'Infinity', '86400; rm -rf /', '1.5', 'a day']) {
      expect(problems({ ZAP_PROVIDER_TTL: hostile }), hostile).toEqual(['ZAP_PROVIDER_TTL must be a whole number']);
    }
  });

  it('NIP05_MAX_CONCURRENT and NIP05_MAX_PER_DOMAIN: small whole numbers, per domain within the total, hostile values refused', () => {
    expect(loadConfig({ NIP05_MAX_CONCURRENT: ' 4 ', NIP05_MAX_PER_DOMAIN: '4' }).nip05).toMatchObject({ maxConcurrent: 4, maxPerDomain: 4 });
    expect(loadConfig({ NIP05_MAX_CONCURRENT: '', NIP05_MAX_PER_DOMAIN: '' }).nip05).toMatchObject({ maxConcurrent: 16, maxPerDomain: 2 });
    expect(problems({ NIP05_MAX_CONCURRENT: '0', NIP05_MAX_PER_DOMAIN: '1001' })).toEqual([
      'NIP05_MAX_CONCURRENT must be at least 1',
      'NIP05_MAX_PER_DOMAIN must be at most 1000',
    ]);
    for (const hostile of ['-1', '1e3', '0x10', 'Infinity', '2; rm -rf /', '1.5', ' ']) {
      expect(problems({ NIP05_MAX_CONCURRENT: hostile }), hostile).toEqual(['NIP05_MAX_CONCURRENT must be a whole number']);
    }
    expect(problems({ NIP05_MAX_CONCURRENT: '99999999999999999999' })).toEqual(['NIP05_MAX_CONCURRENT must be at most 10000']);
    expect(problems({ NIP05_MAX_CONCURRENT: '3', NIP05_MAX_PER_DOMAIN: '8' })).toEqual(['NIP05_MAX_PER_DOMAIN (8) must be at most NIP05_MAX_CONCURRENT (3)']);
  });

  it('OFFLINE=true turns every outside exchange off, RELAYS and INDEXER_RELAYS whatever they say; hostile values refused', () => {
    for (const env of [{ OFFLINE: 'true' }, { OFFLINE: '1', RELAYS: 'wss://relay.example', INDEXER_RELAYS: 'wss://index.example' }]) {
      const config = loadConfig(env);
      expect(config.offline).toBe(true);
      expect(config.relays.urls).toEqual([]);
      expect(config.relays.indexerUrls).toEqual([]);
    }
    expect(loadConfig({ OFFLINE: 'false' }).offline).toBe(false);
    expect(loadConfig({ OFFLINE: '' }).offline).toBe(false);
    expect(loadConfig({ OFFLINE: '0' }).relays.urls).toEqual(DEFAULT_RELAYS);
    for (const hostile of ['yes', 'TRUE', 'off', ' true', 'true; rm -rf /']) expect(problems({ OFFLINE: hostile }), hostile).toEqual(['OFFLINE must be true or false']);
    // Bad relay URLs are still refused: the setting must be right for when OFFLINE is turned off again.
    expect(problems({ OFFLINE: 'true', RELAYS: 'https://relay.example' })).toEqual(['RELAYS: entry 1 is not a ws:// or wss:// URL with a host and no credentials']);
  });

  it('LANDING: on unless false; anything else is refused by name', () => {
    expect(loadConfig({ LANDING: '0' }).http.landing).toBe(false);
    expect(loadConfig({ LANDING: '' }).http.landing).toBe(true);
    for (const hostile of ['off', 'no', '<script>', 'true false']) expect(problems({ LANDING: hostile }), hostile).toEqual(['LANDING must be true or false']);
  });

  it('METRICS and METRICS_PORT: off, a port of their own, and what cannot be', () => {
    expect(loadConfig({ METRICS: 'false' }).metrics).toEqual({ enabled: false });
    expect(loadConfig({ METRICS: '0', METRICS_PORT: '' }).metrics).toEqual({ enabled: false });
    expect(problems({ METRICS: 'no' })).toEqual(['METRICS must be true or false']);
    expect(problems({ METRICS_PORT: '65536' })).toEqual(['METRICS_PORT must be at most 65535']);
    expect(problems({ METRICS_PORT: '-1' })).toEqual(['METRICS_PORT must be a whole number']);
    expect(problems({ METRICS_PORT: '9100; rm -rf /' })).toEqual(['METRICS_PORT must be a whole number']);
    expect(problems({ METRICS: 'false', METRICS_PORT: '9100' })).toEqual(['METRICS_PORT is set but METRICS=false turns metrics off']);
    expect(problems({ PORT: '9100', METRICS_PORT: '9100' })).toEqual(['METRICS_PORT (9100) must differ from PORT']);
  });

  it('RATE_LIMIT, MISS_RATE_LIMIT and TRUST_PROXY: rates, bursts, proxies, and hostile values', () => {
    expect(loadConfig({ RATE_LIMIT: '2.5' }).rateLimits).toEqual({ requests: { perSecond: 2.5, burst: 3 }, trustProxy: false });
    expect(loadConfig({ MISS_RATE_LIMIT: '1', MISS_RATE_LIMIT_BURST: '5' }).rateLimits).toEqual({ misses: { perSecond: 1, burst: 5 }, trustProxy: false });
    expect(loadConfig({ TRUST_PROXY: 'true' }).rateLimits.trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).rateLimits.trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '::1, fd00::/8' }).rateLimits.trustProxy).toEqual(['::1', 'fd00::/8']);
    expect(problems({ RATE_LIMIT: '0' })).toEqual(['RATE_LIMIT must be at least 0.001']);
    expect(problems({ RATE_LIMIT: '-5' })).toEqual(['RATE_LIMIT must be a number of requests per second']);
    expect(problems({ RATE_LIMIT: '1e9' })).toEqual(['RATE_LIMIT must be a number of requests per second']);
    expect(problems({ MISS_RATE_LIMIT: 'Infinity' })).toEqual(['MISS_RATE_LIMIT must be a number of requests per second']);
    expect(problems({ RATE_LIMIT_BURST: '10' })).toEqual(['RATE_LIMIT_BURST is set but RATE_LIMIT is not']);
    expect(problems({ MISS_RATE_LIMIT_BURST: '10' })).toEqual(['MISS_RATE_LIMIT_BURST is set but MISS_RATE_LIMIT is not']);
    expect(problems({ RATE_LIMIT: '1', RATE_LIMIT_BURST: '0' })).toEqual(['RATE_LIMIT_BURST must be at least 1']);
    for (const hostile of ['proxy.example.com', '10.0.0.0/8; rm -rf /', 'yes', ',']) {
      expect(problems({ TRUST_PROXY: hostile })).toEqual(['TRUST_PROXY must be true, false, a number of proxy hops, or comma-separated addresses/CIDRs']);
    }
  });

  it('refuses hostile limits, saying which and why', () => {
    expect(
      problems({
        GRAPHQL_MAX_COST: '0',
        MAX_RESPONSE_BYTES: '1e9',
        HTTP_REQUEST_TIMEOUT_MS: '-1',
        MAX_CONNECTIONS: '99999999999',
        MAX_REQUESTS_PER_CONNECTION: ' ',
        MISS_CONCURRENCY_PER_CLIENT: '0x10',
      }),
    ).toEqual([
      'HTTP_REQUEST_TIMEOUT_MS must be a whole number',
      'MAX_CONNECTIONS must be at most 1000000',
      'MAX_REQUESTS_PER_CONNECTION must be a whole number',
      'MISS_CONCURRENCY_PER_CLIENT must be a whole number',
      'GRAPHQL_MAX_COST must be at least 1',
      'MAX_RESPONSE_BYTES must be a whole number',
    ]);
  });

  it('GraphiQL is off in production unless asked for', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).graphql.graphiql).toBe(false);
    expect(loadConfig({ GRAPHIQL: 'false' }).graphql.graphiql).toBe(false);
  });

  it('an empty variable counts as unset', () => {
    const config = loadConfig({ PORT: '', REDIS_URL: '', LOG_LEVEL: '' });
    expect(config.http.port).toBe(8080);
    expect(config.store.kind).toBe('embedded');
  });

  it('refuses a REDIS_KEY_PREFIX whose braces are not one named hash tag (they would split what one script writes across cluster slots)', () => {
    for (const prefix of ['{}', 'a{b', 'a}b', '{a}{b}', '{{a}}', 'x{}:']) {
      expect([prefix, problems({ REDIS_KEY_PREFIX: prefix })]).toEqual([prefix, ['REDIS_KEY_PREFIX may hold braces only as one hash tag with a name inside, such as {nostr}']]);
    }
    for (const prefix of ['{nostr}:', 'app:{n}:', 'nostr:']) expect([prefix, problems({ REDIS_KEY_PREFIX: prefix })]).toEqual([prefix, []]);
  });

  it('reports every problem at once, naming each variable', () => {
    expect(
      problems({
        PORT: '80a',
        REDIS_URL: 'http://example.com',
        REDIS_KEY_PREFIX: 'has space',
        REDIS_TIMEOUT_MS: '1',
        LOG_LEVEL: 'loud',
        MAX_PROFILES: '0',
        MAX_LIST_LENGTH: '1e3',
        GRAPHIQL: 'yes',
      }),
    ).toEqual([
      'PORT must be a whole number',
      'REDIS_URL must be a redis:// or rediss:// URL',
      'REDIS_KEY_PREFIX must not contain whitespace',
      'REDIS_TIMEOUT_MS must be at least 50',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
      'MAX_PROFILES must be at least 1',
      'MAX_LIST_LENGTH must be a whole number',
      'GRAPHIQL must be true or false',
    ]);
  });

  it('refuses out-of-range numbers', () => {
    expect(problems({ PORT: '70000' })).toEqual(['PORT must be at most 65535']);
    expect(problems({ MAX_PROFILES: '100000' })).toEqual(['MAX_PROFILES must be at most 1000']);
    expect(problems({ PORT: '-1' })).toEqual(['PORT must be a whole number']);
  });

  it('REDIS_CLUSTER_NODES: seeds as host:port or redis(s):// URLs, one set of credentials, never with REDIS_URL', () => {
    expect(loadConfig({ REDIS_CLUSTER_NODES: ' 10.0.0.1:7000, redis-2:7001 ,[::1]:7002,', REDIS_WAIT_REPLICAS: '1' }).store).toEqual({
      kind: 'redis-cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-2', port: 7001 },
        { host: '::1', port: 7002 },
      ],
      tls: false,
      keyPrefix: 'nostr:',
      timeoutMs: 1000,
      waitReplicas: 1,
      hotCacheMb: 64,
      packEvents: true,
      noteSearch: false,
    });
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'rediss://svc:s%40cret@a.example:6380,rediss://svc:s%40cret@b.example:6380' }).store).toMatchObject({
      kind: 'redis-cluster',
      nodes: [
        { host: 'a.example', port: 6380 },
        { host: 'b.example', port: 6380 },
      ],
      username: 'svc',
      password: 's@cret',
      tls: true,
    });
    expect(problems({ REDIS_URL: 'redis://a:6379', REDIS_CLUSTER_NODES: 'b:7000' })).toEqual([
      'REDIS_URL and REDIS_CLUSTER_NODES are both set: choose one Redis (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES)',
    ]);
    const refused: [string, string][] = [
      [',, ,', 'REDIS_CLUSTER_NODES: name at least one node as host:port'],
      ['host-without-port', 'REDIS_CLUSTER_NODES: entry 1 has no port (host:port)'],
      ['a:7000,b:0', 'REDIS_CLUSTER_NODES: entry 2 has a port outside 1–65535'],
      ['a:70000', 'REDIS_CLUSTER_NODES: entry 1 is not host:port or a redis:// URL'],
      ['http://a:7000', 'REDIS_CLUSTER_NODES: entry 1 must be host:port, redis:// or rediss://'],
      ['redis://a:7000/2', 'REDIS_CLUSTER_NODES: entry 1 must be only an address (no database, path or query: a cluster has database 0 only)'],
      ['a:7000?x=1', 'REDIS_CLUSTER_NODES: entry 1 must be only an address (no database, path or query: a cluster has database 0 only)'],
      ['redis://:hunter2@a:7000,redis://:other@b:7000', 'REDIS_CLUSTER_NODES: entry 2 differs from entry 1 in its scheme or credentials: one cluster has one set of both'],
      ['rediss://a:7000,redis://b:7000', 'REDIS_CLUSTER_NODES: entry 2 differs from entry 1 in its scheme or credentials: one cluster has one set of both'],
      ['redis://u%zz:hunter2@a:7000', 'REDIS_CLUSTER_NODES: entry 1 has credentials with a broken %-escape'],
      ['redis://admin@a:7000', 'REDIS_CLUSTER_NODES: entry 1 names a user without a password (redis://user:password@host:port)'],
      ['redis://bücher:7000', 'REDIS_CLUSTER_NODES: entry 1 has a host name with characters no host name holds'],
      ['a%00b:7000', 'REDIS_CLUSTER_NODES: entry 1 has a host name with characters no host name holds'],
      [Array.from({ length: 65 }, (_, n) => `h${n}:7000`).join(','), 'REDIS_CLUSTER_NODES: at most 64 seed nodes'],
      ['a:7000,'.repeat(1200), 'REDIS_CLUSTER_NODES must be at most 8192 characters'],
    ];
    for (const [value, problem] of refused) {
      const found = problems({ REDIS_CLUSTER_NODES: value });
      expect(found, value.slice(0, 60)).toEqual([problem]);
      expect(found.join()).not.toContain('hunter2');
    }
  });

  it('property: REDIS_CLUSTER_NODES reads back the seeds it was given, in order, and never echoes a password it refuses', () => {
    const host = fc.oneof(
      fc.ipV4(),
      fc.stringMatching(/^[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,20}){0,3}$/),
    );
    const seed = fc.record({ host, port: fc.integer({ min: 1, max: 65535 }) });
    fc.assert(
      fc.property(fc.array(seed, { minLength: 1, maxLength: 10 }), fc.boolean(), (seeds, asUrls) => {
        const text = seeds.map(({ host: name, port }) => (asUrls ? `rediss://svc:pw@${name}:${port}` : `${name}:${port}`)).join(',');
        const parsed = parseClusterNodes(text);
        expect(parsed).toEqual({ nodes: seeds, tls: asUrls, ...(asUrls ? { username: 'svc', password: 'pw' } : {}) });
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const parsed = parseClusterNodes(`redis://u:s3cr3tpw@${text}`);
        if (typeof parsed === 'string') expect(parsed).not.toContain('s3cr3tpw');
      }),
    );
  });

  it('REDIS_WAIT_REPLICAS: 0 by default, a small whole number, only with a Redis', () => {
    expect(loadConfig({ REDIS_URL: 'redis://a:6379' }).store).toMatchObject({ waitReplicas: 0, hotCacheMb: 64 });
    expect(loadConfig({ REDIS_URL: 'redis://a:6379', HOT_CACHE_MB: '0' }).store).toMatchObject({ hotCacheMb: 0 });
    expect(problems({ HOT_CACHE_MB: '-1' })).toEqual(['HOT_CACHE_MB must be a whole number']);
    expect(problems({ HOT_CACHE_MB: '64MB' })).toEqual(['HOT_CACHE_MB must be a whole number']);
    expect(problems({ HOT_CACHE_MB: '70000' })).toEqual(['HOT_CACHE_MB must be at most 65536']);
    // REDIS_PACK_EVENTS: on unless turned off (a rolling upgrade from a version before packing).
    expect(loadConfig({ REDIS_URL: 'redis://a:6379' }).store).toMatchObject({ packEvents: true });
    expect(loadConfig({ REDIS_URL: 'redis://a:6379', REDIS_PACK_EVENTS: 'false' }).store).toMatchObject({ packEvents: false });
    expect(problems({ REDIS_URL: 'redis://a:6379', REDIS_PACK_EVENTS: 'maybe' })).toEqual(['REDIS_PACK_EVENTS must be true or false']);
    // NOTE_SEARCH: off unless turned on, on every store.
    expect(loadConfig({ REDIS_URL: 'redis://a:6379' }).store).toMatchObject({ noteSearch: false });
    expect(loadConfig({ DATA_DIR: '/d', NOTE_SEARCH: 'true' }).store).toMatchObject({ kind: 'embedded', noteSearch: true });
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'a:7000', NOTE_SEARCH: '1' }).store).toMatchObject({ kind: 'redis-cluster', noteSearch: true });
    for (const hostile of ['yes', 'TRUE ', 'on', '2', 'true\u0000']) expect(problems({ NOTE_SEARCH: hostile }), hostile).toEqual(['NOTE_SEARCH must be true or false']);
    expect(loadConfig({ REDIS_URL: 'redis://a:6379', REDIS_WAIT_REPLICAS: '' }).store).toMatchObject({ waitReplicas: 0 });
    expect(problems({ REDIS_URL: 'redis://a:6379', REDIS_WAIT_REPLICAS: '17' })).toEqual(['REDIS_WAIT_REPLICAS must be at most 16']);
    expect(problems({ REDIS_URL: 'redis://a:6379', REDIS_WAIT_REPLICAS: '-1' })).toEqual(['REDIS_WAIT_REPLICAS must be a whole number']);
    expect(problems({ REDIS_URL: 'redis://a:6379', REDIS_WAIT_REPLICAS: 'all' })).toEqual(['REDIS_WAIT_REPLICAS must be a whole number']);
    expect(problems({ REDIS_WAIT_REPLICAS: '1' })).toEqual([
      'REDIS_WAIT_REPLICAS is set but no Redis is (REDIS_URL or REDIS_CLUSTER_NODES): the embedded store has no replicas',
    ]);
  });

  it('never echoes a REDIS_URL (it may hold a password)', () => {
    expect(problems({ REDIS_URL: 'ftp://user:hunter2@host' }).join()).not.toContain('hunter2');
  });

  it('any environment either loads or fails with ConfigError, never anything else', () => {
    const names = [
      'PORT',
      'HOST',
      'REDIS_URL',
      'REDIS_CLUSTER_NODES',
      'REDIS_WAIT_REPLICAS',
      'REDIS_KEY_PREFIX',
      'REDIS_TIMEOUT_MS',
      'HOT_CACHE_MB',
      'LOG_LEVEL',
      'MAX_PROFILES',
      'GRAPHIQL',
      'RELAYS',
      'RELAY_TIMEOUT_MS',
      'NEGATIVE_TTL',
      'PROFILE_TTL',
      'RELATIONS_TTL',
      'RELATIONS_MAX_EVENTS',
      'FOLLOWERS_MAX_EVENTS',
      'RELAY_ALLOW_PRIVATE',
      'SYNC_KINDS',
      'INDEXER_RELAYS',
      'OUTBOX',
      'OUTBOX_RELAYS_PER_PUBKEY',
      'OUTBOX_MAX_RELAYS',
      'MAX_RELAY_CONNECTIONS',
      'PUBLIC_URL',
      'NIP05_TIMEOUT_MS',
      'NIP05_TTL',
      'NIP05_MAX_CONCURRENT',
      'NIP05_MAX_PER_DOMAIN',
      'OFFLINE',
      'METRICS',
      'METRICS_PORT',
      'RATE_LIMIT',
      'RATE_LIMIT_BURST',
      'MISS_RATE_LIMIT',
      'MISS_RATE_LIMIT_BURST',
      'TRUST_PROXY',
    ];
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...names), fc.string()), (env) => {
        try {
          loadConfig(env);
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigError);
          expect((error as ConfigError).problems.length).toBeGreaterThan(0);
        }
      }),
    );
  });
});
