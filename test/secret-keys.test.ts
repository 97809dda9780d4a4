import fc from 'fast-check';
import { nsecEncode } from 'nostr-tools/nip19';
import { generateSecretKey } from 'nostr-tools/pure';
import { describe, expect, it } from 'vitest';
import { containsSecretKey, redactSecretKeys } from '../src/nostr/secret-keys.js';
import { captureLogs } from './support/logs.js';
import { createRequestLog } from '../src/logger.js';

const NSEC = nsecEncode(generateSecretKey());
const DATA = NSEC.slice('nsec1'.length);

/** Spellings of one character that some layer (URL, JSON, HTML, a second URL encoding) may produce. */
const spellings = (char: string): string[] => {
  const code = char.charCodeAt(0).toString(16).padStart(2, '0');
  return [
    char,
    char.toUpperCase(),
    `%${code}`,
    `%${code.toUpperCase()}`,
    `%25${code}`,
    `\\u00${code}`,
    `\\\\u00${code.toUpperCase()}`,
    `&#${char.charCodeAt(0)};`,
    `&#x${code};`,
    // Escapes inside percent-encoding, as a URL carries a JSON string: \u006e as %5Cu006e, or every character encoded.
    `%5Cu00${code}`,
    [...`\\u00${code}`].map((c) => `%${c.charCodeAt(0).toString(16)}`).join(''),
    `%255C%2575%2530%2530${[...code].map((c) => `%25${c.charCodeAt(0).toString(16)}`).join('')}`,
    // Found by review: GraphQL's braced escape (also percent-encoded), unescape's %u, zero-padded references.
    `\\u{${code}}`,
    `%5Cu%7B${code}%7D`,
    `%u00${code}`,
    `&#x0000${code};`,
  ];
};

/** An nsec with each character spelled by one of `spellings`, chosen by `picks`. */
const spelled = (picks: number[]) =>
  [...NSEC].map((char, index) => {
    const options = spellings(char);
    return options[(picks[index] ?? 0) % options.length];
  });

describe('secret-key redaction (DESIGN §1: an nsec is never logged or echoed)', () => {
  it('finds and removes an nsec spelled in any mix of case, percent, \\u and HTML escapes (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(), { minLength: NSEC.length, maxLength: NSEC.length }),
        fc.string(),
        fc.string(),
        (picks, before, after) => {
          const text = `${before}${spelled(picks).join('')} ${after}`;
          expect(containsSecretKey(text)).toBe(true);
          const redacted = redactSecretKeys(text);
          expect(redacted).toContain('[redacted]');
          // Neither the key nor any long run of its data is left, in the spelling it was sent.
          expect(redacted.toLowerCase()).not.toContain(DATA.slice(0, 12));
          expect(decodeAll(redacted).toLowerCase()).not.toContain(DATA.slice(0, 12));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('leaves text without a secret key exactly as it was (property)', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        fc.pre(!/nsec1|n.?s.?e.?c.?1|%|\\u|&#/i.test(text));
        expect(redactSecretKeys(text)).toBe(text);
      }),
      { numRuns: 2000 },
    );
    const pubkeyUrl = `/user-profile?pubkey=npub1${'q'.repeat(58)}`;
    expect(redactSecretKeys(pubkeyUrl)).toBe(pubkeyUrl);
    expect(redactSecretKeys('That is a secret key (nsec).')).toBe('That is a secret key (nsec).');
  });

  it('cuts the key out of URLs, JSON and stack text, keeping what surrounds it', () => {
    expect(redactSecretKeys(`/user-profile/${NSEC}`)).toBe('/user-profile/[redacted]');
    // A neighbour joined by `&` goes with the key (over-redaction, never under).
    expect(redactSecretKeys(`/user-profile?pubkey=${NSEC}&x=%zz`)).toBe('/user-profile?pubkey=[redacted]=%zz');
    expect(redactSecretKeys(`/user-profile?x=1&pubkey=${NSEC}`)).toBe('/user-profile?x=1&pubkey=[redacted]');
    expect(redactSecretKeys(`{"query":"{ profile(pubkey: \\"\\\\u006e${NSEC.slice(1)}\\") }"}`)).toBe(
      '{"query":"{ profile(pubkey: \\"[redacted]\\") }"}',
    );
    expect(redactSecretKeys(`URIError: URI malformed: /${NSEC.toUpperCase()}%zz\n    at decode`)).toBe(
      'URIError: URI malformed: /[redacted]\n    at decode',
    );
  });

  it('never breaks the JSON of a log line, whatever surrounds the key (property)', () => {
    const { chunks, logger } = captureLogs();
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: NSEC.length, maxLength: NSEC.length }), fc.string(), fc.string(), (picks, before, after) => {
        chunks.length = 0;
        logger.info({ url: `${before}"\\${spelled(picks).join('')}\\"${after}` }, `${after}\\${NSEC}"`);
        for (const line of chunks.join('').split('\n').filter(Boolean)) {
          const parsed = JSON.parse(line) as { url: string; msg: string };
          expect(parsed.msg.toLowerCase()).not.toContain(DATA.slice(0, 12));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('an escaped letter just before the key goes with it, never leaving a backslash to escape the redaction (found by review)', () => {
    const { chunks, logger } = captureLogs();
    for (const before of ['x\n', 'x\t', '\r', 'x\\\n', 'x\\']) {
      chunks.length = 0;
      logger.info(`${before}${NSEC} after`);
      const line = chunks.join('').trim();
      const parsed = JSON.parse(line) as { msg: string };
      expect(parsed.msg.toLowerCase()).not.toContain(DATA.slice(0, 12));
      expect(parsed.msg.endsWith('[redacted] after')).toBe(true);
    }
    // An escaped backslash before the key is no escape of it: it stays.
    chunks.length = 0;
    logger.info(`x\\${NSEC} after`);
    expect((JSON.parse(chunks.join('').trim()) as { msg: string }).msg).toBe('x\\[redacted] after');
  });

  it('applies to every pino line and every request-log piece', () => {
    const { chunks, logger } = captureLogs();
    logger.info({ url: `/x?pubkey=%6E${NSEC.slice(1)}` }, `message ${NSEC}`);
    logger.error({ err: new Error(`bad ${NSEC}`) }, 'failed');
    const log = createRequestLog(logger);
    log({ reqId: 'r', method: 'GET', url: `/user-profile/${NSEC}`, status: 404, ms: 1 });
    log.flush();
    const text = chunks.join('');
    expect(text).not.toContain(DATA.slice(0, 12));
    expect(text.match(/\[redacted\]/g)?.length).toBeGreaterThanOrEqual(5);
  });
});

/** Undoes every escape this file produces (percent, twice; \u; HTML), to check nothing decodes back to the key. */
function decodeAll(text: string): string {
  let out = text;
  for (let round = 0; round < 3; round++) {
    out = out
      .replace(/%u([0-9a-f]{4})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
      .replace(/\\+u\{([0-9a-f]{1,6})\}/gi, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)))
      .replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
      .replace(/\\+u([0-9a-f]{4})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
      .replace(/&#x([0-9a-f]+);?/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
      .replace(/&#(\d+);?/g, (_, dec: string) => String.fromCharCode(Number(dec)));
  }
  return out;
}
