import type { ReadReceipt } from '../read-receipt.js';
import { mkdirSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type Database, type DatabaseOptions, open, type RootDatabase } from 'lmdb';
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
import { type NostrEvent, wireFormOf } from '../../nostr/event.js';
import { PROFILE_KIND, readCoordinate, replaceableAddress, replaceableKindAddress, supersedes } from '../../nostr/kinds.js';
import {
  CorruptDataError,
  type EventStore,
  type Held,
  type ProfileWithMark,
  type ReplaceableWithMark,
  type WriteOutcome,
  type WritesRefusedError,
} from '../event-store.js';
import { profileMarkKey } from '../mark-store.js';
import { MARKER_PREFIX, markerFor, readSlot, resolveEventValues } from '../replaceable-markers.js';
import { readStoredEvent } from '../stored-event.js';
import {
  addressOfMember,
  authorIndexMember,
  barVerdict,
  deletedEventValue,
  higherBar,
  isTombstone,
  PENDING_TTL_SECONDS,
  parseSlotBar,
  pendingDeleters,
  type SlotBar,
  slotBarValue,
  requestOutcome,
  tombstoneAuthor,
  withPendingDeleter,
} from '../tombstones.js';
import { LmdbCursorStore } from './lmdb-cursor-store.js';
import { LmdbMarkStore, type LmdbMarkStoreOptions, markValue, noteInForce } from './lmdb-mark-store.js';
import { LmdbFollowers } from './lmdb-followers.js';
import { LmdbRelationIndex } from './lmdb-relation-index.js';
import { type HeldNote, heldNoteOf, LmdbNoteSearch } from './lmdb-note-search.js';
import { inTransaction, LmdbTransactions } from './lmdb-transactions.js';
import { type DiskLog, errnoName, refusal } from './lmdb-disk-state.js';
import { readNow } from './lmdb-read-now.js';

/** The created_at of stored wire JSON (`{"id":"<64>","pubkey":"<64>","created_at":<digits>,…`, as serializeEvent writes it), or undefined in another shape. */
function wireCreatedAt(value: Buffer): number | undefined {
  const start = 162;
  if (value.toString('latin1', 147, start) !== '","created_at":') return undefined;
  let at = start;
  let createdAt = 0;
  for (; at < value.length && at < start + 16; at++) {
    const digit = (value[at] as number) - 0x30;
    if (digit < 0 || digit > 9) break;
    createdAt = createdAt * 10 + digit;
  }
  return at > start && value[at] === 0x2c ? createdAt : undefined;
}

/**
 * The LMDB environment of a directory. noSubdir: false whatever the name (lmdb-js takes a path with
 * an extension, `tmp.X1y2`, for a file). On a read-only disk (or one this user may not write) LMDB
 * cannot even set up its lock file: the directory is then opened read-only, so that what it holds
 * is still served, and `readOnly` says why.
 */
function openEnvironment(dataDir: string): { root: RootDatabase<string, string>; readOnly?: WritesRefusedError } {
  const options = { path: dataDir, noSubdir: false, encoding: 'string', compression: false } as const;
  try {
    return { root: open<string, string>(options) };
  } catch (error) {
    if (!['EROFS', 'EACCES', 'EPERM'].includes(errnoName(error) ?? '')) throw error;
    return { root: open<string, string>({ ...options, readOnly: true }), readOnly: refusal(error) };
  }
}

/** How long close() waits for lmdb-js, which never settles after a failed commit. */
const CLOSE_PATIENCE_MS = 2000;

export interface LmdbEventStoreOptions extends LmdbMarkStoreOptions {
  /** Where the disk's state is said, once per change (lmdb-disk-state.ts): the service's logger. */
  log?: DiskLog;
  /** PUBLIC_URL: a request to vanish naming it applies here (nostr/deletions.ts). */
  publicUrl?: string;
  /** How long a deletion whose event is not held is remembered (tests shorten it). */
  pendingTtlSeconds?: number;
  /** NOTE_SEARCH: the note search index is kept and read (store/note-search-index.ts); default false, as the service's. */
  noteSearch?: boolean;
}

