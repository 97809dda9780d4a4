import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis, type Result } from 'ioredis';
import {
  DELETION_KIND,
  deletedBy,
  type DeletionTargets,
  deletersById,
  deletionTargets,
  isDeletionRequest,
  isUndeletableKind,
  VANISH_KIND,
  vanishApplies,
} from '../../nostr/deletions.js';
import { type NostrEvent, wireByteLength, wireFormOf } from '../../nostr/event.js';
import { FOLLOW_LIST_KIND } from '../../nostr/follows.js';
import { PROFILE_KIND, readCoordinate, replaceableAddress, replaceableKindAddress } from '../../nostr/kinds.js';
import {
  type EventStore,
  type Held,
  type ProfileWithMark,
  type ReplaceableWithMark,
  type StoredEvent,
  type WriteOutcome,
} from '../event-store.js';
import { profileMarkKey } from '../mark-store.js';
import { authorUnderId, markerFor, readSlot, resolveEventValues } from '../replaceable-markers.js';
import { packEvent, unpackEvent } from '../packed-event.js';
import { readStoredEvent, storedEventId, WIRE_ID_END, wireIdOf } from '../stored-event.js';
import {
  addressOfMember,
  deletedEventValue,
  isDeleted,
  MAX_PENDING_DELETERS,
  PENDING_TTL_SECONDS,
  requestOutcome,
} from '../tombstones.js';
import { addressMember, EVENTS_END, readMember } from './author-list.js';
import type { CacheReadOptions, HotCache } from './hot-cache.js';
import type { AnswerCache } from '../answer-cache.js';
import type { ReadReceipt } from '../read-receipt.js';
import { type RedisKeys, redisKeys } from './keys.js';
import {
  BAR_VERSION_SCRIPT,
  DELETE_ID_SCRIPT,
  DELETE_IF_SCRIPT,
  MARK_VERSION_SCRIPT,
  PUT_REGULAR_SCRIPT,
  RAISE_BAR_SCRIPT,
  REPLACE_SCRIPT,
  SETTLE_JOURNAL_SCRIPT,
  SETTLE_TOMBSTONE_SCRIPT,
  TOMBSTONE_SCRIPT,
  VANISH_AT_SCRIPT,
} from './lua-scripts.js';
import { mastersByKey, mgetBySlot, type RedisClient } from './mget-by-slot.js';
import { RedisCommands } from './redis-commands.js';
import { RedisCursorStore } from './redis-cursor-store.js';
import { RedisRelationIndex } from './redis-relation-index.js';
import { FollowWrites } from '../follow-index.js';
import { escapeGlob, scanKeys } from './scan-keys.js';
import { markNote, RedisMarkStore } from './redis-mark-store.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    nostrReplaceEvent(
      key: string,
      journal: string,
      json: string | Buffer,
      id: string,
      createdAt: string,
      token: string,
    ): Result<[outcome: WriteOutcome, previousId: string, previousJson: string, ...SlotJournal], Context>;
    nostrDeleteIf(key: string, value: string): Result<number, Context>;
    nostrPutRegular(key: string, value: string | Buffer, author: string, undeletable: string): Result<'stored' | 'duplicate' | 'deleted', Context>;
    nostrMarkVersion(key: string, marker: string, author: string): Result<'ok' | 'deleted', Context>;
    nostrBarVersion(key: string, journal: string, id: string, token: string): Result<[removed: string, ...SlotJournal], Context>;
    nostrRaiseBar(key: string, journal: string, createdAt: string, id: string, token: string): Result<[removed: string, ...SlotJournal], Context>;
    nostrSettleJournal(journal: string, ...ids: string[]): Result<number, Context>;
    /** Replies as bytes: a removed regular event may be packed (store/packed-event.ts). */
    nostrTombstoneBuffer(key: string, author: string): Result<Buffer, Context>;
    nostrDeleteIdBuffer(key: string, deleter: string, maxPending: string, ttlSeconds: string): Result<[Buffer, Buffer?], Context>;
    nostrVanishAt(key: string, createdAt: string): Result<number, Context>;
    nostrSettleTombstone(key: string): Result<number, Context>;
  }
}

/**
 * What a script that changes a replaceable slot hands back of its journal (lua-scripts.ts REPLACE):
 * the entries it found there (another transition's, not yet applied or lost), each without a
 * removed version's JSON; where there were some, the id of the version the slot holds now ('' for
 * none); and Redis' time.
 */
type SlotJournal = [journalBefore: string, currentId: string, redisTime: string];

/**
 * What the writes of one batch share: its follows (sent grouped at its end), what waits for them
 * (journals settled, follows healed), and its token (withToken).
 */
interface BatchWrites {
  follows: FollowWrites;
  afterFollows: (() => Promise<void>)[];
  token: string;
}

/** The id of the event a read found, if it found one. */
function servedId(held: Held | undefined): string | undefined {
  return held && !isDeleted(held) ? storedEventId(held) : undefined;
}

/** Ids a request to vanish removes per round trip. */
const VANISH_PAGE = 500;

/**
 * A journal entry of another process older than this (by Redis' clock) is taken for abandoned (its
 * writer stopped, or lost its reply and is not replaying): healed by the next write of its address.
 * Younger, it may be in flight still (a long batch, commands waiting in a paused Redis): a heal then
 * would race its writes.
 */
const ABANDONED_AFTER_SECONDS = 600;

/** How long a heal waits for another writer's entries (journaled since it was decided) to settle before it sets follows. */
const OTHERS_SETTLE_MS = 3000;

