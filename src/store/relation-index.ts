import { type NostrEvent, wireByteLength, wireFormOf } from '../nostr/event.js';
import { hasContentEntry, type RelationEdge } from '../nostr/relationships.js';
import type { FollowIndex } from './follow-index.js';
import type { ListChangeLog } from './list-changes.js';
import type { NotificationIndex } from './notification-index.js';
import type { NoteSearchIndex } from './note-search-index.js';
import type { SearchIndex } from './search-index.js';
import type { ZapIndex } from './zap-index.js';

/**
 * The relationship index: what other events say about an event (nostr/relationships.ts), kept by
 * the store in the same write as the events, per target event id (each store's layout beside it:
 * embedded/lmdb-relation-index.ts, redis/redis-relation-index.ts and RELATE in lua-scripts.ts):
 * - a tally of counters (`TALLY`), distinct authors where the rule says so;
 * - who reacted and reposted, per author (so that one author's second like, or the deletion of one
 *   of two, changes nothing), and the distinct authors per reaction content, kept in byContent order
 *   so that a read takes the first MAX_REACTION_CONTENTS;
 * - the direct replies as a list ordered by (created_at, id), paged by position;
 * - each author's events per kind, newest first (`Profile.notes`): every servable event of a kind
 *   nostr/relationships.ts isNoteKind lists, an addressable one while it is the latest version.
 * What this module holds is what both stores share: the names, the encodings, the read-side order.
 *
 * Every figure is maintained by transitions of the events themselves (stored, replaced, deleted,
 * vanished), each applied once, as increments that commute: whatever order writers on different
 * nodes apply them in, the figures agree once they all have (`relations check` proves it).
 */

/** What the index holds beyond events (RelationIndex.totals). */
export interface IndexTotals {
  follows: number;
  notifications: number;
}

/** The figures of one target, as EventStats serves them. */
export interface RelationStats {
  replies: number;
  threadReplies: number;
  quotes: number;
  reposts: number;
  reactions: ReactionStats;
}

export interface ReactionStats {
  pubkeys: number;
  likes: number;
  dislikes: number;
  /** One entry per distinct content, by count descending, then content ascending. */
  byContent: ReactionCount[];
}

export interface ReactionCount {
  content: string;
  pubkeys: number;
}

/** Where a reply sits in its parent's list: ordered by created_at, then id. */
export interface ReplyPosition {
  createdAt: number;
  id: string;
  /**
   * The size of the reply's stored JSON, kept with its place in the list (read from the index,
   * absent on a position taken from a cursor): a page reserves what it will read exactly.
   */
  bytes?: number;
}

/** An event that relates to a target (RelationIndex.relatedIds), with its stored size (storedSizeOf). */
export interface RelatedEvent {
  id: string;
  bytes: number;
}

/** What relatedIds found, and whether it is all: false past `limit`, or when the scan ran out (LedgerScan). */
export interface RelatedEvents {
  events: RelatedEvent[];
  complete: boolean;
}

/** Index entries a request's relatedIds reads may still go through (decremented as they read). */
export interface LedgerScan {
  entries: number;
}

/** A page of an author's notes of some kinds (`timelines`). */
export interface NotePage {
  author: string;
  kinds: readonly number[];
  after: ReplyPosition | null;
  first: number;
}

/** One author's list of one kind (`notes`), as `relations check` walks them. */
export interface NoteFeed {
  author: string;
  kind: number;
}

