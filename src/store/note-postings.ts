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

/** The most bytes a posting takes: a header of up to 9 bytes (a created_at of 53 bits), then the prefix. */
const MOST_BYTES = 9 + PREFIX_BYTES;

/** Writes a posting at `at` (its created_at as `value`: whole, or the difference from the one before); returns where it ends. */
function writePosting(out: Buffer, at: number, difference: number, kindBit: number, prefix: number): number {
  if (difference < 0 || !Number.isSafeInteger(difference)) throw new Error('postings out of order');
  const low = difference % TWO_6;
  let value = (difference - low) / TWO_6;
  out[at++] = (value > 0 ? 0x80 : 0) | (low << 1) | kindBit;
  while (value > 0) {
    const part = value % TWO_7;
    value = (value - part) / TWO_7;
    out[at++] = (value > 0 ? 0x80 : 0) | part;
  }
  out[at++] = (prefix >> 16) & 0xff;
  out[at++] = (prefix >> 8) & 0xff;
  out[at++] = prefix & 0xff;
  return at;
}

export function encodeBlock(postings: readonly Posting[]): Buffer {
  const out = Buffer.allocUnsafe(postings.length * MOST_BYTES);
  let at = 0;
  let previous: number | undefined;
  for (const posting of postings) {
    at = writePosting(out, at, previous === undefined ? posting.createdAt : previous - posting.createdAt, posting.kindBit, posting.prefix);
    previous = posting.createdAt;
  }
  return out.subarray(0, at);
}

/**
 * A block with postings added (in order; one the block holds is left as it is), byte by byte: the
 * block's postings are compared as they are read, never made into objects, and copied as they are
 * but for the one after an added posting (its difference is written again). Most of a batch's
 * changes are a few notes added to a rare word's one block: decoding it and encoding it again made
 * an object of every posting of every word a batch touches. Undefined where the block would hold
 * more than `most` postings (the caller splits it).
 */
export function addToBlock(block: Uint8Array, adds: readonly Posting[], most: number): { block: Buffer; count: number } | undefined {
  // Each addition, and the block's first posting written again as a difference (longer where it was a small created_at: a difference from a later posting is at most as long as from the one before, for the others).
  const out = Buffer.allocUnsafe(block.length + (adds.length + 1) * MOST_BYTES);
  let written = 0;
  let count = 0;
  /** The created_at of the last posting written. */
  let lastWritten: number | undefined;
  /** Whether an addition was written since the last posting of the block (the next one's difference changes). */
  let added = false;
  let next = 0;
  const add = (posting: Posting) => {
    written = writePosting(out, written, lastWritten === undefined ? posting.createdAt : lastWritten - posting.createdAt, posting.kindBit, posting.prefix);
    lastWritten = posting.createdAt;
    added = true;
    count++;
  };
  let tooMany = false;
  eachPosting(block, (createdAt, prefix, kindBit, start, end) => {
    // The additions before this posting go first (comparePostings, spelled out); one equal to it is held already.
    while (next < adds.length) {
      const posting = adds[next] as Posting;
      const order = createdAt - posting.createdAt || posting.prefix - prefix || posting.kindBit - kindBit;
      if (order > 0) break;
      next++;
      if (order < 0) add(posting);
    }
    if (added) written = writePosting(out, written, (lastWritten as number) - createdAt, kindBit, prefix);
    else {
      // After the posting it followed: its bytes as they are.
      out.set(block.subarray(start, end), written);
      written += end - start;
    }
    lastWritten = createdAt;
    added = false;
    tooMany = ++count > most;
    return !tooMany;
  });
  if (tooMany) return undefined;
  while (next < adds.length) add(adds[next++] as Posting);
  return count > most ? undefined : { block: out.subarray(0, written), count };
}

/**
 * Each posting of a block in turn, as numbers (no object made), with where its bytes start and end;
 * `each` returns false to stop. A block cut inside a posting is refused rather than misread.
 */
function eachPosting(block: Uint8Array, each: (createdAt: number, prefix: number, kindBit: number, start: number, end: number) => boolean | void): void {
  let at = 0;
  let previous: number | undefined;
  while (at < block.length) {
    const start = at;
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
    const prefix = ((block[at] as number) << 16) | ((block[at + 1] as number) << 8) | (block[at + 2] as number);
    at += PREFIX_BYTES;
    if (each(createdAt, prefix, kindBit, start, at) === false) return;
  }
}

export function decodeBlock(block: Uint8Array): Posting[] {
  const postings: Posting[] = [];
  eachPosting(block, (createdAt, prefix, kindBit) => {
    postings.push({ createdAt, prefix, kindBit });
  });
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
