import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { encodeBytes, naddrEncode, neventEncode, noteEncode, nprofileEncode, npubEncode, nsecEncode } from 'nostr-tools/nip19';
import { describe, expect, it } from 'vitest';
import { LookupError } from '../src/errors.js';
import { isHex64, isLowerHex64, parseEventId, parseEventPointer, parsePubkey, pubkeyOfMention } from '../src/nostr/identifiers.js';

interface Vectors {
  positive: {
    source: string;
    bech32: string;
    type: string;
    decoded: string | { pubkey?: string; id?: string; relays?: string[] };
  }[];
  negative: { source: string; bech32: string }[];
}
const vectors = JSON.parse(
  readFileSync(new URL('./fixtures/nip19-vectors.json', import.meta.url), 'utf8'),
) as Vectors;

const HEX = '3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d';

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof LookupError) return error.code;
    throw error;
  }
  return 'accepted';
}

describe('NIP-19 vectors (test/fixtures/nip19-vectors.json)', () => {
  for (const vector of vectors.positive) {
    it(`${vector.type} from ${vector.source}`, () => {
      const decoded = vector.decoded;
      switch (vector.type) {
        case 'npub':
          expect(parsePubkey(vector.bech32)).toEqual({ pubkey: decoded, relays: [] });
          expect(codeOf(() => parseEventId(vector.bech32))).toBe('invalid_id');
          break;
        case 'nprofile':
          expect(parsePubkey(vector.bech32)).toEqual({
            pubkey: (decoded as { pubkey: string }).pubkey,
            relays: (decoded as { relays: string[] }).relays,
          });
          expect(codeOf(() => parseEventId(vector.bech32))).toBe('invalid_id');
          break;
        case 'note':
          expect(parseEventId(vector.bech32)).toEqual({ id: decoded, relays: [] });
          expect(codeOf(() => parsePubkey(vector.bech32))).toBe('invalid_pubkey');
          break;
        case 'nevent':
          expect(parseEventId(vector.bech32).id).toBe((decoded as { id: string }).id);
          expect(codeOf(() => parsePubkey(vector.bech32))).toBe('invalid_pubkey');
          break;
        case 'nsec':
          // NIP-19: never accept a secret key, on either route.
          expect(codeOf(() => parsePubkey(vector.bech32))).toBe('secret_key_refused');
          expect(codeOf(() => parseEventId(vector.bech32))).toBe('secret_key_refused');
          break;
        case 'naddr': {
          // An naddr names an addressable event by coordinate: not an event id, not a pubkey.
          expect(codeOf(() => parseEventId(vector.bech32))).toBe('invalid_id');
          expect(codeOf(() => parsePubkey(vector.bech32))).toBe('invalid_pubkey');
          const { kind, pubkey, identifier, relays = [] } = decoded as { kind: number; pubkey: string; identifier: string; relays?: string[] };
          expect(parseEventPointer(vector.bech32)).toEqual({ coordinate: `${kind}:${pubkey}:${identifier}`, kind, pubkey, identifier, relays });
          break;
        }
        default:
          throw new Error(`unexpected vector type ${vector.type}`);
      }
    });
  }

  for (const vector of vectors.negative) {
    it(`refuses ${vector.source}`, () => {
      expect(codeOf(() => parsePubkey(vector.bech32))).toBe('invalid_pubkey');
      expect(codeOf(() => parseEventId(vector.bech32))).toBe('invalid_id');
    });
  }
});

describe('accepted forms (DESIGN §1 Inputs)', () => {
  it('hex in any case, normalised to lowercase', () => {
    expect(parsePubkey(HEX.toUpperCase()).pubkey).toBe(HEX);
    expect(parseEventId(`${HEX.slice(0, 10).toUpperCase()}${HEX.slice(10)}`).id).toBe(HEX);
  });

  it('surrounding whitespace is trimmed, including tabs and newlines', () => {
    expect(parsePubkey(`  \t${HEX}\n `).pubkey).toBe(HEX);
    expect(parseEventId(` nostr:${noteEncode(HEX)}\r\n`).id).toBe(HEX);
  });

  it('the NIP-21 nostr: prefix on every form, scheme in any case', () => {
    expect(parsePubkey(`nostr:${HEX}`).pubkey).toBe(HEX);
    expect(parsePubkey(`nostr:${npubEncode(HEX)}`).pubkey).toBe(HEX);
    expect(parsePubkey(`NOSTR:${nprofileEncode({ pubkey: HEX, relays: ['wss://r.example'] })}`)).toEqual({
      pubkey: HEX,
      relays: ['wss://r.example'],
    });
    expect(parseEventId(`nostr:${neventEncode({ id: HEX, author: HEX, relays: [] })}`)).toEqual({
      id: HEX,
      relays: [],
      author: HEX,
    });
  });
});

