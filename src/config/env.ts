import { resolve } from 'node:path';
import { z } from 'zod';
import { parseRelayUrl } from '../relays/relay-url.js';
import { parsePubkey } from '../nostr/identifiers.js';
import type { ZapProviderConfig } from '../zaps/zap-providers.js';
import { type ClusterSeeds, parseClusterNodes } from './redis-cluster-nodes.js';

/**
 * Configuration comes from environment variables only, validated at start: one zod model per
 * concern, every problem reported at once (then the process exits 1, see cli/main.ts).
 */

const emptyAsUnset = (value: unknown) => (value === '' ? undefined : value);

/** A whole number between `min` and `max`, as a string; unset or empty: undefined. */
const wholeNumber = (name: string, min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `${name} must be a whole number`)
    // Over 308 digits Number() is Infinity, which zod's number() refuses with a message of its own:
    // held at the largest finite number, it gets the "at most" message as any huge value does.
    .transform((value) => Math.min(Number(value), Number.MAX_VALUE))
    // Digits only, so an integer already: zod's int() would add a second message for 20 digits.
    .pipe(z.number().min(min, `${name} must be at least ${min}`).max(max, `${name} must be at most ${max}`))
    .optional();

/** A whole number between `min` and `max`; unset or empty: `fallback`. */
const integer = (name: string, min: number, max: number, fallback: number) =>
  z.preprocess(emptyAsUnset, wholeNumber(name, min, max).transform((value) => value ?? fallback));

const booleanFlag = (name: string) =>
  z
    .enum(['true', 'false', '1', '0'], { message: `${name} must be true or false` })
    .transform((value) => value === 'true' || value === '1')
    .optional();

/** true or false; unset or empty: `fallback`. */
const flag = (name: string, fallback: boolean) => z.preprocess(emptyAsUnset, booleanFlag(name).default(fallback));

/** What one client or connection may hold of the HTTP server. */
export interface HttpLimits {
  /** The whole request (headers and body) must arrive within this (slowloris). */
  requestTimeoutMs: number;
  /** A connection with no traffic either way for this long is closed (keep-alive, slow readers). */
  idleTimeoutMs: number;
  /** Open connections, at most; the excess is closed at once. */
  maxConnections: number;
  /** Open connections per client address, at most (0: no cap, e.g. behind a proxy). */
  maxConnectionsPerClient: number;
  /** Requests in progress on one connection (pipelined), at most; the excess is answered 429. */
  maxRequestsPerConnection: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  requestTimeoutMs: 10_000,
  idleTimeoutMs: 5_000,
  maxConnections: 4096,
  maxConnectionsPerClient: 64,
  maxRequestsPerConnection: 8,
};

const HttpModel = z.object({
  PORT: integer('PORT', 0, 65535, 8080),
  HOST: z.preprocess(emptyAsUnset, z.string().trim().min(1).default('127.0.0.1')),
  HTTP_REQUEST_TIMEOUT_MS: integer('HTTP_REQUEST_TIMEOUT_MS', 1000, 600_000, DEFAULT_HTTP_LIMITS.requestTimeoutMs),
  HTTP_IDLE_TIMEOUT_MS: integer('HTTP_IDLE_TIMEOUT_MS', 1000, 600_000, DEFAULT_HTTP_LIMITS.idleTimeoutMs),
  MAX_CONNECTIONS: integer('MAX_CONNECTIONS', 1, 1_000_000, DEFAULT_HTTP_LIMITS.maxConnections),
  MAX_CONNECTIONS_PER_CLIENT: integer('MAX_CONNECTIONS_PER_CLIENT', 0, 1_000_000, DEFAULT_HTTP_LIMITS.maxConnectionsPerClient),
  MAX_REQUESTS_PER_CONNECTION: integer('MAX_REQUESTS_PER_CONNECTION', 1, 10_000, DEFAULT_HTTP_LIMITS.maxRequestsPerConnection),
  LANDING: flag('LANDING', true),
});