/**
 * The embedded store: LMDB in a directory (DATA_DIR), for one box without Redis. The same layout as
 * Redis (replaceable-markers.ts): `events` maps an id to its wire JSON or to a marker, `replaceable`
 * maps an address to its latest version; `marks` (lmdb-mark-store.ts) and `cursors` are databases of
 * the same environment. Writes run in one LMDB write transaction per batch; LMDB has a single writer
 * across threads and processes, so the NIP-01 rule, deletions and requests to vanish are atomic even
 * with `serve` and `import` running side by side. Reads are memory-mapped, read at once (lmdb-read-now.ts).
 * Deletions keep tombstones where events were (store/tombstones.ts); `vanished` maps a pubkey to the
 * time of its latest request to vanish, and `authors` indexes each author's events
 * (`<pubkey>:<id or @address>` → created_at) so that a request to vanish finds them.
 */
export class LmdbEventStore implements EventStore {
  readonly marks: LmdbMarkStore;
  readonly cursors: LmdbCursorStore;
  /** What other events say about each event (store/relation-index.ts), kept in the events' transactions. */
  readonly relations: LmdbRelationIndex;
  /** Opened read-only: the directory is on a read-only disk (reads answer, every write fails). */
  readonly readOnly: boolean;
  private readonly root: RootDatabase<string, string>;
  private readonly events;
  private readonly replaceable;
  private readonly vanished;
  private readonly authors;
  /** Deletions whose event is not held: id → `<expiry ms> p<pubkeys>`, swept like marks. */
  private readonly pending;
  private readonly pendingSweeper: LmdbMarkStore;
  private readonly pendingTtlMs: number;
  private readonly transactions: LmdbTransactions;
  private readonly publicUrl: string | undefined;

  constructor(
    readonly dataDir: string,
    options: LmdbEventStoreOptions = {},
  ) {
    mkdirSync(dataDir, { recursive: true });
    const { root, readOnly } = openEnvironment(dataDir);
    this.root = root;
    this.readOnly = readOnly !== undefined;
    this.transactions = new LmdbTransactions(root, readOnly, dataDir, options.log);
    // Events as bytes (UTF-8, as the 'string' encoding of earlier versions wrote them): responses embed them as they are.
    this.events = this.root.openDB<Buffer, string>({ name: 'events', encoding: 'binary' });
    this.replaceable = this.root.openDB<Buffer, string>({ name: 'replaceable', encoding: 'binary' });
    this.vanished = this.root.openDB<string, string>({ name: 'vanished', encoding: 'string' });
    this.authors = this.root.openDB<string, string>({ name: 'authors', encoding: 'string' });
    this.pending = this.root.openDB<string, string>({ name: 'pending', encoding: 'string' });
    // Only for its sweeper: the values are marks' (expiry, then the pending tombstone as the note).
    this.pendingSweeper = new LmdbMarkStore(this.pending, this.transactions, options);
    this.pendingTtlMs = (options.pendingTtlSeconds ?? PENDING_TTL_SECONDS) * 1000;
    this.publicUrl = options.publicUrl;
    this.marks = new LmdbMarkStore(
      this.root.openDB<string, string>({ name: 'marks', encoding: 'string' }),
      this.transactions,
      options,
    );
    this.cursors = new LmdbCursorStore(this.root.openDB<string, string>({ name: 'cursors', encoding: 'string' }), this.transactions);
    // Undefined when read-only and written by a version before it: no followers to read.
    const followers = this.root.openDB<Buffer, Buffer>({ name: 'follower-logs', keyEncoding: 'binary', encoding: 'binary' }) as Database<Buffer, Buffer> | undefined;
    this.relations = new LmdbRelationIndex(
      this.root.openDB<string, string>({ name: 'relations', encoding: 'string' }),
      followers && new LmdbFollowers(followers),
      this.transactions,
      // The followers as the version before the logs kept them (a key per follow): emptied by
      // `relations rebuild`. Opened only where it exists (`create: false`: lmdb-js answers undefined),
      // so that new directories do not hold it (lmdb-js allows 12 databases by default).
      this.readOnly ? undefined : this.root.openDB<Buffer, Buffer>({ name: 'followers', keyEncoding: 'binary', encoding: 'binary', create: false } as DatabaseOptions & { name: string }) as Database<Buffer, Buffer> | undefined,
      { authorOf: (id) => this.servableAuthor(id), eventOf: (id) => this.servableEvent(id) },
      options.noteSearch ? this.openNoteSearch() : undefined,
      this.readOnly,
    );
  }

