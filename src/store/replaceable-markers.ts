import type { Held, StoredEvent } from './event-store.js';
import { readStoredEvent, storedEventId } from './stored-event.js';
import { DELETED, isPending, isTombstone } from './tombstones.js';

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
