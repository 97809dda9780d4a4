import type { NostrEvent } from '../nostr/event.js';
import { DEFAULT_SEARCH_KINDS, noteWords } from '../nostr/note-search.js';
import { compareNotes, type ReplyPosition } from './relation-index.js';

/**
 * The note search part of the relationship index (`Query.searchNotes`; the rule in
 * nostr/note-search.ts), kept by the store in the same write as the events' other relations, by
 * every path (import, sync, fills: they all store through it), removed on every transition that
 * makes a note unservable (replaced, deleted, vanished): an inverted index, each word of a note
 * naming its place (newest first, then id), its kind and its size.
 *
 * The index is partitioned by document: a note's postings all go to one of NOTE_SEARCH_SHARDS
 * shards, chosen by its id, so that on Redis Cluster each shard's lists share a hash slot and one
 * script per shard intersects them where they are (only matches travel), and the shards' answers,
 * each in order, are merged by the caller. A query is driven by its rarest word (the fewest
 * postings in the shard), each posting checked against the other words' lists; a query whose last
 * word is a prefix (nostr/note-search.ts) expands it to the words the index holds that start with
 * it, at most MAX_PREFIX_WORDS (a note must hold one of them); past that many, the other words are
 * intersected alone (or, with none, every note is read: ALL_NOTES_WORD) and the caller checks the
 * prefix against each note's words. Each shard does SCAN_PER_SHARD units of work at most per call (a posting looked
 * at, a lookup in another list, a range read: one each; at least one posting): a query whose words
 * are common and seldom together, or many, stops there, its page short (never out of order), the
 * next page going on from where it stopped.
 */
export interface NoteSearchIndex {
  /** Whether the index is kept (NOTE_SEARCH): when not, writes leave it alone and `searchNotes` is refused (note_search_off). */
  readonly noteSearchEnabled: boolean;
  /** The words the index holds that start with `prefix`, in code point order, at most `limit` (for a query's last word). */
  noteWordsStarting(prefix: string, limit: number): Promise<string[]>;
  /** Up to `first` notes matching `query`, in order, after its `after`, and how far the search looked. */
  searchNotes(query: NoteSearchQuery, limits?: NoteSearchLimits): Promise<NoteSearchResult>;
  /** Every word list the index holds, all shards merged, in batches (for `relations check`): some words twice. */
  noteSearchLists(): AsyncIterable<NoteSearchList[]>;
}

export interface NoteSearchQuery {
  /** Words a note must hold each (distinct): the query's whole words. */
  words: readonly string[];
  /** Words of which a note must hold one (a prefix's expansion), or null. Never empty. */
  anyOf: readonly string[] | null;
  /** The kinds asked (each a searchable kind: isSearchableKind). */
  kinds: readonly number[];
  /** created_at at least this (inclusive), and at most `until`. */
  since: number | null;
  until: number | null;
  /** After this position (exclusive), or from the newest. */
  after: ReplyPosition | null;
  first: number;
}

export interface NoteSearchResult {
  /** Matches, newest first then by id, at most `first`, each with its kind and stored size. */
  notes: NotePosting[];
  /**
   * Null when every match after `after` up to the last of `notes` is there and the search went
   * through the index (no more matches past them unless `notes` is full). Else where the search
   * stopped looking (a shard's scan ran out): nothing between the last note and this position
   * is unseen, and the next page starts from here; matches past it may exist.
   */
  stoppedAt: ReplyPosition | null;
}

export interface NotePosting extends ReplyPosition {
  kind: number;
  bytes: number;
}

/** One word's postings (noteSearchLists), in order. */
export interface NoteSearchList {
  word: string;
  notes: NotePosting[];
}

export interface NoteSearchLimits {
  /** Units of work one shard does per call, at most (a posting looked at, a lookup, a range read; at least one posting). */
  scanPerShard: number;
}

/** Document shards: a note's shard is its id's first hex digit. Fixed: another count needs `relations rebuild`. */
export const NOTE_SEARCH_SHARDS = 16;

/** The most words a query's last word expands to (NoteSearchIndex). */
export const MAX_PREFIX_WORDS = 64;

/**
 * Units of work one shard does per call: 16 shards, 2,000 each, bound a read of the index to some
 * 32,000 commands of a script, whatever the query's words (a query of 191 words made one shard's
 * call take 457 ms when only postings were counted: found by review).
 */
export const SCAN_PER_SHARD = 2000;

export const NOTE_SEARCH_LIMITS: NoteSearchLimits = { scanPerShard: SCAN_PER_SHARD };

/** The kinds the index holds: notes (kind 1) and long-form articles (kind 30023, NIP-23). */
export const SEARCHABLE_KINDS: readonly number[] = DEFAULT_SEARCH_KINDS;

export function isSearchableKind(kind: number): boolean {
  return SEARCHABLE_KINDS.includes(kind);
}

/** The shard of a note, 0 to NOTE_SEARCH_SHARDS - 1. */
export function noteShardOf(id: string): number {
  return Number.parseInt(id[0] ?? '0', 16);
}

/**
 * A list of every note of the index (per shard), under a name no word has (words are letters, marks
 * and digits): what a query whose last word starts too many words to look in all their lists reads,
 * checking each note's words itself (schema/note-search.ts).
 */
export const ALL_NOTES_WORD = '*';

/** The words an event is indexed under (ALL_NOTES_WORD first): none unless it is of a searchable kind. */
export function indexedWordsOf(event: NostrEvent): string[] {
  return isSearchableKind(event.kind) ? [ALL_NOTES_WORD, ...noteWords(event)] : [];
}

/**
 * Merges the shards' answers (each in order, each at most `first`) into one: the first `first`
 * matches, cut where a shard stopped looking (its `stoppedAt`): past that, that shard may hold
 * matches not seen yet, which would come before the others'.
 */
export function mergeShardResults(results: readonly NoteSearchResult[], first: number): NoteSearchResult {
  let stoppedAt: ReplyPosition | null = null;
  for (const result of results) if (result.stoppedAt && (!stoppedAt || compareNotes(result.stoppedAt, stoppedAt) < 0)) stoppedAt = result.stoppedAt;
  const notes = results
    .flatMap((result) => result.notes)
    .filter((note) => !stoppedAt || compareNotes(note, stoppedAt) <= 0)
    .sort(compareNotes)
    .slice(0, first);
  // A full page ends at its last note: the next starts there, whatever a shard stopped at.
  return { notes, stoppedAt: notes.length === first ? null : stoppedAt };
}