/** The index; its zap part is described in zap-index.ts, its follow part in follow-index.ts, its search parts in search-index.ts and note-search-index.ts. */
export interface RelationIndex extends ZapIndex, FollowIndex, SearchIndex, NoteSearchIndex, NotificationIndex, ListChangeLog {
  /** The figures of each target id, in the order asked (zeros where nothing relates). One round trip. */
  stats(ids: readonly string[]): Promise<RelationStats[]>;
  /** Up to `first` direct replies of `id` after `after` (exclusive), oldest first. */
  replies(id: string, after: ReplyPosition | null, first: number): Promise<ReplyPosition[]>;
  /**
   * The servable events that relate to `target`: every event with an edge to it
   * (nostr/relationships.ts: reply, thread reply, quote, repost, reaction) and every zap receipt of
   * it (zap-index.ts), each once with its stored size, at most `limit` of them, in no set order. What
   * `stats(viewer:)` reads and recounts over the events a reader's web shows
   * (schema/trusted-stats.ts). `scan`: what the reads of a request may still go through, shared by
   * them (Redis: its ledgers' entries, removed ones included), so that aliases cannot multiply it.
   */
  relatedIds(target: string, limit: number, scan?: LedgerScan): Promise<RelatedEvents>;
  /** The reply lists of many targets in full (for `relations check`). */
  allReplies(id: string): Promise<ReplyPosition[]>;
  /**
   * Up to `first` events of `author` of any of `kinds` after `after` (exclusive), newest first, then
   * by id (DESIGN "Relationships"): one round trip whatever the kinds.
   */
  notes(author: string, kinds: readonly number[], after: ReplyPosition | null, first: number): Promise<ReplyPosition[]>;
  /**
   * `notes` for many authors at once (a home feed's merge, schema/feed.ts): each page's answer, in
   * the order asked, in as few round trips as the store can.
   */
  timelines(pages: readonly NotePage[]): Promise<ReplyPosition[][]>;
  /** Every (author, kind) list that holds an event (for `relations check`), in batches. */
  noteFeeds(): AsyncIterable<NoteFeed[]>;
  /**
   * Whether the store keeps each author's notes of the default feed kinds merged (a home timeline:
   * LMDB, where a feed page would otherwise seek three lists per author), which `notes` reads for
   * exactly those kinds; Redis merges the lists in its script as it reads them.
   */
  readonly keepsHomeTimelines: boolean;
  /** Every author with a home timeline (for `relations check`), in batches; none where none are kept. */
  homeTimelineAuthors(): AsyncIterable<string[]>;
  /** Every target that has anything in the index (for `relations check`), in batches. */
  targets(): AsyncIterable<string[]>;
  /** Empties the index (`relations rebuild`, before it relates every servable event again). */
  clear(): Promise<void>;
  /**
   * Servable events held, by kind: counters kept on every transition (stored, replaced, removed),
   * so that `stats`, `/metrics` and `GET /` read a few numbers, never a scan.
   */
  eventCounts(): Promise<Map<number, number>>;
  /** Sets them (`relations rebuild`, from the distinct servable events it read). */
  setEventCounts(counts: ReadonlyMap<number, number>): Promise<void>;
  /**
   * Follows (a pubkey's latest list naming another: the followers of every pubkey, summed) and
   * notifications held, kept on every change the follow and notification indexes apply (emptied by
   * `clear`, so a rebuild's replay counts them again): what `stats`, `/metrics` and `GET /` say.
   */
  totals(): Promise<IndexTotals>;
}

/**
 * The stores' side of `relations rebuild` and `relations check`: every servable event they hold, in
 * batches, and a way to relate events without writing them (they are stored already).
 */
export interface RelationMaintenance {
  /** Every servable event held (latest versions only; no tombstones), in batches. */
  servableEvents(): AsyncIterable<NostrEvent[]>;
  /** Adds the relations of events already stored (after `relations.clear()`). */
  relateStored(events: readonly NostrEvent[]): Promise<void>;
  /** After `relateStored` has seen every servable event: what the store keeps beside the index is brought in line (Redis: the authors' lists). */
  finishRebuild(): Promise<void>;
}

/** Tally counters (a field or key per counter). */
export const TALLY = {
  replies: 'r',
  threadReplies: 't',
  quotes: 'q',
  reposts: 'o',
  reactionPubkeys: 'p',
  likes: '+',
  dislikes: '-',
} as const;

/** The counters, in the order the stores read them. */
export const COUNTERS = [TALLY.replies, TALLY.threadReplies, TALLY.quotes, TALLY.reposts, TALLY.reactionPubkeys, TALLY.likes, TALLY.dislikes] as const;

/**
 * The most `byContent` entries a target's figures hold: the first by count. Anyone can react with
 * any content, so a target may gather thousands of distinct ones; the stores keep them ordered and
 * read only these (a page of the order, never all of them).
 */
export const MAX_REACTION_CONTENTS = 50;

/** The key of every content too long for an entry of its own (hasContentEntry): not JSON, so never a content's. */
export const LONG_CONTENT_KEY = '*';

/**
 * Contents are kept as their JSON text: every string survives (lone surrogates included, which
 * UTF-8 cannot carry), and it never holds a tab or a newline, which separate the records below.
 * A long one is kept as LONG_CONTENT_KEY: its author counts, it has no entry.
 */
export function contentKey(content: string): string {
  return hasContentEntry(content) ? JSON.stringify(content) : LONG_CONTENT_KEY;
}

/** Like reactions (NIP-25: `+` or empty) and dislikes (`-`), by their keys. */
export const LIKE_KEYS: readonly string[] = ['"+"', '""'];
export const DISLIKE_KEY = '"-"';

/**
 * Lines `<count>\t<key>\n`: a Redis target's byContent while it has few distinct contents (the
 * RELATE script's `C` field).
 */
export function decodeCounts(value: string | undefined | null): Map<string, number> {
  const counts = new Map<string, number>();
  if (!value) return counts;
  for (const line of value.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab > 0) counts.set(line.slice(tab + 1), Number(line.slice(0, tab)));
  }
  return counts;
}

