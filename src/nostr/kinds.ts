import { createHash } from 'node:crypto';
import type { NostrEvent } from './event.js';

// Kind ranges from NIP-01 ("Kinds").
export const PROFILE_KIND = 0;

/** Replaceable: only the latest event per (kind, pubkey) is kept. */
export function isReplaceableKind(kind: number): boolean {
  return kind === 0 || kind === 3 || (kind >= 10000 && kind < 20000);
}

/** Ephemeral: not expected to be stored. */
export function isEphemeralKind(kind: number): boolean {
  return kind >= 20000 && kind < 30000;
}

/** Addressable: only the latest event per (kind, pubkey, d tag) is kept. */
export function isAddressableKind(kind: number): boolean {
  return kind >= 30000 && kind < 40000;
}

/**
 * The address under which a replaceable or addressable event replaces its older versions
 * (`kind:pubkey` or `kind:pubkey:d`), or undefined for a regular event.
 */
export function replaceableAddress(event: NostrEvent): string | undefined {
  if (isReplaceableKind(event.kind)) return replaceableKindAddress(event.kind, event.pubkey);
  if (isAddressableKind(event.kind)) return addressableAddress(event.kind, event.pubkey, dTagOf(event));
  return undefined;
}

/** NIP-01: an addressable event's `d` is its first `d` tag's value; a missing d tag counts as "". */
function dTagOf(event: NostrEvent): string {
  return event.tags.find((tag) => tag[0] === 'd')?.[1] ?? '';
}

/** An event's NIP-01 coordinate (`<kind>:<pubkey>:<d>`; d '' for replaceable kinds), or '' for a regular kind. */
export function coordinateOf(event: NostrEvent): string {
  if (isReplaceableKind(event.kind)) return `${event.kind}:${event.pubkey}:`;
  return isAddressableKind(event.kind) ? `${event.kind}:${event.pubkey}:${dTagOf(event)}` : '';
}

/** Longest `d` value kept as it is in an address; longer ones are hashed. */
const MAX_PLAIN_D_BYTES = 256;

/**
 * `kind:pubkey:d`. A `d` tag may be as long as an event (relays accept ~MiB): a store key must not
 * be, LMDB refuses keys over ~1.9 KB. A longer `d` is named by its SHA-256 instead, after `#` where
 * a plain address has `:`, so the two forms can never name the same address.
 */
export function addressableAddress(kind: number, pubkey: string, d: string): string {
  if (Buffer.byteLength(d, 'utf8') <= MAX_PLAIN_D_BYTES) return `${kind}:${pubkey}:${d}`;
  return `${kind}:${pubkey}#${createHash('sha256').update(d, 'utf8').digest('hex')}`;
}

/** `kind:pubkey`: the address of a replaceable kind's latest event (NIP-01). */
export function replaceableKindAddress(kind: number, pubkey: string): string {
  return `${kind}:${pubkey}`;
}

/**
 * NIP-01: of two versions of a replaceable or addressable event, the one with the newest
 * `created_at` is kept; on a tie, the one with the lowest id (lexical order). True if `candidate`
 * replaces `held`. The Redis store applies the same rule inside Redis (store/redis/lua-scripts.ts).
 */
export function supersedes(
  candidate: { created_at: number; id: string },
  held: { created_at: number; id: string },
): boolean {
  if (candidate.created_at !== held.created_at) return candidate.created_at > held.created_at;
  return candidate.id < held.id;
}

/** A NIP-01 coordinate (`<kind>:<pubkey>:<d>`, as `a` tags and naddr name events), read. */
export interface Coordinate {
  kind: number;
  pubkey: string;
  d: string;
  /** Where the stores keep its latest version (replaceableAddress's form). */
  address: string;
}

/**
 * The one reader of coordinates: `<kind>:<pubkey>:<d>` with a replaceable or addressable kind and a
 * pubkey of 64 lowercase hex characters (a replaceable kind's `d` is ignored: it has none), or
 * undefined.
 */
export function readCoordinate(coordinate: string): Coordinate | undefined {
  const first = coordinate.indexOf(':');
  const second = coordinate.indexOf(':', first + 1);
  if (first < 1 || second !== first + 65) return undefined;
  const kindText = coordinate.slice(0, first);
  const pubkey = coordinate.slice(first + 1, second);
  if (!/^\d{1,5}$/.test(kindText) || !/^[0-9a-f]{64}$/.test(pubkey)) return undefined;
  const kind = Number(kindText);
  if (isReplaceableKind(kind)) return { kind, pubkey, d: '', address: replaceableKindAddress(kind, pubkey) };
  const d = coordinate.slice(second + 1);
  if (isAddressableKind(kind)) return { kind, pubkey, d, address: addressableAddress(kind, pubkey, d) };
  return undefined;
}