const StoreModel = z.object({
  // Unset: the embedded store in DATA_DIR. Set: Redis, the store for fleets.
  REDIS_URL: z.preprocess(
    emptyAsUnset,
    z
      .string()
      .trim()
      .refine((value) => {
        try {
          return ['redis:', 'rediss:'].includes(new URL(value).protocol);
        } catch {
          return false;
        }
      }, 'REDIS_URL must be a redis:// or rediss:// URL')
      .optional(),
  ),
  // Set: Redis Cluster, from these seed nodes (src/config/redis-cluster-nodes.ts). Not with REDIS_URL.
  REDIS_CLUSTER_NODES: z.preprocess(
    emptyAsUnset,
    z
      .string()
      .max(8192, 'REDIS_CLUSTER_NODES must be at most 8192 characters')
      .transform((value, context) => {
        const parsed = parseClusterNodes(value);
        if (typeof parsed === 'string') {
          context.addIssue({ code: 'custom', message: `REDIS_CLUSTER_NODES: ${parsed}` });
          return z.NEVER;
        }
        return parsed;
      })
      .optional(),
  ),
  // import and sync confirm each batch on this many replicas (WAIT) before counting it written.
  REDIS_WAIT_REPLICAS: integer('REDIS_WAIT_REPLICAS', 0, 16, 0),
  DATA_DIR: z.preprocess(emptyAsUnset, z.string().default('./data')),
  REDIS_KEY_PREFIX: z
    .string()
    .max(100, 'REDIS_KEY_PREFIX must be at most 100 characters')
    .regex(/^\S*$/, 'REDIS_KEY_PREFIX must not contain whitespace')
    // Braces only as one hash tag with a name ({nostr}: every key in one slot): any other brace
    // moves keys a script writes together (a slot and its journal, keys.ts) into different slots.
    .regex(/^[^{}]*(\{[^{}]+\}[^{}]*)?$/, 'REDIS_KEY_PREFIX may hold braces only as one hash tag with a name inside, such as {nostr}')
    .default('nostr:'),
  REDIS_TIMEOUT_MS: integer('REDIS_TIMEOUT_MS', 50, 60000, 1000),
  // serve on Redis or a Redis Cluster: events and latest profiles kept in process, invalidated by Redis (0: off).
  HOT_CACHE_MB: integer('HOT_CACHE_MB', 0, 65536, 64),
  // Regular events written packed (store/packed-event.ts); false while instances of an earlier version still read the store.
  REDIS_PACK_EVENTS: flag('REDIS_PACK_EVENTS', true),
  // The note search index (store/note-search-index.ts) kept by every write; off: searchNotes answers note_search_off.
  NOTE_SEARCH: flag('NOTE_SEARCH', false),
  // The service's public URL: a request to vanish (NIP-62) naming it applies, as ALL_RELAYS does.
  PUBLIC_URL: z.preprocess(
    emptyAsUnset,
    z
      .string()
      .trim()
      .max(512, 'PUBLIC_URL must be at most 512 characters')
      .refine((value) => {
        try {
          const url = new URL(value);
          return ['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol) && url.hostname !== '' && url.username === '' && url.password === '';
        } catch {
          return false;
        }
      }, 'PUBLIC_URL must be an http(s):// or ws(s):// URL with a host and no credentials')
      .optional(),
  ),
});

const LogModel = z.object({
  LOG_LEVEL: z.preprocess(
    emptyAsUnset,
    z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        message: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
      })
      .default('info'),
  ),
});

/** The most TRUST_SEEDS: each seed's web is read from its follows' lists. */
export const MAX_TRUST_SEEDS = 16;

/**
 * Pubkeys (hex or npub, comma-separated) whose webs of trust, united, filter every read that names
 * no viewer (DESIGN "Screens", with `viewer: V`). A secret key is refused by position, never echoed.
 */
const pubkeyList = (name: string) =>
  z
    .string()
    .optional()
    .transform((value, context) => {
      const pubkeys: string[] = [];
      for (const [index, item] of (value ?? '').split(',').entries()) {
        if (item.trim() === '') continue;
        try {
          pubkeys.push(parsePubkey(item.trim()).pubkey);
        } catch {
          context.addIssue({ code: 'custom', message: `${name}: entry ${index + 1} is not a pubkey (64 hex digits or npub1…)` });
          return z.NEVER;
        }
      }
      const distinct = [...new Set(pubkeys)];
      if (distinct.length > MAX_TRUST_SEEDS) {
        context.addIssue({ code: 'custom', message: `${name}: at most ${MAX_TRUST_SEEDS} pubkeys` });
        return z.NEVER;
      }
      return distinct;
    });

const LookupModel = z.object({
  MAX_PROFILES: integer('MAX_PROFILES', 1, 1000, 100),
  MAX_LIST_LENGTH: integer('MAX_LIST_LENGTH', 1, 1000, 100),
  TRUST_SEEDS: pubkeyList('TRUST_SEEDS'),
});

