import { createHash } from 'node:crypto';

/**
 * What a remembered miss says about where it was looked for (issue 12 §5): the learned relays (an
 * author's write relays) that answered "not found", as a mark's note. A later lookup that brings
 * relays not in the note (a write relay learned since) asks those. The configured relays are
 * always asked by an unmarked lookup, so they are not noted. Each relay is noted as 8 hex
 * characters of its URL's SHA-256: a mark stays small, and a collision only skips a relay once.
 */
export function askedRelaysNote(urls: Iterable<string>): string {
  return [...new Set([...urls].map(relayFingerprint))].sort().join(' ');
}

/** The relays a note says were asked, as fingerprints. */
export function askedRelaysOf(note: string | null | undefined): ReadonlySet<string> {
  if (!note) return NONE;
  return new Set(note.split(' ').filter((part) => /^[0-9a-f]{8}$/.test(part)));
}

export function relayFingerprint(url: string): string {
  return createHash('sha256').update(url).digest('hex').slice(0, 8);
}

const NONE: ReadonlySet<string> = new Set();