export interface RedisStoreOptions {
  /** PUBLIC_URL: a request to vanish naming it applies here (nostr/deletions.ts). */
  publicUrl?: string;
  /** How long a deletion whose event is not held is remembered (tests shorten it). */
  pendingTtlSeconds?: number;
  /**
   * REDIS_WAIT_REPLICAS, for `import` and `sync`: a batch counts as written once this many replicas
   * of every master hold it (WAIT), so that a failover cannot lose it. 0: not waited for.
   */
  waitReplicas?: number;
  /** REDIS_TIMEOUT_MS: what WAIT may take; and on a cluster, the deadline of one read as a whole. */
  timeoutMs?: number;
  /** On a cluster, the deadline of one read as a whole where it is not `timeoutMs` (a bulk CLI command's: open-store.ts). */
  readTimeoutMs?: number;
  /** HOT_CACHE_MB: events, latest replaceable events and their marks kept in process, kept true by Redis (hot-cache.ts). */
  hotCache?: HotCache;
  /** REDIS_PACK_EVENTS: regular events are written packed (store/packed-event.ts); default true. */
  packEvents?: boolean;
  /** NOTE_SEARCH: the note search index is kept and read (store/note-search-index.ts); default false, as the service's. */
  noteSearch?: boolean;
  /** Followers per bucket log before they move to more buckets (FOLLOW_BUCKET_SIZE, its default; tests use smaller ones). */
  followBucketSize?: number;
}

/** The production EventStore: the key layout of keys.ts, the replaceable and deletion rules of lua-scripts.ts. */
export class RedisEventStore implements EventStore {
  readonly marks: RedisMarkStore;
  readonly cursors: RedisCursorStore;
  readonly relations: RedisRelationIndex;
  private readonly keys: RedisKeys;
  private readonly commands: RedisCommands;
  private readonly hotCache: HotCache | undefined;
  private readonly packEvents: boolean;

  /** PUBLIC_URL: a request to vanish naming it applies here (nostr/deletions.ts). */
  private readonly publicUrl: string | undefined;
  /** How long a deletion whose event is not held is remembered (tests shorten it). */
  private readonly pendingTtlSeconds: number;
  private readonly waitReplicas: number;
  private readonly timeoutMs: number;
  /**
   * Bumped when a connection that writes is lost or replaced: WAIT counts the replicas that hold
   * what its own connection wrote, so a batch whose writes went on a connection gone since cannot be
   * confirmed by asking another.
   */
  private connectionGeneration = 0;
  /** This store's part of the batch tokens its journal entries carry (lua-scripts.ts REPLACE); read by tests. */
  readonly writer = randomBytes(4).toString('hex');
  private batches = 0;
  /** Tokens of this store's batches still being written: their journal entries are in flight. */
  private readonly openTokens = new Set<string>();

  constructor(
    /** Also shared by instance-wide counters kept beside the index (the HTTP rate limits). */
    readonly client: RedisClient,
    readonly keyPrefix: string,
    options: RedisStoreOptions = {},
  ) {
    this.publicUrl = options.publicUrl;
    this.pendingTtlSeconds = options.pendingTtlSeconds ?? PENDING_TTL_SECONDS;
    this.waitReplicas = options.waitReplicas ?? 0;
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.keys = redisKeys(keyPrefix);
    this.commands = new RedisCommands(client, options.readTimeoutMs ?? this.timeoutMs);
    this.hotCache = options.hotCache;
    this.packEvents = options.packEvents ?? true;
    if (this.waitReplicas > 0) {
      const replaced = () => {
        this.connectionGeneration++;
      };
      if (client instanceof Cluster) {
        // A master's connection only: replicas' come and go in the pool without carrying writes.
        const ifMaster = (node: Redis) => {
          if (!node.options.readOnly) replaced();
        };
        client.on('+node', ifMaster);
        client.on('-node', ifMaster);
      } else {
        client.on('close', replaced);
      }
    }
    this.marks = new RedisMarkStore(this.commands, this.keys);
    this.cursors = new RedisCursorStore(this.commands, this.keys);
    // Notifications read whose a target event is, as it is held now (read directly, never cached).
    const eventsOf = async (ids: readonly string[]) => (await this.readEvents(ids)).map((held) => held?.event);
    const removedAuthorsOf = async (ids: readonly string[]) => (await this.readDirect(ids.map(this.keys.event))).map((value) => (value ? authorUnderId(value) : undefined));
    this.relations = new RedisRelationIndex(client, this.commands, this.keys, keyPrefix, eventsOf, removedAuthorsOf, options.followBucketSize, options.noteSearch ?? false);
    client.defineCommand('nostrReplaceEvent', { numberOfKeys: 2, lua: REPLACE_SCRIPT });
    client.defineCommand('nostrSettleJournal', { numberOfKeys: 1, lua: SETTLE_JOURNAL_SCRIPT });
    client.defineCommand('nostrDeleteIf', { numberOfKeys: 1, lua: DELETE_IF_SCRIPT });
    client.defineCommand('nostrPutRegular', { numberOfKeys: 1, lua: PUT_REGULAR_SCRIPT });
    client.defineCommand('nostrMarkVersion', { numberOfKeys: 1, lua: MARK_VERSION_SCRIPT });
    client.defineCommand('nostrDeleteId', { numberOfKeys: 1, lua: DELETE_ID_SCRIPT });
    client.defineCommand('nostrBarVersion', { numberOfKeys: 2, lua: BAR_VERSION_SCRIPT });
    client.defineCommand('nostrRaiseBar', { numberOfKeys: 2, lua: RAISE_BAR_SCRIPT });
    client.defineCommand('nostrTombstone', { numberOfKeys: 1, lua: TOMBSTONE_SCRIPT });
    client.defineCommand('nostrVanishAt', { numberOfKeys: 1, lua: VANISH_AT_SCRIPT });
    client.defineCommand('nostrSettleTombstone', { numberOfKeys: 1, lua: SETTLE_TOMBSTONE_SCRIPT });
  }

  /**
   * What the lookups read (events, replaceable slots, their marks): from the hot cache while it is
   * on, else one MGET per hash slot. `options`: what the cache may keep besides present values.
   */
  private mget(keys: readonly string[], options: CacheReadOptions = {}, reads?: ReadReceipt): Promise<(Buffer | null)[]> {
    const { hotCache } = this;
    if (hotCache?.active) return hotCache.get(keys, options, (read) => this.commands.read(read), reads);
    reads?.spoil();
    return this.readDirect(keys);
  }

  answerCache<T>(): AnswerCache<T> | undefined {
    return this.hotCache?.answerCache<T>();
  }

  /** Keys read from Redis itself: one MGET per hash slot (the write path's checks read so, never the cache). */
  private readDirect(keys: readonly string[]): Promise<(Buffer | null)[]> {
    return this.read(() => mgetBySlot(this.client, keys));
  }

