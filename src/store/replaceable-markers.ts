import type { Held, StoredEvent } from './event-store.js';
import { readStoredEvent, storedEventId } from './stored-event.js';
import { readCoordinate } from '../nostr/kinds.js';
import { DELETED, isPending, isTombstone, tombstoneAuthor } from './tombstones.js';

/**
 * Both stores keep a replaceable or addressable event once, under its address (`kind:pubkey[:d]`),
 * and put a marker under its id: `@<address>`. JSON never starts with `@`.
 */
export const MARKER_PREFIX = '@';

export function markerFor(address: string): string {
  return MARKER_PREFIX + address;
}

const MARKER_BYTE = MARKER_PREFIX.charCodeAt(0);

/**
 * The author that the value under an event id still names once its event is not servable: a
 * deleted or vanished event's tombstone keeps it (store/tombstones.ts), a replaceable version's
 * marker says it in its address. Undefined for anything else (notifications: a removal tells the
 * author of a target gone).
 */
export function authorUnderId(value: Buffer): string | undefined {
  if (isTombstone(value) && value.length >= 65) return tombstoneAuthor(value.toString('latin1', 0, 65));
  if (value[0] === MARKER_BYTE) return readCoordinate(value.toString('utf8', MARKER_PREFIX.length))?.pubkey;
  return undefined;
}

/**
 * What a store holds under a replaceable address: its latest version, DELETED for a bar
 * (store/tombstones.ts), or null.
 */
export function readSlot(value: Buffer | null | undefined, expect: { pubkey?: string; kind?: number }): Held {
  if (value == null) return null;
  return isTombstone(value) ? DELETED : readStoredEvent(value, expect);
}

/**
 * Turns what a store holds under some ids (bytes) into events: plain values are events, tombstones
 * are DELETED, pending deletions (whose event is not held) null, and markers are followed to their
 * address with one batch read (`readAddresses`). A marker whose address now holds another version
 * (replaced since, or deleted while this marker was written) reads as not found, as NIP-01 lets
 * replaced versions go.
 */
export async function resolveEventValues(
  ids: readonly string[],
  values: readonly (Buffer | null | undefined)[],
  readAddresses: (addresses: string[]) => Promise<readonly (Buffer | null | undefined)[]>,
  /** Told of markers whose address holds another version (a store may remove them). */
  onStaleMarker?: (id: string, marker: string) => void,
): Promise<Held[]> {
  const results: Held[] = [];
  const markers: { index: number; address: string }[] = [];
  values.forEach((value, index) => {
    if (value == null || isPending(value)) {
      results.push(null);
    } else if (isTombstone(value)) {
      results.push(DELETED);
    } else if (value[0] === MARKER_BYTE) {
      results.push(null);
      markers.push({ index, address: value.toString('utf8', MARKER_PREFIX.length) });
    } else {
      results.push(readStoredEvent(value, { id: ids[index] }));
    }
  });
  if (markers.length === 0) return results;
  const held = await readAddresses(markers.map(({ address }) => address));
  markers.forEach(({ index, address }, position) => {
    const bytes = held[position];
    const stored: StoredEvent | undefined = bytes == null || isTombstone(bytes) ? undefined : readStoredEvent(bytes, {});
    if (stored && storedEventId(stored) === ids[index]) results[index] = stored;
    else onStaleMarker?.(ids[index] as string, markerFor(address));
  });
  return results;
}
