import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { type Config, DEFAULT_HTTP_LIMITS, type HttpLimits, type MetricsConfig, type Nip05Config, type RateLimitConfig, type RelayConfig } from '../../src/config/env.js';
import { ReadThrough } from '../../src/fill/read-through.js';
import { buildApp } from '../../src/http/app.js';
import { createGuardedFetcher, type HostLookup } from '../../src/net/guarded-fetch.js';
import { createNip05 } from '../../src/nip05/nip05.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { createRelayPool } from '../../src/relays/create-relay-pool.js';
import type { RelayPool } from '../../src/relays/relay-pool.js';
import type { EventStore } from '../../src/store/event-store.js';
import { type ZapProviderConfig, ZapProviders } from '../../src/zaps/zap-providers.js';
import { captureLogs } from './logs.js';
import { createTestStore, type TestStore } from './test-store.js';

export interface TestServer {
  url: string;
  app: FastifyInstance;
  /** Every log line the server wrote, as text. */
  logs: string[];
  close(): Promise<void>;
  /** The relay pool, when relays are configured (its connection counts and health). */
  pool?: RelayPool;
}

export interface TestServerOptions {
  lookup?: Partial<Config['lookup']>;
  graphql?: Partial<Config['graphql']>;
  /** HTTP timeouts and caps; the defaults of `serve` when absent. */
  http?: HttpLimits;
  /** Relay fill, as `serve` sets it up from RELAYS; off when absent or when `urls` is empty. */
  relays?: Partial<RelayConfig>;
  /** NIP-05 resolution and verification, as `serve` sets them up; the defaults below when absent. */
  nip05?: Partial<Nip05Config>;
  /** Prometheus metrics: on at /metrics when absent, as `serve` has them. */
  metrics?: MetricsConfig;
  /** RATE_LIMIT, MISS_RATE_LIMIT, TRUST_PROXY: off when absent. */
  rateLimits?: RateLimitConfig;
  /** LANDING: GET / answered (as `serve` has it) unless false. */
  landing?: boolean;
  /** Zap provider checks, as `serve` sets them up; the defaults below when absent. Their fetcher is NIP-05's (`nip05` sets it). */
  zaps?: Partial<ZapProviderConfig>;
  /** Names the guarded fetcher resolves (to loopback, say) instead of asking DNS: `hosts(...)` makes one. */
  resolve?: HostLookup;
  /** Called with the app before it listens (a hook that watches what reaches Fastify). */
  beforeListen?: (app: FastifyInstance) => void;
}

