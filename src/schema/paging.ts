import { LookupError } from '../errors.js';
import type { ReplyPosition } from '../store/relation-index.js';

/**
 * What a page of a connection is (DESIGN "Relationships": Relay-style, `first` ≤ 100, opaque
 * cursors): its size, and the cursor that says where it ends. The cost model (query-cost.ts) reads
 * the same size bounds.
 */

/** `first` when the query does not say. */
export const DEFAULT_PAGE_SIZE = 20;

/** The most items one page may hold. */
export const MAX_PAGE_SIZE = 100;

/**
 * A home feed page (schema/feed.ts) examines at most this many events per item asked (`first`),
 * those it leaves out (replies, mutes) included.
 */
export const FEED_SCAN_FACTOR = 5;

/**
 * The most notifications `notificationCounts(trusted: true)` reads to count (schema/notifications.ts):
 * each is read and judged (its author in the web, its mutes), so counts by trust are exact or
 * refused, never estimated. A client asks them since it last looked: far fewer.
 */
export const MAX_TRUSTED_COUNTED = 2000;

/**
 * Index entries the reads behind counts by trust may go through in one request, all of them
 * together (RelationIndex.relatedIds' LedgerScan): on Redis a removed relation leaves an entry they
 * read past, so what they read is bounded by this, not only by what they count.
 */
export const LEDGER_ENTRIES_PER_REQUEST = 4 * MAX_TRUSTED_COUNTED;

/** The page size asked for, or invalid_argument: a whole number from 1 to MAX_PAGE_SIZE (null is not one). */
export function pageSizeOf(first: number | null | undefined): number {
  if (typeof first !== 'number' || !Number.isInteger(first) || first < 1 || first > MAX_PAGE_SIZE) {
    throw new LookupError('invalid_argument');
  }
  return first;
}

/**
 * A position cursor is base64url (no padding) of `<version>:<created_at>:<id>`: a version, then the
 * position of the item in its list (store/relation-index.ts: replies by created_at then id, an
 * author's notes newest first then by id, a home feed as notes: schema/feed.ts, a note search's
 * results as notes: schema/note-search.ts). Opaque to
 * clients: the version names the list, so that a reply cursor is never read as a notes cursor, and
 * lets the form change without old cursors being misread.
 */
const POSITION_CURSOR_VERSIONS = { replies: 'r1', notes: 'n1', feed: 'h1', notifications: 'w1', search: 's1' } as const;
export type PositionList = keyof typeof POSITION_CURSOR_VERSIONS;
/** A version, created_at without leading zeros (at most 2^53 - 1: 16 digits), `:`, a lowercase hex id. */
const CURSOR_TEXT = /^([a-z][0-9]):(0|[1-9][0-9]{0,15}):([0-9a-f]{64})$/;
/** Longer than any cursor we give out (base64url of at most 84 bytes is 112 characters). */
const MAX_CURSOR_LENGTH = 112;

export function encodeCursor({ createdAt, id }: ReplyPosition, list: PositionList = 'replies'): string {
  return Buffer.from(`${POSITION_CURSOR_VERSIONS[list]}:${createdAt}:${id}`, 'latin1').toString('base64url');
}

/**
 * The position a cursor names, or invalid_cursor for anything that is not a cursor we give out for
 * this list: empty, not base64url, not in its one canonical spelling (Node's decoder forgives stray
 * characters and trailing bits; re-encoding catches them), another version or list, an id that is
 * not 64 lowercase hex, a created_at beyond 2^53 - 1. Never echoed back: it is client input.
 */
export function decodeCursor(cursor: string, list: PositionList = 'replies'): ReplyPosition {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH) throw new LookupError('invalid_cursor');
  const match = CURSOR_TEXT.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  const createdAt = Number(match?.[2]);
  if (!match || match[1] !== POSITION_CURSOR_VERSIONS[list] || !Number.isSafeInteger(createdAt)) throw new LookupError('invalid_cursor');
  const position = { createdAt, id: match[3] as string };
  if (encodeCursor(position, list) !== cursor) throw new LookupError('invalid_cursor');
  return position;
}

/**
 * Follow cursors, base64url like the others: `f1:<pubkey>` (a follower: followers are read by
 * pubkey) and `g1:<position>:<pubkey>` (a followed pubkey and its place in the list: the next page
 * starts after that pubkey where the list now has it, else after that place, so that a list replaced
 * between pages never repeats an item).
 */
const FOLLOWER_CURSOR = /^f1:([0-9a-f]{64})$/;
const FOLLOWING_CURSOR = /^g1:(0|[1-9][0-9]{0,4}):([0-9a-f]{64})$/;

export function encodeFollowerCursor(pubkey: string): string {
  return Buffer.from(`f1:${pubkey}`, 'latin1').toString('base64url');
}

export function encodeFollowingCursor(position: number, pubkey: string): string {
  return Buffer.from(`g1:${position}:${pubkey}`, 'latin1').toString('base64url');
}

/** The follower a cursor names, or invalid_cursor (as decodeCursor). */
export function decodeFollowerCursor(cursor: string): string {
  const match = cursor.length <= MAX_CURSOR_LENGTH ? FOLLOWER_CURSOR.exec(Buffer.from(cursor, 'base64url').toString('latin1')) : null;
  if (!match || encodeFollowerCursor(match[1] as string) !== cursor) throw new LookupError('invalid_cursor');
  return match[1] as string;
}

/** The place and pubkey a following cursor names, or invalid_cursor (as decodeCursor). */
export function decodeFollowingCursor(cursor: string): { position: number; pubkey: string } {
  const match = cursor.length <= MAX_CURSOR_LENGTH ? FOLLOWING_CURSOR.exec(Buffer.from(cursor, 'base64url').toString('latin1')) : null;
  if (!match) throw new LookupError('invalid_cursor');
  const position = Number(match[1]);
  const pubkey = match[2] as string;
  if (encodeFollowingCursor(position, pubkey) !== cursor) throw new LookupError('invalid_cursor');
  return { position, pubkey };
}