  getEvents(ids: readonly string[], reads?: ReadReceipt): Promise<Held[]> {
    return this.readEvents(ids, (keys) => this.mget(keys, {}, reads));
  }

  /** Events by id, read as `read` reads keys: from Redis itself by default (the write path's checks). */
  private async readEvents(ids: readonly string[], read = (keys: readonly string[]) => this.readDirect(keys)): Promise<Held[]> {
    const values = await read(ids.map(this.keys.event));
    return resolveEventValues(
      ids,
      values,
      (addresses) => read(addresses.map(this.keys.replaceable)),
      // Read repair: a marker left by a writer that stopped between its two steps goes when met.
      (id, marker) => void this.client.nostrDeleteIf(this.keys.event(id), marker).catch(() => {}),
    );
  }

  getProfiles(pubkeys: readonly string[], reads?: ReadReceipt): Promise<Held[]> {
    return this.getReplaceable(PROFILE_KIND, pubkeys, reads);
  }

  async getReplaceable(kind: number, pubkeys: readonly string[], reads?: ReadReceipt): Promise<Held[]> {
    const keys = pubkeys.map((pubkey) => this.keys.replaceable(replaceableKindAddress(kind, pubkey)));
    const values = await this.mget(keys, {}, reads);
    return values.map((value, index) => readSlot(value, { pubkey: pubkeys[index], kind }));
  }

  async getByCoordinates(coordinates: readonly string[], reads?: ReadReceipt): Promise<Held[]> {
    const read = coordinates.map(readCoordinate);
    const wanted = read.filter((coordinate) => coordinate !== undefined);
    const values = await this.mget(
      wanted.map(({ address }) => this.keys.replaceable(address)),
      {},
      reads,
    );
    let next = 0;
    return read.map((coordinate) => (coordinate ? readSlot(values[next++], coordinate) : null));
  }

  async getProfilesWithMarks(pubkeys: readonly string[], reads?: ReadReceipt): Promise<ProfileWithMark[]> {
    const read = await this.getReplaceableWithMarks(PROFILE_KIND, pubkeys, profileMarkKey, reads);
    return read.map(({ event, marked, note }) => ({ profile: event, marked, note }));
  }

  async getReplaceableWithMarks(
    kind: number,
    pubkeys: readonly string[],
    markKeyOf: (pubkey: string) => string,
    reads?: ReadReceipt,
  ): Promise<ReplaceableWithMark[]> {
    // Events and their marks in one MGET (one per hash slot on Cluster): freshness costs no extra command.
    const keys = pubkeys.map((pubkey) => this.keys.replaceable(replaceableKindAddress(kind, pubkey)));
    const marks = pubkeys.map((pubkey) => this.keys.mark(markKeyOf(pubkey)));
    // A mark absent beside a present event is kept as absent (most profiles have none in force).
    const options = this.hotCache?.active ? { ttlKeys: new Set(marks), keepAbsentWith: [...keys.map(() => undefined), ...keys.map((_, index) => index)] } : {};
    const values = await this.mget([...keys, ...marks], options, reads);
    return pubkeys.map((pubkey, index) => {
      const value = values[index];
      const note = markNote(values[pubkeys.length + index]);
      return { event: readSlot(value, { pubkey, kind }), marked: note !== null, note };
    });
  }

  /**
   * Requests to vanish first, then deletion requests, then every event (pipelined): within a batch,
   * what deletes is in force before what it deletes is written; across batches and processes the
   * rules hold in any order (store/tombstones.ts), each step one script over one key.
   */
  putEvents(events: readonly NostrEvent[]): Promise<WriteOutcome[]> {
    return this.command(() => (events.length === 0 ? Promise.resolve([]) : this.withToken((token) => this.putBatch(events, token))));
  }

  /**
   * Runs a write with a batch token of its own (journal entries: lua-scripts.ts REPLACE), open
   * while it runs: this store's own entries are healed once their batch has ended without
   * settling them (it failed), another process's once abandoned (ABANDONED_AFTER_SECONDS).
   */
  private async withToken<T>(write: (token: string) => Promise<T>): Promise<T> {
    // 16 characters: the writer's 8, a batch number's 8.
    const token = this.writer + (this.batches++ % 2 ** 32).toString(16).padStart(8, '0');
    this.openTokens.add(token);
    try {
      return await write(token);
    } finally {
      this.openTokens.delete(token);
    }
  }

  /** putEvents' batch, with its token. */
  private async putBatch(events: readonly NostrEvent[], token: string): Promise<WriteOutcome[]> {
    const writers = this.writingConnections();
    const vanishedAt = await this.vanishTimes(events.map((event) => event.pubkey));
    const vanishing = events.filter((event) => vanishApplies(event, this.publicUrl));
    for (const request of vanishing) {
      await this.applyVanish(request, token);
      vanishedAt.set(request.pubkey, Math.max(vanishedAt.get(request.pubkey) ?? -1, request.created_at));
    }
    // Each event's targets, read once (empty but for deletion requests).
    const targets = events.map(deletionTargets);
    await Promise.all(events.map((event, index) => (event.kind === DELETION_KIND ? this.applyDeletion(event, targets[index] as DeletionTargets, token) : undefined)));
    const deleters = deletersById(events, targets);
    // The follow lists' follows, gathered over the batch and sent grouped per followed pubkey.
    const follows = new FollowWrites();
    // What waits for the batch's follows to be sent (journals settled, follows healed).
    const afterFollows: (() => Promise<void>)[] = [];
    // Sent whatever happens to the batch's other events: a list stored is related once only.
    const settled = await Promise.allSettled(events.map((event) => this.putEvent(event, vanishedAt, deletedBy(deleters, event), { follows, afterFollows, token })));
    await this.relations.flushFollows(follows);
    await Promise.all(afterFollows.map((then) => then()));
    const outcomes = settled.map((result) => {
      if (result.status === 'rejected') throw result.reason;
      return result.value;
    });
    await this.recheckVanished(events, outcomes, vanishedAt, token);
    await this.confirmReplicated(writers);
    return outcomes.map((outcome, index) => {
      const event = events[index] as NostrEvent;
      return requestOutcome(outcome, vanishing.includes(event) || isDeletionRequest(targets[index] as DeletionTargets));
    });
  }

