import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { endOfTurn } from '../../end-of-turn.js';

/** Where Redis sends invalidations to a RESP2 connection that a tracking connection redirects to. */
const INVALIDATE_CHANNEL = '__redis__:invalidate';

/** What an entry costs beyond its key and value (the entry object, the LRU's bookkeeping). */
const ENTRY_OVERHEAD = 96;

interface Entry {
  /** The bytes Redis held (null: no such key: a miss is cached as well, and invalidated when the key is written). */
  readonly value: Buffer | null;
  /** Date.now() past which the entry is not used: a key with a TTL (a mark), else Infinity. */
  readonly expiresAt: number;
}

/** Reads of one key in flight, and whether an invalidation arrived meanwhile (then their answer is not kept). */
interface Pending {
  reads: number;
  invalidated: boolean;
}

/**
 * A bounded in-process cache of values read from one Redis (events, latest replaceable events and
 * their marks), kept true by Redis itself: server-assisted client-side caching (CLIENT TRACKING).
 *
 * - The reads it caches go over a connection of their own (`reader`), which Redis tracks: every key
 *   it reads is remembered, and when that key is written, deleted, expires or is evicted, by anyone
 *   (another instance, `import`, `sync`, this instance), Redis sends its name to `subscriber`.
 * - `subscriber` speaks RESP2 (ioredis speaks RESP3 by default, and drops the RESP3 `invalidate`
 *   pushes): tracking REDIRECTs to it, and it receives the names on `__redis__:invalidate`.
 * - An answer that raced an invalidation of its key is not kept: the invalidation may travel faster,
 *   on the other connection, than the reply it makes stale.
 * - Either connection lost: the cache is emptied and not used (reads go to Redis as without it) until
 *   both are back and tracking is on again; whatever was written meanwhile was never seen.
 * - Keys with a TTL (marks) are read with their PTTL and kept until then: an expiry's invalidation
 *   comes when Redis gets round to expiring the key, which may be later.
 */
export class HotCache {
  private readonly entries: LRUCache<string, Entry>;
  private readonly pending = new Map<string, Pending>();
  /** Bumped whenever the cache is emptied: answers to reads sent before are not kept. */
  private epoch = 0;
  private subscriberId: number | undefined;
  private tracking = false;
  private closed = false;
  /** Counters for /metrics and the bench. */
  readonly stats = { hits: 0, misses: 0, invalidations: 0, flushes: 0 };

  constructor(
    readonly reader: Redis,
    private readonly subscriber: Redis,
    maxBytes: number,
    private readonly onState: (on: boolean) => void = () => {},
  ) {
    this.entries = new LRUCache<string, Entry>({
      maxSize: maxBytes,
      sizeCalculation: (entry, key) => key.length + (entry.value?.length ?? 0) + ENTRY_OVERHEAD,
    });
    // Their failures are the store's to report (its own connection fails alike); state changes go to onState.
    reader.on('error', () => {});
    subscriber.on('error', () => {});
    subscriber.on('messageBuffer', (channel: Buffer, message: Buffer[] | Buffer | null) => {
      if (channel.toString() !== INVALIDATE_CHANNEL) return;
      // A null message: the whole database was flushed.
      if (message === null || !Array.isArray(message)) this.flush();
      else for (const key of message) this.invalidate(key.toString());
    });
    subscriber.on('ready', () => void this.subscribe());
    subscriber.on('close', () => {
      this.subscriberId = undefined;
      this.stop();
    });
    reader.on('ready', () => void this.track());
    reader.on('close', () => this.stop());
    if (subscriber.status === 'ready') void this.subscribe();
  }

  /** Whether reads are answered from the cache (tracking on, both connections up). */
  get active(): boolean {
    return this.tracking;
  }

