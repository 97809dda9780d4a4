import { LRUCache } from 'lru-cache';
import { type ProfileMetadata, parseProfileMetadata } from '../nostr/profile-metadata.js';
import { writeRelaysOf } from '../nostr/relay-list.js';
import { relevantPubkeys } from '../nostr/relevant-pubkeys.js';
import { MAX_PROFILE_BYTES, STORED_FORM_OVERHEAD } from '../nostr/work-caps.js';
import type { StoredEvent } from './event-store.js';
import { storedEventId } from './stored-event.js';

/**
 * Values derived from a stored event (profile metadata, relevant pubkeys, write relays), computed
 * once per event and kept by its id, for every request and alias of this process (a
 * profile of 900 KB was parsed again for each `author` of a hundred notes, and each alias did it
 * again). An id names its content (NIP-01: the hash of the serialised event), and stored events were
 * verified when written, so what is derived from one never goes stale. Reading the id at its fixed
 * offset means a cached value costs no parse of the event at all.
 *
 * Bounded by the size of what is kept (lru-cache's maxSize), not by entry count: metadata strings
 * can be long.
 */
interface Derived {
  metadata?: ProfileMetadata;
  relevant?: { max: number; pubkeys: readonly string[] };
  writeRelays?: readonly string[];
  /** Approximate bytes held, for the cache's bound. */
  size: number;
}

/** The most this process keeps of derived values (UTF-16 strings: two bytes a character). */
export const DERIVED_VALUES_MAX_BYTES = 32 * 1024 * 1024;

/** What one entry costs besides its strings (the entry, its object, the id key). */
const ENTRY_OVERHEAD = 300;

const cache = new LRUCache<string, Derived>({
  maxSize: DERIVED_VALUES_MAX_BYTES,
  sizeCalculation: (derived) => derived.size,
});

/** The entry of `stored`'s id, or a new one (put in the cache by `grew`, once it holds a value). */
function derivedOf(stored: StoredEvent): [string, Derived] {
  const id = storedEventId(stored);
  return [id, cache.get(id) ?? { size: ENTRY_OVERHEAD }];
}

/** A profile or relay list over MAX_PROFILE_BYTES, stored by an earlier version: not parsed at all. */
export function isOversized(stored: StoredEvent): boolean {
  return stored.json.bytes.length > MAX_PROFILE_BYTES + STORED_FORM_OVERHEAD;
}

/** Stores `derived` again after it grew, so that the cache's size bound sees the new size. */
function grew(id: string, derived: Derived, bytes: number): void {
  derived.size += bytes;
  // lru-cache measures an entry when it is set with a new value, not again for the same object:
  // taken out and set again, it is measured anew (found by review: every entry counted 300 bytes).
  // An entry larger than the whole bound is not kept: it is still returned.
  cache.delete(id);
  cache.set(id, derived);
}

/** The bytes the cache holds by its own measure (for tests). */
export function derivedValuesBytes(): number {
  return cache.calculatedSize;
}

const stringsBytes = (values: Iterable<string | boolean | null>) => {
  let bytes = 0;
  for (const value of values) bytes += typeof value === 'string' ? 2 * value.length + 16 : 8;
  return bytes;
};

/** The metadata of a kind-0 event (nostr/profile-metadata.ts), parsed once per event. */
export function profileMetadataOf(stored: StoredEvent): ProfileMetadata {
  const [id, derived] = derivedOf(stored);
  if (!derived.metadata) {
    derived.metadata = parseProfileMetadata(isOversized(stored) ? '' : stored.event.content);
    grew(id, derived, stringsBytes(Object.values(derived.metadata)));
  }
  return derived.metadata;
}

/** The relevant pubkeys of an event (nostr/relevant-pubkeys.ts), at most `max`, found once per event. */
export function relevantPubkeysOf(stored: StoredEvent, max: number): readonly string[] {
  const [id, derived] = derivedOf(stored);
  if (derived.relevant?.max !== max) {
    // (MAX_PROFILES is one value per process; only tests ask with several.)
    const before = derived.relevant ? stringsBytes(derived.relevant.pubkeys) : 0;
    derived.relevant = { max, pubkeys: relevantPubkeys(stored.event, max) };
    grew(id, derived, stringsBytes(derived.relevant.pubkeys) - before);
  }
  return derived.relevant.pubkeys;
}

/** The write relays of a stored relay list (nostr/relay-list.ts), read once per event. */
export function writeRelaysOfStored(stored: StoredEvent): readonly string[] {
  const [id, derived] = derivedOf(stored);
  if (!derived.writeRelays) {
    derived.writeRelays = isOversized(stored) ? [] : writeRelaysOf(stored.event);
    grew(id, derived, stringsBytes(derived.writeRelays));
  }
  return derived.writeRelays;
}
