import { deflateRawSync, inflateRawSync } from 'node:zlib';

// How Redis holds a regular event (`e:<id>`): its wire JSON (serializeEvent), with everything after
// the kind compressed. Redis keeps every byte in memory, and a note's tags, content and signature
// are most of it: deflated, a note of the sample takes 405 bytes instead of 749 for that part
// (BENCHMARKS.md, "Packed events"), which brings Redis memory per event under 1.5× its JSON.
//
//   {"id":"<64 hex>","pubkey":"<64 hex>","created_at":<digits>,"kind":<digits>,  ← kept as written
//   0x01 <raw deflate of `"tags":…,"sig":"…"}` with PACK_DICTIONARY>            ← in place of the rest
//
// The head stays plain because the Lua scripts read the id, pubkey, created_at and kind at their
// fixed offsets (lua-scripts.ts), and so do wireIdOf and wireCreatedAtOf. JSON never holds a raw
// 0x01 byte (JSON.stringify escapes control characters), so a value is packed or plain at a glance,
// and plain values (written before, or that would not get smaller) are read as they are. Profiles
// and other replaceable events stay plain: they are read far more often than they are written, and
// a lookup must not pay to unpack them.

const PACKED = 0x01;
const TAGS = Buffer.from('"tags":');

/**
 * What deflate may refer back to before the first byte: the words a note's tail repeats most. Part
 * of the stored format: a value packed with it is unpacked only with it (never change it; a new one
 * would need a marker of its own).
 */
const PACK_DICTIONARY = Buffer.from(
  '","tags":[["e","["p","["t","["a","["q","wss://relay.damus.io","wss://nos.lol","wss://relay.nostr.band","reply","root","mention"]],' +
    '"content":"https://nostr:npub1nostr:note1nostr:nevent1 the and to of a in that is for it you with on this","sig":"',
);

/** Where `"tags":` begins in serializeEvent's output (after the kind's digits), or -1. */
function tailStart(json: Buffer): number {
  return json.indexOf(TAGS, 150);
}

/** The value to store for a regular event's JSON: packed if that saves bytes, else the JSON itself. */
export function packEvent(json: string | Buffer): Buffer | string {
  const bytes = typeof json === 'string' ? Buffer.from(json) : json;
  const at = tailStart(bytes);
  if (at < 0) return json;
  const tail = deflateRawSync(bytes.subarray(at), { level: 1, dictionary: PACK_DICTIONARY });
  if (tail.length + 1 >= bytes.length - at) return json;
  return Buffer.concat([bytes.subarray(0, at), Buffer.of(PACKED), tail]);
}

/**
 * The event's JSON from what a store held: a packed value unpacked, anything else as it is (the
 * checks of stored-event.ts then decide whether it is an event at all). A packed value whose tail
 * does not inflate is returned as held: not an event we wrote, which those checks refuse.
 */
export function unpackEvent(value: Buffer): Buffer {
  // The marker sits right after the kind's comma; the head before it is ASCII JSON without 0x01.
  const at = value.indexOf(PACKED, 150);
  if (at < 0 || value[at - 1] !== 0x2c) return value;
  try {
    return Buffer.concat([value.subarray(0, at), inflateRawSync(value.subarray(at + 1), { dictionary: PACK_DICTIONARY, maxOutputLength: MAX_UNPACKED_TAIL })]);
  } catch {
    return value;
  }
}

/** More than any event the store accepts (nostr/work-caps.ts), less than a decompression bomb. */
const MAX_UNPACKED_TAIL = 4 * 1024 * 1024;