  /** The note search index (NOTE_SEARCH): its own database; where a read-only directory has none, nothing to search. */
  private openNoteSearch(): LmdbNoteSearch | undefined {
    const options = { name: 'note-search', keyEncoding: 'binary', encoding: 'binary', ...(this.readOnly ? { create: false } : {}) };
    const db = this.root.openDB<Buffer, Buffer>(options as DatabaseOptions & { name: string }) as Database<Buffer, Buffer> | undefined;
    return db && new LmdbNoteSearch(db, this.transactions, (prefix, createdAt) => this.servableWithPrefix(prefix, createdAt));
  }

  /**
   * The servable events whose id starts with `prefix` (a note search posting's hex digits) and
   * whose created_at is `createdAt`, read in the caller's transaction: the notes a note search
   * posting names (lmdb-note-search.ts). An event of another second is told by its bytes, unparsed
   * (anyone can grind ids to share a prefix).
   */
  private servableWithPrefix(prefix: string, createdAt: number): HeldNote[] {
    const held: HeldNote[] = [];
    const ofAnotherSecond = (value: Buffer) => {
      const at = wireCreatedAt(value);
      return at !== undefined && at !== createdAt;
    };
    for (const { key, value } of this.events.getRange({ start: prefix, end: `${prefix}g` })) {
      let event: NostrEvent | undefined;
      if (value.toString('latin1', 0, MARKER_PREFIX.length) === MARKER_PREFIX) {
        const address = value.toString('utf8', MARKER_PREFIX.length);
        const slot = this.replaceable.get(address);
        if (slot === undefined || ofAnotherSecond(slot)) continue;
        const version = this.heldVersion(address);
        if (version && 'id' in version && version.id === key) event = version.event;
      } else if (value[0] === 0x7b && !ofAnotherSecond(value)) {
        try {
          event = readStoredEvent(value, { id: key }).event;
        } catch (error) {
          if (!(error instanceof CorruptDataError)) throw error;
        }
      }
      if (event) held.push(heldNoteOf(event));
    }
    return held;
  }

  // Reads are not tracked here (`reads` spoiled): LMDB reads are in-process already (docs/stores.md, "The hot cache").
  async getEvents(ids: readonly string[], reads?: ReadReceipt): Promise<Held[]> {
    reads?.spoil();
    const values = await this.read(() => readNow(this.events, ids));
    return resolveEventValues(ids, values, (addresses) => this.read(() => readNow(this.replaceable, addresses)));
  }

  getProfiles(pubkeys: readonly string[], reads?: ReadReceipt): Promise<Held[]> {
    reads?.spoil();
    return this.getReplaceable(PROFILE_KIND, pubkeys);
  }

  async getReplaceable(kind: number, pubkeys: readonly string[]): Promise<Held[]> {
    const values = await this.read(() => readNow(this.replaceable, pubkeys.map((pubkey) => replaceableKindAddress(kind, pubkey))));
    return values.map((value, index) => readSlot(value, { pubkey: pubkeys[index], kind }));
  }

  async getByCoordinates(coordinates: readonly string[], reads?: ReadReceipt): Promise<Held[]> {
    reads?.spoil();
    const read = coordinates.map(readCoordinate);
    const wanted = read.filter((coordinate) => coordinate !== undefined);
    const values = await this.read(() => readNow(this.replaceable, wanted.map(({ address }) => address)));
    let next = 0;
    return read.map((coordinate) => (coordinate ? readSlot(values[next++], coordinate) : null));
  }

  async getProfilesWithMarks(pubkeys: readonly string[], reads?: ReadReceipt): Promise<ProfileWithMark[]> {
    reads?.spoil();
    const read = await this.getReplaceableWithMarks(PROFILE_KIND, pubkeys, profileMarkKey);
    return read.map(({ event, marked, note }) => ({ profile: event, marked, note }));
  }

  async getReplaceableWithMarks(kind: number, pubkeys: readonly string[], markKeyOf: (pubkey: string) => string): Promise<ReplaceableWithMark[]> {
    const [events, notes] = await Promise.all([this.getReplaceable(kind, pubkeys), this.marks.notes(pubkeys.map(markKeyOf))]);
    return events.map((event, index) => {
      const note = notes[index] ?? null;
      return { event, marked: note !== null, note };
    });
  }

