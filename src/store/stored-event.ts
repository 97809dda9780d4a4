import type { NostrEvent } from '../nostr/event.js';
import { CorruptDataError, type StoredEvent } from './event-store.js';

// serializeEvent writes the seven fields in NIP-01 order, so the id and pubkey sit at fixed offsets:
// {"id":"<64 hex>","pubkey":"<64 hex>","created_at":<digits>,"kind":<digits>,"tags":…,"sig":"<128 hex>"}
const ID_AT = '{"id":"'.length;
const PUBKEY_AT = ID_AT + 64 + '","pubkey":"'.length;
const CREATED_AT_AT = PUBKEY_AT + 64 + '","created_at":'.length;
const SIG_TAIL = ',"sig":"'.length + 128 + '"}'.length;

/** True if the text has the punctuation of serializeEvent's output at every fixed position. */
function hasWireShape(json: string): boolean {
  return (
    json.startsWith('{"id":"') &&
    json.startsWith('","pubkey":"', ID_AT + 64) &&
    json.startsWith('","created_at":', PUBKEY_AT + 64) &&
    json.startsWith(',"sig":"', json.length - SIG_TAIL) &&
    json.endsWith('"}')
  );
}

/** The kind, read after created_at's digits, or NaN. */
function wireKind(json: string): number {
  const kindAt = json.indexOf(',"kind":', CREATED_AT_AT);
  if (kindAt === -1) return Number.NaN;
  return Number.parseInt(json.slice(kindAt + ',"kind":'.length, json.indexOf(',', kindAt + 1)), 10);
}

/**
 * An event read back from the store. The text is checked at once for the shape we write (cheap:
 * literal comparisons at fixed positions), which catches foreign or truncated values; it is parsed only
 * when a resolver needs the fields, since REST responses embed the stored text as is. Damage inside
 * the text that keeps both ends intact is caught only when it is parsed. Stored data was verified
 * when written; signatures are not re-verified here.
 */
class StoredWireEvent implements StoredEvent {
  #event: NostrEvent | undefined;

  constructor(readonly json: string) {}

  get event(): NostrEvent {
    if (this.#event === undefined) {
      try {
        this.#event = JSON.parse(this.json) as NostrEvent;
      } catch {
        throw new CorruptDataError('unparseable event');
      }
    }
    return this.#event;
  }
}

export function readStoredEvent(json: string, expect: { id?: string; pubkey?: string; kind?: number }): StoredEvent {
  if (!hasWireShape(json)) throw new CorruptDataError('not an event we wrote');
  if (expect.id !== undefined && json.slice(ID_AT, ID_AT + 64) !== expect.id) throw new CorruptDataError('id mismatch');
  if (expect.pubkey !== undefined && json.slice(PUBKEY_AT, PUBKEY_AT + 64) !== expect.pubkey) {
    throw new CorruptDataError('pubkey mismatch');
  }
  if (expect.kind !== undefined && wireKind(json) !== expect.kind) throw new CorruptDataError('kind mismatch');
  return new StoredWireEvent(json);
}

/** The id of a stored event, read from its fixed offset without parsing. */
export function storedEventId(stored: StoredEvent): string {
  return stored.json.slice(ID_AT, ID_AT + 64);
}

/** The pubkey of a stored event, read from its fixed offset without parsing. */
export function storedEventPubkey(stored: StoredEvent): string {
  return stored.json.slice(PUBKEY_AT, PUBKEY_AT + 64);
}
