/**
 * What one request's reads were answered from: the hot cache's entries, in the order
 * read, as long as every read was answered by them. An answer made only of such reads is true for
 * exactly as long as all of those entries are (the hot cache drops an entry when Redis says its key
 * was written, when it is evicted, and when the cache is emptied), so it can be kept and served again
 * without running its lookup (store/redis/answer-cache.ts).
 *
 * A read answered in any other way (from Redis itself, a store without the hot cache, relays, a
 * NIP-05 server) `spoil`s the receipt: what it read is not tracked, and the answer is not kept.
 */
export class ReadReceipt {
  /** The hot cache entries read, repeats included. */
  readonly dependencies: ReadDependency[] = [];
  /** The lookups metrics counted (metrics.lookups), counted again when a kept answer is served. */
  readonly lookups: CountedLookup[] = [];
  /** False once a read was answered other than from the hot cache. */
  private spoiled = false;

  /** Whether every read was answered by the hot cache (and there was at least one). */
  get whole(): boolean {
    return !this.spoiled && this.dependencies.length > 0;
  }

  spoil(): void {
    this.spoiled = true;
  }
}

/** A lookup as metrics count it: kind, outcome, how many keys. */
export type CountedLookup = readonly [kind: string, outcome: string, count: number];

/** A hot cache entry as a kept answer depends on it. */
export interface ReadDependency {
  readonly key: string;
  /** Date.now() past which it is not used (a mark's TTL), else Infinity. */
  readonly expiresAt: number;
  /** Set once the hot cache dropped it: whatever was made of it is no longer known to be true. */
  gone: boolean;
  /** What was made of it (kept answers), told when it goes. */
  dependents: Set<Dependent> | undefined;
}

/** Something made of dependencies, dropped when one goes. */
export interface Dependent {
  drop(): void;
}
