/**
 * Secret keys (NIP-19 `nsec1…`) pasted by mistake must never be echoed, logged or stored (DESIGN §1).
 * This is the one rule that finds them in text, whatever the encoding a client or a layer of the
 * stack gave them: any case, percent-encoding (also double, `%256E`), JSON/JavaScript `\u` escapes
 * (also escaped again, `\\u006e`) and HTML character references, per character and mixed.
 *
 * It errs on the side of removing too much: `nsec1` in any of these spellings and everything that
 * follows it that could be part of a bech32 string (letters, digits, escapes) is replaced.
 */

const hex2 = (code: number) => code.toString(16).padStart(2, '0');

/** One character in any of the spellings above (`letter` is lowercase). */
function anySpelling(letter: string): string {
  const codes = letter === '1' ? [0x31] : [letter.charCodeAt(0), letter.toUpperCase().charCodeAt(0)];
  const hexCodes = codes.map(hex2).join('|');
  const literal = letter === '1' ? '1' : `[${letter}${letter.toUpperCase()}]`;
  return (
    `(?:${literal}` +
    `|%(?:25)*(?:${hexCodes})` +
    `|\\\\+u00(?:${hexCodes})` +
    `|&#(?:x0*(?:${hexCodes})|0*(?:${codes.join('|')}));?)`
  );
}

/** A character that may continue a bech32 string, in any spelling (over-matching on purpose). */
const CONTINUATION = '(?:[A-Za-z0-9]|%(?:25)*[0-9A-Fa-f]{2}|\\\\+u[0-9A-Fa-f]{4}|&#x?[0-9A-Fa-f]{1,6};?)';

const SECRET_KEY_PATTERN = `${[...'nsec1'].map(anySpelling).join('')}${CONTINUATION}*`;
const SECRET_KEY = new RegExp(SECRET_KEY_PATTERN, 'gi');
const HAS_SECRET_KEY = new RegExp(SECRET_KEY_PATTERN, 'i');

export const REDACTED = '[redacted]';

/** True if the text holds `nsec1` in any spelling (see above). */
export function containsSecretKey(text: string): boolean {
  return HAS_SECRET_KEY.test(text);
}

/** The text with every secret key, in any spelling, replaced by `[redacted]`. */
export function redactSecretKeys(text: string): string {
  // test() first: most text has none, and replace() would copy it.
  return HAS_SECRET_KEY.test(text) ? text.replace(SECRET_KEY, REDACTED) : text;
}