  /**
   * The values of `keys` (MGET order), from the cache where it holds them, else read on `reader`
   * (through `send`, which maps failures) and kept; `ttlKeys`: the keys that may carry a TTL.
   */
  async get(keys: readonly string[], ttlKeys: ReadonlySet<string> | undefined, send: <T>(read: () => Promise<T>) => Promise<T>): Promise<(Buffer | null)[]> {
    const now = Date.now();
    const values: (Buffer | null)[] = new Array(keys.length);
    const missing: string[] = [];
    const positions: number[] = [];
    keys.forEach((key, position) => {
      const entry = this.entries.get(key);
      if (entry !== undefined && entry.expiresAt > now) values[position] = entry.value;
      else {
        missing.push(key);
        positions.push(position);
      }
    });
    if (missing.length === 0) {
      this.stats.hits++;
      // With the answers of this turn, as a reply from Redis brings them (end-of-turn.ts).
      await endOfTurn();
      return values;
    }
    this.stats.misses++;
    const epoch = this.epoch;
    for (const key of missing) {
      const pending = this.pending.get(key);
      if (pending) pending.reads++;
      else this.pending.set(key, { reads: 1, invalidated: false });
    }
    try {
      const withTtl = ttlKeys ? missing.filter((key) => ttlKeys.has(key)) : [];
      const [read, ttls] = await send(() => Promise.all([this.reader.mgetBuffer(...missing), Promise.all(withTtl.map((key) => this.reader.pttl(key)))]));
      const ttlOf = new Map(withTtl.map((key, index) => [key, ttls[index] as number]));
      const keep = this.tracking && this.epoch === epoch;
      missing.forEach((key, index) => {
        const value = read[index] ?? null;
        values[positions[index] as number] = value;
        if (!keep || this.pending.get(key)?.invalidated) return;
        const ttl = ttlOf.get(key);
        this.entries.set(key, { value, expiresAt: ttl !== undefined && ttl >= 0 ? now + ttl : Infinity });
      });
    } finally {
      for (const key of missing) {
        const pending = this.pending.get(key) as Pending;
        if (--pending.reads === 0) this.pending.delete(key);
      }
    }
    return values;
  }

  /** The invalidation connection's client id while it is subscribed (tests kill it by this). */
  get invalidationClientId(): number | undefined {
    return this.subscriberId;
  }

  /** Bytes the entries take, as the cache measures them. */
  get size(): number {
    return this.entries.calculatedSize;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stop();
    this.reader.disconnect();
    this.subscriber.disconnect();
  }

  private invalidate(key: string): void {
    this.stats.invalidations++;
    this.entries.delete(key);
    const pending = this.pending.get(key);
    if (pending) pending.invalidated = true;
  }

  private flush(): void {
    this.stats.flushes++;
    this.entries.clear();
    this.epoch++;
    for (const pending of this.pending.values()) pending.invalidated = true;
  }

  /** The subscriber's id (asked before it subscribes: a RESP2 subscriber answers nothing else), then the channel. */
  private async subscribe(): Promise<void> {
    try {
      const id = Number(await this.subscriber.client('ID'));
      await this.subscriber.subscribe(INVALIDATE_CHANNEL);
      this.subscriberId = id;
      await this.track();
    } catch {
      // The connection went meanwhile: its next 'ready' starts again.
    }
  }

  /** Tracking on the reader, redirected to the subscriber; the cache is used from its answer on. */
  private async track(): Promise<void> {
    const id = this.subscriberId;
    if (this.closed || id === undefined || this.reader.status !== 'ready') return;
    try {
      // Off first: a redirect to an earlier subscriber connection is replaced, its keys forgotten.
      await this.reader.client('TRACKING', 'OFF');
      await this.reader.client('TRACKING', 'ON', 'REDIRECT', String(id));
    } catch {
      return;
    }
    if (this.subscriberId !== id || this.reader.status !== 'ready') return;
    this.flush();
    this.tracking = true;
    this.onState(true);
  }

  private stop(): void {
    const was = this.tracking;
    this.tracking = false;
    this.flush();
    if (was) this.onState(false);
  }
}
