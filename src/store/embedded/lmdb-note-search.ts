import type { Database } from 'lmdb';
import type { NostrEvent } from '../../nostr/event.js';
import {
  indexedWordsOf,
  NOTE_SEARCH_LIMITS,
  NOTE_SEARCH_SHARDS,
  type NoteSearchIndex,
  type NoteSearchLimits,
  type NoteSearchList,
  type NoteSearchQuery,
  type NoteSearchResult,
  type NotePosting,
} from '../note-search-index.js';
import { notePlace, notePositionOf, replyMember, storedSizeOf } from '../relation-index.js';
import { inTransaction, type LmdbTransactions } from './lmdb-transactions.js';

/**
 * A word's postings: `Q:<word> <replyMember of the note's place>` → `<kind> <size>`. A space (no word
 * holds one) sorts below every letter, mark and digit: each word's postings are one range.
 */
const postingPrefix = (word: string) => `Q:${word} `;
/** A word's postings held: `Qv:<word>` → their count (the rarest word drives a query; a prefix expands over these). */
const countKey = (word: string) => `Qv:${word}`;
/** After every member (hex digits) of a word's postings, in place of the space. */
const PAST_MEMBERS = '!';
/** Keys a walk of an expansion's list reads ahead of the member asked. */
const WALK_AHEAD = 16;

/** After every word starting with a prefix: no character is above U+10FFFF. */
const PAST_WORDS = '\u{10FFFF}';

/** A place's first 14 hex digits: its mirrored created_at (a bound before or after every note of that second). */
const secondOf = (createdAt: number) => replyMember(notePlace({ createdAt, id: '' }));

/** Where a word's range of a query starts and ends (after its cursor, or from `until`; to `since`). */
function boundsOf(word: string, query: NoteSearchQuery): [start: string, end: string] {
  const prefix = postingPrefix(word);
  const { after, since, until } = query;
  let start = prefix;
  if (after && (until === null || after.createdAt <= until)) start = `${prefix}${replyMember(notePlace({ createdAt: after.createdAt, id: after.id }))}!`;
  else if (until !== null) start = `${prefix}${secondOf(until)}`;
  const end = since !== null && since > 0 ? `${prefix}${secondOf(since - 1)}` : `${prefix.slice(0, -1)}${PAST_MEMBERS}`;
  return [start, end];
}

/** The posting of a key's member and its value. */
function postingOf(member: string, value: string): NotePosting {
  const [kind = 0, bytes = 0] = value.split(' ').map(Number);
  return { ...notePositionOf(member, bytes), kind, bytes };
}

/**
 * The note search index in the `relations` database (store/note-search-index.ts), written inside
 * the events' own write transaction (one writer, in order: no tombstones needed). One process reads
 * it: no shards; a query looks at NOTE_SEARCH_SHARDS × scanPerShard postings at most, as a
 * Redis query of all its shards does.
 */
export class LmdbNoteSearch implements Omit<NoteSearchIndex, 'noteSearchEnabled'> {
  constructor(
    private readonly db: Database<string, string>,
    private readonly transactions: LmdbTransactions,
  ) {}

  /** Adds (+1) or removes (-1) a note's postings, inside the write transaction. */
  apply(event: NostrEvent, delta: 1 | -1, size?: number): void {
    const words = indexedWordsOf(event);
    if (words.length === 0) return;
    const member = replyMember(notePlace({ createdAt: event.created_at, id: event.id }));
    const value = `${event.kind} ${size ?? storedSizeOf(event)}`;
    for (const word of words) {
      const key = postingPrefix(word) + member;
      const held = this.db.get(key) !== undefined;
      if (delta > 0 === held) continue;
      inTransaction(delta > 0 ? this.db.put(key, value) : this.db.remove(key));
      const count = Number(this.db.get(countKey(word)) ?? 0) + delta;
      inTransaction(count > 0 ? this.db.put(countKey(word), String(count)) : this.db.remove(countKey(word)));
    }
  }

  noteWordsStarting(prefix: string, limit: number): Promise<string[]> {
    return this.transactions.read(() => [...this.db.getKeys({ start: countKey(prefix), end: countKey(prefix + PAST_WORDS), limit })].map((key) => key.slice(3)));
  }

  searchNotes(query: NoteSearchQuery, limits: NoteSearchLimits = NOTE_SEARCH_LIMITS): Promise<NoteSearchResult> {
    return this.transactions.read(() => this.search(query, NOTE_SEARCH_SHARDS * limits.scanPerShard));
  }

