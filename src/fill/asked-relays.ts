import { createHash } from 'node:crypto';

/**
 * What a remembered miss says about where it was looked for, kept as its mark's note:
 * - the learned relays (an author's write relays) that answered "not found";
 * - the author whose outbox was consulted (their relay list read or looked for).
 * A later lookup that brings places not in the note (a write relay learned since, or an author the
 * miss did not know, as an nevent gives) asks those. The configured relays are always asked by an
 * unmarked lookup, so they are not noted. Each relay and author is noted by 8 hex characters of its
 * SHA-256 (an author with an `a` before them): a mark stays small, and a collision only skips a
 * place once.
 */
export interface MissNote {
  relays: ReadonlySet<string>;
  authors: ReadonlySet<string>;
}

/**
 * Parts a note holds at most (~290 bytes): every nevent can name another author, so without a
 * bound one key's note would grow with every request. A full note counts as "looked everywhere".
 */
export const MAX_NOTE_PARTS = 32;

export function writeMissNote(relays: Iterable<string>, author: string | undefined, held = ''): string {
  const parts = new Set(held.split(' ').filter(Boolean));
  for (const relay of relays) parts.add(fingerprint(relay));
  if (author) parts.add(`a${fingerprint(author)}`);
  return [...parts].sort().slice(0, MAX_NOTE_PARTS).join(' ');
}

/** Whether a note can take no more: its key counts as looked for everywhere until it expires. */
export function noteIsFull(note: string | null | undefined): boolean {
  return !!note && note.split(' ').length >= MAX_NOTE_PARTS;
}

export function readMissNote(note: string | null | undefined): MissNote {
  if (!note) return EMPTY;
  const relays = new Set<string>();
  const authors = new Set<string>();
  for (const part of note.split(' ')) {
    if (/^[0-9a-f]{8}$/.test(part)) relays.add(part);
    else if (/^a[0-9a-f]{8}$/.test(part)) authors.add(part.slice(1));
  }
  return { relays, authors };
}

/** 8 hex characters of the SHA-256 of a relay URL or a pubkey: how notes name them. */
export function fingerprint(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 8);
}

const EMPTY: MissNote = { relays: new Set(), authors: new Set() };
