import type { Cluster, Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { endOfTurn } from '../../end-of-turn.js';
import { AnswerCache, type AnswerSlots, detachAnswer, type KeptAnswer, OfferedKeys } from '../answer-cache.js';
import type { ReadDependency, ReadReceipt } from '../read-receipt.js';
import { unpackEvent } from '../packed-event.js';
import { checkOnce } from '../stored-event.js';
import { CoalescedWrites } from './coalesced-writes.js';
import { groupBySlot, mgetBySlot } from './mget-by-slot.js';
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

interface Entry extends ReadDependency {
  /** The bytes Redis held, copied (null: no such key, kept only where the caller says so). */
  readonly value: Buffer | null;
  /** Date.now() past which the entry is not used: a key with a TTL (a mark), else Infinity. */
  readonly expiresAt: number;
}

/** What the cache holds: entries (values read from Redis) and answers made of them (answer-cache.ts). */
type Slot = Entry | KeptAnswer;

/** Answers' keys, apart from Redis keys (which start with the store's prefix). */
const ANSWER_KEY = '\u0000';

const isAnswer = (slot: Slot): slot is KeptAnswer => 'dependencies' in slot;

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

/** A tracked reader and the RESP2 connection its invalidations are redirected to (connectHotCache). */
export interface TrackedPair {
  reader: Redis;
  subscriber: Redis;
}

/**
 * Where the cache reads and whence its invalidations come: a single Redis (one pair), or a Redis
 * Cluster, whose nodes each track only the keys read on their own connections: one pair per master,
 * made by `connect` for each master the cluster's slot table names, and remade when it changes.
 */
export type HotCacheSource = TrackedPair | { cluster: Cluster; connect(node: { host: string; port: number }): TrackedPair };

/** What a tracked node tells its cache. */
interface NodeEvents {
  /** Keys written (or, with null, everything: the node's data was flushed). */
  invalidate(keys: readonly Buffer[] | null): void;
  /** Tracking turned on or off (with why, when a start failed). */
  changed(problem?: string): void;
}

/**
 * One Redis node's tracked reader and invalidation subscriber, and the tracking between them.
 * Tracking is (re)started by one attempt at a time, and an attempt that a lost connection overtook
 * is dropped (`generation`). On a cluster (`mustBeMaster`), a node that is not (or no longer) a
 * master is not used: after a failover the writes go to the promoted replica, and the old master
 * tells of them only while it replicates from it.
 */
class TrackedNode {
  /** The reads of one turn leave in one socket write (coalesced-writes.ts). */
  readonly writes: CoalescedWrites;
  /** Bumped whenever a connection is lost: a start that waited across it stops. */
  private generation = 0;
  private subscriberId: number | undefined;
  private tracking = false;
  /** The generation a start is under way for: one at a time per generation (one overtaken by a lost connection may never settle). */
  private startingAt: number | undefined;
  private closed = false;

  constructor(
    readonly reader: Redis,
    private readonly subscriber: Redis,
    private readonly events: NodeEvents,
    private readonly mustBeMaster: boolean,
  ) {
    this.writes = new CoalescedWrites(reader);
    // Their failures are the store's to report (its own connections fail alike); state changes go to the cache.
    reader.on('error', () => {});
    subscriber.on('error', () => {});
    subscriber.on('messageBuffer', (channel: Buffer, message: Buffer[] | Buffer | null) => {
      if (channel.toString() !== INVALIDATE_CHANNEL) return;
      // A null message: the whole database was flushed.
      this.events.invalidate(message === null || !Array.isArray(message) ? null : message);
    });
    for (const connection of [reader, subscriber]) {
      connection.on('ready', () => void this.start());
      connection.on('close', () => {
        this.generation++;
        if (connection === subscriber) this.subscriberId = undefined;
        this.stop();
      });
    }
    void this.start();
  }

  /** Whether every key read on `reader` now is told of when written. */
  get on(): boolean {
    return this.tracking;
  }

  get invalidationClientId(): number | undefined {
    return this.subscriberId;
  }

  /**
   * Subscribes (the id first: a RESP2 subscriber answers nothing else) and turns tracking on,
   * redirected there. One attempt at a time; an attempt that a lost connection overtook does nothing
   * more (the next 'ready' or check starts again).
   */
  async start(): Promise<void> {
    if (this.closed || this.tracking || this.startingAt === this.generation) return;
    if (this.reader.status !== 'ready' || this.subscriber.status !== 'ready') return;
    const generation = this.generation;
    this.startingAt = generation;
    // Each step within a check's time: a command sent on a connection lost meanwhile may never settle.
    const step = <T>(pending: Promise<T>) => withDeadline(pending, HEALTH_CHECK_MS);
    try {
      if (this.mustBeMaster && !isMaster(await step(this.reader.call('ROLE')))) throw new Error('the node is not a master');
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
      this.tracking = true;
      this.events.changed();
    } catch (error) {
      if (generation !== this.generation) return;
      this.events.changed(`tracking could not be turned on: ${(error as Error).message}`);
      // Not subscribed, or not knowing whether it is: a fresh subscriber connection, asked again.
      if (this.subscriberId === undefined) this.subscriber.disconnect(true);
    } finally {
      if (this.startingAt === generation) this.startingAt = undefined;
    }
  }

  /**
   * The path checked end to end: the subscriber answers a PING, the reader's tracking is on and
   * redirected to it (Redis says `broken_redirect` once it has lost the subscriber), and on a
   * cluster the node is still a master. A check that fails turns tracking off and reconnects the
   * subscriber; while off, each check tries to start.
   */
  async check(): Promise<void> {
    if (this.closed) return;
    if (!this.tracking) return void this.start();
    const generation = this.generation;
    const expected = this.subscriberId;
    let healthy: boolean;
    try {
      const [, info, role] = await withDeadline(
        Promise.all([this.subscriber.ping(), this.reader.client('TRACKINGINFO'), this.mustBeMaster ? this.reader.call('ROLE') : ['master']]),
        HEALTH_CHECK_MS,
      );
      healthy = trackingRedirectsTo(info, expected) && isMaster(role);
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

  close(): void {
    this.closed = true;
    this.stop();
    this.reader.disconnect();
    this.subscriber.disconnect();
  }

  private stop(): void {
    if (!this.tracking) return;
    this.tracking = false;
    this.events.changed();
  }
}

/** Whether a ROLE reply names a master. */
function isMaster(role: unknown): boolean {
  return Array.isArray(role) && replyText(role[0]) === 'master';
}

/** The node key (`host:port`, as a cluster's slot table names it) as host and port. */
function hostAndPort(nodeKey: string): { host: string; port: number } {
  const colon = nodeKey.lastIndexOf(':');
  return { host: nodeKey.slice(0, colon), port: Number(nodeKey.slice(colon + 1)) };
}

/** Keys read together: one MGET on one node (and on a cluster, of one slot). */
interface ReadGroup {
  /** Positions in the keys read. */
  positions: number[];
  /** The tracked node to read on; undefined: a slot whose master has no node of the cache yet (read through the cluster, not kept). */
  node: TrackedNode | undefined;
}

/**
 * A bounded in-process cache of values read from Redis (events, latest replaceable events and
 * their marks), kept true by Redis itself: server-assisted client-side caching (CLIENT TRACKING).
 *
 * - The reads it caches go over connections of their own (`reader`), which Redis tracks: every key
 *   read is remembered, and when that key is written, deleted, expires or is evicted, by anyone
 *   (another instance, `import`, `sync`, this instance), Redis sends its name to `subscriber`.
 * - `subscriber` speaks RESP2 (ioredis speaks RESP3 by default, and drops the RESP3 `invalidate`
 *   pushes): tracking REDIRECTs to it, and it receives the names on `__redis__:invalidate`.
 * - On a Redis Cluster each master tracks the keys read on it: one reader and subscriber per master
 *   of the slot table, each key read on its slot's master. A read refused there (MOVED or ASK: the
 *   slot moved, a failover) is read again through the cluster and not kept. A change of the masters
 *   (the slot table read every 5 s, or a node found not to be a master by a check) empties the cache.
 * - An answer that raced an invalidation of its key is not kept: the invalidation may travel faster,
 *   on the other connection, than the reply it makes stale.
 * - Any connection lost, or an invalidation path silent for a check (HEALTH_CHECK_MS): the cache is
 *   emptied and not used (reads go to Redis as without it) until every node is back and tracking is
 *   on again; whatever was written meanwhile was never seen.
 * - Keys with a TTL (marks) are read with their PTTL and kept until then: an expiry's invalidation
 *   comes when Redis gets round to expiring the key, which may be later.
 * - Values are copied when kept: ioredis hands back views of its socket reads (up to 64 KiB each),
 *   which a small kept value would otherwise hold alive whole. Packed events are kept unpacked.
 */
export class HotCache {
  /** Entries and answers, in one bound (HOT_CACHE_MB) and one eviction order. */
  private readonly slots: LRUCache<string, Slot>;
  /** The entries of `slots` (Redis keys never start with ANSWER_KEY). */
  private readonly entries: { get(key: string): Entry | undefined; peek(key: string): Entry | undefined; set(key: string, entry: Entry): void; delete(key: string): void; clear(): void };
  private readonly pending = new Map<string, Pending>();
  /** The tracked nodes by node key ('' for a single Redis). */
  private readonly nodes = new Map<string, TrackedNode>();
  /** Bumped whenever the cache is emptied: answers to reads sent before are not kept. */
  private epoch = 0;
  /** Every node tracking (and on a cluster, one per master): reads are answered from the cache. */
  private on = false;
  private closed = false;
  private readonly healthTimer: NodeJS.Timeout;
  private readonly forgetCluster: () => void = () => {};
  /** The cluster read on, if the source is one. */
  private readonly cluster: Cluster | undefined;
  /** Counters for /metrics and the bench. */
  readonly stats = { hits: 0, misses: 0, invalidations: 0, flushes: 0, answers: 0 };
  /**
   * Keys of answers made once, for every answer cache of this one (REST and GraphQL keys differ):
   * about as many as answers fit in the cache (~1 KB each), so what a client asks twice within that
   * many others can be kept.
   */
  private readonly offeredKeys: OfferedKeys;

  constructor(
    private readonly source: HotCacheSource,
    maxBytes: number,
    private readonly onState: (on: boolean, problem?: string) => void = () => {},
  ) {
    this.offeredKeys = new OfferedKeys(Math.max(1024, Math.floor(maxBytes / 1024)));
    this.slots = new LRUCache<string, Slot>({
      maxSize: maxBytes,
      sizeCalculation: (slot, key) => (isAnswer(slot) ? slot.size : key.length + (slot.value?.length ?? 0) + ENTRY_OVERHEAD),
      // Gone (written, evicted, replaced, the cache emptied): an entry is marked at once, and what
      // was made of it dropped once the cache has finished the change (lru-cache: a cache must not
      // be changed from within `dispose`).
      dispose: (slot) => {
        if (isAnswer(slot)) detachAnswer(slot);
        else slot.gone = true;
      },
      disposeAfter: (slot) => {
        if (!isAnswer(slot) && slot.dependents) for (const dependent of [...slot.dependents]) dependent.drop();
      },
    });
    const slots = this.slots;
    this.entries = {
      get: (key) => slots.get(key) as Entry | undefined,
      peek: (key) => slots.peek(key) as Entry | undefined,
      set: (key, entry) => void slots.set(key, entry),
      delete: (key) => void slots.delete(key),
      clear: () => slots.clear(),
    };
    this.cluster = 'cluster' in source ? source.cluster : undefined;
    if ('cluster' in source) {
      const reconcile = () => this.reconcile();
      for (const event of ['refresh', '+node', '-node'] as const) source.cluster.on(event, reconcile);
      this.forgetCluster = () => {
        for (const event of ['refresh', '+node', '-node'] as const) source.cluster.off(event, reconcile);
      };
      this.reconcile();
    } else {
      this.nodes.set('', this.track(source, false));
    }
    this.healthTimer = setInterval(() => {
      this.reconcile();
      for (const node of this.nodes.values()) void node.check();
    }, HEALTH_CHECK_MS);
    this.healthTimer.unref();
  }

  /** Whether reads are answered from the cache (tracking on, every connection up). */
  get active(): boolean {
    return this.on;
  }

  /**
   * The values of `keys` (MGET order), from the cache where it holds them, else read on the tracked
   * readers (through `send`, which maps failures and bounds the time) and kept as `options` allow.
   * `reads`: the request's receipt, given the entries that answered (those read now once kept), or
   * spoiled by a value read that is not kept.
   */
  async get(
    keys: readonly string[],
    options: CacheReadOptions,
    send: <T>(read: () => Promise<T>) => Promise<T>,
    reads?: ReadReceipt,
  ): Promise<(Buffer | null)[]> {
    const now = Date.now();
    const values: (Buffer | null)[] = new Array(keys.length);
    const missing: number[] = [];
    const answered = reads?.dependencies;
    keys.forEach((key, position) => {
      const entry = this.entries.get(key);
      if (entry !== undefined && entry.expiresAt > now) {
        values[position] = entry.value;
        answered?.push(entry);
      } else missing.push(position);
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
      const groups = this.route(missingKeys);
      const read = await send(() => Promise.all(groups.map((group) => this.readGroup(group, missingKeys, ttlKeys))));
      const ttlOf = new Map<string, number>();
      const keepable = new Set<number>();
      groups.forEach((group, index) => {
        const answer = read[index] as GroupAnswer;
        group.positions.forEach((position, at) => {
          values[missing[position] as number] = answer.values[at] ?? null;
          if (answer.kept) keepable.add(position);
        });
        for (const [key, ttl] of answer.ttls) ttlOf.set(key, ttl);
      });
      if (!this.on || this.epoch !== epoch) {
        reads?.spoil();
        return values;
      }
      missing.forEach((position, index) => {
        const key = keys[position] as string;
        const entry = this.keep(key, values, position, keepable.has(index), ttlOf.get(key), keepAbsentWith, now);
        // What is not kept is told of by nobody: an answer made of it cannot be kept either.
        if (entry === undefined) reads?.spoil();
        else answered?.push(entry);
      });
      return values;
    } finally {
      for (const key of missingKeys) {
        const pending = this.pending.get(key) as Pending;
        if (--pending.reads === 0) this.pending.delete(key);
      }
    }
  }

  /**
   * Keeps the value read for `key` (at `position` of `values`, where the kept copy replaces it), if
   * it may be: read on a tracking node, not invalidated meanwhile, and present (or absent beside its
   * present partner). Returns the entry, or undefined where nothing was kept.
   */
  private keep(
    key: string,
    values: (Buffer | null)[],
    position: number,
    keepable: boolean,
    ttl: number | undefined,
    keepAbsentWith: readonly (number | undefined)[] | undefined,
    now: number,
  ): Entry | undefined {
    if (!keepable || this.pending.get(key)?.invalidated) return undefined;
    const value = values[position] ?? null;
    if (value === null) {
      const partner = keepAbsentWith?.[position];
      if (partner === undefined || values[partner] == null) return undefined;
    }
    // Kept unpacked (store/packed-event.ts): a hit never inflates, and HOT_CACHE_MB counts the
    // bytes the cache really holds (the event read from them shares them).
    const unpacked = value && unpackEvent(value);
    const kept = unpacked && (unpacked === value ? Buffer.from(value) : unpacked);
    if (kept) {
      // Never written again: an event in it is checked once (stored-event.ts), from this read on.
      checkOnce(kept);
      values[position] = kept;
    }
    const entry: Entry = { key, value: kept, expiresAt: ttl !== undefined && ttl >= 0 ? now + ttl : Infinity, gone: false, dependents: undefined };
    this.entries.set(key, entry);
    // Too large for the cache (lru-cache then keeps nothing): not an entry anyone will invalidate.
    return this.entries.peek(key) === entry ? entry : undefined;
  }

  /** The invalidation connection's client id while it is subscribed (a single Redis; tests kill it by this). */
  get invalidationClientId(): number | undefined {
    return this.nodes.get('')?.invalidationClientId;
  }

  /** Each tracked node's invalidation client id, by node key (`host:port` on a cluster). */
  get invalidationClientIds(): Map<string, number | undefined> {
    return new Map([...this.nodes].map(([key, node]) => [key, node.invalidationClientId]));
  }

  /** Bytes the entries and the answers made of them take, as the cache measures them. */
  get size(): number {
    return this.slots.calculatedSize;
  }

  /**
   * A cache of answers made of these entries (answer-cache.ts), held with them in HOT_CACHE_MB:
   * an answer goes with any entry it was made of.
   */
  answerCache<T>(): AnswerCache<T> {
    const { slots } = this;
    const answerSlots: AnswerSlots = {
      get: (key) => slots.get(ANSWER_KEY + key) as KeptAnswer | undefined,
      set: (key, answer) => {
        slots.set(ANSWER_KEY + key, answer);
        return slots.peek(ANSWER_KEY + key) === answer;
      },
      delete: (key, answer) => {
        if (answer === undefined || slots.peek(ANSWER_KEY + key) === answer) slots.delete(ANSWER_KEY + key);
      },
      touch: (dependencies) => {
        for (const { key } of dependencies) slots.get(key);
      },
      served: () => {
        this.stats.answers++;
      },
    };
    return new AnswerCache<T>(answerSlots, this.offeredKeys);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.healthTimer);
    this.forgetCluster();
    for (const node of this.nodes.values()) node.close();
    this.nodes.clear();
    this.update();
  }

  private track(pair: TrackedPair, mustBeMaster: boolean): TrackedNode {
    return new TrackedNode(pair.reader, pair.subscriber, { invalidate: (keys) => this.invalidated(keys), changed: (problem) => this.update(problem) }, mustBeMaster);
  }

  /** Which node reads which of `keys`: on a single Redis all on one; on a cluster, one group per slot, on its master. */
  private route(keys: readonly string[]): ReadGroup[] {
    const { cluster } = this;
    if (!cluster) return [{ positions: keys.map((_, position) => position), node: this.nodes.get('') }];
    return [...groupBySlot(keys)].map(([slot, positions]) => {
      const owner = cluster.slots[slot]?.[0];
      return { positions, node: owner === undefined ? undefined : this.nodes.get(owner) };
    });
  }

  /** One group's values (and the PTTLs of its TTL keys), and whether they may be kept. */
  private async readGroup(group: ReadGroup, keys: readonly string[], ttlKeys: ReadonlySet<string> | undefined): Promise<GroupAnswer> {
    const groupKeys = group.positions.map((position) => keys[position] as string);
    const { node } = group;
    const { cluster } = this;
    if (node === undefined && cluster) return { values: await mgetBySlot(cluster, groupKeys), ttls: [], kept: false };
    if (node === undefined) throw new Error('the hot cache has no connection');
    const withTtl = ttlKeys ? groupKeys.filter((key) => ttlKeys.has(key)) : [];
    node.writes.beforeCommand();
    try {
      const [values, ttls] = await Promise.all([node.reader.mgetBuffer(...groupKeys), Promise.all(withTtl.map((key) => node.reader.pttl(key)))]);
      return { values, ttls: withTtl.map((key, index) => [key, ttls[index] as number]), kept: node.on };
    } catch (error) {
      if (!cluster) throw error;
      // Refused by the node (MOVED or ASK: the slot moved, a failover; or its connection is gone):
      // read through the cluster, which follows redirections, and not kept.
      return { values: await mgetBySlot(cluster, groupKeys), ttls: [], kept: false };
    }
  }

  /**
   * On a cluster: one tracked node per master of the slot table. A node gone or added empties the
   * cache: what was read on a node that no longer serves its slots would never be invalidated.
   */
  private reconcile(): void {
    if (this.closed || !('cluster' in this.source)) return;
    const { cluster, connect } = this.source;
    const masters = new Set<string>();
    for (const owners of cluster.slots) if (owners?.[0] !== undefined) masters.add(owners[0]);
    // No slot table (the cluster is not reachable yet): nothing to reconcile with.
    if (masters.size === 0) return;
    let changed = false;
    for (const [key, node] of this.nodes) {
      if (masters.has(key)) continue;
      node.close();
      this.nodes.delete(key);
      changed = true;
    }
    for (const key of masters) {
      if (this.nodes.has(key)) continue;
      this.nodes.set(key, this.track(connect(hostAndPort(key)), true));
      changed = true;
    }
    if (!changed) return;
    this.flush();
    this.update();
  }

  /** Recomputes whether the cache is used; turned on or off, it starts empty. */
  private update(problem?: string): void {
    let on = !this.closed && this.nodes.size > 0;
    for (const node of this.nodes.values()) on &&= node.on;
    if (on !== this.on || (!on && problem === undefined)) this.flush();
    const was = this.on;
    this.on = on;
    // Closing is not an outage: nothing to say.
    if (this.closed) return;
    if (on !== was) this.onState(on);
    else if (!on && problem !== undefined) this.onState(false, problem);
  }

  private invalidated(keys: readonly Buffer[] | null): void {
    if (keys === null) return this.flush();
    for (const key of keys) this.invalidate(key.toString());
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
}

/** What one group's read brought back. */
interface GroupAnswer {
  values: (Buffer | null)[];
  ttls: [string, number][];
  /** Read on a tracked node that was tracking: may be kept. */
  kept: boolean;
}

/** Whether CLIENT TRACKINGINFO (RESP3 map or RESP2 list) says tracking is on, unbroken, redirected to `id`. */
export function trackingRedirectsTo(info: unknown, id: number | undefined): boolean {
  const fields = new Map<string, unknown>();
  const field = (name: unknown, value: unknown) => {
    const text = replyText(name);
    if (text !== undefined) fields.set(text, value);
  };
  if (info instanceof Map) for (const [name, value] of info) field(name, value);
  else if (Array.isArray(info)) for (let index = 0; index + 1 < info.length; index += 2) field(info[index], info[index + 1]);
  else if (info && typeof info === 'object') for (const [name, value] of Object.entries(info)) field(name, value);
  const flags = [fields.get('flags')].flat().map(replyText);
  const redirect = replyText(fields.get('redirect'));
  return flags.includes('on') && !flags.includes('broken_redirect') && redirect !== undefined && Number(redirect) === id;
}

/** A reply element as text, or undefined when it is not a string, number or buffer: String() throws on some objects. */
function replyText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (Buffer.isBuffer(value)) return value.toString();
  return undefined;
}