/**
 * Base relays: large general-purpose relays, asked for everything on a miss. The reasoning, with
 * sources, is in docs/filling.md ("Which relays, and why"): relay.damus.io shut down in July 2026 and
 * purplepag.es only holds profiles and lists, so it moved to the indexers.
 */
export const DEFAULT_RELAYS = ['wss://nos.lol/', 'wss://relay.primal.net/', 'wss://nostr.mom/'];

/**
 * Indexer relays: they collect profiles (kind 0) and relay lists (kind 10002) from across the
 * network; asked for those two kinds only, with RELAYS, on a miss. indexer.coracle.social holds
 * relay lists only.
 */
export const DEFAULT_INDEXER_RELAYS = [
  'wss://purplepag.es/',
  'wss://user.kindpag.es/',
  'wss://indexer.coracle.social/',
  'wss://directory.yabu.me/',
];

/** A comma-separated list of relay URLs; unset: `fallback`; set but empty: none. */
const relayList = (name: string, fallback: string[]) =>
  z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined) return fallback;
      const urls: string[] = [];
      for (const [index, item] of value.split(',').entries()) {
        if (item.trim() === '') continue;
        const url = parseRelayUrl(item);
        if (url === undefined) {
          // By position, not by value: a URL may carry credentials.
          context.addIssue({
            code: 'custom',
            message: `${name}: entry ${index + 1} is not a ws:// or wss:// URL with a host and no credentials`,
          });
        } else if (!urls.includes(url)) {
          urls.push(url);
        }
      }
      if (urls.length > 50) context.addIssue({ code: 'custom', message: `${name}: at most 50 relays` });
      return urls;
    });

/**
 * Profiles and notes, what relates to notes (reposts 6 and 16, reactions 7, comments 1111: the
 * relationship index counts them), and what deletes them: deletion requests (NIP-09) and requests
 * to vanish (NIP-62). Sorted.
 */
export const DEFAULT_SYNC_KINDS = [0, 1, 5, 6, 7, 16, 62, 1111, 9735];

const kindList = z
  .string()
  .optional()
  .transform((value, context) => {
    if (value === undefined || value.trim() === '') return DEFAULT_SYNC_KINDS;
    const kinds = value.split(',').map((item) => item.trim());
    const bad = kinds.find((kind) => !/^\d{1,5}$/.test(kind) || Number(kind) > 65535);
    if (bad !== undefined) {
      context.addIssue({ code: 'custom', message: `SYNC_KINDS: not an event kind (0–65535): ${JSON.stringify(bad.slice(0, 20))}` });
    }
    return [...new Set(kinds.map(Number))];
  });

const RelayModel = z.object({
  // RELAYS set but empty: no relay traffic at all (the index alone answers), indexers and outbox
  // included. NIP-05 domains are still asked: OFFLINE=true turns all outside traffic off.
  RELAYS: relayList('RELAYS', DEFAULT_RELAYS),
  INDEXER_RELAYS: relayList('INDEXER_RELAYS', DEFAULT_INDEXER_RELAYS),
  // NIP-50 relays asked for profiles matching a searchProfiles query (none by default).
  SEARCH_RELAYS: relayList('SEARCH_RELAYS', []),
  OUTBOX: flag('OUTBOX', true),
  OUTBOX_RELAYS_PER_PUBKEY: integer('OUTBOX_RELAYS_PER_PUBKEY', 1, 10, 2),
  OUTBOX_MAX_RELAYS: integer('OUTBOX_MAX_RELAYS', 1, 200, 20),
  MAX_RELAY_CONNECTIONS: integer('MAX_RELAY_CONNECTIONS', 1, 10_000, 50),
  RELAY_TIMEOUT_MS: integer('RELAY_TIMEOUT_MS', 100, 60000, 3000),
  NEGATIVE_TTL: integer('NEGATIVE_TTL', 1, 86400 * 30, 60),
  PROFILE_TTL: integer('PROFILE_TTL', 1, 86400 * 30, 300),
  // Relationship fill (fill/relation-fill.ts): how long an event's relationships asked of relays
  // stay fresh, and how many relating events one fill takes per event at most.
  RELATIONS_TTL: integer('RELATIONS_TTL', 1, 86400 * 30, 300),
  RELATIONS_MAX_EVENTS: integer('RELATIONS_MAX_EVENTS', 1, 100_000, 2000),
  // Followers fill (the same engine): follow lists naming a pubkey taken per fill, at most.
  FOLLOWERS_MAX_EVENTS: integer('FOLLOWERS_MAX_EVENTS', 1, 100_000, 5000),
  RELAY_ALLOW_PRIVATE: flag('RELAY_ALLOW_PRIVATE', false),
  MISS_CONCURRENCY_PER_CLIENT: integer('MISS_CONCURRENCY_PER_CLIENT', 0, 10_000, 8),
  RELAY_MAX_KEYS_PER_REQUEST: integer('RELAY_MAX_KEYS_PER_REQUEST', 1, 100_000, 500),
  SYNC_KINDS: kindList,
});

