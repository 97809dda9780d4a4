import type { Readable } from 'node:stream';

/**
 * One item of import input:
 * - `candidate`: something that claims to be an event (still to be verified);
 * - `unreadable`: a line that is not JSON;
 * - `ignored`: a well-formed relay message that carries no event (EOSE, NOTICE, OK…).
 */
export type InputItem =
  /**
   * `bytes`: the size of the JSON text it was read from (a document's, shared out among its
   * events), for memory bounds; `text`: that text, when the value is all of it (a line that is one
   * event), for a verification thread to parse on its own (a string crosses to a thread as one
   * copy, a parsed event as thousands of values).
   */
  | { type: 'candidate'; value: unknown; line: number; bytes: number; text?: string }
  /**
   * A line that looks like one JSON object (its first and last bytes but blanks are `{` and `}`),
   * not decoded nor parsed here (readEventInput's `deferObjectLines`): whoever verifies it parses
   * it, and counts it unreadable if it is not JSON. An import's verification thread parses it
   * there, so that a follow list's thousand tags are parsed once, not also on the thread that
   * stores it; and its bytes, not a string, wait to be stored (a string of 70 KB is copied by every
   * garbage collection it lives through: most of an import's collections were of lines).
   */
  | { type: 'object-line'; wire: Buffer; line: number; bytes: number }
  | { type: 'unreadable'; line: number }
  | { type: 'ignored'; line: number };

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * The events one JSON value holds: an event object; a relay message `["EVENT", <sub>, <event>]`
 * (NIP-01, relay to client) or `["EVENT", <event>]` (client to relay); or an array of events.
 */
function* itemsOfValue(value: unknown, line: number, bytes: number, text?: string): Generator<InputItem> {
  if (!Array.isArray(value)) {
    yield text === undefined ? { type: 'candidate', value, line, bytes } : { type: 'candidate', value, line, bytes, text };
    return;
  }
  if (value[0] === 'EVENT') {
    yield { type: 'candidate', value: value.length >= 3 ? value[2] : value[1], line, bytes };
  } else if (typeof value[0] === 'string') {
    yield { type: 'ignored', line };
  } else {
    const each = Math.ceil(bytes / Math.max(1, value.length));
    for (const element of value) yield { type: 'candidate', value: element, line, bytes: each };
  }
}

/**
 * The lines of a stream of bytes (or of strings, read as UTF-8), each as its own bytes without its
 * break: a break is LF, CRLF or a lone CR, as node:readline's with crlfDelay Infinity on Node 20
 * (which this replaced: it decoded every line to a string, and found breaks with a regular
 * expression; from Node 24 it also breaks at U+2028 and U+2029, which JSON allows inside a string
 * and this does not). As readline, it drops an unfinished UTF-8 character at the very end.
 */
export async function* readLines(input: AsyncIterable<Buffer | Uint8Array | string>): AsyncGenerator<Buffer> {
  // The current line's bytes from earlier chunks.
  let pending: Buffer[] = [];
  // The last chunk ended with a CR: an LF first in the next one is part of that break.
  let afterCr = false;
  // A string chunk's last high surrogate, kept for the next (its pair may come there).
  let surrogate = '';
  for await (const chunk of input) {
    let data: Buffer;
    if (typeof chunk === 'string') {
      const text = surrogate + chunk;
      const last = text.charCodeAt(text.length - 1);
      surrogate = last >= 0xd800 && last <= 0xdbff ? text.slice(-1) : '';
      data = Buffer.from(surrogate ? text.slice(0, -1) : text);
    } else {
      data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    }
    // An empty chunk ends a CR's wait for its LF, as in readline.
    if (data.length === 0) {
      afterCr = false;
      continue;
    }
    let start: number = afterCr && data[0] === LF ? 1 : 0;
    afterCr = false;
    // The next CR and LF at or after start (-1: none left in this chunk), each searched for again
    // only once passed: a search per line would read the chunk's rest each time (lines broken by
    // lone CRs only, say, would cost the square of the chunk).
    let cr: number = data.indexOf(CR, start);
    let lf: number = data.indexOf(LF, start);
    for (;;) {
      if (cr >= 0 && cr < start) cr = data.indexOf(CR, start);
      if (lf >= 0 && lf < start) lf = data.indexOf(LF, start);
      let end: number;
      let next: number;
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        end = cr;
        next = cr + 1 === lf ? lf + 1 : cr + 1;
        // A CR last in the chunk: the LF that may come first in the next is part of this break.
        afterCr = cr + 1 === data.length;
      } else if (lf >= 0) {
        end = lf;
        next = lf + 1;
      } else {
        if (start < data.length) pending.push(Buffer.from(data.subarray(start)));
        break;
      }
      // A copy of its own: a line may outlive its chunk by far (it waits to be verified and stored).
      yield pending.length === 0 ? Buffer.from(data.subarray(start, end)) : Buffer.concat([...pending, data.subarray(start, end)]);
      pending = [];
      start = next;
    }
  }
  if (surrogate) pending.push(Buffer.from(surrogate));
  const last = withoutUnfinishedCharacter(Buffer.concat(pending));
  if (last.length > 0) yield last;
}

