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

/** Wire forms made elsewhere (rememberSerialized), by event. */
const serialized = new WeakMap<NostrEvent, string>();

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
  return serialized.get(event) ?? JSON.stringify({
    id: event.id,
    pubkey: event.pubkey,
    created_at: event.created_at,
    kind: event.kind,
    tags: event.tags,
    content: event.content,
    sig: event.sig,
  });
}