const Nip05Model = z.object({
  NIP05_TIMEOUT_MS: integer('NIP05_TIMEOUT_MS', 100, 60000, 3000),
  NIP05_TTL: integer('NIP05_TTL', 1, 86400 * 30, 3600),
  // Outgoing exchanges at once (nostr.json and LNURL pay endpoints, one fetcher): in all, and with
  // one server address, whatever names point at it (its connections too). The name says domain: kept.
  NIP05_MAX_CONCURRENT: integer('NIP05_MAX_CONCURRENT', 1, 10_000, 16),
  NIP05_MAX_PER_DOMAIN: integer('NIP05_MAX_PER_DOMAIN', 1, 1000, 2),
});

const ZapModel = z.object({
  // How long a zap recipient's LNURL pay endpoint answer is used before it is asked again (zaps/zap-providers.ts).
  ZAP_PROVIDER_TTL: integer('ZAP_PROVIDER_TTL', 60, 86400 * 30, 86400),
});

const OutsideTrafficModel = z.object({
  // true: nothing leaves the machine but store traffic, whatever RELAYS says.
  OFFLINE: flag('OFFLINE', false),
});

/** A rate in requests per second, fractions allowed (0.5: one every two seconds); unset or empty: off. */
const rate = (name: string) =>
  z.preprocess(
    emptyAsUnset,
    z
      .string()
      .trim()
      .regex(/^\d+(\.\d+)?$/, `${name} must be a number of requests per second`)
      .transform(Number)
      .pipe(z.number().min(0.001, `${name} must be at least 0.001`).max(1_000_000, `${name} must be at most 1000000`))
      .optional(),
  );

/** TRUST_PROXY as Fastify's trustProxy takes it: true/false, a hop count, or addresses and CIDRs. */
const trustProxy = z.preprocess(
  emptyAsUnset,
  z
    .string()
    .trim()
    .transform((value, context): boolean | number | string[] => {
      if (value === 'true' || value === 'false') return value === 'true';
      if (/^\d{1,2}$/.test(value)) return Number(value);
      const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
      // Addresses or CIDRs only (IPv4 or IPv6), no host names: a name would be resolved by nobody.
      if (entries.length > 0 && entries.every((entry) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(entry))) return entries;
      context.addIssue({ code: 'custom', message: 'TRUST_PROXY must be true, false, a number of proxy hops, or comma-separated addresses/CIDRs' });
      return z.NEVER;
    })
    .optional(),
);

const RateLimitModel = z.object({
  RATE_LIMIT: rate('RATE_LIMIT'),
  // Unset: the rate rounded up (limitOf).
  RATE_LIMIT_BURST: z.preprocess(emptyAsUnset, wholeNumber('RATE_LIMIT_BURST', 1, 10_000_000)),
  MISS_RATE_LIMIT: rate('MISS_RATE_LIMIT'),
  MISS_RATE_LIMIT_BURST: z.preprocess(emptyAsUnset, wholeNumber('MISS_RATE_LIMIT_BURST', 1, 10_000_000)),
  TRUST_PROXY: trustProxy.default(false),
});

const MetricsModel = z.object({
  METRICS: flag('METRICS', true),
  METRICS_PORT: z.preprocess(emptyAsUnset, wholeNumber('METRICS_PORT', 0, 65535)),
});

const GraphqlModel = z.object({
  NODE_ENV: z.string().optional(),
  GRAPHIQL: z.preprocess(emptyAsUnset, booleanFlag('GRAPHIQL')),
  GRAPHQL_MAX_COST: integer('GRAPHQL_MAX_COST', 1, 10_000_000, 20_000),
  MAX_RESPONSE_BYTES: integer('MAX_RESPONSE_BYTES', 1024, 1024 * 1024 * 1024, 4 * 1024 * 1024),
});

