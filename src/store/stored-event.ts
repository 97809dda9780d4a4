import type { NostrEvent } from '../nostr/event.js';
import { CorruptDataError, type StoredEvent } from './event-store.js';

/**
 * Reads an event back from the store's text and checks it is the one asked for. Stored data was
 * verified when written, so this only guards against corruption; it does not re-verify signatures.
 */
export function readStoredEvent(
  json: string,
  expect: { id?: string; pubkey?: string; kind?: number },
): StoredEvent {
  let event: NostrEvent;
  try {
    event = JSON.parse(json) as NostrEvent;
  } catch {
    throw new CorruptDataError('unparseable event');
  }
  if (
    typeof event !== 'object' ||
    event === null ||
    typeof event.id !== 'string' ||
    typeof event.pubkey !== 'string' ||
    !Array.isArray(event.tags) ||
    typeof event.content !== 'string'
  ) {
    throw new CorruptDataError('not an event');
  }
  if (expect.pubkey !== undefined && event.pubkey !== expect.pubkey)
    throw new CorruptDataError('pubkey mismatch');
  if (expect.kind !== undefined && event.kind !== expect.kind) throw new CorruptDataError('kind mismatch');
  if (expect.id !== undefined && event.id !== expect.id) throw new CorruptDataError('id mismatch');
  return { event, json };
}