/** Bytes without an unfinished UTF-8 sequence at their end (a lead byte and fewer continuation bytes than it calls for). */
function withoutUnfinishedCharacter(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue;
    // Lead bytes by their bit patterns (110xxxxx, 1110xxxx, 11110xxx), as node:string_decoder reads them.
    const needs = byte >> 5 === 0x06 ? 2 : byte >> 4 === 0x0e ? 3 : byte >> 3 === 0x1e ? 4 : 1;
    return needs > back ? bytes.subarray(0, bytes.length - back) : bytes;
  }
  return bytes;
}

const LF = 0x0a;
const CR = 0x0d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** Spaces and tabs (and the other ASCII blanks String.prototype.trim removes, but line breaks). */
function isBlank(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0b || byte === 0x0c;
}

/** A line's bytes without the ASCII blanks at either end, if what is left starts `{` and ends `}`. */
function objectLine(line: Buffer): Buffer | undefined {
  let from = 0;
  let to = line.length;
  while (from < to && isBlank(line[from])) from++;
  while (to > from && isBlank(line[to - 1])) to--;
  if (to - from < 2 || line[from] !== OPEN_BRACE || line[to - 1] !== CLOSE_BRACE) return undefined;
  return from === 0 && to === line.length ? line : line.subarray(from, to);
}

/**
 * Reads JSON Lines of events or of relay messages, or one JSON document (an array of events, or a
 * single pretty-printed event), and never stops on a bad line. The format is told from the first
 * line: if it is not JSON on its own, the whole input is tried as one document (read into memory),
 * and if that fails too, line by line, so one broken first line loses only itself.
 */
export async function* readEventInput(input: Readable, { deferObjectLines = false }: { deferObjectLines?: boolean } = {}): AsyncGenerator<InputItem> {
  let lineNumber = 0;
  let sawContent = false;
  // Set when the first non-empty line is not JSON by itself: the rest is kept to try as one document.
  let document: { firstLine: number; lines: string[] } | undefined;
  for await (const bytes of readLines(input)) {
    lineNumber++;
    if (document) {
      document.lines.push(bytes.toString('utf8'));
      continue;
    }
    // The first line is parsed whatever it holds: it tells the format.
    const wire = deferObjectLines && sawContent ? objectLine(bytes) : undefined;
    if (wire) {
      yield { type: 'object-line', wire, line: lineNumber, bytes: wire.length };
      continue;
    }
    const rawLine = bytes.toString('utf8');
    const text = rawLine.trim();
    if (text === '') continue;
    const parsed = parseJson(text);
    if (parsed.ok) yield* itemsOfValue(parsed.value, lineNumber, text.length, text);
    else if (!sawContent) document = { firstLine: lineNumber, lines: [rawLine] };
    else yield { type: 'unreadable', line: lineNumber };
    sawContent = true;
  }
  if (!document) return;
  const text = document.lines.join('\n');
  const whole = parseJson(text);
  if (whole.ok) {
    yield* itemsOfValue(whole.value, document.firstLine, text.length);
    return;
  }
  for (const [offset, rawLine] of document.lines.entries()) {
    const text = rawLine.trim();
    if (text === '') continue;
    const parsed = parseJson(text);
    if (parsed.ok) yield* itemsOfValue(parsed.value, document.firstLine + offset, text.length, text);
    else yield { type: 'unreadable', line: document.firstLine + offset };
  }
}