  /** One event; `deletedInBatch`: a deletion request by its author came in the same batch. */
  private async putEvent(
    event: NostrEvent,
    vanishedAt: ReadonlyMap<string, number>,
    deletedInBatch: boolean,
    { follows, afterFollows, token }: BatchWrites,
  ): Promise<WriteOutcome> {
    if (event.kind !== VANISH_KIND && event.created_at <= (vanishedAt.get(event.pubkey) ?? -1)) {
      await this.tombstone(event.id, event.pubkey);
      return 'deleted';
    }
    // Bytes where an import kept the ones it read (a follow list's 70 KB never became a string).
    const json = wireFormOf(event);
    const size = wireByteLength(json);
    const address = replaceableAddress(event);
    if (address === undefined) {
      const eventKey = this.keys.event(event.id);
      if (deletedInBatch) {
        // A tombstone over whatever is there: another writer may have stored it meanwhile (its
        // relations then go too), or filled its pending record so that it was stored (review).
        await this.tombstone(event.id, event.pubkey);
        return 'deleted';
      }
      // Packed (store/packed-event.ts): a regular event is most of what Redis holds.
      const outcome = await this.client.nostrPutRegular(eventKey, this.packEvents ? packEvent(json) : json, event.pubkey, isUndeletableKind(event.kind) ? '1' : '0');
      // Its relations and its place in its author's list. `duplicate`: related again, since the
      // write that stored it may have failed before its relations were sent, or after Redis ran
      // them but before their replies came (a timeout, a connection lost): each target counts an
      // event once (lua-scripts.ts RELATE, ZAP), so a replay heals what a fault left and adds nothing else.
      // The batch's notification writes are gathered and sent with its follows (flushFollows).
      if (outcome === 'stored') await this.relations.relate(event, 1, size, true, follows);
      if (outcome === 'duplicate') await Promise.all([this.relations.relate(event, 1, size, false, follows, false), this.ensureListed(event, size)]);
      return outcome;
    }
    // Every version of an address shares one member of the author's list (for requests to vanish).
    const indexed = this.client.zadd(this.keys.author(event.pubkey).list, 0, addressMember(address, event.pubkey));
    const slotKey = this.keys.replaceable(address);
    const journalKey = this.keys.journal(address);
    const [[outcome, previousId, previousJson, journalBefore, current, redisTime]] = await Promise.all([
      this.client.nostrReplaceEvent(slotKey, journalKey, json, event.id, String(event.created_at), token),
      indexed,
    ]);
    const previous = previousJson ? storedEventOf(previousJson)?.event : undefined;
    // Another transition of the address is journaled whose writer gave up or stopped: healed after
    // the batch's follows are sent, this one's follows with it (set, not added).
    const healing = this.healable(journalBefore, redisTime);
    // The slot changed hands: the relations of what it holds now are added, of what it held removed
    // (whatever happens next to this version is another transition, with its own removal). Its
    // journal entries are settled once the batch's follows are sent.
    if (outcome === 'stored' || outcome === 'replaced') {
      // A follow list replacing another: by their difference (relations.replace).
      await this.relations.replace(previous, event, size, follows, !healing);
      if (!healing) afterFollows.push(() => this.settleJournal(journalKey, token, [`+${event.id}`, `-${previousId}`]));
    }
    if (healing) afterFollows.push(() => this.healOrFail(address, healing, current, previous ? [previous, event] : [event], token, [`+${event.id}`, `-${previousId}`]));
    if (outcome === 'deleted') {
      await this.client.set(this.keys.event(event.id), deletedEventValue(event.pubkey));
      return outcome;
    }
    if (outcome === 'superseded') return outcome;
    // The marker makes the event findable by id. Written after the slot (they may sit on different
    // cluster nodes), so a reader can meet a marker whose version was replaced meanwhile: getEvents
    // checks the id. Rewritten on `duplicate` to heal a write that stopped between the two steps.
    // Not over a deletion of this version by its author: then the version leaves its slot.
    const marker = markerFor(address);
    const eventKey = this.keys.event(event.id);
    const written = deletedInBatch
      ? this.client.set(eventKey, deletedEventValue(event.pubkey)).then(() => 'deleted' as const)
      : this.client.nostrMarkVersion(eventKey, marker, event.pubkey);
    // The replaced version's marker goes, not a tombstone written there meanwhile.
    const cleanup = outcome === 'replaced' ? this.client.nostrDeleteIf(this.keys.event(previousId), marker) : undefined;
    // Then the slot is read again. A newer version written meanwhile by another writer, whose
    // clean-up ran before this marker landed, would leave it dangling: seeing the newer
    // version, this writer removes its own marker. On one connection the three commands travel in
    // order, in one round trip; on a cluster the read waits for the marker. Only the bytes up to the
    // id are read (a follow list is 70 KB, read back whole for each list it was).
    const readHeld = () => this.client.getrangeBuffer(slotKey, 0, WIRE_ID_END - 1);
    const heldAfter = this.client instanceof Redis ? readHeld() : written.then(readHeld);
    const [marked, , held] = await Promise.all([written, cleanup, heldAfter]);
    if (marked === 'deleted') {
      // After the batch's follows: this version's were added with them.
      afterFollows.push(() => this.barVersion(address, event.id, token));
      return 'deleted';
    }
    // A missing slot reads as no bytes.
    if (held.length < WIRE_ID_END || wireIdOf(held) !== event.id) {
      await this.client.nostrDeleteIf(eventKey, marker);
    }
    // A follow or mute list stored by a write whose reply was lost may not have logged its change
    // (two steps: list-changes.ts): a replay logs it again (found by review).
    if (outcome === 'duplicate') await Promise.all([this.ensureListed(event, size), this.relations.logListChange(event)]);
    return outcome;
  }

  /**
   * A `duplicate` put: the writer that stored the event may have stopped before it listed it in its
   * author's list, which a request to vanish reads. Listed again if missing (an import retried, a
   * sync, a fetch heal it, as they healed the author index before it was the list), and taken back
   * if the event went meanwhile (its removal may have found nothing to remove).
   */
  private async ensureListed(event: NostrEvent, size: number): Promise<void> {
    if (!(await this.relations.ensureListed(event, size))) return;
    const [held] = await this.readEvents([event.id]);
    if (servedId(held) !== event.id) await this.relations.unlist(event, size);
  }

