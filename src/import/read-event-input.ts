import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/**
 * One item of import input:
 * - `candidate`: something that claims to be an event (still to be verified);
 * - `unreadable`: a line that is not JSON;
 * - `ignored`: a well-formed relay message that carries no event (EOSE, NOTICE, OK…).
 */
export type InputItem =
  /**
   * `bytes`: the JSON text it was read from (a document's, shared out among its events), for memory
   * bounds; `text`: that text, when the value is all of it (a line that is one event), for a
   * verification thread to parse on its own (a string crosses to a thread as one copy, a parsed
   * event as thousands of values).
   */
  | { type: 'candidate'; value: unknown; line: number; bytes: number; text?: string }
  /**
   * A line that looks like one JSON object, not parsed here (readEventInput's `deferObjectLines`):
   * whoever verifies it parses it, and counts it unreadable if it is not JSON. An import's
   * verification thread parses it there, so that a follow list's thousand tags are parsed once,
   * not also on the thread that stores it.
   */
  | { type: 'object-line'; text: string; line: number; bytes: number }
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
 * Reads JSON Lines of events or of relay messages, or one JSON document (an array of events, or a
 * single pretty-printed event), and never stops on a bad line. The format is told from the first
 * line: if it is not JSON on its own, the whole input is tried as one document (read into memory),
 * and if that fails too, line by line, so one broken first line loses only itself.
 */
export async function* readEventInput(input: Readable, { deferObjectLines = false }: { deferObjectLines?: boolean } = {}): AsyncGenerator<InputItem> {
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let lineNumber = 0;
  let sawContent = false;
  // Set when the first non-empty line is not JSON by itself: the rest is kept to try as one document.
  let document: { firstLine: number; lines: string[] } | undefined;
  for await (const rawLine of lines) {
    lineNumber++;
    if (document) {
      document.lines.push(rawLine);
      continue;
    }
    const text = rawLine.trim();
    if (text === '') continue;
    // The first line is parsed whatever it holds: it tells the format.
    if (deferObjectLines && sawContent && text.startsWith('{') && text.endsWith('}')) {
      yield { type: 'object-line', text, line: lineNumber, bytes: text.length };
      continue;
    }
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
