import type { NostrEvent } from '../nostr/event.js';
import type { JsonText } from './json-text.js';

/**
 * An event as the index holds it: the exact wire text it was stored as (the seven NIP-01 fields in
 * order, as the UTF-8 bytes the store returned), and the parsed event, on demand. Responses embed
 * `json`'s bytes as they are, so an event is never re-encoded.
 */
export interface StoredEvent {
  readonly event: NostrEvent;
  readonly json: JsonText;
}

/** A stored profile (or null) and whether the relays were asked about it within its TTL. */
export interface ProfileWithMark {
  readonly profile: StoredEvent | null;
  readonly marked: boolean;
}

/**
 * What happened to one event written to the index:
 * - `stored`: new;
 * - `replaced`: a replaceable event that superseded an older version (NIP-01);
 * - `superseded`: a replaceable event older than the one held (or equal and with a higher id), not stored;
 * - `duplicate`: already held;
 * - `rejected`: the store refused this one event (it is skipped; the rest of the batch is written).
 */
export type WriteOutcome = 'stored' | 'replaced' | 'superseded' | 'duplicate' | 'rejected';

/**
 * The event index. Every event given to `putEvents` must already have been verified
 * (nostr/verify-event.ts): the store trusts its callers, never its clients.
 */
export interface EventStore {
  /** Events by id (lowercase hex), in the order asked; null where unknown. One round trip. */
  getEvents(ids: readonly string[]): Promise<(StoredEvent | null)[]>;
  /** The latest kind-0 event of each pubkey, in the order asked; null where none. One store command. */
  getProfiles(pubkeys: readonly string[]): Promise<(StoredEvent | null)[]>;
  /** Writes verified events, applying the NIP-01 replaceable rule atomically. */
  putEvents(events: readonly NostrEvent[]): Promise<WriteOutcome[]>;
  /**
   * Marks say "the relays were asked about <key> recently" (`event:<id>`, `profile:<pubkey>`) and expire
   * after their TTL. They keep the negative cache (a marked key that the index lacks is a known miss)
   * and profile freshness (a stored profile whose mark expired is stale). See fill/README in the README.
   */
  setMarks(keys: readonly string[], ttlSeconds: number): Promise<void>;
  /** For each key, whether its mark is in force. One store call. */
  hasMarks(keys: readonly string[]): Promise<boolean[]>;
  /**
   * Sets each mark that is not in force, atomically per key; true where this call set it. Lets one
   * caller (in any process sharing the store) win the right to refresh a key once per TTL.
   */
  claimMarks(keys: readonly string[], ttlSeconds: number): Promise<boolean[]>;
  clearMarks(keys: readonly string[]): Promise<void>;
  /** Profiles as getProfiles, each with whether its `profile:<pubkey>` mark is in force. One store command. */
  getProfilesWithMarks(pubkeys: readonly string[]): Promise<ProfileWithMark[]>;
  /** A named cursor (e.g. a relay sync position), or undefined if never set. */
  getCursor(name: string): Promise<string | undefined>;
  setCursor(name: string, value: string): Promise<void>;
  /** Resolves while the store answers; rejects otherwise. */
  ping(): Promise<void>;
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

/** The store answered with data that is not an event we wrote. */
export class CorruptDataError extends Error {
  constructor(detail: string) {
    super(`corrupt data in event store: ${detail}`);
    this.name = 'CorruptDataError';
  }
}

/** The mark of a pubkey's profile lookup (see EventStore.setMarks). */
export function profileMarkKey(pubkey: string): string {
  return `profile:${pubkey}`;
}

/** The mark of an event lookup by id. */
export function eventMarkKey(id: string): string {
  return `event:${id}`;
}
