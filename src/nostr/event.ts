/** A Nostr event with exactly the seven NIP-01 fields. */
export interface NostrEvent {
  id: string;
  pubkey: string;
  created_at: number;
  kind: number;
  tags: string[][];
  content: string;
  sig: string;
}

/**
 * Wire forms made elsewhere (rememberSerialized, eventOfWireForm), by event: as text, or as the
 * UTF-8 bytes an import read (a follow list's 70 KB then never becomes a string on the thread that
 * stores it: wireFormOf hands the store the bytes).
 */
const serialized = new WeakMap<NostrEvent, string | Uint8Array>();

/**
 * Records `event`'s wire form, made by serializeEvent on another thread (an import's verification
 * thread, beside its check): serializeEvent then reads it back, and the thread that stores the event
 * spends nothing on it (a follow list's serialisation was a twentieth of that thread's time).
 */
export function rememberSerialized(event: NostrEvent, json: string): void {
  serialized.set(event, json);
}

/**
 * The wire form of an event: the seven NIP-01 fields in NIP-01 order, values as signed.
 * The store keeps this exact text, so responses never re-encode an event.
 */
export function serializeEvent(event: NostrEvent): string {
  const known = serialized.get(event);
  if (typeof known === 'string') return known;
  if (known) return bufferOf(known).toString('utf8');
  return JSON.stringify({
    id: event.id,
    pubkey: event.pubkey,
    created_at: event.created_at,
    kind: event.kind,
    tags: event.tags,
    content: event.content,
    sig: event.sig,
  });
}

/**
 * The wire form as a store writes it: the UTF-8 bytes it was read from where an import kept them
 * (eventOfWireForm), else serializeEvent's text.
 */
export function wireFormOf(event: NostrEvent): string | Buffer {
  const known = serialized.get(event);
  return known === undefined || typeof known === 'string' ? serializeEvent(event) : bufferOf(known);
}

/** The bytes of a wire form, as wireFormOf gives it. */
export function wireByteLength(wire: string | Buffer): number {
  return typeof wire === 'string' ? Buffer.byteLength(wire) : wire.length;
}

/** Bytes as a Buffer, without a copy. */
function bufferOf(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * An event made on another thread from its wire form (an import's verification thread parsed and
 * checked it): its fields but the tags as sent, and its tags parsed from `wire` (serializeEvent's
 * text, or its UTF-8 bytes) when first read. A follow list's thousand tags are then parsed on the
 * thread that stores it only if a rule reads them (the parse, and keeping its arrays until the
 * batch was written, were a third of that thread's time). The tags are an own enumerable property,
 * as on any event: spread, JSON and structured copies read them.
 */
export function eventOfWireForm(head: Omit<NostrEvent, 'tags'>, wire: string | Uint8Array): NostrEvent {
  const event = { id: head.id, pubkey: head.pubkey, created_at: head.created_at, kind: head.kind } as NostrEvent;
  Object.defineProperty(event, 'tags', {
    enumerable: true,
    configurable: true,
    get(): string[][] {
      const { tags } = JSON.parse(typeof wire === 'string' ? wire : bufferOf(wire).toString('utf8')) as NostrEvent;
      Object.defineProperty(event, 'tags', { value: tags, enumerable: true, configurable: true, writable: true });
      return tags;
    },
  });
  event.content = head.content;
  event.sig = head.sig;
  serialized.set(event, wire);
  return event;
}

/**
 * False only when the event's wire form is known (made by serializeEvent, canonical JSON: a tag
 * starts `["name"`) and holds no tag named `name`: a rule that reads one tag name passes over a
 * follow list without parsing its tags (eventOfWireForm). True otherwise, and when in doubt (the
 * text may be inside a value). Read in the bytes where those are kept (UTF-8 keeps a text's
 * substrings as substrings of its bytes).
 */
export function mayHaveTag(event: NostrEvent, name: string): boolean {
  const wire = serialized.get(event);
  if (wire === undefined) return true;
  const needle = `[${JSON.stringify(name)}`;
  return typeof wire === 'string' ? wire.includes(needle) : bufferOf(wire).includes(needle);
}
