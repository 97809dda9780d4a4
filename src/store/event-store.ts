import type { AnswerCache } from './answer-cache.js';
import type { ReadReceipt } from './read-receipt.js';
import type { NostrEvent } from '../nostr/event.js';
import type { CursorStore } from './cursor-store.js';
import type { JsonText } from './json-text.js';
import type { MarkStore } from './mark-store.js';
import type { RelationIndex, RelationMaintenance } from './relation-index.js';
import type { Deleted } from './tombstones.js';

/**
 * An event as the index holds it: the exact wire text it was stored as (the seven NIP-01 fields in
 * order, as the UTF-8 bytes the store returned), and the parsed event, on demand. Responses embed
 * `json`'s bytes as they are, so an event is never re-encoded.
 */
export interface StoredEvent {
  readonly event: NostrEvent;
  readonly json: JsonText;
}

/**
 * What the index answers for one key: the event, DELETED (a deletion or a request to vanish
 * removed it: store/tombstones.ts), or null (not held).
 */
export type Held = StoredEvent | Deleted | null;

/** The latest event of a replaceable kind (or null, or DELETED) and its mark. */
export interface ReplaceableWithMark {
  readonly event: Held;
  readonly marked: boolean;
  /** The mark's note while it is in force (MarkStore.notes), else null. */
  readonly note: string | null;
}

/** A stored profile (or null) and whether the relays were asked about it within its TTL. */
export interface ProfileWithMark {
  readonly profile: Held;
  readonly marked: boolean;
  /** The mark's note while it is in force (MarkStore.notes), else null. */
  readonly note: string | null;
}

/**
 * What happened to one event written to the index:
 * - `stored`: new;
 * - `replaced`: a replaceable event that superseded an older version (NIP-01);
 * - `superseded`: a replaceable event older than the one held (or equal and with a higher id), not stored;
 * - `duplicate`: already held;
 * - `rejected`: the store refused this one event (it is skipped; the rest of the batch is written);
 * - `applied`: a new deletion request (NIP-09) or request to vanish (NIP-62), applied and stored;
 * - `deleted`: refused: a deletion request or request to vanish by its author covers it (NIP-09,
 *   NIP-62), whichever arrived first. Only a tombstone is kept (store/tombstones.ts).
 */
export type WriteOutcome = 'stored' | 'replaced' | 'superseded' | 'duplicate' | 'rejected' | 'applied' | 'deleted';

/**
 * The event index. Every event given to `putEvents` must already have been verified
 * (nostr/verify-event.ts): the store trusts its callers, never its clients.
 */
export interface EventIndex {
  /**
   * Events by id (lowercase hex), in the order asked; null where unknown, DELETED where deleted. One
   * round trip. `reads`, here and in the lookups below: the request's receipt (read-receipt.ts),
   * given what answered, or spoiled where that is not the hot cache.
   */
  getEvents(ids: readonly string[], reads?: ReadReceipt): Promise<Held[]>;
  /** The latest kind-0 event of each pubkey, in the order asked; null where none, DELETED where deleted. One store command. */
  getProfiles(pubkeys: readonly string[], reads?: ReadReceipt): Promise<Held[]>;
  /**
   * The latest event of a replaceable `kind` (NIP-01: 0, 3, 10000–19999) of each pubkey, in the
   * order asked; null where none. One store command. (Relay lists, kind 10002, for outbox discovery.)
   */
  getReplaceable(kind: number, pubkeys: readonly string[]): Promise<Held[]>;
  /**
   * The latest version at each NIP-01 coordinate (`<kind>:<pubkey>:<d>`, as an naddr names it: see
   * nostr/kinds.ts readCoordinate), in the order asked; null where none (or not a coordinate),
   * DELETED where deleted. One store command.
   */
  getByCoordinates(coordinates: readonly string[], reads?: ReadReceipt): Promise<Held[]>;
  /**
   * Writes verified events, applying the NIP-01 replaceable rule atomically, and deletions (NIP-09)
   * and requests to vanish (NIP-62) in any order of arrival: a batch applies its requests to vanish
   * first, then its deletion requests, then stores the rest.
   */
  putEvents(events: readonly NostrEvent[]): Promise<WriteOutcome[]>;
}

/**
 * A store as the service uses it: the event index with its relationships, its marks and its cursors, one concern each
 * (each with its own conformance suite), on one connection or directory.
 */
export interface EventStore extends EventIndex, RelationMaintenance {
  readonly marks: MarkStore;
  readonly cursors: CursorStore;
  /** What other events say about each event (replies, reactions…), maintained by putEvents. */
  readonly relations: RelationIndex;
  /**
   * Profiles as getProfiles, each with whether its `profile:<pubkey>` mark is in force: the one read
   * across two concerns, so that a cached profile with its freshness costs one store command.
   */
  getProfilesWithMarks(pubkeys: readonly string[], reads?: ReadReceipt): Promise<ProfileWithMark[]>;
  /**
   * The same for any replaceable kind and mark: the latest event of `kind` per pubkey, each with the
   * mark `markKeyOf(pubkey)` (relay lists with their freshness marks), in one store command.
   */
  getReplaceableWithMarks(kind: number, pubkeys: readonly string[], markKeyOf: (pubkey: string) => string): Promise<ReplaceableWithMark[]>;
  /**
   * Answers made of what the store's in-process cache holds, kept true with it (answer-cache.ts):
   * Redis with its hot cache only; undefined where reads are not tracked.
   */
  answerCache?<T>(): AnswerCache<T> | undefined;
  /**
   * Heals the transitions of replaceable events whose writers gave up or stopped (Redis: the
   * journals, redis-event-store.ts heal); how many journals it healed. `sync` calls it now and then,
   * so that a transition nothing writes again is not left for good. Absent where writes are atomic.
   */
  healJournals?(): Promise<number>;
  /** Resolves while the store answers; rejects otherwise. */
  ping(): Promise<void>;
  /**
   * Bytes the store takes: the embedded store's data file on disk (its blocks), Redis's used_memory
   * (summed over a cluster's masters; the whole server's, whatever else it holds).
   */
  storedBytes(): Promise<number>;
  /** True while writes fail and reads still answer (the embedded store on a full or read-only disk). */
  writesFailing(): boolean;
  close(): Promise<void>;
}

/** The store could not be reached or did not answer in time. */
export class StoreUnavailableError extends Error {
  constructor(options: { cause?: unknown } = {}) {
    super('event store unavailable', options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * The store refuses writes for a reason of its disk (read-only, full, not ours to write, a failed
 * commit), named by its errno code. The store says each such state in the log itself, once as it
 * begins and once as it ends (embedded/lmdb-disk-state.ts): whoever it refuses need not say it again.
 */
export class WritesRefusedError extends Error {
  constructor(
    message: string,
    /** The errno name (EROFS, ENOSPC, EACCES, EIO…), or undefined where the failure gave none. */
    readonly code: string | undefined,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
    this.name = 'WritesRefusedError';
  }
}

/** The store answered with data that is not an event we wrote. */
export class CorruptDataError extends Error {
  constructor(detail: string) {
    super(`corrupt data in event store: ${detail}`);
    this.name = 'CorruptDataError';
  }
}
