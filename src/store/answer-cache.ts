import type { Dependent, ReadDependency, ReadReceipt } from './read-receipt.js';

/** How often a kept answer that is served again refreshes its entries' place in the hot cache. */
const TOUCH_MS = 1000;

/** What each dependency of an answer costs: its place in the answer's array and in the entry's set. */
const DEPENDENCY_BYTES = 64;

/** A kept answer, as the cache that holds it sees it. */
export interface KeptAnswer<T = unknown> extends Dependent {
  readonly value: T;
  readonly dependencies: readonly ReadDependency[];
  /** The earliest expiry of its dependencies (marks with a TTL). */
  readonly expiresAt: number;
  /** Bytes of bookkeeping, as estimated: what it counts against the cache's bound. */
  readonly size: number;
  touchedAt: number;
}

/** Where answers are held: beside the entries they are made of, in one bound (the hot cache's LRU). */
export interface AnswerSlots {
  get(key: string): KeptAnswer | undefined;
  /** Holds `answer`; false where it is not held (larger than the bound). */
  set(key: string, answer: KeptAnswer): boolean;
  /** Removes `answer` if it is the one held for `key`. */
  delete(key: string, answer?: KeptAnswer): void;
  /** Marks entries as used (their recency). */
  touch(dependencies: readonly ReadDependency[]): void;
  /** Counts an answer served again (metrics). */
  served(): void;
}

/**
 * Answers made only of what the hot cache holds (a REST lookup's body parts and validators, a
 * prepared GraphQL query's body), each kept by a request that made it (its key: what was asked)
 * with the entries it was made of (a ReadReceipt), the second time it is made. An answer is dropped
 * the moment any of those entries goes (a key written by anyone, evicted, or the cache emptied:
 * hot-cache.ts), or its earliest mark expires; so an answer served from here is the one its lookup
 * would make again now, without running it: no GraphQL operation, no loaders, no checks of the
 * stored events, no ETag digest.
 *
 * A REST answer holds no bytes of its own (its parts are the entries' values), only bookkeeping; a
 * GraphQL one its body. Both count against HOT_CACHE_MB with the entries (one bound, one eviction
 * order). An answer served again refreshes its entries' place once a second, so that they are not
 * evicted for want of reads.
 */
export class AnswerCache<T> {
  constructor(
    private readonly slots: AnswerSlots,
    /** Keys offered once (shared by the answer caches of one hot cache: one bound for all). */
    private readonly offered: OfferedKeys,
  ) {}

  /** The answer kept for `key`, if it is still true, counted as served. */
  get(key: string): T | undefined {
    const value = this.find(key);
    if (value !== undefined) this.served();
    return value;
  }

  /** Counts an answer served again (metrics): what `get` does after `find`. */
  served(): void {
    this.slots.served();
  }

  /**
   * The answer kept for `key`, if it is still true, not yet counted as served: for a caller that
   * may still not serve it (the fast lane, before the rate limit: fast-lane.ts).
   */
  find(key: string): T | undefined {
    const answer = this.slots.get(key);
    if (answer === undefined) return undefined;
    const now = Date.now();
    if (answer.expiresAt <= now) {
      this.slots.delete(key, answer);
      return undefined;
    }
    if (now - answer.touchedAt >= TOUCH_MS) {
      answer.touchedAt = now;
      this.slots.touch(answer.dependencies);
    }
    return answer.value as T;
  }

  /**
   * Keeps `value` for `key` if every read behind it was answered by the hot cache and none of those
   * entries has gone since. `size`: its bookkeeping in bytes (the caller's estimate).
   */
  keep(key: string, value: T, receipt: ReadReceipt, size: number): void {
    if (!receipt.whole || !this.offered.seenBefore(key)) return;
    const dependencies = [...new Set(receipt.dependencies)];
    let expiresAt = Infinity;
    for (const dependency of dependencies) {
      // Written or evicted while the answer was being made: the answer may already be stale.
      if (dependency.gone) return;
      expiresAt = Math.min(expiresAt, dependency.expiresAt);
    }
    if (expiresAt <= Date.now()) return;
    const answer: KeptAnswer<T> = {
      value,
      dependencies,
      expiresAt,
      size: size + dependencies.length * DEPENDENCY_BYTES,
      touchedAt: Date.now(),
      drop: () => this.slots.delete(key, answer),
    };
    if (!this.slots.set(key, answer)) return;
    for (const dependency of dependencies) (dependency.dependents ??= new Set()).add(answer);
    // Holding it may have evicted one of its own entries, which could not tell it yet.
    if (dependencies.some((dependency) => dependency.gone)) answer.drop();
  }
}

/**
 * Keys offered once, oldest first, bounded: `seenBefore` says whether a key was offered before (and
 * forgets it: its answer is kept now), else remembers it. Admitting an answer only the second time
 * it is made keeps out what is asked once: under a skewed load, answers to the long tail pushed out
 * the values the hot keys need (Redis commands per cached lookup rose from 0.10 to 0.16 under Zipf
 * 1.1: BENCHMARKS.md), and a client sending ever new keys fills nothing. Keys are remembered by a
 * 30-bit hash: a collision only admits an answer early. Held beside HOT_CACHE_MB, not in it: at
 * most `max` small integers to V8 (no object each), about 20 bytes a key (measured: 29 as 32-bit
 * numbers), 2 % of the bound when `max` is one key per KB of it.
 */
export class OfferedKeys {
  private readonly hashes = new Set<number>();

  constructor(private readonly max: number) {}

  seenBefore(key: string): boolean {
    const hash = fnv1a30(key);
    if (this.hashes.delete(hash)) return true;
    if (this.hashes.size >= this.max) this.hashes.delete(this.hashes.values().next().value as number);
    this.hashes.add(hash);
    return false;
  }

  get size(): number {
    return this.hashes.size;
  }
}

/** FNV-1a over the UTF-16 code units of `text`, folded to 30 bits (a V8 small integer). */
function fnv1a30(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
  return (hash >>> 2) ^ (hash & 3);
}

/** Forgets an answer that is no longer held (evicted, replaced, dropped): its entries need not tell it. */
export function detachAnswer(answer: KeptAnswer): void {
  for (const dependency of answer.dependencies) {
    dependency.dependents?.delete(answer);
    if (dependency.dependents?.size === 0) dependency.dependents = undefined;
  }
}