/** A lookup that resolves these names to these addresses (in this order), and nothing else (ENOTFOUND), as a hosts file would. */
export function hosts(table: Record<string, string | string[]>): HostLookup {
  return async (hostname) => {
    const addresses = table[hostname.toLowerCase()];
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return [addresses].flat().map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

/** Zap provider settings for tests: a short deadline (loopback endpoints are refused unless `nip05` allows them: one fetcher). */
export const TEST_ZAP_CONFIG: ZapProviderConfig = { ttlSeconds: 86400, timeoutMs: 1000 };

/** NIP-05 settings for tests: a short deadline; loopback domains refused unless a test allows them. */
export const TEST_NIP05_CONFIG: Nip05Config = {
  timeoutMs: 1000,
  ttlSeconds: 3600,
  negativeTtlSeconds: 60,
  allowPrivate: false,
  maxPerClient: 8,
  maxConcurrent: 16,
  maxPerDomain: 2,
};

/** Relay settings for tests: short deadlines and TTLs; RELAYS itself must be given. */
export const TEST_RELAY_CONFIG: RelayConfig = {
  urls: [],
  timeoutMs: 1500,
  negativeTtlSeconds: 60,
  profileTtlSeconds: 300,
  allowPrivateHints: false,
  syncKinds: [0, 1],
  missesPerClient: 8,
  maxKeysPerRequest: 500,
  indexerUrls: [],
  searchUrls: [],
  outbox: { enabled: true, relaysPerPubkey: 2, maxRelays: 20 },
  maxConnections: 50,
  relations: { ttlSeconds: 300, maxEvents: 2000 },
  followers: { maxEvents: 5000 },
};

/** The real HTTP app on a real loopback port (port 0: the OS picks a free one). */
export async function startTestServer(
  store: EventStore,
  options: TestServerOptions = {},
): Promise<TestServer> {
  const { lines: logs, logger } = captureLogs();
  const relayConfig = { ...TEST_RELAY_CONFIG, ...options.relays };
  const pool = createRelayPool(relayConfig, logger);
  const fill = pool && new ReadThrough({ pool, store, config: relayConfig, logger });
  const nip05Config = { ...TEST_NIP05_CONFIG, ...options.nip05 };
  // As `serve` has it: one guarded fetcher for NIP-05 and zap provider checks.
  const fetcher = createGuardedFetcher(nip05Config, options.resolve);
  const nip05 = createNip05({ marks: store.marks, logger, config: nip05Config, fetcher });
  const zaps = new ZapProviders({ marks: store.marks, logger, config: { ...TEST_ZAP_CONFIG, ...options.zaps }, fetcher });
  const app = buildApp({
    store,
    fill,
    logger,
    nip05,
    zaps,
    config: {
      lookup: { maxProfiles: 100, maxListLength: 100, ...options.lookup },
      graphql: { graphiql: false, maxCost: 20_000, maxResponseBytes: 8 * 1024 * 1024, ...options.graphql },
      ...(options.http || options.landing !== undefined ? { http: { limits: options.http ?? DEFAULT_HTTP_LIMITS, ...(options.landing !== undefined ? { landing: options.landing } : {}) } } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.rateLimits ? { rateLimits: options.rateLimits } : {}),
    },
  });
  options.beforeListen?.(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('server has no address');
  const close = async () => {
    await app.close();
    pool?.close();
    // As `serve` does: the store must not be closed under a background profile refresh or NIP-05 check.
    await Promise.all([fill?.settled(), nip05.close(), zaps.close()]);
    fetcher.close();
  };
  return { url: `http://127.0.0.1:${address.port}`, app, logs, close, pool };
}

/** GET and parse: status, headers and the parsed JSON body. */
export async function getJson(url: string, init?: RequestInit) {
  const response = await fetch(url, init);
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: text ? (JSON.parse(text) as unknown) : undefined,
  };
}

/** What /graphql answers, parsed. */
export interface GraphQLBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; locations?: unknown; path?: unknown; extensions?: { code?: string } }[];
}

/** POST a query to the server's /graphql (the GraphQL-over-HTTP media type): status, text and parsed body. */
export async function postGraphql(server: Pick<TestServer, 'url'>, query: string, variables: Record<string, unknown> = {}) {
  const response = await getJson(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, text: response.text, body: response.body as GraphQLBody };
}

/** A connection's page as the paging helpers read it. */
export interface ConnectionPage<Edge> {
  edges: Edge[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** Every page of a connection, read with `read(after)` from the start until hasNextPage is false (at most 500). */
export async function collectPages<Edge, Page extends ConnectionPage<Edge>>(read: (after: string | null) => Promise<Page>): Promise<Page[]> {
  const pages: Page[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await read(after);
    pages.push(page);
    if (!page.pageInfo.hasNextPage) return pages;
    if (page.pageInfo.endCursor === null) throw new Error('a page with more after it has no endCursor');
    after = page.pageInfo.endCursor;
    if (pages.length >= 500) throw new Error('no last page');
  }
}

/**
 * For a test file or describe block: a fresh store under its own prefix, seeded with `seed`, and the
 * real app on a real port, both torn down afterwards. Read the fields inside tests, not at load time.
 */
export function useTestServer(seed: readonly NostrEvent[] = [], options: TestServerOptions = {}) {
  const context = {} as { store: TestStore; server: TestServer };
  beforeAll(async () => {
    context.store = await createTestStore();
    if (seed.length > 0) await context.store.store.putEvents(seed);
    context.server = await startTestServer(context.store.store, options);
  });
  afterAll(async () => {
    await context.server?.close();
    await context.store?.cleanup();
  });
  return context;
}