  /** The time of each pubkey's latest request to vanish (one MGET). */
  private async vanishTimes(pubkeys: readonly string[]): Promise<Map<string, number>> {
    const distinct = [...new Set(pubkeys)];
    const values = await mgetBySlot(this.client, distinct.map(this.keys.vanished));
    const times = new Map<string, number>();
    distinct.forEach((pubkey, index) => {
      const value = values[index];
      if (value != null) times.set(pubkey, Number(value.toString('latin1')));
    });
    return times;
  }

  /**
   * A request to vanish applied by another writer while this batch was written may have swept the
   * author's events before these were indexed: read the times again, and remove what they cover.
   */
  private async recheckVanished(events: readonly NostrEvent[], outcomes: WriteOutcome[], before: ReadonlyMap<string, number>, token: string): Promise<void> {
    const kept = new Set(events.filter((event, index) => event.kind !== VANISH_KIND && ['stored', 'replaced', 'duplicate'].includes(outcomes[index] as string)));
    if (kept.size === 0) return;
    const now = await this.vanishTimes([...kept].map((event) => event.pubkey));
    await Promise.all(
      events.map(async (event, index) => {
        const at = now.get(event.pubkey);
        if (at === undefined || at === before.get(event.pubkey) || event.created_at > at || !kept.has(event)) return;
        const address = replaceableAddress(event);
        if (address !== undefined) await this.raiseBar(address, at, '', event.pubkey, token);
        await this.tombstone(event.id, event.pubkey);
        outcomes[index] = 'deleted';
      }),
    );
  }

  /** A deletion request (NIP-09): its `e` tags by id, its `a` tags by address (nostr/deletions.ts). */
  private async applyDeletion(request: NostrEvent, { ids, addresses }: DeletionTargets, token: string): Promise<void> {
    await Promise.all([
      ...ids.map(async (id) => {
        const [verdictBytes, detail] = await this.client.nostrDeleteIdBuffer(
          this.keys.event(id),
          request.pubkey,
          String(MAX_PENDING_DELETERS),
          String(this.pendingTtlSeconds),
        );
        const verdict = verdictBytes.toString();
        // `version`: the address of the deleted version (its tombstone keeps it until the version
        // left its slot: a replay does it again); `deleted`: the deleted event.
        if (verdict === 'version' && detail) {
          await this.barVersion(detail.toString(), id, token);
          await this.client.nostrSettleTombstone(this.keys.event(id));
        }
        // Its member of its author's list goes with its relations; then its tombstone drops the
        // JSON it kept for a replay in case this reply was lost (DELETE_ID_SCRIPT).
        // It leaves the events held by kind when its tombstone settles: that happens once, whichever
        // writer gets there, and not before the relations went (a replay after a lost reply does it).
        if (verdict === 'deleted') {
          const removed = await this.unrelate(detail, undefined, false);
          if ((await this.client.nostrSettleTombstone(this.keys.event(id))) === 1 && removed) await this.relations.countKind(removed.kind, -1);
        }
      }),
      ...addresses.map((address) => this.raiseBar(address, request.created_at, '', request.pubkey, token)),
    ]);
  }

  /** Raises an address's bar; the version it removes (if any) leaves a tombstone under its id. */
  private async raiseBar(address: string, createdAt: number, id: string, author: string, token: string): Promise<void> {
    const [removed, journalBefore, current, redisTime] = await this.client.nostrRaiseBar(this.keys.replaceable(address), this.keys.journal(address), String(createdAt), id, token);
    await this.removeVersion(address, removed, journalBefore, current, redisTime, token, author);
  }

  /** Takes a deleted version out of its slot (BAR_VERSION). */
  private async barVersion(address: string, id: string, token: string): Promise<void> {
    const [removed, journalBefore, current, redisTime] = await this.client.nostrBarVersion(this.keys.replaceable(address), this.keys.journal(address), id, token);
    await this.removeVersion(address, removed, journalBefore, current, redisTime, token);
  }

  /**
   * A version a bar took out of its slot (if any: `removed`): its relations go, then its journal
   * entry; another transition journaled before and abandoned is healed, with this removal's
   * follows. `author`: the removed version's id keeps a tombstone.
   */
  private async removeVersion(address: string, removed: string, journalBefore: string, current: string, redisTime: string, token: string, author?: string): Promise<void> {
    const healing = this.healable(journalBefore, redisTime);
    const stored = removed !== '' ? storedEventOf(removed) : undefined;
    const removedId = removed !== '' ? wireIdOf(Buffer.from(removed)) : '';
    if (removedId !== '') {
      await Promise.all([
        author ? this.client.set(this.keys.event(removedId), deletedEventValue(author)) : undefined,
        stored ? this.relations.relate(stored.event, -1, stored.json.bytes.length, !healing) : undefined,
      ]);
    }
    if (healing) await this.healOrFail(address, healing, current, stored ? [stored.event] : [], token, [`-${removedId}`]);
    else await this.settleJournal(this.keys.journal(address), token, [`-${removedId}`]);
  }

  /**
   * The entries of a journal (lua-scripts.ts REPLACE) to heal now: all of them, when each is of a
   * batch of this store's that ended without settling it (it failed) or of another process and
   * abandoned (ABANDONED_AFTER_SECONDS); none while one may still be in flight (a heal would race
   * its writes; the next write of the address heals it).
   */
  private healable(journal: string, redisTime: string): JournalEntry[] | undefined {
    if (journal === '') return undefined;
    const entries = journalEntries(journal);
    const now = Number(redisTime);
    const settledBy = (entry: JournalEntry) => (entry.token.startsWith(this.writer) ? !this.openTokens.has(entry.token) : now - entry.time > ABANDONED_AFTER_SECONDS);
    return entries.length > 0 && entries.every(settledBy) ? entries : undefined;
  }

