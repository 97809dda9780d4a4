import rateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { clientKey } from '../client-key.js';
import type { RateLimit, RateLimitConfig } from '../config/env.js';
import { LookupError } from '../errors.js';
import type { MissLimit } from '../fill/relay-request.js';
import type { RedisClient } from '../store/redis/mget-by-slot.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics/metrics.js';
import { LocalWindowStore } from './fixed-windows.js';
import { leasedWindowStore } from './leased-window-store.js';

/** Where the counters live: Redis beside the index (shared by every instance using it), else in process. */
export interface SharedCounters {
  client: RedisClient;
  keyPrefix: string;
}

/** A fixed window as @fastify/rate-limit counts: `burst` requests per `burst / perSecond` seconds. */
function window({ perSecond, burst }: RateLimit): { max: number; timeWindow: number } {
  return { max: burst, timeWindow: Math.max(1, Math.round((burst / perSecond) * 1000)) };
}

/**
 * Per-client rate limits, by @fastify/rate-limit: its fixed windows, counted in Redis
 * when the index is there (`<prefix>rl:…` keys that expire with their window; leased in blocks,
 * leased-window-store.ts) so that a fleet limits together, or in process on the embedded store
 * (fixed-windows.ts). Either way every check gets its own count, so a burst sent at once is let
 * through up to the limit, not refused whole. A client is its address as clientKey reads it (IPv4,
 * IPv6 /64), after TRUST_PROXY.
 *
 * - RATE_LIMIT: every request but /healthz, /readyz and /metrics, counted before anything else is
 *   done (the onRequest hook); past it, 429 `rate_limited` with Retry-After.
 * - MISS_RATE_LIMIT: only keys (ids, pubkeys, addresses) that must be asked of relays (each fans
 *   out to many relays), taken when the read-through path is about to ask them
 *   (ReadThrough.perClient): the keys past it get 429 `rate_limited` with Retry-After. The
 *   plugin's manual limiter (`createRateLimit`) does the counting: the same store and window rule.
 * If the counters cannot be read (Redis down), requests are let through (`skipOnError`): the
 * lookups themselves then fail with store_unavailable anyway.
 *
 * Returns the miss check and the fast lane's check (RegisteredLimits).
 */
export function registerRateLimits(
  app: FastifyInstance,
  config: RateLimitConfig,
  shared: SharedCounters | undefined,
  logger: Logger,
): RegisteredLimits {
  const { requests, misses } = config;
  if (!requests && !misses) return { missLimit: () => undefined };
  let missLimit: MissLimit | undefined;
  // Let through, but never silently: counted, and logged at most once a minute.
  let lastWarning = 0;
  const counterFailed = (error: unknown) => {
    metrics.rateLimitFailure();
    if (Date.now() - lastWarning < 60_000) return;
    lastWarning = Date.now();
    logger.warn({ err: error }, 'rate-limit counters unreachable: requests are let through unlimited');
  };
  // One store, made here: the plugin counts RATE_LIMIT in it, and the fast lane takes from it too.
  const store = shared ? new (leasedWindowStore(shared.client, `${shared.keyPrefix}rl:`, counterFailed))() : new LocalWindowStore();
  void app.register(rateLimit, {
    global: requests !== undefined,
    ...(requests ? window(requests) : {}),
    keyGenerator: (request: FastifyRequest) => clientKey(request.ip),
    // On Redis: leased blocks of the shared counters (leased-window-store.ts), not a round trip per
    // request. Else ours, not the plugin's LocalStore: checks made in one turn misread it (fixed-windows.ts).
    // The plugin takes a constructor and makes its store with `new`: this one hands over ours.
    store: function sharedStore() {
      return store;
    } as unknown as FastifyRateLimitStoreCtor,
    skipOnError: true,
    // The x-ratelimit-* headers on 429s only (with Retry-After): on every answer they cost ~1% of
    // a cached lookup (three headers), for what a client rarely reads.
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    // Thrown by the plugin; the app's error handler answers it from the error table.
    errorResponseBuilder: (_request, context) => new LookupError('rate_limited', { retryAfterSeconds: Math.max(1, Math.ceil(context.ttl / 1000)) }),
  });
  if (misses) {
    app.after(() => {
      // The read-through path gives the client's key already (RelayRequest.client is clientKey's).
      const check = app.createRateLimit({ ...window(misses), keyGenerator: (request: FastifyRequest) => `miss:${request.ip}` });
      // The limiter reads only the client (and the route config, for a group): no request is needed.
      const request = (client: string) => ({ ip: client, routeOptions: {} }) as unknown as FastifyRequest;
      // One count per key (a GraphQL request may ask hundreds), stopping at the first refused.
      missLimit = async (client, keys) => {
        for (let admitted = 0; admitted < keys; admitted++) {
          const limit = await check(request(client));
          if (!limit.isAllowed && limit.isExceeded) return { admitted, retryAfterSeconds: Math.max(1, limit.ttlInSeconds) };
        }
        return { admitted: keys, retryAfterSeconds: 0 };
      };
    });
  }
  const limit = requests && window(requests);
  return {
    missLimit: () => missLimit,
    ...(limit ? { takeRequest: (ip: string | undefined) => store.takeNow(clientKey(ip), limit.timeWindow, limit.max) } : {}),
  };
}

export interface RegisteredLimits {
  /** The miss check, ready once the app has booted (before it serves). */
  missLimit: () => MissLimit | undefined;
  /**
   * With RATE_LIMIT: counts one request of the client at `ip` (as request.ip reads it) where it is
   * allowed and known at once (SynchronousWindowStore.takeNow); false leaves the count as it was,
   * for the plugin's hook to decide.
   */
  takeRequest?: (ip: string | undefined) => boolean;
}

/** Route options of the routes no limit applies to (probes and scrapes). */
export const NOT_RATE_LIMITED = { config: { rateLimit: false } } as const;
