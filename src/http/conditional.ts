import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { joinJson, type StringOutput } from '../store/json-text.js';
import type { Rendered } from './rest-response.js';
import { copyWireId, hasWireId, wireCreatedAtOf, wireIdOf } from '../store/stored-event.js';

/**
 * Validators of a REST answer: a strong ETag derived from the ids of every event in
 * the body, in order (an event never changes under its id, and the body is made from these events
 * alone, so the same ids mean the same bytes), and, for a single profile, Last-Modified: its
 * created_at (when that version was made), never later than now (a created_at is its author's
 * claim and may lie in the future, which HTTP does not allow). Not for /event: a profile that
 * arrives later, or a newer version still older than the event, changes the body without making
 * anything in it newer, and an If-Modified-Since client would be told 304 wrongly.
 */
export interface Validators {
  etag: string;
  /** Unix seconds, where meaningful. */
  lastModified?: number;
  /** Last-Modified was held back to now (a created_at in the future): a later answer says a later time. */
  heldBack?: boolean;
}

/** The validators of a body made of these stored events (the first is the thing asked). */
export function validatorsOf(events: readonly StringOutput[], { lastModified }: { lastModified: boolean }): Validators {
  const bytes = events.map((event) => (typeof event === 'string' ? Buffer.from(event) : event.bytes));
  // One event: its id is the tag (no hashing); more: a digest of the ids in body order, joined by
  // commas (the ids' bytes copied side by side: no string per id).
  const tag = bytes.length === 1 ? wireIdOf(bytes[0] as Buffer) : createHash('sha256').update(joinedIds(bytes)).digest('base64url');
  if (!lastModified) return { etag: `"${tag}"` };
  let newest = 0;
  for (const event of bytes) newest = Math.max(newest, wireCreatedAtOf(event));
  const now = Math.floor(Date.now() / 1000);
  return newest < now ? { etag: `"${tag}"`, lastModified: newest } : { etag: `"${tag}"`, lastModified: now, heldBack: true };
}

/**
 * A screen's body (routes/feed.ts, notifications.ts, thread.ts, search.ts), joined, with its validator: more than stored events (counts,
 * a cursor), so a digest of what the body is made of (digestInput): the same parts, the same bytes,
 * the same tag. One hash call over a few kilobytes: hashing a notifications page's 100 KB part by
 * part took a tenth of its CPU (BENCHMARKS.md).
 */
export function renderedBody(parts: readonly StringOutput[]): Rendered {
  const body = joinJson(parts);
  // A NUL where digestInput marks ids would make the marks ambiguous: the body itself, then, each
  // kind of input under its own first byte (a body could spell another's digest input).
  const hash = createHash('sha256');
  if (parts.some((part) => typeof part === 'string' && part.includes('\u0000'))) hash.update(BODY_DIGESTED).update(body);
  else hash.update(IDS_DIGESTED).update(digestInput(parts));
  return { parts, body, validators: { etag: `"${hash.digest('base64url')}"` } };
}

const IDS_DIGESTED = Buffer.from([1]);
const BODY_DIGESTED = Buffer.from([2]);

/**
 * The body with each stored event in it written as a NUL and its id: an event never changes under
 * its id (the bytes a store holds are serializeEvent's, one spelling per event), and JSON text never
 * holds a NUL (renderedBody checks the strings), so where one is, an id follows. Other JSON texts
 * go in whole.
 */
function digestInput(parts: readonly StringOutput[]): Buffer {
  let length = 0;
  for (const part of parts) length += typeof part === 'string' ? Buffer.byteLength(part) : hasWireId(part.bytes) ? 65 : part.bytes.length;
  const input = Buffer.allocUnsafe(length);
  let offset = 0;
  for (const part of parts) {
    if (typeof part === 'string') offset += input.write(part, offset);
    else if (hasWireId(part.bytes)) {
      input[offset] = 0;
      copyWireId(part.bytes, input, offset + 1);
      offset += 65;
    } else offset += part.bytes.copy(input, offset);
  }
  return input;
}

/** `id,id,…` of the events, as bytes. */
function joinedIds(events: readonly Buffer[]): Buffer {
  const joined = Buffer.allocUnsafe(events.length * 65 - 1);
  events.forEach((event, index) => {
    copyWireId(event, joined, index * 65);
    if (index > 0) joined[index * 65 - 1] = 0x2c;
  });
  return joined;
}

/** The headers that carry the validators: made once per validators (a kept answer's are served again). */
export function validatorHeaders(validators: Validators): Record<string, string> {
  let headers = HEADERS.get(validators);
  if (headers === undefined) {
    const { etag, lastModified } = validators;
    headers = lastModified === undefined ? { etag } : { etag, 'last-modified': httpDate(lastModified) };
    HEADERS.set(validators, headers);
  }
  return headers;
}

const HEADERS = new WeakMap<Validators, Record<string, string>>();

/** HTTP dates of recent created_at values: formatting one per answer was 1% of a cached lookup's CPU. */
const HTTP_DATES = new Map<number, string>();
function httpDate(seconds: number): string {
  let text = HTTP_DATES.get(seconds);
  if (text === undefined) {
    text = new Date(seconds * 1000).toUTCString();
    if (HTTP_DATES.size >= 4096) HTTP_DATES.clear();
    HTTP_DATES.set(seconds, text);
  }
  return text;
}

/**
 * Whether the client's copy is current (RFC 9110 §13.1): If-None-Match, if sent, decides alone
 * (weak comparison: `W/"x"` matches `"x"`; `*` matches any); else, where there is a Last-Modified,
 * If-Modified-Since: an IMF-fixdate (RFC 9110 §5.6.7; other forms are ignored, as a date later than
 * now is, §13.1.3) not before it.
 */
export function notModified(headers: IncomingHttpHeaders, { etag, lastModified }: Validators): boolean {
  const ifNoneMatch = headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    return ifNoneMatch.split(',').some((candidate) => {
      const tag = candidate.trim();
      return tag === '*' || tag === etag || tag === `W/${etag}`;
    });
  }
  const ifModifiedSince = headers['if-modified-since'];
  if (ifModifiedSince === undefined || lastModified === undefined || !IMF_FIXDATE.test(ifModifiedSince)) return false;
  const since = Date.parse(ifModifiedSince);
  return Number.isFinite(since) && since <= Date.now() && Math.floor(since / 1000) >= lastModified;
}

/** `Sun, 06 Nov 1994 08:49:37 GMT` (what toUTCString writes). */
const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;