/** Every model, in the order `serve --help` lists their variables. */
const MODELS = [
  HttpModel,
  StoreModel,
  RelayModel,
  OutsideTrafficModel,
  Nip05Model,
  ZapModel,
  LogModel,
  LookupModel,
  GraphqlModel,
  RateLimitModel,
  MetricsModel,
];

type ShapeKeys<Model> = Model extends { shape: infer Shape } ? keyof Shape : never;
/** The name of every environment variable the models read. */
export type VariableName = ShapeKeys<(typeof MODELS)[number]> & string;

/**
 * Every variable with its default: what its model makes of it unset (undefined: none). Read from
 * the models themselves, so that `serve --help` and docs/configuration.md can never disagree with
 * loadConfig.
 */
export function variableDefaults(): { name: VariableName; value: unknown }[] {
  return MODELS.flatMap((model) => {
    const parsed: Record<string, unknown> = model.parse({});
    return Object.keys(model.shape).map((name) => ({ name: name as VariableName, value: parsed[name] }));
  });
}

export interface HttpConfig {
  port: number;
  host: string;
  limits: HttpLimits;
  /** LANDING: GET / says what the service is and holds (false: 404, as any unknown path). */
  landing?: boolean;
}
/** What a single Redis and a Redis Cluster share. */
export interface RedisConfig {
  keyPrefix: string;
  /** REDIS_TIMEOUT_MS: deadline of each command (on a cluster, of each read as a whole, redirections included); `import` and `relations` wait at least BULK_COMMAND_TIMEOUT_MS (open-store.ts). */
  timeoutMs: number;
  /** REDIS_WAIT_REPLICAS: `import` and `sync` confirm each batch on this many replicas (0: not). */
  waitReplicas: number;
  /** HOT_CACHE_MB: `serve`'s in-process cache of lookups, kept true by Redis (0 or unset: off; store/redis/hot-cache.ts). */
  hotCacheMb?: number;
  /** REDIS_PACK_EVENTS: regular events are written packed (store/packed-event.ts; unset: true). */
  packEvents?: boolean;
}
/**
 * Where events are indexed: a single Redis when REDIS_URL is set, Redis Cluster when
 * REDIS_CLUSTER_NODES is, else the embedded store in DATA_DIR; and PUBLIC_URL, which decides which
 * requests to vanish (NIP-62) apply here besides ALL_RELAYS.
 */
export type StoreConfig = (
  | ({ kind: 'redis'; url: string } & RedisConfig)
  | ({ kind: 'redis-cluster' } & ClusterSeeds & RedisConfig)
  | { kind: 'embedded'; dataDir: string }
) & {
  publicUrl?: string;
  /** NOTE_SEARCH: every write keeps the note search index, and searchNotes reads it (unset: false). */
  noteSearch?: boolean;
};
export interface LogConfig {
  level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}
export interface LookupConfig {
  /** Cap on the relevant pubkeys of one event, hence on the size of `/event`'s profiles map. */
  maxProfiles: number;
  /** Cap on the number of identifiers one GraphQL list field accepts. */
  maxListLength: number;
  /** TRUST_SEEDS: whose webs of trust, united, filter reads that name no viewer (empty: none do). */
  trustSeeds?: readonly string[];
}
export interface RelayConfig {
  /** Relays asked on a miss and followed by `sync`; empty turns relay traffic off. Trusted (loopback too). */
  urls: string[];
  /** The longest a request waits for relays, all of its relay queries together. */
  timeoutMs: number;
  /** How long a lookup that no relay could answer is remembered (no relay is asked again meanwhile). */
  negativeTtlSeconds: number;
  /** How long a stored profile counts as fresh; after that it is served and refreshed in the background. */
  profileTtlSeconds: number;
  /** Whether relay hints from nevent/nprofile may point at loopback, private or link-local addresses. */
  allowPrivateHints: boolean;
  /** The kinds `sync` subscribes to. */
  syncKinds: number[];
  /** Lookups at the relays in progress per client address, at most; past it, 429 (0: no cap, e.g. behind a proxy). */
  missesPerClient: number;
  /** Indexer relays: asked with `urls` for profiles and relay lists (kinds 0 and 10002) on a miss. Trusted. */
  indexerUrls: string[];
  /** NIP-50 search relays: asked for the profiles a searchProfiles query matches and the notes a searchNotes query matches (fill/relation-fill.ts SEARCH, NOTE_SEARCH). Trusted. */
  searchUrls: string[];
  /** Outbox discovery (NIP-65): a miss also asks the author's write relays (fill/outbox-plan.ts). */
  outbox: { enabled: boolean; relaysPerPubkey: number; maxRelays: number };
  /**
   * Relay connections open at once, at most, configured relays included (they always have room);
   * past it, the least recently used idle learned connection is closed, or the relay is skipped.
   */
  maxConnections: number;
  /** Ids and pubkeys one request may ask of the relays, at most; past it, they are throttled. */
  maxKeysPerRequest: number;
  /**
   * The relationship fill (fill/relation-fill.ts): an event's replies, reactions, reposts and quotes
   * asked of relays count as fresh for `ttlSeconds` (RELATIONS_TTL); one fill takes at most
   * `maxEvents` relating events per event (RELATIONS_MAX_EVENTS).
   */
  relations: { ttlSeconds: number; maxEvents: number };
  /** The followers fill (fill/relation-fill.ts FOLLOWERS): follow lists naming a pubkey taken per fill (FOLLOWERS_MAX_EVENTS); fresh for RELATIONS_TTL. */
  followers: { maxEvents: number };
}
/**
 * The operator's relays, RELAYS, INDEXER_RELAYS and SEARCH_RELAYS, once each: trusted (loopback included), never
 * asked as learned relays, their connections' room reserved.
 */
