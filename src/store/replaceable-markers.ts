import type { StoredEvent } from './event-store.js';
import { readStoredEvent, storedEventId } from './stored-event.js';

/**
 * Both stores keep a replaceable or addressable event once, under its address (`kind:pubkey[:d]`),
 * and put a marker under its id: `@<address>`. JSON never starts with `@`.
 */
export const MARKER_PREFIX = '@';

export function markerFor(address: string): string {
  return MARKER_PREFIX + address;
}

/**
 * Turns what a store holds under some ids into events: plain values are events, markers are
 * followed to their address with one batch read (`readAddresses`). A marker whose address now holds
 * another version (it was replaced since) reads as not found, as NIP-01 lets replaced versions go.
 */
export async function resolveEventValues(
  ids: readonly string[],
  values: readonly (string | null | undefined)[],
  readAddresses: (addresses: string[]) => Promise<readonly (string | null | undefined)[]>,
): Promise<(StoredEvent | null)[]> {
  const results: (StoredEvent | null)[] = values.map((value, index) =>
    value == null || value.startsWith(MARKER_PREFIX) ? null : readStoredEvent(value, { id: ids[index] }),
  );
  const markers = values.flatMap((value, index) =>
    value?.startsWith(MARKER_PREFIX) ? [{ index, address: value.slice(MARKER_PREFIX.length) }] : [],
  );
  if (markers.length === 0) return results;
  const held = await readAddresses(markers.map(({ address }) => address));
  markers.forEach(({ index }, position) => {
    const json = held[position];
    if (json == null) return;
    const stored = readStoredEvent(json, {});
    if (storedEventId(stored) === ids[index]) results[index] = stored;
  });
  return results;
}