  /**
   * Applies the transitions an address's journal holds (`entries`) whose writer gave up or stopped
   * (REPLACE): their relations may be applied in part, twice, or not at all. The versions they
   * removed lose their relations and the version held keeps its own, each sent again (every target
   * counts an event once: RELATE, ZAP, NOTE, SEARCH_PROFILE); a follow list's follows are set, not
   * added, to what the list held names (FOLLOW_SET), at every pubkey any of those versions names.
   * Then the entries are settled. `also`: versions this writer added or removed, whose follows it
   * left to this; `own`: the ids of its own entries (of batch `token`) to settle with them. False
   * where it left everything for later (othersSettled), its entries unsettled.
   */
  private async heal(address: string, entries: readonly JournalEntry[], currentId: string, also: readonly NostrEvent[], token: string, own: readonly string[]): Promise<boolean> {
    const journalKey = this.keys.journal(address);
    // The removed versions' JSON, from the journal itself (the script's reply names them only).
    const healing = new Set(entries.map(({ sign, token: of, id }) => sign + of + id));
    const full = journalEntries((await this.read(() => this.client.get(journalKey))) ?? '');
    const removedEvents = full
      .filter(({ sign, token: of, id, json }) => json !== undefined && healing.has(sign + of + id))
      .map(({ json }) => storedEventOf(json as string)?.event)
      .filter((event) => event !== undefined);
    // The version held now, read again: another writer may have replaced it since the script ran,
    // and a version it took away must not be added back (its removal left no tombstone behind).
    let current = currentId ? await this.heldVersion(address) : undefined;
    if (current?.id !== currentId) current = undefined;
    // Not a transition of the events held by kind (counted by the writer that made it).
    await Promise.all([
      ...removedEvents.map((event) => this.relations.relate(event, -1, undefined, false, undefined, true, false)),
      current ? this.relations.relate(current, 1, undefined, false, undefined, true, false) : undefined,
    ]);
    const lists = [...removedEvents, ...also, ...(current ? [current] : [])].filter((event) => event.kind === FOLLOW_LIST_KIND);
    // Another writer's transition journaled since this heal was decided adds its follows' difference:
    // the sets wait for it to land (its entries settled), else are left to a later heal, entries and all.
    const healed = new Set([...entries.map((entry) => entry.token), token]);
    if (lists.length > 0) {
      if (!(await this.othersSettled(journalKey, healed))) return false;
      await this.setFollowsToHeld(address, lists);
    }
    await Promise.all([
      ...[...new Set(entries.map((entry) => entry.token))].map((healed) =>
        this.settleJournal(
          journalKey,
          healed,
          entries.filter((entry) => entry.token === healed).map(({ sign, id }) => sign + id),
        ),
      ),
      this.settleJournal(journalKey, token, own),
    ]);
    return true;
  }

  /**
   * heal, in a batch that left its own transition's follows to it: a heal that could not set them
   * (another writer's transition did not settle in time) fails the batch, which its caller writes
   * again (import retries it, sync reads from its cursor), rather than report it written.
   */
  private async healOrFail(address: string, entries: readonly JournalEntry[], currentId: string, also: readonly NostrEvent[], token: string, own: readonly string[]): Promise<void> {
    if (!(await this.heal(address, entries, currentId, also, token, own))) {
      throw new Error(`the follows of ${address} wait for another writer's transition, which did not settle within ${OTHERS_SETTLE_MS} ms`);
    }
  }

  /**
   * Whether the journal holds no entry of a batch but `tokens`, waiting up to OTHERS_SETTLE_MS for
   * those to settle (their writer's follows landed).
   */
  private async othersSettled(journalKey: string, tokens: ReadonlySet<string>): Promise<boolean> {
    for (let waited = 0; ; waited += 50) {
      const journal = await this.read(() => this.client.get(journalKey));
      if (!journal || journalEntries(journal).every((entry) => tokens.has(entry.token))) return true;
      if (waited >= OTHERS_SETTLE_MS) return false;
      await sleep(50);
    }
  }

  /**
   * The follows of an address's author set to what the list held now names, at every pubkey it or
   * `lists` name (FOLLOW_SET), then read again until it holds still: a writer that replaced it
   * meanwhile may have applied its difference before these sets (a few rounds at most).
   */
  private async setFollowsToHeld(address: string, lists: readonly NostrEvent[]): Promise<void> {
    let now = await this.heldVersion(address);
    for (let round = 0; round < 3; round++) {
      await this.relations.setFollows(addressAuthor(address), now, now ? [...lists, now] : lists);
      const after = await this.heldVersion(address);
      if (after?.id === now?.id) return;
      now = after;
    }
  }

  /** The version an address's slot holds, read from Redis itself (none for a bar or nothing). */
  private async heldVersion(address: string): Promise<NostrEvent | undefined> {
    const [value] = await this.readDirect([this.keys.replaceable(address)]);
    return value && value[0] === 0x7b ? storedEventOf(value)?.event : undefined;
  }

  /** The entries of batch `token` named by sign and version id (`+<id>`, `-<id>`; none for a bare sign) leave the journal. */
  private async settleJournal(journalKey: string, token: string, entries: readonly string[]): Promise<void> {
    const named = entries.filter((entry) => entry.length > 1).map((entry) => entry[0] + token + entry.slice(1));
    if (named.length > 0) await this.client.nostrSettleJournal(journalKey, ...named);
  }

  /**
   * A regular event's id made a tombstone (a request to vanish covers it, a deletion in its batch):
   * what it held loses its relations, then the tombstone drops the JSON it kept for a replay and
   * the event is counted out of the events held by kind, once (TOMBSTONE, SETTLE_TOMBSTONE).
   * `batch`: its writes are sent with the batch's; the settle waits for the caller to send them.
   */
  private async tombstone(id: string, author: string, batch?: FollowWrites): Promise<(() => Promise<void>) | undefined> {
    const removed = await this.unrelate(this.client.nostrTombstoneBuffer(this.keys.event(id), author), batch, false);
    if (!removed) return undefined;
    const settle = async () => {
      if ((await this.client.nostrSettleTombstone(this.keys.event(id))) === 1) await this.relations.countKind(removed.kind, -1);
    };
    if (batch) return settle;
    await settle();
    return undefined;
  }

