import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { endOfTurn } from '../../end-of-turn.js';
import { withDeadline } from './redis-commands.js';

/** Where Redis sends invalidations to a RESP2 connection that a tracking connection redirects to. */
const INVALIDATE_CHANNEL = '__redis__:invalidate';

/** What an entry costs beyond its key and value (the entry object, the LRU's bookkeeping). */
const ENTRY_OVERHEAD = 96;

/**
 * How often the invalidation path is checked end to end, and how long a check may take: a path that
 * dies without closing (a NAT or proxy dropping it, a partition) sends no invalidation and no error,
 * so the cache is off within about twice this after it goes silent.
 */
export const HEALTH_CHECK_MS = 1000;

interface Entry {
  /** The bytes Redis held, copied (null: no such key, kept only where the caller says so). */
  readonly value: Buffer | null;
  /** Date.now() past which the entry is not used: a key with a TTL (a mark), else Infinity. */
  readonly expiresAt: number;
}

/** Reads of one key in flight, and whether an invalidation arrived meanwhile (then their answer is not kept). */
interface Pending {
  reads: number;
  invalidated: boolean;
}

/** What a read may keep besides present values. */
export interface CacheReadOptions {
  /** Keys that may carry a TTL (marks): read with their PTTL, kept no longer. */
  ttlKeys?: ReadonlySet<string>;
  /**
   * Where an absent key is kept as absent: for key `i`, the position of the key whose value must be
   * present for it (a profile's mark, kept absent beside a present profile). Any other absent key is
   * not kept: a client asking for ids that do not exist must not push out what others read.
   */
  keepAbsentWith?: readonly (number | undefined)[];
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
 * - Either connection lost, or the invalidation path silent for a check (HEALTH_CHECK_MS): the cache
 *   is emptied and not used (reads go to Redis as without it) until both are back and tracking is
 *   on again; whatever was written meanwhile was never seen. Tracking is (re)started by one attempt
 *   at a time, and an attempt that a lost connection overtook is dropped (`generation`).
 * - Keys with a TTL (marks) are read with their PTTL and kept until then: an expiry's invalidation
 *   comes when Redis gets round to expiring the key, which may be later.
 * - Values are copied when kept: ioredis hands back views of its socket reads (up to 64 KiB each),
 *   which a small kept value would otherwise hold alive whole.
 */
export class HotCache {
  private readonly entries: LRUCache<string, Entry>;
  private readonly pending = new Map<string, Pending>();
  /** Bumped whenever the cache is emptied: answers to reads sent before are not kept. */
  private epoch = 0;
  /** Bumped whenever a connection is lost: a start that waited across it stops. */
  private generation = 0;
  private subscriberId: number | undefined;
  private tracking = false;
  /** The generation a start is under way for: one at a time per generation (one overtaken by a lost connection may never settle). */
  private startingAt: number | undefined;
  private closed = false;
  private readonly healthTimer: NodeJS.Timeout;
  /** Counters for /metrics and the bench. */
  readonly stats = { hits: 0, misses: 0, invalidations: 0, flushes: 0 };

  constructor(
    readonly reader: Redis,
    private readonly subscriber: Redis,
    maxBytes: number,
    private readonly onState: (on: boolean, problem?: string) => void = () => {},
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
    for (const connection of [reader, subscriber]) {
      connection.on('ready', () => void this.start());
      connection.on('close', () => {
        this.generation++;
        if (connection === subscriber) this.subscriberId = undefined;
        this.stop();
      });
    }
    this.healthTimer = setInterval(() => void this.check(), HEALTH_CHECK_MS);
    this.healthTimer.unref();
    void this.start();
  }

  /** Whether reads are answered from the cache (tracking on, both connections up). */
  get active(): boolean {
    return this.tracking;
  }