describe('rejected input', () => {
  const invalid = [
    '',
    '   ',
    HEX.slice(1),
    `${HEX}0`,
    `${HEX.slice(1)}g`,
    `0x${HEX}`,
    `${HEX} ${HEX}`,
    'nostr:',
    `nostr:nostr:${HEX}`,
    npubEncode(HEX).toUpperCase(),
    `npub1${'q'.repeat(58)}`,
    'npub1',
    'note1',
    '<script>alert(1)</script>',
    "' OR 1=1 --",
    '\u0000'.repeat(64),
    'ａ'.repeat(64), // full-width letters are not hex
    `${HEX}\u200b`, // zero-width space is not whitespace for trim()
    'x'.repeat(100_000),
  ];
  it.each(invalid.map((value) => [value.slice(0, 40), value]))('refuses %j', (_label, value) => {
    expect(codeOf(() => parsePubkey(value))).toBe('invalid_pubkey');
    expect(codeOf(() => parseEventId(value))).toBe('invalid_id');
  });

  it('a short npub payload (not 32 bytes) is refused although its checksum is valid', () => {
    const shortNpub = npubEncode('abcd'.repeat(8));
    expect(codeOf(() => parsePubkey(shortNpub))).toBe('invalid_pubkey');
  });

  it('any nsec1 string is refused as a secret key, even with a bad checksum or in upper case', () => {
    const nsec = nsecEncode(new Uint8Array(32).fill(7));
    for (const value of [nsec, `nostr:${nsec}`, ` ${nsec} `, `${nsec.slice(0, -1)}q`, nsec.toUpperCase()]) {
      expect(codeOf(() => parsePubkey(value))).toBe('secret_key_refused');
      expect(codeOf(() => parseEventId(value))).toBe('secret_key_refused');
    }
  });

  it('error messages never echo the input', () => {
    const nsec = nsecEncode(new Uint8Array(32).fill(9));
    for (const value of [nsec, 'npub1-secret-looking-thing', HEX.slice(3)]) {
      for (const parse of [parsePubkey, parseEventId]) {
        try {
          parse(value);
        } catch (error) {
          expect((error as Error).message).not.toContain(value);
        }
      }
    }
  });
});

describe('properties', () => {
  it('any 32 bytes round-trip through hex, npub, nprofile, note and nevent', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.boolean(), (bytes, prefixed) => {
        const hex = Buffer.from(bytes).toString('hex');
        const p = prefixed ? 'nostr:' : '';
        expect(parsePubkey(p + hex.toUpperCase()).pubkey).toBe(hex);
        expect(parsePubkey(p + npubEncode(hex)).pubkey).toBe(hex);
        expect(parsePubkey(p + nprofileEncode({ pubkey: hex })).pubkey).toBe(hex);
        expect(parseEventId(p + noteEncode(hex)).id).toBe(hex);
        expect(parseEventId(p + neventEncode({ id: hex })).id).toBe(hex);
      }),
    );
  });

  it('arbitrary strings either parse to lowercase hex or fail with a table error, never anything else', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          fc.stringMatching(/^(nostr:)?n(pub|profile|ote|event|sec)1[a-z0-9]{0,80}$/),
        ),
        (value) => {
          for (const parse of [parsePubkey, parseEventId] as const) {
            try {
              const result = parse(value) as { pubkey?: string; id?: string };
              expect(result.pubkey ?? result.id).toMatch(/^[0-9a-f]{64}$/);
            } catch (error) {
              expect(error).toBeInstanceOf(LookupError);
            }
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('mentions in content decode only npub and nprofile, and never throw', () => {
    expect(pubkeyOfMention(npubEncode(HEX))).toBe(HEX);
    expect(pubkeyOfMention(noteEncode(HEX))).toBeUndefined();
    fc.assert(
      fc.property(fc.string(), (value) => {
        expect(() => pubkeyOfMention(value)).not.toThrow();
      }),
    );
  });

  it('isLowerHex64 accepts exactly 64 lowercase hex characters (canonical ids and pubkeys)', () => {
    // Mostly lowercase hex, now and then a character that is not: both answers come up often.
    const unit = fc.oneof(
      { arbitrary: fc.constantFrom(...'0123456789abcdef'), weight: 200 },
      { arbitrary: fc.constantFrom(...'ABCDEFgz \u0000é\u{1F305}'), weight: 1 },
    );
    const nearHex = fc.string({ unit, minLength: 62, maxLength: 66 });
    fc.assert(
      fc.property(fc.oneof(nearHex, fc.string(), fc.string({ unit: 'binary', minLength: 64, maxLength: 64 })), (value) => {
        expect(isLowerHex64(value)).toBe(/^[0-9a-f]{64}$/.test(value));
      }),
      { numRuns: 5000 },
    );
    expect(isLowerHex64(HEX)).toBe(true);
    expect(isLowerHex64(HEX.toUpperCase())).toBe(false);
  });

  it('isHex64 accepts exactly 64 hex characters in any case, never a character whose low byte is a hex digit', () => {
    // Node's hex decoder reads the low byte of each UTF-16 unit: U+0130 looks like '0', U+0161 like 'a',
    // U+0441 like 'A', U+D830 (a lone surrogate) like '0'.
    const unit = fc.oneof(
      { arbitrary: fc.constantFrom(...'0123456789abcdefABCDEF'), weight: 200 },
      { arbitrary: fc.constantFrom('\u0130', '\u0161', '\u0441', '\ud830', 'g', ' ', '\u0000', 'é'), weight: 1 },
    );
    const nearHex = fc.string({ unit, minLength: 62, maxLength: 66 });
    fc.assert(
      fc.property(fc.oneof(nearHex, fc.string(), fc.string({ unit: 'binary', minLength: 64, maxLength: 64 })), (value) => {
        expect(isHex64(value)).toBe(/^[0-9a-fA-F]{64}$/.test(value));
      }),
      { numRuns: 5000 },
    );
    expect(isHex64('\u0130'.repeat(64))).toBe(false);
    expect(isHex64(`${HEX.slice(0, 63)}\u0161`)).toBe(false);
    expect(isHex64(HEX.toUpperCase())).toBe(true);
  });
});

