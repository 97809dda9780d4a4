import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { StringOutput } from '../store/json-text.js';
import { wireCreatedAtOf, wireIdOf } from '../store/stored-event.js';

/**
 * Validators of a REST answer (issue 16 §3): a strong ETag derived from the ids of every event in
 * the body, in order (an event never changes under its id, and the body is made from these events
 * alone, so the same ids mean the same bytes), and Last-Modified, the newest created_at among them
 * (when the newest of its versions was made), never later than now: a created_at is its author's
 * claim and may lie in the future, which HTTP does not allow.
 */
export interface Validators {
  etag: string;
  /** Unix seconds. */
  lastModified: number;
}

/** The validators of a body made of these stored events (the first is the thing asked). */
export function validatorsOf(events: readonly StringOutput[]): Validators {
  const bytes = events.map((event) => (typeof event === 'string' ? Buffer.from(event) : event.bytes));
  const ids = bytes.map(wireIdOf);
  // One event: its id is the tag (no hashing); more: a digest of the ids in body order.
  const tag = ids.length === 1 ? (ids[0] as string) : createHash('sha256').update(ids.join(',')).digest('base64url');
  let newest = 0;
  for (const event of bytes) newest = Math.max(newest, wireCreatedAtOf(event));
  return { etag: `"${tag}"`, lastModified: Math.min(newest, Math.floor(Date.now() / 1000)) };
}

/** The headers that carry the validators. */
export function validatorHeaders({ etag, lastModified }: Validators): Record<string, string> {
  return { etag, 'last-modified': new Date(lastModified * 1000).toUTCString() };
}

/**
 * Whether the client's copy is current (RFC 9110 §13.1): If-None-Match, if sent, decides alone
 * (weak comparison: `W/"x"` matches `"x"`; `*` matches any); else If-Modified-Since, a valid
 * HTTP date not before Last-Modified.
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
  if (ifModifiedSince === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  return Number.isFinite(since) && Math.floor(since / 1000) >= lastModified;
}
