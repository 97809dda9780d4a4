import { SEARCHABLE_KINDS } from './note-search-index.js';

/**
 * Packed postings of the note search index (store/note-search-index.ts): a word's notes as blocks
 * of a few bytes each, where a posting spelled out (its place and the note's whole id, 39 to 45
 * bytes, then a store's own cost per entry) made the index 20 to 30 times the text it indexes.
 *
 * A posting names a note by its created_at, the first 3 bytes of its id and its kind, in page order
 * (newest first, then by id): what a query compares, intersects and pages by. The note's whole id
 * is read where the note is (the store's events by those 3 bytes) only for the notes a page shows.
 * Two servable notes may share all three (by chance, some 25 times a day at a hundred notes a second;
 * or ground on purpose): a posting then stands for each of them that holds the word, and a store
 * reading it checks their words. 3 bytes, not 4: a byte less per posting is a sixth of the index,
 * and a store still finds a posting's notes among a few events at 100,000,000.
 *
 * A block is its postings in order, each a header and the 3 bytes: the header holds the kind (one
 * bit) and the created_at, as it is for the block's first posting and as the difference from the
 * one before for the others (a common word's notes are seconds apart: one byte). 6 bits of it in
 * the first byte, 7 in each further one, a byte's top bit saying another follows.
 */
export interface Posting {
  createdAt: number;
  /** The id's first PREFIX_BYTES bytes, as an unsigned number. */
  prefix: number;
  /** The kind's place in SEARCHABLE_KINDS (0 or 1). */
  kindBit: number;
}

if (SEARCHABLE_KINDS.length !== 2) throw new Error('a posting holds a searchable kind in one bit: two kinds');

/** Bytes of the id a posting holds (decodeBlock reads three). */
export const PREFIX_BYTES = 3;
const PREFIX_HEX = 2 * PREFIX_BYTES;

/** A block holds at most this many postings: a write reads and writes one block, a lookup reads one. */
export const POSTINGS_PER_BLOCK = 128;

/** Page order: newest first, then the id's first bytes, then the kind's bit. */
export function comparePostings(a: Posting, b: Posting): number {
  return b.createdAt - a.createdAt || a.prefix - b.prefix || a.kindBit - b.kindBit;
}

export function postingOfNote(createdAt: number, id: string, kind: number): Posting {
  const kindBit = SEARCHABLE_KINDS.indexOf(kind);
  if (kindBit < 0) throw new Error(`kind ${kind} is not searchable`);
  return { createdAt, prefix: Number.parseInt(id.slice(0, PREFIX_HEX), 16), kindBit };
}

export const kindOfPosting = (posting: Posting) => SEARCHABLE_KINDS[posting.kindBit] as number;

/** The id's first hex digits, where a posting's notes are looked for. */
export const prefixHexOf = (posting: Posting) => posting.prefix.toString(16).padStart(PREFIX_HEX, '0');

/**
 * A position past every note of a posting (the last id its prefix can start): where a page that
 * stopped after looking at the posting goes on from.
 */
export const positionPast = (posting: Posting) => ({ createdAt: posting.createdAt, id: prefixHexOf(posting) + 'f'.repeat(64 - PREFIX_HEX) });

/** The posting where a position's notes sit, with the lowest kind bit (a bound: postings of that place and prefix sort from here). */
export function postingAt(position: { createdAt: number; id: string }): Posting {
  return { createdAt: position.createdAt, prefix: Number.parseInt(position.id.slice(0, PREFIX_HEX).padEnd(PREFIX_HEX, '0'), 16), kindBit: 0 };
}

/** The most a created_at can be (verify-event.ts: a safe integer): its bits in the header never pass 2^53. */
const TWO_6 = 64;
const TWO_7 = 128;

export function encodeBlock(postings: readonly Posting[]): Buffer {
  const out = Buffer.allocUnsafe(postings.length * (9 + PREFIX_BYTES));
  let at = 0;
  let previous: number | undefined;
  for (const posting of postings) {
    let value = previous === undefined ? posting.createdAt : previous - posting.createdAt;
    if (value < 0 || !Number.isSafeInteger(value)) throw new Error('postings out of order');
    previous = posting.createdAt;
    const low = value % TWO_6;
    value = (value - low) / TWO_6;
    out[at++] = (value > 0 ? 0x80 : 0) | (low << 1) | posting.kindBit;
    while (value > 0) {
      const part = value % TWO_7;
      value = (value - part) / TWO_7;
      out[at++] = (value > 0 ? 0x80 : 0) | part;
    }
    out.writeUIntBE(posting.prefix, at, PREFIX_BYTES);
    at += PREFIX_BYTES;
  }
  return out.subarray(0, at);
}

export function decodeBlock(block: Uint8Array): Posting[] {
  const postings: Posting[] = [];
  let at = 0;
  let previous: number | undefined;
  while (at < block.length) {
    let byte = block[at++] as number;
    const kindBit = byte & 1;
    let value = (byte >> 1) & 0x3f;
    let scale = TWO_6;
    while (byte & 0x80) {
      byte = block[at++] as number;
      value += (byte & 0x7f) * scale;
      scale *= TWO_7;
    }
    if (at + PREFIX_BYTES > block.length) throw new Error('a posting block ends inside a posting');
    const createdAt = previous === undefined ? value : previous - value;
    previous = createdAt;
    postings.push({ createdAt, prefix: ((block[at] as number) << 16) | ((block[at + 1] as number) << 8) | (block[at + 2] as number), kindBit });
    at += PREFIX_BYTES;
  }
  return postings;
}

/** Where `posting` is in an ordered block, or where it would go (`found` false). */
export function searchBlock(postings: readonly Posting[], posting: Posting): { at: number; found: boolean } {
  let low = 0;
  let high = postings.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    const order = comparePostings(postings[middle] as Posting, posting);
    if (order === 0) return { at: middle, found: true };
    if (order < 0) low = middle + 1;
    else high = middle;
  }
  return { at: low, found: false };
}

/** The length of postingKeyBytes. */
export const POSTING_KEY_BYTES = 7 + PREFIX_BYTES + 1;

/**
 * A posting as bytes that sort as the postings do (a block's key ends with its first): the
 * created_at mirrored (7 bytes: newest first), the prefix, the kind's bit (1).
 */
export function postingKeyBytes(posting: Posting): Buffer {
  const bytes = Buffer.allocUnsafe(POSTING_KEY_BYTES);
  const mirrored = Number.MAX_SAFE_INTEGER - posting.createdAt;
  bytes.writeUIntBE(Math.floor(mirrored / 2 ** 32), 0, 3);
  bytes.writeUInt32BE(mirrored % 2 ** 32, 3);
  bytes.writeUIntBE(posting.prefix, 7, PREFIX_BYTES);
  bytes[7 + PREFIX_BYTES] = posting.kindBit;
  return bytes;
}

/** The posting whose key bytes these are (postingKeyBytes). */
export function postingOfKeyBytes(bytes: Uint8Array): Posting {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, POSTING_KEY_BYTES);
  const mirrored = view.readUIntBE(0, 3) * 2 ** 32 + view.readUInt32BE(3);
  return { createdAt: Number.MAX_SAFE_INTEGER - mirrored, prefix: view.readUIntBE(7, PREFIX_BYTES), kindBit: view[7 + PREFIX_BYTES] as number };
}
