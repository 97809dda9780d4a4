/**
 * NIP-01 relay-to-client messages, checked for shape before nostr-tools reads them. nostr-tools
 * assumes well-formed messages (it reports the others with console.warn, a channel a hostile relay
 * could flood), so anything else is dropped here, silently and cheaply.
 *
 *   ["EVENT", <subscription id>, <event object>]   ["EOSE", <subscription id>]
 *   ["CLOSED", <subscription id>, <message>]       ["NOTICE", <message>]
 *   ["OK", <event id>, <true|false>, <message>]     ["AUTH", <challenge>]   (NIP-42)
 *   ["COUNT", <subscription id>, {"count": <n>}]    (NIP-45)
 *
 * Event contents are not checked here: every event is verified (NIP-01 id and signature) after.
 */
export function isRelayMessage(data: unknown): boolean {
  return relayMessageOf(data) !== undefined;
}

/** The message parsed, if it has one of the shapes above; undefined otherwise. */
export function relayMessageOf(data: unknown): unknown[] | undefined {
  if (typeof data !== 'string' || data.length === 0 || data[0] !== '[') return undefined;
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return undefined;
  }
  return Array.isArray(message) && hasShape(message) ? message : undefined;
}

function hasShape(message: unknown[]): boolean {
  if (typeof message[0] !== 'string' || typeof message[1] !== 'string') return false;
  switch (message[0]) {
    case 'EVENT':
      return message.length === 3 && isPlainObject(message[2]);
    case 'EOSE':
      return message.length === 2;
    case 'CLOSED':
      return message.length === 3 && typeof message[2] === 'string';
    case 'NOTICE':
    case 'AUTH':
      return message.length === 2;
    case 'OK':
      return message.length === 4 && typeof message[2] === 'boolean' && typeof message[3] === 'string';
    case 'COUNT':
      return message.length === 3 && isPlainObject(message[2]) && typeof message[2].count === 'number';
    default:
      return false;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The front of a relay message, as readMessageHead reads it. */
export interface MessageHead {
  /** The first element: "EVENT", "EOSE", "NOTICE"… */
  type: string;
  /** The second element when it is a string no longer than a subscription id; undefined otherwise. */
  id: string | undefined;
}

/** NIP-01: subscription ids are at most 64 characters. */
const MAX_ID_CHARS = 64;
/** Longest type read: every NIP-01 message type is far shorter. */
const MAX_TYPE_CHARS = 16;
/**
 * How far readMessageHead looks, whatever the message's length: room for `["<type>",` and an id of
 * 64 characters each written as a 6-character escape (`\u0000`), with some whitespace.
 */
export const MESSAGE_HEAD_CHARS = 512;

/**
 * The type and second element of a relay message, read from the front of its text without parsing
 * the rest (a bounded scan of at most MESSAGE_HEAD_CHARS characters), so that a message meant for no
 * open subscription can be dropped before it costs a JSON.parse. Undefined when the text does not
 * start as `["<type>"` does. An id written with escapes is unescaped by parsing that one string,
 * so that the id read is exactly the one JSON.parse would give. Never throws.
 */
export function readMessageHead(text: string): MessageHead | undefined {
  const end = Math.min(text.length, MESSAGE_HEAD_CHARS);
  let at = skipWhitespace(text, 0, end);
  if (text.charCodeAt(at) !== BRACKET) return undefined;
  at = skipWhitespace(text, at + 1, end);
  const type = readString(text, at, Math.min(end, at + MAX_TYPE_CHARS + 2));
  if (!type) return undefined;
  at = skipWhitespace(text, type.next, end);
  if (at >= end || text.charCodeAt(at) !== COMMA) return { type: type.value, id: undefined };
  at = skipWhitespace(text, at + 1, end);
  const id = readString(text, at, Math.min(end, at + MAX_ID_CHARS * 6 + 2));
  return { type: type.value, id: id && id.value.length <= MAX_ID_CHARS ? id.value : undefined };
}

const BRACKET = 0x5b;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function skipWhitespace(text: string, at: number, end: number): number {
  while (at < end) {
    const code = text.charCodeAt(at);
    // JSON's whitespace: space, tab, line feed, carriage return.
    if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) break;
    at += 1;
  }
  return at;
}

/** The JSON string starting at `at` if it closes before `end`: its value and the index after it. */
function readString(text: string, at: number, end: number): { value: string; next: number } | undefined {
  if (at >= end || text.charCodeAt(at) !== QUOTE) return undefined;
  let escaped = false;
  for (let index = at + 1; index < end; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      if (!escaped) return { value: text.slice(at + 1, index), next: index + 1 };
      try {
        return { value: JSON.parse(text.slice(at, index + 1)) as string, next: index + 1 };
      } catch {
        return undefined;
      }
    }
    if (code === BACKSLASH) {
      escaped = true;
      index += 1; // the escaped character, `"` included, does not end the string
    } else if (code < 0x20) {
      return undefined; // control characters must be escaped in JSON
    }
  }
  return undefined;
}
