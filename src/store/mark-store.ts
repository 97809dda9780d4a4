/**
 * Marks say "the relays were asked about <key> recently" (`event:<id>`, `profile:<pubkey>`, and
 * claims `fetching:<key>`) and expire after their TTL. They keep the negative cache (a marked key
 * that the index lacks is a known miss) and profile freshness (a stored profile whose mark expired
 * is stale). The mark store owns their expiry: Redis by TTL, the embedded store by a sweeper.
 */
export interface MarkStore {
  /**
   * Sets (or renews) each mark for `ttlSeconds`, with an optional note per key (in order; short
   * text, no newline): the negative cache notes which learned relays were asked (fill/asked-relays.ts).
   */
  set(keys: readonly string[], ttlSeconds: number, notes?: readonly string[]): Promise<void>;
  /** For each key, whether its mark is in force. One store call. */
  has(keys: readonly string[]): Promise<boolean[]>;
  /** For each key, its mark's note (`''` when it has none) while the mark is in force, else null. One store call. */
  notes(keys: readonly string[]): Promise<(string | null)[]>;
  /** Replaces the notes of marks in force, keeping their expiry; a key without a mark in force stays without. */
  renote(keys: readonly string[], notes: readonly string[]): Promise<void>;
  /**
   * Sets each mark that is not in force, atomically per key; true where this call set it. Lets one
   * caller (in any process sharing the store) win the right to refresh a key once per TTL.
   */
  claim(keys: readonly string[], ttlSeconds: number): Promise<boolean[]>;
  clear(keys: readonly string[]): Promise<void>;
}

/** The mark of a pubkey's profile lookup. */
export function profileMarkKey(pubkey: string): string {
  return `profile:${pubkey}`;
}

/** The freshness mark of a pubkey's relay list (NIP-65): while it holds, the stored list is not looked for again. */
export function relayListMarkKey(pubkey: string): string {
  return `relays:${pubkey}`;
}

/** The mark of a lookup by coordinate (naddr), keyed by the store address (a long `d` hashed). */
export function addressMarkKey(address: string): string {
  return `address:${address}`;
}

/** The mark of an event lookup by id. */
export function eventMarkKey(id: string): string {
  return `event:${id}`;
}

/** The cached resolution of a NIP-05 identifier (`name@domain`, canonical): found, not found or unresolvable. */
export function nip05NameMarkKey(identifier: string): string {
  return `nip05:${identifier}`;
}

/** The last NIP-05 verification of a pubkey's profile (its identifier, status and time). */
export function nip05VerificationMarkKey(pubkey: string): string {
  return `nip05-verified:${pubkey}`;
}

/** The claim to verify a pubkey's NIP-05 identifier: once per NIP05_TTL across instances. */
export function nip05CheckMarkKey(pubkey: string, identifier: string): string {
  return `nip05-check:${pubkey}:${identifier}`;
}
