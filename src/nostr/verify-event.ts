import { getEventHash } from 'nostr-tools/pure';
import { setNostrWasm, verifyEvent as wasmVerifyEvent } from 'nostr-tools/wasm';
import { initNostrWasm } from 'nostr-wasm';
import { type NostrEvent, rememberSerialized, serializeEvent } from './event.js';
import { PROFILE_KIND } from './kinds.js';
import { RELAY_LIST_KIND } from './relay-list.js';
import { MAX_EVENT_BYTES, MAX_PROFILE_BYTES, MAX_TAGS } from './work-caps.js';

// libsecp256k1 compiled to wasm verifies about 5× faster than the pure-JS verifier on this machine.
setNostrWasm(await initNostrWasm());

export type InvalidReason = 'not_an_object' | 'bad_field' | 'too_large' | 'too_many_tags' | 'bad_id' | 'bad_signature';

export type Verdict = { ok: true; event: NostrEvent } | { ok: false; reason: InvalidReason; field?: string };

const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isTagList(value: unknown): value is string[][] {
  return (
    Array.isArray(value) &&
    value.every((tag) => Array.isArray(tag) && tag.every((item) => typeof item === 'string'))
  );
}

/** The first NIP-01 field that does not have the shape NIP-01 gives it, if any. */
export function badField(input: Record<string, unknown>): string | undefined {
  if (typeof input.id !== 'string' || !HEX64.test(input.id)) return 'id';
  if (typeof input.pubkey !== 'string' || !HEX64.test(input.pubkey)) return 'pubkey';
  // Any non-negative integer JavaScript holds exactly (2^53): beyond 2^31 is fine, beyond 2^53 the
  // id could not be recomputed from the parsed value.
  if (!Number.isSafeInteger(input.created_at) || (input.created_at as number) < 0) return 'created_at';
  if (!Number.isInteger(input.kind) || (input.kind as number) < 0 || (input.kind as number) > 65535) {
    return 'kind';
  }
  if (!isTagList(input.tags)) return 'tags';
  if (typeof input.content !== 'string') return 'content';
  if (typeof input.sig !== 'string' || !HEX128.test(input.sig)) return 'sig';
  return undefined;
}

/**
 * The bytes of the id's preimage (NIP-01: `[0,pubkey,created_at,kind,tags,content]` as JSON, UTF-8)
 * if it may be over `limit`, else a lower figure: six bytes per UTF-16 unit bound any character's
 * JSON form (`\u0001`), so the common event is measured from its lengths without serialising it.
 * A larger one is measured from its wire form (serializeEvent's, kept for whoever stores it: a
 * follow list was serialised three times on a verification thread), which holds the preimage's
 * values and WIRE_OVER_PREIMAGE bytes more.
 */
function preimageBytes(event: NostrEvent, limit: number): number {
  let units = event.content.length;
  for (const tag of event.tags) for (const item of tag) units += item.length + 3;
  if (6 * units + 4 * event.tags.length + 200 <= limit) return 0;
  const wire = serializeEvent(event);
  rememberSerialized(event, wire);
  return Buffer.byteLength(wire) - WIRE_OVER_PREIMAGE;
}

/**
 * What the wire form writes beyond the preimage, for an id and a pubkey of 64 characters and a
 * signature of 128 (badField's shapes): `{"id":"…","pubkey":"…","created_at":…,"kind":…,"tags":…,
 * "content":…,"sig":"…"}` against `[0,"…",…,…,…,…]`.
 */
const WIRE_OVER_PREIMAGE =
  '{"id":"","pubkey":"","created_at":,"kind":,"tags":,"content":,"sig":""}'.length + 64 + 128 - '[0,"",,,,]'.length;

/** The most bytes an event's id preimage may have: MAX_EVENT_BYTES, and MAX_PROFILE_BYTES for a profile or a relay list. */
export function maxEventBytes(kind: number): number {
  return kind === PROFILE_KIND || kind === RELAY_LIST_KIND ? MAX_PROFILE_BYTES : MAX_EVENT_BYTES;
}

/** The seven NIP-01 fields of an input that has their shape (badField found none); extra fields dropped. */
export function nostrEventOf(input: Record<string, unknown>): NostrEvent {
  return {
    id: input.id as string,
    pubkey: input.pubkey as string,
    created_at: input.created_at as number,
    kind: input.kind as number,
    tags: input.tags as string[][],
    content: input.content as string,
    sig: input.sig as string,
  };
}

/**
 * NIP-01 validation of untrusted input: shape, then the id (sha256 of the canonical serialisation),
 * then its size (too_many_tags: over MAX_TAGS; too_large: over MAX_EVENT_BYTES, or MAX_PROFILE_BYTES
 * for a kind 0 or 10002), then the
 * Schnorr signature. Only a `{ok: true}` event may ever be stored or used.
 * Extra fields are dropped; the result has exactly the seven NIP-01 fields.
 */
export function verifyNostrEvent(input: unknown): Verdict {
  if (!isRecord(input)) return { ok: false, reason: 'not_an_object' };
  const field = badField(input);
  if (field) return { ok: false, reason: 'bad_field', field };
  const event = nostrEventOf(input);
  if (event.tags.length > MAX_TAGS) return { ok: false, reason: 'too_many_tags' };
  // Before the hash: the wasm verifier cannot hash more than ~945 KB (it answered bad_signature),
  // and what we store must stay cheap to read (nostr/work-caps.ts).
  if (preimageBytes(event, maxEventBytes(event.kind)) > maxEventBytes(event.kind)) return { ok: false, reason: 'too_large' };
  // The wasm verifier checks id and signature together; it marks the object, so hand it a copy.
  if (wasmVerifyEvent({ ...event })) return { ok: true, event };
  return { ok: false, reason: getEventHash(event) === event.id ? 'bad_signature' : 'bad_id' };
}
