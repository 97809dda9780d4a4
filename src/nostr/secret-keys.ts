/**
 * Secret keys (NIP-19 `nsec1…`) pasted by mistake must never be echoed, logged or stored (DESIGN §1).
 * This is the one rule that finds them in text, whatever the layers of encoding a client or the
 * stack put around them: any case, percent-encoding (also of the `%` and of the hex digits of a
 * layer below, `%25%36%45`), JSON/JavaScript `\u` escapes (also escaped again), HTML character
 * references, per character and mixed.
 *
 * How: around every `nsec1` and every escape, the run of characters a key and its escapes are
 * written with (letters, digits, `%`, `&`, `#`, `;`, and the backslashes of `\u` escapes) is taken;
 * a run that holds `nsec1` once its escapes are undone, layer by layer, is replaced whole. It errs
 * on the side of removing too much (a neighbour joined to the key by `&` goes with it), never too
 * little, and never breaks the JSON of a log line (other backslashes stay).
 */

export const REDACTED = '[redacted]';

/** Where a key or an escape that may hide one starts. */
const TRIGGER = /nsec1|%u?[0-9a-f]{2}|\\u|&#/gi;
const NSEC = /nsec1/i;
/** Text with none of these cannot hide a key behind an escape. */
const ESCAPE = /%u?[0-9a-f]{2}|\\u|&#/i;
/** More layers than any real client or framework adds; each one shortens the text. */
const MAX_LAYERS = 8;

/** The characters a key and its escapes are written with: letters, digits, `%`, `&`, `#`, `;`, `{`, `}`. */
function isRunCharacter(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    code === 0x25 ||
    code === 0x26 ||
    code === 0x23 ||
    code === 0x3b ||
    code === 0x7b ||
    code === 0x7d
  );
}

const BACKSLASH = 0x5c;
const isU = (code: number) => code === 0x75 || code === 0x55;

/**
 * Backslashes belong to a run only as the start of a `\u` escape: any other backslash (the one of
 * an escaped quote in a JSON log line) stays, so redacting never breaks the line's JSON.
 */
function backslashesOfEscapeAt(text: string, at: number): number {
  let end = at;
  while (text.charCodeAt(end) === BACKSLASH) end++;
  return end > at && isU(text.charCodeAt(end)) ? end - at : 0;
}

/** How many backslashes stand right before `at`. */
function backslashesBefore(text: string, at: number): number {
  let from = at;
  while (from > 0 && text.charCodeAt(from - 1) === BACKSLASH) from--;
  return at - from;
}

/**
 * The [start, end) of every run that spells a key. Only runs around a trigger are decoded, so a log
 * line without `%`, `\u`, `&#` or `nsec1` costs one regular-expression scan.
 */
function secretRuns(text: string): [number, number][] {
  const runs: [number, number][] = [];
  TRIGGER.lastIndex = 0;
  for (let match = TRIGGER.exec(text); match !== null; match = TRIGGER.exec(text)) {
    let start = match.index;
    let end = start + match[0].length;
    for (;;) {
      const code = text.charCodeAt(start - 1);
      if (start > 0 && isRunCharacter(code)) start--;
      else if (start > 0 && code === BACKSLASH && (isU(text.charCodeAt(start)) || text.charCodeAt(start) === BACKSLASH)) start--;
      else break;
    }
    // A backslash that escapes the run's first letter (`\n` of a JSON line just before the key) goes
    // with it: left alone, it would escape the `[` of the redaction (invalid JSON).
    if (backslashesBefore(text, start) % 2 === 1) start--;
    for (;;) {
      if (end < text.length && isRunCharacter(text.charCodeAt(end))) end++;
      else if (backslashesOfEscapeAt(text, end) > 0) end += backslashesOfEscapeAt(text, end);
      else break;
    }
    if (end - start >= 5 && revealsSecretKey(text.slice(start, end))) runs.push([start, end]);
    TRIGGER.lastIndex = end;
  }
  return runs;
}

/** Undoes one layer of every escape: `%XX`, `\uXXXX` (with its backslashes), `&#…;`. */
function decodeLayer(text: string): string {
  // unescape (native, and in every JavaScript engine) undoes %XX and %uXXXX; nothing else does that fast.
  let decoded = text.includes('%') ? unescape(text) : text;
  if (decoded.includes('\\')) {
    decoded = decoded
      .replace(/\\+u([0-9a-f]{4})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
      // GraphQL and JavaScript also write \u{6E}.
      .replace(/\\+u\{0*([0-9a-f]{1,6})\}/gi, (_, hex: string) => String.fromCodePoint(Math.min(Number.parseInt(hex, 16), 0x10ffff)));
  }
  if (decoded.includes('&#')) {
    decoded = decoded
      .replace(/&#x0*([0-9a-f]{1,6});?/gi, (_, hex: string) => String.fromCodePoint(Math.min(Number.parseInt(hex, 16), 0x10ffff)))
      .replace(/&#0*([0-9]{1,7});?/g, (_, decimal: string) => String.fromCodePoint(Math.min(Number(decimal), 0x10ffff)));
  }
  return decoded;
}

/** True if the run spells `nsec1` once its escapes are undone. */
function revealsSecretKey(run: string): boolean {
  let text = run;
  for (let layer = 0; layer <= MAX_LAYERS; layer++) {
    if (NSEC.test(text)) return true;
    if (!ESCAPE.test(text)) return false;
    const next = decodeLayer(text);
    if (next === text) return false;
    text = next;
  }
  return false;
}

/** True if the text holds `nsec1` in any spelling (see above). */
export function containsSecretKey(text: string): boolean {
  return secretRuns(text).length > 0;
}

/** The text with every run that spells a secret key replaced by `[redacted]`. */
export function redactSecretKeys(text: string): string {
  const runs = secretRuns(text);
  if (runs.length === 0) return text;
  let redacted = '';
  let from = 0;
  for (const [start, end] of runs) {
    redacted += `${text.slice(from, start)}${REDACTED}`;
    from = end;
  }
  return redacted + text.slice(from);
}
