import fc from 'fast-check';
import type { NostrEvent } from '../../src/nostr/event.js';

/** Lowercase hex of exactly `length` characters. */
export const hex = (length: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${length}}$`));

/** Events of any shape NIP-01 allows (stores check shape, not signatures), within the given sizes. */
export function anyEvent({ maxTags, maxContent }: { maxTags: number; maxContent?: number }): fc.Arbitrary<NostrEvent> {
  return fc.record({
    id: hex(64),
    pubkey: hex(64),
    created_at: fc.maxSafeNat(),
    kind: fc.integer({ min: 0, max: 65_535 }),
    tags: fc.array(fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 5 }), { maxLength: maxTags }),
    content: fc.oneof(fc.string({ unit: 'grapheme', ...(maxContent === undefined ? {} : { maxLength: maxContent }) }), fc.string({ unit: 'binary' })),
    sig: hex(128),
  });
}