  /**
   * As NOTE_SEARCH_SCRIPT (lua-scripts.ts) does in one shard: the smallest side drives, every
   * posting it reads checked against the others, until `cap` units of work are done.
   */
  private search(query: NoteSearchQuery, cap: number): NoteSearchResult {
    const countOf = (word: string) => Number(this.db.get(countKey(word)) ?? 0);
    const whole = query.words.map((word) => ({ word, count: countOf(word) }));
    if (whole.some(({ count }) => count === 0)) return { notes: [], stoppedAt: null };
    const anyOf = (query.anyOf ?? []).map((word) => ({ word, count: countOf(word) }));
    const expansion = anyOf.reduce((sum, { count }) => sum + count, 0);
    let drive: string[];
    let checks: string[];
    // The expansion's lists shorter than the driving list are walked beside it; longer ones looked up.
    let walked: string[] = [];
    let lookedUp: string[] = [];
    const rarest = whole.reduce<{ word: string; count: number } | undefined>((least, entry) => (!least || entry.count < least.count ? entry : least), undefined);
    if (anyOf.length > 0 && (!rarest || expansion < rarest.count)) {
      drive = anyOf.map(({ word }) => word);
      checks = query.words.slice();
    } else {
      const { word: driver, count: fewest } = rarest as { word: string; count: number };
      drive = [driver];
      checks = query.words.filter((word) => word !== driver);
      walked = anyOf.filter(({ count }) => count < fewest).map(({ word }) => word);
      lookedUp = anyOf.filter(({ count }) => count >= fewest).map(({ word }) => word);
    }
    const kinds = new Set(query.kinds);
    // The work done, as NOTE_SEARCH_SCRIPT counts it: a posting looked at, a lookup, a seek.
    let work = 0;
    const holds = (word: string, member: string) => {
      work += 1;
      return this.db.get(postingPrefix(word) + member) !== undefined;
    };
    const walks = walked.map((word) => this.walk(word, query, () => (work += 1)));
    // The driving lists merged: each a lazy range over its word's postings, in key order (the notes' order).
    const heads = drive.map((word) => {
      const [start, end] = boundsOf(word, query);
      const iterator = this.db.getRange({ start, end })[Symbol.iterator]();
      const prefix = postingPrefix(word).length;
      const head = { next: undefined as { member: string; value: string } | undefined, advance: () => {} };
      head.advance = () => {
        const step = iterator.next();
        head.next = step.done ? undefined : { member: step.value.key.slice(prefix), value: step.value.value };
      };
      head.advance();
      return head;
    });
    const notes: NotePosting[] = [];
    let last: { member: string; value: string } | undefined;
    for (;;) {
      let least: (typeof heads)[number] | undefined;
      for (const head of heads) if (head.next && (!least || head.next.member < (least.next as { member: string }).member)) least = head;
      if (!least) return { notes, stoppedAt: null };
      const entry = least.next as { member: string; value: string };
      least.advance();
      if (entry.member === last?.member) continue;
      if (last && work >= cap) return { notes, stoppedAt: postingOf(last.member, last.value) };
      work += 1;
      last = entry;
      const posting = postingOf(entry.member, entry.value);
      if (!kinds.has(posting.kind)) continue;
      if (!checks.every((word) => holds(word, entry.member))) continue;
      if (walks.length + lookedUp.length > 0 && !walks.some((meets) => meets(entry.member)) && !lookedUp.some((word) => holds(word, entry.member))) continue;
      notes.push(posting);
      if (notes.length >= query.first) return { notes, stoppedAt: null };
    }
  }

  /**
   * Whether a word's list holds each member asked, the members asked in order: a walk of the list
   * that reads a few keys ahead, and seeks to the member asked once they are behind it.
   */
  private walk(word: string, query: NoteSearchQuery, onSeek: () => void): (member: string) => boolean {
    const prefix = postingPrefix(word);
    const end = boundsOf(word, query)[1];
    let ahead: string[] = [];
    let at = 0;
    let done = false;
    return (member) => {
      for (;;) {
        if (at >= ahead.length) {
          if (done) return false;
          onSeek();
          ahead = [...this.db.getKeys({ start: prefix + member, end, limit: WALK_AHEAD })].map((key) => key.slice(prefix.length));
          at = 0;
          done = ahead.length < WALK_AHEAD;
          continue;
        }
        const current = ahead[at] as string;
        if (current === member) return true;
        if (current > member) return false;
        at += 1;
      }
    };
  }

  async *noteSearchLists(): AsyncIterable<NoteSearchList[]> {
    let after = countKey('');
    for (;;) {
      const words = await this.transactions.read(() => [...this.db.getKeys({ start: after, end: countKey(PAST_WORDS), limit: 200 })].filter((key) => key !== after).map((key) => key.slice(3)));
      if (words.length === 0) return;
      yield await this.transactions.read(() =>
        words.map((word) => {
          const prefix = postingPrefix(word);
          return { word, notes: [...this.db.getRange({ start: prefix, end: `${prefix.slice(0, -1)}${PAST_MEMBERS}` })].map(({ key, value }) => postingOf(key.slice(prefix.length), value)) };
        }),
      );
      after = countKey(words.at(-1) as string);
    }
  }
}