describe('naddr (NIP-19) as an event pointer', () => {
  const pubkey = HEX;
  it('reads an addressable coordinate, with nostr: and relay hints; a replaceable kind’s d is ignored', () => {
    const naddr = naddrEncode({ kind: 30023, pubkey, identifier: 'my-article', relays: ['wss://r.example'] });
    expect(parseEventPointer(`nostr:${naddr}`)).toEqual({
      coordinate: `30023:${pubkey}:my-article`,
      kind: 30023,
      pubkey,
      identifier: 'my-article',
      relays: ['wss://r.example'],
    });
    expect(parseEventPointer(naddrEncode({ kind: 0, pubkey, identifier: 'ignored' }))).toEqual({
      coordinate: `0:${pubkey}:`,
      kind: 0,
      pubkey,
      identifier: '',
      relays: [],
    });
    expect(parseEventPointer(HEX)).toEqual({ id: HEX, relays: [] });
  });

  it('refuses an naddr whose d identifier holds a secret key (it would be sent to relays in a filter)', () => {
    const nsec = nsecEncode(new Uint8Array(32).fill(7));
    expect(codeOf(() => parseEventPointer(naddrEncode({ kind: 30023, pubkey, identifier: nsec })))).toBe('secret_key_refused');
    expect(codeOf(() => parseEventPointer(naddrEncode({ kind: 30023, pubkey, identifier: `my ${nsec.toUpperCase()} post` })))).toBe('secret_key_refused');
  });

  it('refuses a regular or ephemeral kind, an identifier over 1 KiB, uppercase, and bad TLVs with invalid_id', () => {
    expect(codeOf(() => parseEventPointer(naddrEncode({ kind: 1, pubkey, identifier: 'x' })))).toBe('invalid_id');
    expect(codeOf(() => parseEventPointer(naddrEncode({ kind: 20001, pubkey, identifier: 'x' })))).toBe('invalid_id');
    expect(codeOf(() => parseEventPointer(naddrEncode({ kind: 30023, pubkey, identifier: 'd'.repeat(1025) })))).toBe('invalid_id');
    expect(codeOf(() => parseEventPointer(naddrEncode({ kind: 30023, pubkey, identifier: 'x' }).toUpperCase()))).toBe('invalid_id');
    // TLVs: no author (type 2), no kind (type 3), a 31-byte author.
    const tlv = (type: number, value: Uint8Array) => [type, value.length, ...value];
    const d = tlv(0, new TextEncoder().encode('x'));
    const author = tlv(2, Buffer.from(pubkey, 'hex'));
    const kind = tlv(3, Uint8Array.from([0, 0, 0x75, 0x23]));
    for (const parts of [[d, kind], [d, author], [d, tlv(2, Buffer.alloc(31)), kind], [author, kind]]) {
      expect(codeOf(() => parseEventPointer(encodeBytes('naddr', Uint8Array.from(parts.flat()))))).toBe('invalid_id');
    }
  });

  it('hostile strings (generated): a pointer or invalid_id/secret_key_refused, never anything else', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.constant('naddr1').map((prefix) => prefix), fc.string().map((tail) => `naddr1${tail}`)), (text) => {
        const code = codeOf(() => parseEventPointer(text));
        expect(['accepted', 'invalid_id', 'secret_key_refused']).toContain(code);
      }),
    );
  });
});
