import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { finalizeEvent as pureFinalizeEvent } from 'nostr-tools/pure';
import { finalizeEvent as wasmFinalizeEvent, getPublicKey } from 'nostr-tools/wasm';
import { type NostrEvent, serializeEvent } from '../../src/nostr/event.js';
// Loads the WASM secp256k1 that nostr-tools/wasm signs with: five times faster than the pure one
// (tests sign thousands of events), but its heap is small, so large events are signed by the pure one.
import '../../src/nostr/verify-event.js';

const WASM_SIGN_MAX_CHARS = 64 * 1024;
const finalizeEvent: typeof pureFinalizeEvent = (template, key) =>
  template.content.length + JSON.stringify(template.tags).length > WASM_SIGN_MAX_CHARS ? pureFinalizeEvent(template, key) : wasmFinalizeEvent(template, key);

/** A deterministic secret key per name, so tests can name their authors. */
export function secretKey(name: string): Uint8Array {
  return createHash('sha256').update(`nostr-lookup test key: ${name}`).digest();
}

export function pubkeyOf(name: string): string {
  return getPublicKey(secretKey(name));
}

export interface EventDraft {
  kind?: number;
  created_at?: number;
  tags?: string[][];
  content?: string;
}

/** A freshly signed event (valid id and Schnorr signature) by `author`. */
export function signed(author: string, draft: EventDraft = {}): NostrEvent {
  const event = finalizeEvent(
    {
      kind: draft.kind ?? 1,
      created_at: draft.created_at ?? 1_700_000_000,
      tags: draft.tags ?? [],
      content: draft.content ?? '',
    },
    secretKey(author),
  );
  return JSON.parse(serializeEvent(event)) as NostrEvent; // exactly the seven fields

}

/** A signed kind-0 profile with the given metadata. */
export function profile(
  author: string,
  metadata: Record<string, unknown>,
  created_at = 1_700_000_000,
): NostrEvent {
  return signed(author, { kind: 0, created_at, content: JSON.stringify(metadata) });
}

/** The project's own copies of real events (test/fixtures/real-events.jsonl), by role. */
export function realEvents(): NostrEvent[] {
  return readFileSync(new URL('../fixtures/real-events.jsonl', import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as NostrEvent);
}
