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
 * The wire form of an event: the seven NIP-01 fields in NIP-01 order, values as signed.
 * The store keeps this exact text, so responses never re-encode an event.
 */
export function serializeEvent(event: NostrEvent): string {
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