  /**
   * A request to vanish that applies here (NIP-62): the time is kept, then every event of the author
   * up to it is removed (its id keeps a tombstone; its member of the author's list goes with its
   * relations), page by page through the author's list, then every replaceable address of the
   * author is barred, the profile's included. Stores written before the author's list kept an
   * author index of their own (keys.ts `legacyAuthor`): read the same way.
   */
  private async applyVanish(request: NostrEvent, token: string): Promise<void> {
    const { pubkey, created_at: until } = request;
    await this.client.nostrVanishAt(this.keys.vanished(pubkey), String(until));
    await this.sweep(pubkey, until, token);
  }

  /** What a request to vanish of `pubkey` at `until` removes and bars (applyVanish; finishRebuild again). */
  private async sweep(pubkey: string, until: number, token: string): Promise<void> {
    const addresses = new Set([replaceableKindAddress(PROFILE_KIND, pubkey)]);
    // A page's relations go together: its notification writes are gathered and sent at once.
    const tombstonePage = async (ids: readonly string[]) => {
      const batch = new FollowWrites();
      const settles = await Promise.all(ids.map((id) => this.tombstone(id, pubkey, batch)));
      await this.relations.flushFollows(batch);
      await Promise.all(settles.map((settle) => settle?.()));
    };
    const list = this.keys.author(pubkey).list;
    // Newer events stay, so the pages go on from the last member read, not from the start.
    for (let from = Buffer.from('-'); ; ) {
      const members = await this.client.zrangeBuffer(list, from, '+', 'BYLEX', 'LIMIT', 0, VANISH_PAGE);
      const last = members.at(-1);
      if (last === undefined) break;
      const ids: string[] = [];
      for (const member of members) {
        const named = readMember(member, pubkey);
        if (named && 'address' in named) addresses.add(named.address);
        else if (named && named.position.createdAt <= until) ids.push(named.position.id);
      }
      await tombstonePage(ids);
      from = Buffer.concat([Buffer.from('('), last]);
    }
    const legacy = this.keys.legacyAuthor(pubkey);
    for (;;) {
      const ids = await this.client.zrangebyscore(legacy, 0, until, 'LIMIT', 0, VANISH_PAGE);
      if (ids.length === 0) break;
      await tombstonePage(ids);
      await this.client.zrem(legacy, ...ids);
    }
    for (const member of await this.client.zrangebyscore(legacy, -1, -1)) {
      const address = addressOfMember(member, pubkey);
      if (address) addresses.add(address);
    }
    await Promise.all([...addresses].map((address) => this.raiseBar(address, until, '', pubkey, token)));
  }

  /**
   * The relations of an event a script took out of the index go too (the script hands back its
   * JSON, which only that script's caller receives: each removal is applied once).
   */
  private async unrelate(removed: Buffer | string | undefined | Promise<Buffer | string | undefined>, batch?: FollowWrites, counts = true): Promise<NostrEvent | undefined> {
    const held = await removed;
    const stored = held ? storedEventOf(held) : undefined;
    // The size as it was related: its JSON's (a packed value is unpacked first). `counts` false: the
    // caller counts it out of the events held by kind itself (a deletion, when its tombstone settles).
    if (stored) await this.relations.relate(stored.event, -1, stored.json.bytes.length, true, batch, true, counts);
    return stored?.event;
  }

  async *servableEvents(): AsyncIterable<NostrEvent[]> {
    for (const pattern of [`${escapeGlob(this.keyPrefix)}e:*`, `${escapeGlob(this.keyPrefix)}r:*`]) {
      for await (const keys of scanKeys(this.client, this.commands, pattern)) {
        const values = await this.readDirect(keys);
        const events: NostrEvent[] = [];
        for (const value of values) if (value && value[0] === 0x7b) events.push(JSON.parse(unpackEvent(value).toString('utf8')) as NostrEvent);
        if (events.length > 0) yield events;
      }
    }
  }

  async relateStored(events: readonly NostrEvent[]): Promise<void> {
    await this.command(async () => {
      const follows = new FollowWrites();
      // The address members of the authors' lists too (idempotent; clear() kept them).
      const addressed = events.flatMap((event) => {
        const address = replaceableAddress(event);
        return address === undefined ? [] : [this.client.zadd(this.keys.author(event.pubkey).list, 0, addressMember(address, event.pubkey))];
      });
      // Not counted by kind: a SCAN may hand an event over twice; the rebuild sets the counts at its end.
      const related = await Promise.allSettled([...events.map((event) => this.relations.relate(event, 1, undefined, true, follows, true, false)), ...addressed]);
      await this.relations.flushFollows(follows);
      for (const result of related) if (result.status === 'rejected') throw result.reason;
    });
  }

  /**
   * After a rebuild's replay: the authors' lists keep only members of servable events (clear()
   * kept them, so that requests to vanish found every event throughout), and every kept time of a
   * request to vanish sweeps its author again (a writer of an earlier version, which read `a:`
   * only, may have applied one without seeing the events listed here).
   */
  async finishRebuild(): Promise<void> {
    for await (const lists of this.relations.authorLists()) {
      for (const { author, key } of lists) {
        const members = await this.read(() => this.client.zrangeBuffer(key, '-', EVENTS_END, 'BYLEX'));
        for (let start = 0; start < members.length; start += VANISH_PAGE) {
          const page = members.slice(start, start + VANISH_PAGE);
          const ids = page.map((member) => {
            const named = readMember(member, author);
            return named && 'position' in named ? named.position.id : '';
          });
          const held = await this.readEvents(ids.map((id) => id || '0'.repeat(64)));
          const stale = page.filter((_, index) => !ids[index] || servedId(held[index]) !== ids[index]);
          if (stale.length > 0) await this.command(() => this.client.zrem(key, ...stale));
        }
      }
    }
    const start = `${this.keyPrefix}v:`.length;
    for await (const keys of scanKeys(this.client, this.commands, `${escapeGlob(this.keyPrefix)}v:*`)) {
      const times = await this.readDirect(keys);
      for (const [index, key] of keys.entries()) {
        const time = times[index];
        if (time !== null && time !== undefined) await this.command(() => this.withToken((token) => this.sweep(key.slice(start), Number(time.toString()), token)));
      }
    }
  }