export function configuredRelays(config: Pick<RelayConfig, 'urls' | 'indexerUrls'> & Partial<Pick<RelayConfig, 'searchUrls'>>): string[] {
  return [...new Set([...config.urls, ...config.indexerUrls, ...(config.searchUrls ?? [])])];
}

/** NIP-05 names (`name@domain`) as input, and verification of the ones profiles declare (src/nip05/). */
export interface Nip05Config {
  /** The longest a resolution may take (DNS, connect, TLS, body), within the request's own deadline. */
  timeoutMs: number;
  /** How long a resolution that found the name is cached, and how often a profile's identifier is verified again. */
  ttlSeconds: number;
  /** How long a name not found, or a domain that could not be resolved, is remembered (NEGATIVE_TTL). */
  negativeTtlSeconds: number;
  /** RELAY_ALLOW_PRIVATE: domains at loopback, private or link-local addresses may be asked. */
  allowPrivate: boolean;
  /** Resolutions under way per client address, at most; past it, 429 (MISS_CONCURRENCY_PER_CLIENT; 0: no cap). */
  maxPerClient: number;
  /**
   * Exchanges with domains at once, in all (NIP05_MAX_CONCURRENT); past it, they wait their turn
   * within their deadline. LNURL pay endpoint checks share them (one guarded fetcher).
   */
  maxConcurrent: number;
  /** Exchanges, and kept connections, with one server address at once, whatever names point at it (NIP05_MAX_PER_DOMAIN). */
  maxPerDomain: number;
}

export interface GraphqlConfig {
  /** GraphiQL is on in development, off when NODE_ENV=production unless GRAPHIQL=true. */
  graphiql: boolean;
  /** The most objects one GraphQL operation may return, lists multiplied through (schema/query-cost.ts). */
  maxCost: number;
  /** The largest GraphQL answer, in bytes (about); a larger one is refused before it is serialised. */
  maxResponseBytes: number;
}

/** Prometheus metrics (src/metrics): at /metrics, or on a port of their own. */
export interface MetricsConfig {
  /** METRICS (default true): false serves no /metrics. */
  enabled: boolean;
  /** METRICS_PORT: /metrics on this port (on HOST) instead of the service's. */
  port?: number;
}

/** A fixed-window limit: at most `burst` in `burst / perSecond` seconds, per client (http/rate-limits.ts). */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

/** Per-client rate limits; each off when unset. */
export interface RateLimitConfig {
  /** RATE_LIMIT / RATE_LIMIT_BURST: every request but the health and metrics probes. */
  requests?: RateLimit;
  /** MISS_RATE_LIMIT / MISS_RATE_LIMIT_BURST: keys that had to be asked of relays, and NIP-05 names of their domains. */
  misses?: RateLimit;
  /** TRUST_PROXY: whether and which X-Forwarded-For hops decide the client address (Fastify's trustProxy). */
  trustProxy: boolean | number | string[];
}

