import type { FastifyRateLimitStore } from '@fastify/rate-limit';

/** Windows kept in memory, at most (one per client seen in the window); the oldest go first. */
export const MAX_WINDOWS = 100_000;

/**
 * A fixed window per key, as @fastify/rate-limit counts: it starts at the key's first request and
 * ends `timeWindow` later; the first request after that starts the next. The one place both of our
 * stores keep them (in process here, leased from Redis in leased-window-store.ts). Bounded: past
 * MAX_WINDOWS the oldest window goes, so a flood of new clients costs memory up to a fixed size.
 */
export class FixedWindows<W extends { endsAt: number }> {
  private readonly windows = new Map<string, W>();

  constructor(private readonly open: (endsAt: number) => W) {}

  /** The key's window in force at `now`: the one it has, or a new one if none or it has ended. */
  at(key: string, now: number, timeWindow: number): W {
    let window = this.windows.get(key);
    if (window && window.endsAt > now) return window;
    // Deleted first: a window set again goes to the end of the eviction order.
    if (window) this.windows.delete(key);
    window = this.open(now + timeWindow);
    if (this.windows.size >= MAX_WINDOWS) this.windows.delete(this.windows.keys().next().value as string);
    this.windows.set(key, window);
    return window;
  }

  /** Puts back a window evicted while still in use (a Redis lease in flight), unless it has ended. */
  keep(key: string, window: W): void {
    if (this.windows.get(key) !== window && window.endsAt > Date.now()) this.windows.set(key, window);
  }
}

/**
 * A store that can also let a request through at once, without a callback: what the fast lane
 * (fast-lane.ts) asks before it answers a request ahead of the plugin's hook.
 */
export interface SynchronousWindowStore extends FastifyRateLimitStore {
  /**
   * Counts one request of `key` and says true where that is allowed and known now; otherwise
   * changes nothing and says false (refused, or a lease is needed): the plugin then decides.
   */
  takeNow(key: string, timeWindow: number, max: number): boolean;
}

interface CountedWindow {
  endsAt: number;
  count: number;
}

/**
 * The in-process store for @fastify/rate-limit (on the embedded store), in place of the plugin's
 * LocalStore. That one hands every caller the one object it keeps per key, and the plugin reads the
 * count from it a turn later: checks of one key made in one turn (pipelined requests, a GraphQL
 * request's NIP-05 names) all read the count the last of them left, and a burst from a new client
 * was refused whole, its first request included. Here each check gets a count of its own.
 */
export class LocalWindowStore implements SynchronousWindowStore {
  private readonly windows = new FixedWindows<CountedWindow>((endsAt) => ({ endsAt, count: 0 }));

  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
    const now = Date.now();
    const window = this.windows.at(key, now, timeWindow);
    window.count += 1;
    callback(null, { current: window.count, ttl: window.endsAt - now });
  }

  // Today only the Redis-leased store serves the lane (kept answers need the hot cache, on Redis);
  // this one keeps the interface whole.
  takeNow(key: string, timeWindow: number, max: number): boolean {
    const window = this.windows.at(key, Date.now(), timeWindow);
    if (window.count >= max) return false;
    window.count += 1;
    return true;
  }

  child(): FastifyRateLimitStore {
    return new LocalWindowStore();
  }
}