  /**
   * The values of `keys` (MGET order), from the cache where it holds them, else read on `reader`
   * (through `send`, which maps failures) and kept as `options` allow.
   */
  async get(keys: readonly string[], options: CacheReadOptions, send: <T>(read: () => Promise<T>) => Promise<T>): Promise<(Buffer | null)[]> {
    const now = Date.now();
    const values: (Buffer | null)[] = new Array(keys.length);
    const missing: number[] = [];
    keys.forEach((key, position) => {
      const entry = this.entries.get(key);
      if (entry !== undefined && entry.expiresAt > now) values[position] = entry.value;
      else missing.push(position);
    });
    if (missing.length === 0) {
      this.stats.hits++;
      // With the answers of this turn, as a reply from Redis brings them (end-of-turn.ts).
      await endOfTurn();
      return values;
    }
    this.stats.misses++;
    const epoch = this.epoch;
    const missingKeys = missing.map((position) => keys[position] as string);
    for (const key of missingKeys) {
      const pending = this.pending.get(key);
      if (pending) pending.reads++;
      else this.pending.set(key, { reads: 1, invalidated: false });
    }
    try {
      const { ttlKeys, keepAbsentWith } = options;
      const withTtl = ttlKeys ? missingKeys.filter((key) => ttlKeys.has(key)) : [];
      const [read, ttls] = await send(() => Promise.all([this.reader.mgetBuffer(...missingKeys), Promise.all(withTtl.map((key) => this.reader.pttl(key)))]));
      missing.forEach((position, index) => {
        values[position] = read[index] ?? null;
      });
      if (!this.tracking || this.epoch !== epoch) return values;
      const ttlOf = new Map(withTtl.map((key, index) => [key, ttls[index] as number]));
      for (const position of missing) {
        const key = keys[position] as string;
        if (this.pending.get(key)?.invalidated) continue;
        const value = values[position] ?? null;
        if (value === null) {
          const partner = keepAbsentWith?.[position];
          if (partner === undefined || values[partner] == null) continue;
        }
        const ttl = ttlOf.get(key);
        this.entries.set(key, { value: value && Buffer.from(value), expiresAt: ttl !== undefined && ttl >= 0 ? now + ttl : Infinity });
      }
      return values;
    } finally {
      for (const key of missingKeys) {
        const pending = this.pending.get(key) as Pending;
        if (--pending.reads === 0) this.pending.delete(key);
      }
    }
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
    clearInterval(this.healthTimer);
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

  /**
   * Subscribes (the id first: a RESP2 subscriber answers nothing else) and turns tracking on,
   * redirected there; the cache is used from then on. One attempt at a time; an attempt that a lost
   * connection overtook does nothing more (the next 'ready' or check starts again).
   */
  private async start(): Promise<void> {
    if (this.closed || this.tracking || this.startingAt === this.generation) return;
    if (this.reader.status !== 'ready' || this.subscriber.status !== 'ready') return;
    const generation = this.generation;
    this.startingAt = generation;
    // Each step within a check's time: a command sent on a connection lost meanwhile may never settle.
    const step = <T>(pending: Promise<T>) => withDeadline(pending, HEALTH_CHECK_MS);
    try {
      if (this.subscriberId === undefined) {
        const id = Number(await step(this.subscriber.client('ID')));
        await step(this.subscriber.subscribe(INVALIDATE_CHANNEL));
        if (generation !== this.generation) return;
        this.subscriberId = id;
      }
      // Off first: a redirect to an earlier subscriber connection is replaced, its keys forgotten.
      await step(this.reader.client('TRACKING', 'OFF'));
      await step(this.reader.client('TRACKING', 'ON', 'REDIRECT', String(this.subscriberId)));
      if (generation !== this.generation || this.closed) return;
      this.flush();
      this.tracking = true;
      this.onState(true);
    } catch (error) {
      if (generation !== this.generation) return;
      this.onState(false, `tracking could not be turned on: ${(error as Error).message}`);
      // Not subscribed, or not knowing whether it is: a fresh subscriber connection, asked again.
      if (this.subscriberId === undefined) this.subscriber.disconnect(true);
    } finally {
      if (this.startingAt === generation) this.startingAt = undefined;
    }
  }

  /**
   * The path checked end to end: the subscriber answers a PING, and the reader's tracking is on and
   * redirected to it (Redis says `broken_redirect` once it has lost the subscriber). A check that
   * fails turns the cache off and reconnects the subscriber; while off, each check tries to start.
   */
  private async check(): Promise<void> {
    if (this.closed) return;
    if (!this.tracking) return void this.start();
    const generation = this.generation;
    const expected = this.subscriberId;
    let healthy: boolean;
    try {
      const [, info] = await withDeadline(Promise.all([this.subscriber.ping(), this.reader.client('TRACKINGINFO')]), HEALTH_CHECK_MS);
      healthy = trackingRedirectsTo(info, expected);
    } catch {
      healthy = false;
    }
    if (healthy || generation !== this.generation || this.closed) return;
    this.generation++;
    this.subscriberId = undefined;
    this.stop();
    // A fresh connection: a silent one may never close by itself.
    this.subscriber.disconnect(true);
  }

  private stop(): void {
    const was = this.tracking;
    this.tracking = false;
    this.flush();
    if (was) this.onState(false);
  }
}

/** Whether CLIENT TRACKINGINFO (RESP3 map or RESP2 list) says tracking is on, unbroken, redirected to `id`. */
export function trackingRedirectsTo(info: unknown, id: number | undefined): boolean {
  const fields = new Map<string, unknown>();
  if (info instanceof Map) for (const [name, value] of info) fields.set(String(name), value);
  else if (Array.isArray(info)) for (let index = 0; index + 1 < info.length; index += 2) fields.set(String(info[index]), info[index + 1]);
  else if (info && typeof info === 'object') for (const [name, value] of Object.entries(info)) fields.set(name, value);
  const flags = [fields.get('flags')].flat().map(String);
  return flags.includes('on') && !flags.includes('broken_redirect') && Number(fields.get('redirect')) === id;
}