export interface Config {
  /**
   * OFFLINE=true: no outside traffic at all (the store's aside): relays off whatever RELAYS says
   * (`relays.urls` and `indexerUrls` are empty), no NIP-05 resolution or verification.
   */
  offline: boolean;
  rateLimits: RateLimitConfig;
  metrics: MetricsConfig;
  http: HttpConfig;
  store: StoreConfig;
  log: LogConfig;
  lookup: LookupConfig;
  relays: RelayConfig;
  nip05: Nip05Config;
  zaps: ZapProviderConfig;
  graphql: GraphqlConfig;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function parseModel<T extends z.ZodType>(model: T, env: Env, problems: string[]): z.output<T> | undefined {
  const result = model.safeParse(env);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    const variable = issue.path.join('.');
    problems.push(issue.message.includes(variable) ? issue.message : `${variable}: ${issue.message}`);
  }
  return undefined;
}

/** A limit from its rate and burst (unset: the rate rounded up, at least 1). */
function limitOf<K extends 'requests' | 'misses'>(perSecond: number | undefined, burst: number | undefined, key: K): Partial<Record<K, RateLimit>> {
  if (perSecond === undefined) return {};
  return { [key]: { perSecond, burst: burst ?? Math.max(1, Math.ceil(perSecond)) } } as Partial<Record<K, RateLimit>>;
}

/** Which store the variables name (loadConfig has refused REDIS_URL with REDIS_CLUSTER_NODES). */
function storeKind(store: z.output<typeof StoreModel>): StoreConfig {
  const shared = { keyPrefix: store.REDIS_KEY_PREFIX, timeoutMs: store.REDIS_TIMEOUT_MS, waitReplicas: store.REDIS_WAIT_REPLICAS, hotCacheMb: store.HOT_CACHE_MB, packEvents: store.REDIS_PACK_EVENTS };
  const noteSearch = store.NOTE_SEARCH;
  if (store.REDIS_URL) return { kind: 'redis', url: store.REDIS_URL, ...shared, noteSearch };
  if (store.REDIS_CLUSTER_NODES) return { kind: 'redis-cluster', ...store.REDIS_CLUSTER_NODES, ...shared, noteSearch };
  return { kind: 'embedded', dataDir: resolve(store.DATA_DIR), noteSearch };
}