  putEvents(events: readonly NostrEvent[]): Promise<WriteOutcome[]> {
    // The follows of the batch's lists are applied grouped at its end (LmdbRelationIndex.withFollowBatch).
    return this.write(() => this.relations.withFollowBatch(() => {
      // Requests to vanish first, then deletion requests, then the rest: within a batch, what
      // deletes is in force before what it deletes is written (any order across batches works too).
      const outcomes: WriteOutcome[] = new Array(events.length);
      // Each event's targets, read once (empty but for deletion requests).
      const targets = events.map(deletionTargets);
      const deleters = deletersById(events, targets);
      const phases = [
        (event: NostrEvent) => vanishApplies(event, this.publicUrl),
        (event: NostrEvent) => event.kind === DELETION_KIND,
        () => true,
      ];
      for (const inPhase of phases) {
        events.forEach((event, index) => {
          if (outcomes[index] !== undefined || !inPhase(event)) return;
          // One event the store refuses is skipped, never the whole batch.
          try {
            outcomes[index] = this.putEvent(event, targets[index] as DeletionTargets, deleters);
          } catch {
            outcomes[index] = 'rejected';
          }
        });
      }
      return outcomes;
    }));
  }

  /**
   * Runs inside the write transaction: what it reads is what the transaction will overwrite. Inside a
   * transaction, put/remove apply at once; the promises they return only signal the commit, which
   * `transaction()` already awaits, hence `void`.
   */
  private putEvent(event: NostrEvent, targets: DeletionTargets, deleters: ReadonlyMap<string, ReadonlySet<string>>): WriteOutcome {
    const vanishes = vanishApplies(event, this.publicUrl);
    if (vanishes) this.applyVanish(event);
    for (const id of targets.ids) this.deleteById(id, event.pubkey);
    for (const address of targets.addresses) this.raiseBar(address, { createdAt: event.created_at, id: '' }, event.pubkey);
    return requestOutcome(this.store(event, deletedBy(deleters, event)), vanishes || isDeletionRequest(targets));
  }

  /**
   * Stores one event under the NIP-01 rule and the tombstones (store/tombstones.ts), in the order
   * the Redis scripts take: the vanish time, then the address's slot, then what its id holds.
   */
  private store(event: NostrEvent, deletedInBatch: boolean): WriteOutcome {
    const vanishedAt = this.vanished.get(event.pubkey);
    if (event.kind !== VANISH_KIND && vanishedAt !== undefined && event.created_at <= Number(vanishedAt)) {
      return this.refuse(event);
    }
    // Bytes where an import kept the ones it read (a follow list's 70 KB never became a string).
    const wire = wireFormOf(event);
    const json = typeof wire === 'string' ? Buffer.from(wire) : wire;
    const atId = this.events.get(event.id)?.toString('latin1');
    const pendingValue = this.pending.get(event.id);
    const pending = noteInForce(pendingValue, Date.now());
    // The event is here: its author is known, the pending record has done its work.
    if (pendingValue !== undefined) inTransaction(this.pending.remove(event.id));
    const deletedByAuthor =
      deletedInBatch ||
      (atId !== undefined && isTombstone(atId) && tombstoneAuthor(atId) === event.pubkey) ||
      (pending !== null && !isUndeletableKind(event.kind) && pendingDeleters(pending).includes(event.pubkey));
    const address = replaceableAddress(event);
    if (address === undefined) {
      if (deletedByAuthor) return this.refuse(event);
      if (atId !== undefined && !isTombstone(atId)) return 'duplicate';
      inTransaction(this.events.put(event.id, json));
      inTransaction(this.authors.put(`${event.pubkey}:${event.id}`, String(event.created_at)));
      this.relations.apply(event, 1, json.length);
      return 'stored';
    }
    inTransaction(this.authors.put(`${event.pubkey}:${authorIndexMember(address, event.pubkey)}`, ''));
    const held = this.heldVersion(address);
    let outcome: WriteOutcome;
    if (held && 'bar' in held) {
      const verdict = barVerdict(event, held.bar);
      if (verdict !== 'accepted') return verdict === 'deleted' ? this.refuse(event) : verdict;
      outcome = 'stored';
    } else if (held?.id === event.id) {
      outcome = 'duplicate';
    } else if (held && !supersedes(event, held)) {
      return 'superseded';
    } else {
      outcome = held ? 'replaced' : 'stored';
    }
    // A version its author deleted by id takes the slot as the bar it leaves (older ones stay superseded).
    const previous = held && !('bar' in held) && held.id !== event.id ? held : undefined;
    if (previous) inTransaction(this.events.remove(previous.id));
    if (deletedByAuthor) {
      if (previous?.event) this.relations.apply(previous.event, -1);
      inTransaction(this.replaceable.put(address, Buffer.from(slotBarValue({ createdAt: event.created_at, id: event.id }))));
      return this.refuse(event);
    }
    if (outcome !== 'duplicate') {
      inTransaction(this.replaceable.put(address, json));
      // The relations of the version it replaces go, its own come (a follow list: by the difference).
      this.relations.replace(previous?.event, event, json.length);
    } else if (previous?.event) {
      this.relations.apply(previous.event, -1);
    }
    inTransaction(this.events.put(event.id, Buffer.from(markerFor(address)))); // on a duplicate: heal a missing marker
    return outcome;
  }

