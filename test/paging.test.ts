import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorCodeOf } from '../src/errors.js';
import {
  decodeCursor,
  decodeFollowerCursor,
  decodeFollowingCursor,
  encodeCursor,
  encodeFollowerCursor,
  encodeFollowingCursor,
} from '../src/schema/paging.js';

/**
 * Cursors are client input (`after:`): each decoder gives back exactly what its encoder was given,
 * and anything else, whatever it is, is invalid_cursor, never another error (property tests).
 */

const runs = Number(process.env.FUZZ_RUNS ?? 500);
const seed = Number(process.env.FUZZ_SEED ?? 28);
const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);
const decodeNoteCursor = (cursor: string) => decodeCursor(cursor, 'notes');
const decoders = { reply: decodeCursor, note: decodeNoteCursor, follower: decodeFollowerCursor, following: decodeFollowingCursor } as const;

/** invalid_cursor, or the decoded value whose encoding is the input. */
function outcome(decode: (cursor: string) => unknown, cursor: string): 'invalid_cursor' | 'decoded' {
  try {
    decode(cursor);
    return 'decoded';
  } catch (error) {
    expect(errorCodeOf(error)).toBe('invalid_cursor');
    return 'invalid_cursor';
  }
}

describe('cursors', () => {
  it('round-trip: every cursor we give out decodes to what it was made of', () => {
    fc.assert(
      fc.property(hex64, fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: 0, max: 99_999 }), (pubkey, createdAt, position) => {
        expect(decodeCursor(encodeCursor({ createdAt, id: pubkey }))).toEqual({ createdAt, id: pubkey });
        expect(decodeNoteCursor(encodeCursor({ createdAt, id: pubkey }, 'notes'))).toEqual({ createdAt, id: pubkey });
        expect(decodeFollowerCursor(encodeFollowerCursor(pubkey))).toBe(pubkey);
        expect(decodeFollowingCursor(encodeFollowingCursor(position, pubkey))).toEqual({ position, pubkey });
      }),
      { numRuns: runs, seed },
    );
  });

  it('one list\'s cursor is never another\'s', () => {
    const pubkey = 'a'.repeat(64);
    const cursors = { reply: encodeCursor({ createdAt: 1, id: pubkey }), note: encodeCursor({ createdAt: 1, id: pubkey }, 'notes'), follower: encodeFollowerCursor(pubkey), following: encodeFollowingCursor(1, pubkey) };
    for (const [name, decode] of Object.entries(decoders)) {
      for (const [kind, cursor] of Object.entries(cursors)) expect(outcome(decode, cursor), `${name} ← ${kind}`).toBe(name === kind ? 'decoded' : 'invalid_cursor');
    }
  });

  it('hostile input (any string, any base64url of any text, cursors with a character changed) is invalid_cursor or the one canonical cursor', () => {
    const tampered = fc.tuple(hex64, fc.nat(), fc.nat(), fc.string({ minLength: 1, maxLength: 1 }), fc.boolean()).map(([pubkey, at, index, char, note]) => {
      const cursor = note ? encodeCursor({ createdAt: at, id: pubkey }, 'notes') : encodeFollowingCursor(at % 100_000, pubkey);
      const place = index % cursor.length;
      return cursor.slice(0, place) + char + cursor.slice(place + 1);
    });
    const anything = fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 120 }).map((text) => Buffer.from(text).toString('base64url')), tampered);
    fc.assert(
      fc.property(anything, (cursor) => {
        for (const decode of Object.values(decoders)) {
          if (outcome(decode, cursor) === 'decoded') {
            // Decoded: then it is exactly what the encoder makes of what it decoded to.
            const value = decode(cursor) as unknown;
            const again =
              decode === decodeCursor || decode === decodeNoteCursor
                ? encodeCursor(value as { createdAt: number; id: string }, decode === decodeNoteCursor ? 'notes' : 'replies')
                : decode === decodeFollowerCursor
                  ? encodeFollowerCursor(value as string)
                  : encodeFollowingCursor((value as { position: number }).position, (value as { pubkey: string }).pubkey);
            expect(again).toBe(cursor);
          }
        }
      }),
      { numRuns: runs, seed },
    );
  });
});