/**
 * DESIGN: `byContent` by count descending, then content ascending, here by the UTF-8 bytes of its
 * JSON text (for what reactions hold, emoji and words, that is code point order): the order Redis
 * and LMDB keep keys in, so that a store reads the first entries of it and nothing else.
 */
export function compareContentCounts(a: { key: string; pubkeys: number }, b: { key: string; pubkeys: number }): number {
  return b.pubkeys - a.pubkeys || Buffer.compare(Buffer.from(a.key), Buffer.from(b.key));
}

/**
 * The figures from a target's counters (field → count; below zero, in flight, reads as 0) and its
 * distinct authors per content key (any order; the first MAX_REACTION_CONTENTS are kept).
 */
export function statsFromTally(tally: ReadonlyMap<string, number>, contents: Iterable<[key: string, pubkeys: number]>): RelationStats {
  const read = (field: string) => Math.max(0, tally.get(field) ?? 0);
  const entries: { key: string; pubkeys: number }[] = [];
  for (const [key, pubkeys] of contents) if (key !== LONG_CONTENT_KEY && pubkeys > 0) entries.push({ key, pubkeys });
  entries.sort(compareContentCounts);
  return {
    replies: read(TALLY.replies),
    threadReplies: read(TALLY.threadReplies),
    quotes: read(TALLY.quotes),
    reposts: read(TALLY.reposts),
    reactions: {
      pubkeys: read(TALLY.reactionPubkeys),
      likes: read(TALLY.likes),
      dislikes: read(TALLY.dislikes),
      byContent: entries.slice(0, MAX_REACTION_CONTENTS).map(({ key, pubkeys }) => ({ content: JSON.parse(key) as string, pubkeys })),
    },
  };
}

export const NO_RELATIONS: RelationStats = Object.freeze({
  replies: 0,
  threadReplies: 0,
  quotes: 0,
  reposts: 0,
  reactions: Object.freeze({ pubkeys: 0, likes: 0, dislikes: 0, byContent: [] }),
}) as RelationStats;

/**
 * A reply's place in a list as a fixed-width string that sorts as positions do: created_at as 14
 * hex digits (up to 2^53), then the id (LMDB keys it so, its size the value). Redis keeps the same
 * as 39 bytes, followed by the size (replyMemberBytes).
 */
export function replyMember({ createdAt, id }: ReplyPosition): string {
  return createdAt.toString(16).padStart(14, '0') + id;
}

export function replyPositionOf(member: string): ReplyPosition {
  return { createdAt: Number.parseInt(member.slice(0, 14), 16), id: member.slice(14) };
}

/**
 * The same position as 7 bytes of big-endian created_at and the 32 bytes of the id (binary order is
 * position order), then the size as 4 bytes (0xffffffff for a bound: after every size of that place).
 */
export function replyMemberBytes({ createdAt, id, bytes: size }: ReplyPosition): Buffer {
  const bytes = Buffer.alloc(43);
  bytes.writeUIntBE(Math.floor(createdAt / 2 ** 24), 0, 4);
  bytes.writeUIntBE(createdAt % 2 ** 24, 4, 3);
  bytes.write(id, 7, 'hex');
  bytes.writeUInt32BE(size ?? 0xffffffff, 39);
  return bytes;
}

/**
 * An author's notes are kept newest first, then by id: the same encodings as replies, of the place
 * with its created_at mirrored (NEWEST minus it), so that ascending key order is the notes' order.
 */
const NEWEST = 2 ** 53 - 1;
export function notePlace(position: ReplyPosition): ReplyPosition {
  return { ...position, createdAt: NEWEST - position.createdAt };
}

/** notePlace(replyPositionOf(member)) with the event's size, made as one object (a feed page reads thousands). */
export function notePositionOf(member: string, bytes: number): ReplyPosition {
  return { createdAt: NEWEST - Number.parseInt(member.slice(0, 14), 16), id: member.slice(14), bytes };
}

/** Newest first, then by id: the order of an author's notes. */
export function compareNotes(a: ReplyPosition, b: ReplyPosition): number {
  return b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export function replyPositionOfBytes(bytes: Buffer): ReplyPosition {
  return { createdAt: bytes.readUIntBE(0, 4) * 2 ** 24 + bytes.readUIntBE(4, 3), id: bytes.toString('hex', 7, 39), bytes: bytes.readUInt32BE(39) };
}

/** The size of an event as the stores hold it (its wire JSON in UTF-8), as reply positions carry it. */
export function storedSizeOf(event: NostrEvent): number {
  return wireByteLength(wireFormOf(event));
}

/** The edges of an event, with what each adds where: used by both stores' writers. */
export type { RelationEdge };