  /** An event a deletion covers is not stored; its id keeps a tombstone, so lookups say it was deleted. */
  private refuse(event: NostrEvent): 'deleted' {
    inTransaction(this.events.put(event.id, Buffer.from(deletedEventValue(event.pubkey))));
    return 'deleted';
  }

  /** An `e` tag of a deletion request by `deleter` (NIP-09): the event goes if it is the deleter's. */
  private deleteById(id: string, deleter: string): void {
    const value = this.events.get(id);
    const text = value?.toString('utf8');
    if (text === undefined) {
      const held = noteInForce(this.pending.get(id), Date.now()) ?? undefined;
      inTransaction(this.pending.put(id, markValue(Date.now() + this.pendingTtlMs, withPendingDeleter(held, deleter))));
      return;
    }
    if (isTombstone(text)) return;
    if (text.startsWith(MARKER_PREFIX)) {
      const address = text.slice(MARKER_PREFIX.length);
      if (address.split(/[:#]/)[1] !== deleter) return;
      const held = this.heldVersion(address);
      if (held && !('bar' in held) && held.id === id) {
        inTransaction(this.replaceable.put(address, Buffer.from(slotBarValue({ createdAt: held.created_at, id }))));
        if (held.event) this.relations.apply(held.event, -1);
      }
      inTransaction(this.events.put(id, Buffer.from(deletedEventValue(deleter))));
      return;
    }
    const stored = readStoredEvent(value as Buffer, { id }).event;
    if (stored.pubkey !== deleter || isUndeletableKind(stored.kind)) return;
    inTransaction(this.events.put(id, Buffer.from(deletedEventValue(deleter))));
    inTransaction(this.authors.remove(`${deleter}:${id}`));
    this.relations.apply(stored, -1);
  }

  /**
   * Every version of `address` the bar covers goes (an `a` tag, NIP-09; a request to vanish,
   * NIP-62); the bar stays, even where nothing is held yet, so that the versions it covers are
   * refused whenever they arrive.
   */
  private raiseBar(address: string, bar: SlotBar, author: string): void {
    const held = this.heldVersion(address);
    if (held && 'bar' in held) {
      inTransaction(this.replaceable.put(address, Buffer.from(slotBarValue(higherBar(held.bar, bar)))));
      return;
    }
    if (held && barVerdict(held, bar) === 'accepted') return; // a newer version stays
    inTransaction(this.replaceable.put(address, Buffer.from(slotBarValue(bar))));
    if (held?.id) inTransaction(this.events.put(held.id, Buffer.from(deletedEventValue(author))));
    if (held?.event) this.relations.apply(held.event, -1);
  }

  /**
   * A request to vanish that applies here (NIP-62): every event of its author up to its time is
   * removed, tombstones kept in their place, and the time remembered so that those events are
   * refused from now on. Requests to vanish themselves stay (isUndeletableKind).
   */
  private applyVanish(request: NostrEvent): void {
    const { pubkey, created_at: until } = request;
    const before = this.vanished.get(pubkey);
    if (before === undefined || Number(before) < until) inTransaction(this.vanished.put(pubkey, String(until)));
    const bar: SlotBar = { createdAt: until, id: '' };
    // Read in full before anything is removed from the range.
    const entries = [...this.authors.getRange({ start: `${pubkey}:`, end: `${pubkey};` })];
    for (const { key, value } of entries) {
      const member = key.slice(pubkey.length + 1);
      const address = addressOfMember(member, pubkey);
      if (address !== undefined) {
        this.raiseBar(address, bar, pubkey);
      } else if (Number(value) <= until) {
        const held = this.events.get(member);
        const heldEvent = held !== undefined && !isTombstone(held) ? readStoredEvent(held, { id: member }).event : undefined;
        if (heldEvent?.kind === VANISH_KIND) continue;
        inTransaction(this.events.put(member, Buffer.from(deletedEventValue(pubkey))));
        inTransaction(this.authors.remove(key));
        if (heldEvent) this.relations.apply(heldEvent, -1);
      }
    }
    // The profile reads as deleted even if none was held: the answer does not depend on the order.
    this.raiseBar(replaceableKindAddress(PROFILE_KIND, pubkey), bar, pubkey);
  }

  /** The author of the servable event `id`, inside the write transaction (notifications: whose a target is). */
  private servableAuthor(id: string): string | undefined {
    const value = this.events.get(id);
    if (value === undefined) return undefined;
    // Wire JSON: `{"id":"<64>","pubkey":"<64>"…`.
    if (value[0] === 0x7b) return value.toString('latin1', 74, 83) === 'pubkey":"' ? value.toString('latin1', 83, 147) : undefined;
    if (value.toString('latin1', 0, MARKER_PREFIX.length) !== MARKER_PREFIX) return undefined;
    const held = this.heldVersion(value.toString('utf8', MARKER_PREFIX.length));
    return held && 'id' in held && held.id === id ? held.event?.pubkey : undefined;
  }

  /** The servable event `id`, inside the write transaction (notifications: what relates to a target gone). */
  private servableEvent(id: string): NostrEvent | undefined {
    const value = this.events.get(id);
    if (value === undefined) return undefined;
    if (value[0] === 0x7b) {
      try {
        return readStoredEvent(value, { id }).event;
      } catch (error) {
        if (error instanceof CorruptDataError) return undefined;
        throw error;
      }
    }
    if (value.toString('latin1', 0, MARKER_PREFIX.length) !== MARKER_PREFIX) return undefined;
    const held = this.heldVersion(value.toString('utf8', MARKER_PREFIX.length));
    return held && 'id' in held && held.id === id ? held.event : undefined;
  }

  /** The version an address holds, or its bar; a value that is not an event we wrote counts as replaceable. */
  private heldVersion(address: string): { id: string; created_at: number; event?: NostrEvent } | { bar: SlotBar } | undefined {
    const value = this.replaceable.get(address);
    if (value === undefined) return undefined;
    if (isTombstone(value)) {
      const bar = parseSlotBar(value.toString('latin1'));
      if (bar) return { bar };
    }
    try {
      const { event } = readStoredEvent(value, {});
      return { id: event.id, created_at: event.created_at, event };
    } catch (error) {
      if (error instanceof CorruptDataError) return { id: '', created_at: Number.NEGATIVE_INFINITY };
      throw error;
    }
  }

  async *servableEvents(): AsyncIterable<NostrEvent[]> {
    for (const db of [this.events, this.replaceable]) {
      let batch: NostrEvent[] = [];
      for (const { key, value } of db.getRange()) {
        if (value[0] !== 0x7b) continue; // `{`: an event, not a marker, tombstone or bar
        batch.push(readStoredEvent(value, db === this.events ? { id: key } : {}).event);
        if (batch.length >= 500) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    }
  }

  relateStored(events: readonly NostrEvent[]): Promise<void> {
    return this.write(() =>
      this.relations.withFollowBatch(() => {
        for (const event of events) this.relations.apply(event, 1);
      }),
    );
  }

  /** The author index is not part of the relationship index here (a database of its own): nothing to do. */
  async finishRebuild(): Promise<void> {}

  async ping(): Promise<void> {
    await this.read(async () => this.root.get('ping'));
  }

  writesFailing(): boolean {
    return this.transactions.writesFailing();
  }

  async storedBytes(): Promise<number> {
    // Blocks, not the size: the file is sparse where LMDB has not written yet.
    const { blocks } = await stat(join(this.dataDir, 'data.mdb'));
    return blocks * 512;
  }

  async close(): Promise<void> {
    this.marks.stop();
    this.pendingSweeper.stop();
    this.transactions.close();
    // After a failed commit (a full disk) lmdb-js' close never settles: give it a moment, then go.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.root.close().catch(() => {}),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_PATIENCE_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  private write<T>(action: () => T): Promise<T> {
    return this.transactions.write(action);
  }

  private read<T>(run: () => Promise<T> | T): Promise<T> {
    return this.transactions.read(run);
  }
}
