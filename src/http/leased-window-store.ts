import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import type { RedisClient } from '../store/redis/mget-by-slot.js';
import { FixedWindows, type SynchronousWindowStore } from './fixed-windows.js';

/**
 * A store for @fastify/rate-limit that keeps a fleet's fixed-window counters in Redis without a
 * round trip per request (limits may cost at most 5% of the cached-lookup rate; the
 * plugin's own Redis store, one Lua call per request, cost 13–24% in `npm run bench`).
 *
 * An instance leases allowance from the shared counter in blocks: INCRBY the block, and what the
 * counter allows of it is this instance's to hand out locally until it runs out. So the fleet never
 * lets more than the limit through (every request let through was counted in Redis first), and a
 * client far below its limit costs one round trip per block, not per request. The price: allowance
 * leased and not used by the end of a window is lost, so a client spread over several instances may
 * be refused a little early (at most one block per instance). Blocks are an eighth of the limit:
 * small limits are counted request by request, exactly; large ones cheaply.
 *
 * Known to be over the limit (the counter said so in this window), an instance refuses without
 * asking Redis again: a flood costs nothing more.
 */

const LEASE_SCRIPT = `
local total = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {total, ttl}`;

/** The share of a limit leased at once. */
const LEASE_FRACTION = 8;

interface LeasedWindow {
  /** When this window ends (ms), as Redis says. */
  endsAt: number;
  /** Leased and not yet handed out. */
  tokens: number;
  /** The counter's value at the last lease: what the fleet has taken in this window. */
  total: number;
  /** A lease in flight: requests arriving meanwhile wait for it. */
  leasing?: Promise<void>;
}

type LeaseCommand = (key: string, count: number, windowMs: number) => Promise<[number, number]>;

/** The store constructor the plugin takes (`store:`), on `client`, its keys under `namespace`. */
export function leasedWindowStore(
  client: RedisClient,
  namespace: string,
  onFailure: (error: unknown) => void = () => {},
): new (options?: unknown) => SynchronousWindowStore {
  if (!('rateLimitLease' in client)) client.defineCommand('rateLimitLease', { numberOfKeys: 1, lua: LEASE_SCRIPT });
  const commands = client as unknown as { rateLimitLease: LeaseCommand };
  const lease: LeaseCommand = (key, count, windowMs) => commands.rateLimitLease(key, count, windowMs);

  class LeasedWindowStore implements SynchronousWindowStore {
    private readonly windows = new FixedWindows<LeasedWindow>((endsAt) => ({ endsAt, tokens: 0, total: 0 }));

    constructor(
      _options?: unknown,
      private readonly prefix = namespace,
    ) {}

    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void {
      // Answered at once from the lease in hand (the common case), else once a lease comes back.
      const now = Date.now();
      const taken = this.decide(this.windows.at(key, now, timeWindow), now, max);
      if (taken) {
        callback(null, taken);
        return;
      }
      this.take(key, timeWindow, max).then(
        (result) => callback(null, result),
        (error: unknown) => callback(error as Error),
      );
    }

    takeNow(key: string, timeWindow: number): boolean {
      const window = this.windows.at(key, Date.now(), timeWindow);
      if (window.tokens === 0) return false;
      window.tokens -= 1;
      return true;
    }

    child(routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
      // The plugin passes the route's merged limit options, its route under `routeInfo`, as its own stores read them.
      const route = (routeOptions as unknown as { routeInfo?: { method?: string; url?: string } }).routeInfo ?? {};
      return new LeasedWindowStore(undefined, `${this.prefix}${route.method ?? ''}${route.url ?? ''}-`);
    }

    /**
     * One request, decided without Redis if it can be: from the lease in hand, or refused when the
     * fleet has taken the whole limit in this window. `current` past `max` means refused (the
     * plugin's rule). Undefined: a lease is needed.
     */
    private decide(window: LeasedWindow, now: number, max: number): { current: number; ttl: number } | undefined {
      const ttl = window.endsAt - now;
      if (window.tokens > 0) {
        window.tokens -= 1;
        // The counter may have gone past max (a block granted in part): what was handed out is at most max.
        return { current: Math.min(window.total, max) - window.tokens, ttl };
      }
      if (window.total >= max) return { current: max + 1, ttl };
      return undefined;
    }

    /** One request that needs a lease first (one lease in flight per key; others wait for it). */
    private async take(key: string, timeWindow: number, max: number): Promise<{ current: number; ttl: number }> {
      for (;;) {
        const now = Date.now();
        const window = this.windows.at(key, now, timeWindow);
        const taken = this.decide(window, now, max);
        if (taken) return taken;
        window.leasing ??= this.lease(key, window, timeWindow, max);
        await window.leasing;
        // Evicted meanwhile (a flood of clients): put back, so its lease is not wasted and asked again.
        this.windows.keep(key, window);
      }
    }

    /** Leases the next block of this window's allowance from the shared counter. */
    private async lease(key: string, window: LeasedWindow, timeWindow: number, max: number): Promise<void> {
      const block = Math.max(1, Math.ceil(max / LEASE_FRACTION));
      try {
        const [total, ttl] = await lease(`${this.prefix}${key}`, block, timeWindow);
        // What the counter allows of this block (all of it, part of it, or none once past max).
        window.tokens = Math.max(0, Math.min(block, max - (total - block)));
        window.total = total;
        window.endsAt = Date.now() + Number(ttl);
      } catch (error) {
        onFailure(error);
        throw error;
      } finally {
        window.leasing = undefined;
      }
    }
  }
  return LeasedWindowStore;
}