  async healJournals(): Promise<number> {
    let healed = 0;
    const start = `${this.keyPrefix}rj:{`.length;
    for await (const keys of scanKeys(this.client, this.commands, `${escapeGlob(this.keyPrefix)}rj:{*`)) {
      for (const key of keys) {
        // The address follows the tag (keys.ts journal: a tag of the slot, which holds no brace).
        const address = key.slice(key.indexOf('}', start) + 1);
        const [journal, [seconds]] = await this.read(() => Promise.all([this.client.get(key), this.client.time()]));
        const entries = journal ? this.healable(journal, String(seconds)) : undefined;
        if (!entries) continue;
        const held = await this.heldVersion(address);
        if (await this.command(() => this.withToken((token) => this.heal(address, entries, held?.id ?? '', [], token, [])))) healed++;
      }
    }
    return healed;
  }

  /** The connections a batch's writes go on (every master's, on a cluster), as the batch starts. */
  private writingConnections(): { connections: Redis[]; generation: number } {
    return { connections: this.client instanceof Cluster ? this.client.nodes('master') : [this.client], generation: this.connectionGeneration };
  }

  /**
   * REDIS_WAIT_REPLICAS: WAIT on every connection the batch wrote on, which returns once that many
   * replicas hold everything the connection wrote. The batch fails (import retries it, sync keeps
   * its cursor) when fewer confirm in time, or when those connections are not the ones writing now
   * (one was lost or replaced, a master changed): an acknowledged batch survives a failover.
   */
  private async confirmReplicated(writers: { connections: Redis[]; generation: number }): Promise<void> {
    if (this.waitReplicas === 0) return;
    const now = this.writingConnections();
    const same =
      now.generation === writers.generation &&
      now.connections.length === writers.connections.length &&
      now.connections.every((connection) => writers.connections.includes(connection) && connection.status === 'ready');
    if (!same) throw new Error('WAIT: a connection changed during the batch, so its writes cannot be confirmed');
    // Within REDIS_TIMEOUT_MS (the setting says so), leaving a serve-length command deadline room to answer.
    const waitMs = Math.max(10, Math.floor(this.timeoutMs * 0.8));
    const counts = await Promise.all(writers.connections.map((connection) => connection.call('WAIT', this.waitReplicas, waitMs) as Promise<number>));
    const short = counts.findIndex((count) => Number(count) < this.waitReplicas);
    if (short !== -1) {
      throw new Error(`WAIT: ${counts[short]} of ${this.waitReplicas} replicas confirmed the batch within ${waitMs} ms`);
    }
  }

  async storedBytes(): Promise<number> {
    const { client } = this;
    const nodes = client instanceof Cluster ? client.nodes('master') : [client];
    const infos = await this.command(() => Promise.all(nodes.map((node) => node.info('memory'))));
    return infos.reduce((sum, info) => sum + Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? 0), 0);
  }

  /** Redis fails reads and writes together: ping() tells. */
  writesFailing(): boolean {
    return false;
  }

  /** A single Redis answers PING; a cluster is ready when every slot has a master that says the cluster is ok. */
  async ping(): Promise<void> {
    const { client } = this;
    if (client instanceof Redis) {
      await this.command(() => client.ping());
      return;
    }
    await this.read(() => checkEverySlotOwner(client));
  }

  async close(): Promise<void> {
    await this.hotCache?.close();
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  private command<T>(send: () => Promise<T>): Promise<T> {
    return this.commands.run(send);
  }

  private read<T>(send: () => Promise<T>): Promise<T> {
    return this.commands.read(send);
  }
}

/** Hash slots of a Redis Cluster. */
const SLOTS = 16384;

/**
 * Asks the master of every slot, through the cluster's own connections, whether the cluster is
 * serving (CLUSTER INFO): a node answers PING even while the cluster is down (no quorum, a slot
 * without a master), when every keyed command would fail.
 */
async function checkEverySlotOwner(cluster: Cluster): Promise<void> {
  if (cluster.status !== 'ready') throw new Error(`cluster ${cluster.status}`);
  const owners = new Set<string>();
  for (let slot = 0; slot < SLOTS; slot++) {
    // Before the first slot table; later, a slot whose master left shows as a missing connection.
    const master = cluster.slots[slot]?.[0];
    if (master === undefined) throw new Error(`slot ${slot} has no master`);
    owners.add(master);
  }
  const byKey = mastersByKey(cluster);
  await Promise.all(
    [...owners].map(async (key) => {
      const node = byKey.get(key);
      if (node === undefined) throw new Error(`no connection to the master ${key}`);
      const info = String(await node.cluster('INFO'));
      if (!info.includes('cluster_state:ok')) throw new Error(`${key}: cluster state not ok`);
    }),
  );
}

/** The event a script handed back as removed, or undefined when it is not an event we wrote (the slot held something else: nothing of it was related). */
function storedEventOf(held: Buffer | string): StoredEvent | undefined {
  const bytes = typeof held === 'string' ? Buffer.from(held) : held;
  if (bytes[0] !== 0x7b) return undefined;
  try {
    const stored = readStoredEvent(bytes, {});
    // Parsed here: a value that does not parse was never related.
    void stored.event;
    return stored;
  } catch {
    return undefined;
  }
}

/** An entry of an address's journal (lua-scripts.ts REPLACE): its batch token, time, version id, and for a removal the version's JSON. */
interface JournalEntry {
  sign: '+' | '-';
  token: string;
  time: number;
  id: string;
  json?: string;
}

/**
 * An address's journal, read: after the sign, the token's 16 characters, the time's 10, then the
 * id, or for a removal the JSON (in the key) or its id (in a script's reply: journal()).
 */
function journalEntries(journal: string): JournalEntry[] {
  const entries: JournalEntry[] = [];
  for (const line of journal.split('\n')) {
    const sign = line[0];
    if (sign !== '+' && sign !== '-') continue;
    const token = line.slice(1, 17);
    const time = Number(line.slice(17, 27));
    const payload = line.slice(27);
    if (sign === '-' && payload.startsWith('{')) entries.push({ sign, token, time, id: payload.slice(7, 71), json: payload });
    else entries.push({ sign, token, time, id: payload.slice(0, 64) });
  }
  return entries;
}

/** The author of an address (`<kind>:<pubkey>[:<d>]`). */
function addressAuthor(address: string): string {
  return address.split(':')[1] as string;
}