/** Reads the whole configuration; throws ConfigError listing every problem. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const http = parseModel(HttpModel, env, problems);
  const store = parseModel(StoreModel, env, problems);
  const log = parseModel(LogModel, env, problems);
  const lookup = parseModel(LookupModel, env, problems);
  const relays = parseModel(RelayModel, env, problems);
  const graphql = parseModel(GraphqlModel, env, problems);
  const nip05 = parseModel(Nip05Model, env, problems);
  const zaps = parseModel(ZapModel, env, problems);
  const metrics = parseModel(MetricsModel, env, problems);
  const rateLimits = parseModel(RateLimitModel, env, problems);
  const outside = parseModel(OutsideTrafficModel, env, problems);
  if (rateLimits?.RATE_LIMIT === undefined && rateLimits?.RATE_LIMIT_BURST) problems.push('RATE_LIMIT_BURST is set but RATE_LIMIT is not');
  if (rateLimits?.MISS_RATE_LIMIT === undefined && rateLimits?.MISS_RATE_LIMIT_BURST) problems.push('MISS_RATE_LIMIT_BURST is set but MISS_RATE_LIMIT is not');
  if (store?.REDIS_URL && store.REDIS_CLUSTER_NODES) problems.push('REDIS_URL and REDIS_CLUSTER_NODES are both set: choose one Redis (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES)');
  if (store && store.REDIS_WAIT_REPLICAS > 0 && !store.REDIS_URL && !store.REDIS_CLUSTER_NODES) {
    problems.push('REDIS_WAIT_REPLICAS is set but no Redis is (REDIS_URL or REDIS_CLUSTER_NODES): the embedded store has no replicas');
  }
  if (nip05 && nip05.NIP05_MAX_PER_DOMAIN > nip05.NIP05_MAX_CONCURRENT) {
    problems.push(`NIP05_MAX_PER_DOMAIN (${nip05.NIP05_MAX_PER_DOMAIN}) must be at most NIP05_MAX_CONCURRENT (${nip05.NIP05_MAX_CONCURRENT})`);
  }
  if (metrics?.METRICS === false && metrics.METRICS_PORT !== undefined) problems.push('METRICS_PORT is set but METRICS=false turns metrics off');
  if (metrics?.METRICS_PORT !== undefined && metrics.METRICS_PORT !== 0 && http && metrics.METRICS_PORT === http.PORT) {
    problems.push(`METRICS_PORT (${metrics.METRICS_PORT}) must differ from PORT`);
  }
  if (relays) {
    const configured = configuredRelays({ urls: relays.RELAYS, indexerUrls: relays.INDEXER_RELAYS, searchUrls: relays.SEARCH_RELAYS }).length;
    if (configured >= relays.MAX_RELAY_CONNECTIONS) {
      problems.push(
        `MAX_RELAY_CONNECTIONS (${relays.MAX_RELAY_CONNECTIONS}) must be above the number of RELAYS, INDEXER_RELAYS and SEARCH_RELAYS (${configured}), to leave room for hints and learned relays`,
      );
    }
  }
  if (!http || !store || !log || !lookup || !relays || !graphql || !nip05 || !zaps || !metrics || !rateLimits || !outside || problems.length > 0) {
    throw new ConfigError(problems);
  }
  const offline = outside.OFFLINE;
  return {
    offline,
    rateLimits: {
      ...limitOf(rateLimits.RATE_LIMIT, rateLimits.RATE_LIMIT_BURST, 'requests'),
      ...limitOf(rateLimits.MISS_RATE_LIMIT, rateLimits.MISS_RATE_LIMIT_BURST, 'misses'),
      trustProxy: rateLimits.TRUST_PROXY,
    },
    metrics: { enabled: metrics.METRICS, ...(metrics.METRICS_PORT !== undefined ? { port: metrics.METRICS_PORT } : {}) },
    http: {
      port: http.PORT,
      host: http.HOST,
      landing: http.LANDING,
      limits: {
        requestTimeoutMs: http.HTTP_REQUEST_TIMEOUT_MS,
        idleTimeoutMs: http.HTTP_IDLE_TIMEOUT_MS,
        maxConnections: http.MAX_CONNECTIONS,
        maxConnectionsPerClient: http.MAX_CONNECTIONS_PER_CLIENT,
        maxRequestsPerConnection: http.MAX_REQUESTS_PER_CONNECTION,
      },
    },
    store: {
      ...storeKind(store),
      ...(store.PUBLIC_URL ? { publicUrl: store.PUBLIC_URL } : {}),
    },
    log: { level: log.LOG_LEVEL },
    lookup: { maxProfiles: lookup.MAX_PROFILES, maxListLength: lookup.MAX_LIST_LENGTH, trustSeeds: lookup.TRUST_SEEDS },
    relays: {
      urls: offline ? [] : relays.RELAYS,
      timeoutMs: relays.RELAY_TIMEOUT_MS,
      negativeTtlSeconds: relays.NEGATIVE_TTL,
      profileTtlSeconds: relays.PROFILE_TTL,
      allowPrivateHints: relays.RELAY_ALLOW_PRIVATE,
      syncKinds: relays.SYNC_KINDS,
      missesPerClient: relays.MISS_CONCURRENCY_PER_CLIENT,
      indexerUrls: offline ? [] : relays.INDEXER_RELAYS,
      searchUrls: offline ? [] : relays.SEARCH_RELAYS,
      outbox: {
        enabled: relays.OUTBOX,
        relaysPerPubkey: relays.OUTBOX_RELAYS_PER_PUBKEY,
        maxRelays: relays.OUTBOX_MAX_RELAYS,
      },
      maxConnections: relays.MAX_RELAY_CONNECTIONS,
      maxKeysPerRequest: relays.RELAY_MAX_KEYS_PER_REQUEST,
      relations: { ttlSeconds: relays.RELATIONS_TTL, maxEvents: relays.RELATIONS_MAX_EVENTS },
      followers: { maxEvents: relays.FOLLOWERS_MAX_EVENTS },
    },
    nip05: {
      timeoutMs: nip05.NIP05_TIMEOUT_MS,
      ttlSeconds: nip05.NIP05_TTL,
      negativeTtlSeconds: relays.NEGATIVE_TTL,
      allowPrivate: relays.RELAY_ALLOW_PRIVATE,
      maxPerClient: relays.MISS_CONCURRENCY_PER_CLIENT,
      maxConcurrent: nip05.NIP05_MAX_CONCURRENT,
      maxPerDomain: nip05.NIP05_MAX_PER_DOMAIN,
    },
    zaps: {
      ttlSeconds: zaps.ZAP_PROVIDER_TTL,
      timeoutMs: nip05.NIP05_TIMEOUT_MS,
    },
    graphql: {
      graphiql: graphql.GRAPHIQL ?? graphql.NODE_ENV !== 'production',
      maxCost: graphql.GRAPHQL_MAX_COST,
      maxResponseBytes: graphql.MAX_RESPONSE_BYTES,
    },
  };
}
