import type { Database } from 'lmdb';
import { LIST_CHANGES_KEPT, type ListChanges, LOGGED_LIST_KINDS } from '../list-changes.js';
import type { NostrEvent } from '../../nostr/event.js';
import { FOLLOW_LIST_KIND, type FollowChanges, followChanges, followKeysOf } from '../../nostr/follows.js';
import { matchesQuery, profileWords, rankedPrefixes, rankedPrefixOf } from '../../nostr/profile-search.js';
import { areDefaultFeedKinds, DEFAULT_FEED_KINDS, isNoteKind, relationEdgesOf } from '../../nostr/relationships.js';
import { type FollowCounts, FollowWrites } from '../follow-index.js';
import {
  COUNTERS,
  contentKey,
  DISLIKE_KEY,
  LIKE_KEYS,
  compareNotes,
  MAX_REACTION_CONTENTS,
  type NoteFeed,
  type NotePage,
  notePlace,
  notePositionOf,
  type IndexTotals,
  type RelationIndex,
  type LedgerScan,
  type RelatedEvents,
  type RelationStats,
  type ReplyPosition,
  replyMember,
  replyPositionOf,
  statsFromTally,
  storedSizeOf,
  TALLY,
} from '../relation-index.js';
import { rankKey, SEARCH_LIMITS, type SearchLimits, type SearchRecord } from '../search-index.js';
import { msatsOfParts, msatsParts, type ZapEntry, type ZapGroup, type ZapQuery, type ZapSubject, type ZapTotal, zapEntriesOf, zapGroupKey, zapGroupOf } from '../zap-index.js';
import type { LmdbFollowers } from './lmdb-followers.js';
import type { NotificationType } from '../../nostr/notifications.js';
import type { NotificationCounts, NotificationEntry } from '../notification-index.js';
import { LmdbNotificationIndex, type ServableEvents, TOTAL_NOTIFICATIONS } from './lmdb-notification-index.js';
import { inTransaction, type LmdbTransactions } from './lmdb-transactions.js';
import { LmdbNoteSearch } from './lmdb-note-search.js';
import type { NoteSearchLimits, NoteSearchList, NoteSearchQuery, NoteSearchResult } from '../note-search-index.js';

/** Follows held (RelationIndex.totals; the notifications' beside them: lmdb-notification-index.ts). */
const TOTAL_FOLLOWS = 'ct:follows';

/** The head of the log of list changes, and its entries' keys (logListChange). */
const LIST_CHANGES_HEAD = 'lc';
const listChangeKey = (number: number) => `lc:${String(number).padStart(16, '0')}`;

/** Targets per batch of `targets()`. */
const TARGETS_PAGE = 500;

/** After every word starting with a prefix: no character is above U+10FFFF. */
const PAST_WORDS = '\u{10FFFF}';

/** The words of a `Sw:` record (after its place). */
const searchWordsOf = (record: string) => record.split(' ').slice(1);

/** Ranks in the byContent order keys: 2^48 minus the count, as 12 hex digits (count descending). */
const RANK_BASE = 2 ** 48;
const rank = (count: number) => (RANK_BASE - count).toString(16).padStart(12, '0');

/**
 * The relationship index in the `relations` database of the store's environment
 * (store/relation-index.ts), written inside the events' own write transaction, so always exact,
 * each event's change a bounded number of reads and writes:
 * - `t:<target>:<counter>` → a tally counter (TALLY);
 * - `o:<target>:<author>` → the author's reposts; `k:<target>:<author>:<content key>` → the author's
 *   reactions with that content; `a:<target>:<author>` → how many contents the author has reactions
 *   with (their reactions to it count once);
 * - `c:<target>:<content key>` → distinct authors per content, and `b:<target>:<rank>:<content key>`
 *   → '' in byContent order (rank: count descending), read a page at a time;
 * - `l:<target>:<replyMember>` → the reply's size (storedSizeOf): the direct replies, in position order;
 * - `i:<target>:<id>` → its size for every other event that relates to the target (an edge that is not a
 *   reply, a zap receipt of it): with the replies, what `stats(viewer:)` recounts (relatedIds);
 * - zaps (zap-index.ts): `z:<subject>:<group>` → `<count> <high> <low> <senders>` of the group's
 *   receipts (msats in two parts: zap-index.ts MSATS_SPLIT), `z:<subject>:<recipient>` → the
 *   recipient's receipts whoever signed them, and `y:<subject>:<group>:<sender>` → the sender's
 *   receipts in the group (its distinct senders);
 * - follows (follow-index.ts): the followers themselves in a database of their own
 *   (lmdb-followers.ts), `f:<followed>` → its followers, `g:<follower>` → how many its list follows
 *   (earlier versions kept `F:<followed>:<follower>` → 1 here, then a 64-byte key per follow in a
 *   database `followers`: both emptied by `relations rebuild`);
 * - notes: `n:<author>:<kind>:<replyMember of notePlace>` → the event's size, newest first;
 * - home timelines: `h:<author>:<replyMember of notePlace>` → `<kind> <size>` for the default feed's
 *   kinds (1, 6, 16) merged, so a feed page reads one range per followed author where the note
 *   lists would take three (a page of 1,000 authors: 3,000 cursor seeks). `hv` says they are
 *   complete: a directory written before them has them built from the note lists when it is next
 *   opened for writing (until then, read-only, feeds read the note lists);
 * - search (search-index.ts): `Sw:<pubkey>` → `<replyMember of its profile's place> <words…>`,
 *   `Sx:<word> <pubkey>` → '' (the words in lexical order) and `Sk:<prefix of a word> <rankKey of
 *   its followers><pubkey>` → '' (rank order); followers are read from `f:`. One writer applies a
 *   profile's replacement in order (its removal, then its addition): no marks are needed;
 * - note search (note-search-index.ts, lmdb-note-search.ts): its own database, `note-search`, of
 *   packed postings (note-postings.ts); the `Q:<word> <place>` and `Qv:<word>` keys of earlier
 *   versions are moved there on open (LmdbNoteSearch.adopt).
 */
/** `hv`: the home timelines hold every note list's events of the default feed kinds. */
const HOME_TIMELINES_COMPLETE = 'hv';

export class LmdbRelationIndex implements RelationIndex {
  /** While a batch of events is written (withFollowBatch): its follows, applied grouped at its end. */
  private followBatch: FollowWrites | undefined;
  /** Whether the home timelines (`h:`) are complete, so that feeds of the default kinds read them. */
  private homeTimelines: boolean;
  /** Notifications, kept on the same transitions (lmdb-notification-index.ts). */
  private readonly notificationIndex: LmdbNotificationIndex;

  constructor(
    private readonly db: Database<string, string>,
    /** The followers (lmdb-followers.ts). Undefined only in a read-only directory written before they existed: none to read. */
    private readonly followerLogs: LmdbFollowers | undefined,
    private readonly transactions: LmdbTransactions,
    /** The followers as an earlier version kept them (a 64-byte key per follow), emptied by clear(); undefined where never written. */
    private readonly legacyFollowerKeys?: Database<Buffer, Buffer>,
    /** Servable events, read in the write transaction: whose a notification's target is, and what relates to a target gone. */
    servable: ServableEvents = { authorOf: () => undefined, eventOf: () => undefined },
    /** NOTE_SEARCH: the note search index, where it is kept (its own database: lmdb-note-search.ts). */
    private readonly noteSearch?: LmdbNoteSearch,
    /** Opened read-only: nothing is built on open. */
    readOnly = false,
  ) {
    this.notificationIndex = new LmdbNotificationIndex(db, transactions, servable.authorOf, (target) => [...this.relatedEntries(target, Number.MAX_SAFE_INTEGER).keys()].flatMap((id) => servable.eventOf(id) ?? []));
    this.homeTimelines = db.get(HOME_TIMELINES_COMPLETE) !== undefined || (!readOnly && this.buildHomeTimelines());
    if (!readOnly) noteSearch?.adopt(db);
  }

  /**
   * Writes the home timelines (`h:`) from the note lists in one write transaction, for a directory
   * written before they existed (a new one has no notes: only the mark is written). False where the
   * write failed (a full disk, say): feeds then read the note lists, as before.
   */
  private buildHomeTimelines(): boolean {
    try {
      this.db.transactionSync(() => {
        for (const { key, value } of this.db.getRange({ start: 'n:', end: 'n;' })) {
          const kindEnd = key.indexOf(':', 67);
          const kind = Number(key.slice(67, kindEnd));
          if (DEFAULT_FEED_KINDS.includes(kind)) this.db.putSync(`h:${key.slice(2, 66)}:${key.slice(kindEnd + 1)}`, `${kind} ${value}`);
        }
        this.db.putSync(HOME_TIMELINES_COMPLETE, '1');
      });
      return true;
    } catch {
      return false;
    }
  }

  get noteSearchEnabled(): boolean {
    return this.noteSearch !== undefined;
  }

  // Not kept (NOTE_SEARCH off): nothing held; the schema refuses searches before asking (note_search_off).
  async noteWordsStarting(prefix: string, limit: number): Promise<string[]> {
    return this.noteSearch ? this.noteSearch.noteWordsStarting(prefix, limit) : [];
  }

  async searchNotes(query: NoteSearchQuery, limits?: NoteSearchLimits): Promise<NoteSearchResult> {
    return this.noteSearch ? this.noteSearch.searchNotes(query, limits) : { notes: [], stoppedAt: null };
  }

  async *noteSearchLists(): AsyncIterable<NoteSearchList[]> {
    if (this.noteSearch) yield* this.noteSearch.noteSearchLists();
  }

  notifications(recipient: string, types: readonly NotificationType[], after: ReplyPosition | null, first: number): Promise<NotificationEntry[]> {
    return this.notificationIndex.notifications(recipient, types, after, first);
  }

  notificationCounts(recipient: string, since?: number): Promise<NotificationCounts> {
    return this.notificationIndex.notificationCounts(recipient, since);
  }

  notificationRecipients(): AsyncIterable<string[]> {
    return this.notificationIndex.notificationRecipients();
  }

  /**
   * Adds (+1) or removes (-1) an event's relations. Runs inside the write transaction. `size`: its
   * stored JSON's bytes, where the caller has them (else serialised again for a reply).
   */
  apply(event: NostrEvent, delta: 1 | -1, size?: number, withFollows = true): void {
    this.add(`ck:${event.kind}`, delta);
    for (const edge of relationEdgesOf(event)) {
      const { target } = edge;
      if (edge.reply) {
        const key = `l:${target}:${replyMember({ createdAt: event.created_at, id: event.id })}`;
        const held = this.db.get(key) !== undefined;
        if (delta > 0 && !held) {
          inTransaction(this.db.put(key, String(size ?? storedSizeOf(event))));
          this.add(`t:${target}:${TALLY.replies}`, 1);
        } else if (delta < 0 && held) {
          inTransaction(this.db.remove(key));
          this.add(`t:${target}:${TALLY.replies}`, -1);
        }
      }
      if (!edge.reply) this.relateId(target, event, delta, size);
      if (edge.threadReply) this.add(`t:${target}:${TALLY.threadReplies}`, delta);
      if (edge.quote) this.add(`t:${target}:${TALLY.quotes}`, delta);
      if (edge.repost) {
        const after = this.add(`o:${target}:${event.pubkey}`, delta);
        if (after - delta > 0 !== after > 0) this.add(`t:${target}:${TALLY.reposts}`, after > 0 ? 1 : -1);
      }
      if (edge.reaction !== undefined) this.react(target, event.pubkey, contentKey(edge.reaction), delta);
    }
    if (isNoteKind(event.kind)) {
      const note = `n:${event.pubkey}:${event.kind}:${replyMember(notePlace({ createdAt: event.created_at, id: event.id }))}`;
      inTransaction(delta > 0 ? this.db.put(note, String(size ?? storedSizeOf(event))) : this.db.remove(note));
      if (DEFAULT_FEED_KINDS.includes(event.kind)) {
        const home = `h:${event.pubkey}:${replyMember(notePlace({ createdAt: event.created_at, id: event.id }))}`;
        inTransaction(delta > 0 ? this.db.put(home, `${event.kind} ${size ?? storedSizeOf(event)}`) : this.db.remove(home));
      }
    }
    for (const entry of zapEntriesOf(event)) {
      this.zap(entry, delta);
      if (entry.subject.startsWith('e')) this.relateId(entry.subject.slice(1), event, delta, size);
    }
    this.notificationIndex.apply(event, delta);
    this.noteSearch?.apply(event, delta);
    if (withFollows && event.kind === FOLLOW_LIST_KIND) this.follow(event, delta);
    if (event.kind === 0) this.searchProfile(event, delta);
    if (LOGGED_LIST_KINDS.has(event.kind)) this.logListChange(event.pubkey);
  }

  /**
   * A follow or mute list changed (store/list-changes.ts): `lc` → the last entry's number, and
   * `lc:<number, 16 digits>` → the author, the last LIST_CHANGES_KEPT. Kept by `clear` (a rebuild
   * changes no list): a cursor is a number, and one ahead of the log is not one of its own.
   */
  private logListChange(pubkey: string): void {
    const next = this.lastListChange() + 1;
    inTransaction(this.db.put(LIST_CHANGES_HEAD, String(next)));
    inTransaction(this.db.put(listChangeKey(next), pubkey));
    if (next > LIST_CHANGES_KEPT) inTransaction(this.db.remove(listChangeKey(next - LIST_CHANGES_KEPT)));
  }

  private lastListChange(): number {
    return Number(this.db.get(LIST_CHANGES_HEAD) ?? 0);
  }

  listChanges(after: string | null): Promise<ListChanges> {
    return this.transactions.read(() => {
      const last = this.lastListChange();
      const cursor = String(last);
      if (after === null) return { cursor, pubkeys: [] };
      const from = /^\d{1,16}$/.test(after) ? Number(after) : Number.NaN;
      if (!Number.isSafeInteger(from) || from > last || last - from >= LIST_CHANGES_KEPT) return { cursor, all: true };
      const pubkeys = [...this.db.getRange({ start: listChangeKey(from + 1), end: `${listChangeKey(last)}\u0000` })].map(({ value }) => value);
      return { cursor, pubkeys };
    });
  }

  /** A profile added to or taken from the search index (a removal only of the profile it holds). */
  private searchProfile(event: NostrEvent, delta: 1 | -1): void {
    const place = replyMember({ createdAt: event.created_at, id: event.id });
    const held = this.db.get(`Sw:${event.pubkey}`);
    const before = held === undefined ? [] : searchWordsOf(held);
    if (delta > 0) {
      const words = profileWords(event);
      this.indexWords(event.pubkey, before, words);
      inTransaction(this.db.put(`Sw:${event.pubkey}`, [place, ...words].join(' ')));
    } else if (held?.slice(0, place.length) === place) {
      this.indexWords(event.pubkey, before, []);
      inTransaction(this.db.remove(`Sw:${event.pubkey}`));
    }
  }

  /** A pubkey's entries in the lexical and rank orders, from the words it had to those it has. */
  private indexWords(pubkey: string, before: readonly string[], after: readonly string[]): void {
    const rank = rankKey(this.followerCount(pubkey));
    for (const word of before) if (!after.includes(word)) inTransaction(this.db.remove(`Sx:${word} ${pubkey}`));
    for (const word of after) if (!before.includes(word)) inTransaction(this.db.put(`Sx:${word} ${pubkey}`, ''));
    const had = new Set(rankedPrefixes(before));
    const has = new Set(rankedPrefixes(after));
    for (const prefix of had) if (!has.has(prefix)) inTransaction(this.db.remove(`Sk:${prefix} ${rank}${pubkey}`));
    for (const prefix of has) if (!had.has(prefix)) inTransaction(this.db.put(`Sk:${prefix} ${rank}${pubkey}`, ''));
  }

  private followerCount(pubkey: string): number {
    return Number(this.db.get(`f:${pubkey}`) ?? 0);
  }

  /**
   * A replaceable slot changed hands inside the write transaction: `previous` (if any) leaves and
   * `next` (if any) comes. A follow list replacing another changes only by their difference.
   */
  replace(previous: NostrEvent | undefined, next: NostrEvent, size?: number): void {
    const changes = previous ? followChanges(previous, next) : undefined;
    if (previous) this.apply(previous, -1, undefined, !changes);
    this.apply(next, 1, size, !changes);
    if (changes) this.followChanges(next.pubkey, changes);
  }

  /**
   * Runs `write` (inside the write transaction, a batch of events) with the follows of its lists
   * gathered (FollowWrites), then applies them grouped: each followed pubkey's count is read and
   * written once per batch, not once per follow.
   */
  withFollowBatch<T>(write: () => T): T {
    const batch = new FollowWrites();
    this.followBatch = batch;
    try {
      // The note search index's changes too, applied word by word as the batch ends (LmdbNoteSearch.batch).
      return this.noteSearch ? this.noteSearch.batch(write) : write();
    } finally {
      this.followBatch = undefined;
      this.applyFollows(batch);
    }
  }

  private followChanges(author: string, changes: FollowChanges): void {
    this.followWrites((batch) => batch.replaced(author, changes));
  }

  /** A follow list added or taken away: its author follows each of its pubkeys, or no longer does. */
  private follow(event: NostrEvent, delta: 1 | -1): void {
    const follows = followKeysOf(event);
    this.followWrites((batch) => batch.list(event.pubkey, follows, delta));
  }

  /** Into the batch under way, else applied at once. */
  private followWrites(gather: (batch: FollowWrites) => void): void {
    if (this.followBatch) return gather(this.followBatch);
    const batch = new FollowWrites();
    gather(batch);
    this.applyFollows(batch);
  }

  /**
   * A batch's follows, written without reading them first: one writer applies every change in
   * order, each in the transaction that stores or removes its list, so a follow is added (+1) only
   * where it is not held and taken away (-1) only where it is (the difference from the stored list
   * it replaces). Each followed pubkey's records go to its followers as one log (lmdb-followers.ts);
   * the count is their sum.
   */
  private applyFollows(batch: FollowWrites): void {
    for (const [author, delta] of batch.following) this.add(`g:${author}`, delta);
    // Writes come only through a directory opened for writing, which has the database.
    const followers = this.followerLogs as LmdbFollowers;
    const { records, byFollowed } = batch.byFollowed();
    for (const [followed, { start, count, net }] of byFollowed) {
      followers.write(Buffer.from(followed, 'hex'), records.subarray(33 * start, 33 * (start + count)));
      if (net === 0) continue;
      this.rerank(followed, this.add(`f:${followed}`, net) - net, net);
      this.add(TOTAL_FOLLOWS, net);
    }
  }

  /** A pubkey with a profile moves in the rank order of its words' prefixes. */
  private rerank(pubkey: string, before: number, crossed: number): void {
    const held = this.db.get(`Sw:${pubkey}`);
    if (held === undefined) return;
    for (const prefix of rankedPrefixes(searchWordsOf(held))) {
      inTransaction(this.db.remove(`Sk:${prefix} ${rankKey(before)}${pubkey}`));
      inTransaction(this.db.put(`Sk:${prefix} ${rankKey(before + crossed)}${pubkey}`, ''));
    }
  }

  async searchProfiles(words: readonly string[], first: number, limits: SearchLimits = SEARCH_LIMITS): Promise<string[]> {
    // The rarest word's range, counted up to the limit.
    let best: { word: string; size: number } | undefined;
    for (const word of words) {
      const size = this.db.getKeysCount({ start: `Sx:${word}`, end: `Sx:${word}${PAST_WORDS}`, limit: limits.lexRange + 1 });
      if (!best || size < best.size) best = { word, size };
    }
    if (!best || best.size === 0) return [];
    const matches = (pubkey: string) => {
      const held = this.db.get(`Sw:${pubkey}`);
      return held !== undefined && matchesQuery(searchWordsOf(held), words);
    };
    if (best.size <= limits.lexRange) {
      const found = new Map<string, number>();
      for (const key of this.db.getKeys({ start: `Sx:${best.word}`, end: `Sx:${best.word}${PAST_WORDS}` })) {
        const pubkey = key.slice(-64);
        if (!found.has(pubkey) && matches(pubkey)) found.set(pubkey, this.followerCount(pubkey));
      }
      return [...found]
        .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
        .slice(0, first)
        .map(([pubkey]) => pubkey);
    }
    // The smallest rank order among the query words' prefixes, counted up to the walk's limit.
    let walked: { ranks: string; size: number } | undefined;
    for (const word of words) {
      const ranks = `Sk:${rankedPrefixOf(word)} `;
      const size = this.db.getKeysCount({ start: ranks, end: `${ranks}${PAST_WORDS}`, limit: limits.rankWalk });
      if (!walked || size < walked.size) walked = { ranks, size };
    }
    const found: string[] = [];
    const { ranks } = walked as { ranks: string };
    for (const key of this.db.getKeys({ start: ranks, end: `${ranks}${PAST_WORDS}`, limit: limits.rankWalk })) {
      const pubkey = key.slice(-64);
      if (matches(pubkey)) found.push(pubkey);
      if (found.length === first) break;
    }
    return found;
  }

  async searchRecords(pubkeys: readonly string[]): Promise<SearchRecord[]> {
    return pubkeys.map((pubkey) => {
      const followers = this.followerCount(pubkey);
      const held = this.db.get(`Sw:${pubkey}`);
      if (held === undefined) return { words: [], followers, indexed: true };
      const words = searchWordsOf(held);
      const indexed =
        words.every((word) => this.db.get(`Sx:${word} ${pubkey}`) !== undefined) &&
        rankedPrefixes(words).every((prefix) => this.db.get(`Sk:${prefix} ${rankKey(followers)}${pubkey}`) !== undefined);
      return { words, followers, indexed };
    });
  }

  async *searchSubjects(): AsyncIterable<string[]> {
    let batch: string[] = [];
    for (const key of this.db.getKeys({ start: 'Sw:', end: 'Sw;' })) {
      batch.push(key.slice(3));
      if (batch.length === TARGETS_PAGE) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  /** One receipt added to or taken from one subject's group. */
  private zap({ subject, sender, msats, ...group }: ZapEntry, delta: 1 | -1): void {
    const key = `z:${subject}:${zapGroupKey(group)}`;
    const after = this.add(`y:${subject}:${zapGroupKey(group)}:${sender}`, delta);
    this.add(`z:${subject}:${group.recipient}`, delta);
    const [count = 0, high = 0, low = 0, senders = 0] = (this.db.get(key) ?? '').split(' ').filter(Boolean).map(Number);
    const [addHigh, addLow] = msatsParts(msats);
    const crossed = after - delta > 0 !== after > 0 ? (after > 0 ? 1 : -1) : 0;
    const figures = [count + delta, high + delta * addHigh, low + delta * addLow, senders + crossed];
    inTransaction(figures.every((figure) => figure === 0) ? this.db.remove(key) : this.db.put(key, figures.join(' ')));
  }

  /** An event that relates to `target` otherwise than as a reply, listed or taken off the list (relatedIds). */
  private relateId(target: string, event: NostrEvent, delta: 1 | -1, size: number | undefined): void {
    const key = `i:${target}:${event.id}`;
    inTransaction(delta > 0 ? this.db.put(key, String(size ?? storedSizeOf(event))) : this.db.remove(key));
  }

  relatedIds(target: string, limit: number, scan: LedgerScan = { entries: Number.POSITIVE_INFINITY }): Promise<RelatedEvents> {
    return this.transactions.read(() => {
      const related = this.relatedEntries(target, limit);
      scan.entries -= related.size;
      const events = [...related].slice(0, limit).map(([id, bytes]) => ({ id, bytes }));
      return { events, complete: related.size <= limit };
    });
  }

  /** The events that relate to `target` (id → stored size), up to one past `limit` of each range, in the caller's transaction. */
  private relatedEntries(target: string, limit: number): Map<string, number> {
    // Removed relations leave no entry here: each range reads what relates, one past `limit`.
    const related = new Map<string, number>();
    for (const { key, value } of this.db.getRange({ start: `l:${target}:`, end: `l:${target};`, limit: limit + 1 })) related.set(replyPositionOf(key.slice(67)).id, Number(value));
    for (const { key, value } of this.db.getRange({ start: `i:${target}:`, end: `i:${target};`, limit: limit + 1 })) related.set(key.slice(67), Number(value));
    return related;
  }

  /** A group's record, or undefined. */
  private zapGroup(subject: ZapSubject, recipient: string, provider: string): ZapGroup | undefined {
    const held = this.db.get(`z:${subject}:${recipient}${provider}`);
    if (held === undefined) return undefined;
    const [count = 0, high = 0, low = 0, senders = 0] = held.split(' ').map(Number);
    return { recipient, provider, count, msats: msatsOfParts(high, low), senders };
  }

  /** One reaction of `author` with content `key` to `target`, added or removed: the figures it changes. */
  private react(target: string, author: string, key: string, delta: 1 | -1): void {
    const holds = (content: string) => Number(this.db.get(`k:${target}:${author}:${content}`) ?? 0) > 0;
    const flags = () => ({ like: LIKE_KEYS.some(holds), dislike: holds(DISLIKE_KEY) });
    const before = flags();
    const count = this.add(`k:${target}:${author}:${key}`, delta);
    const crossed = count - delta > 0 !== count > 0 ? (count > 0 ? 1 : -1) : 0;
    if (crossed === 0) return;
    const contents = this.add(`a:${target}:${author}`, crossed);
    if (contents - crossed > 0 !== contents > 0) this.add(`t:${target}:${TALLY.reactionPubkeys}`, crossed);
    const after = flags();
    if (before.like !== after.like) this.add(`t:${target}:${TALLY.likes}`, after.like ? 1 : -1);
    if (before.dislike !== after.dislike) this.add(`t:${target}:${TALLY.dislikes}`, after.dislike ? 1 : -1);
    const authors = this.add(`c:${target}:${key}`, crossed);
    if (authors - crossed > 0) inTransaction(this.db.remove(`b:${target}:${rank(authors - crossed)}:${key}`));
    if (authors > 0) inTransaction(this.db.put(`b:${target}:${rank(authors)}:${key}`, ''));
  }

  /** Adds to a counter (removed at zero); returns its new value. */
  private add(key: string, delta: number): number {
    const after = Number(this.db.get(key) ?? 0) + delta;
    inTransaction(after === 0 ? this.db.remove(key) : this.db.put(key, String(after)));
    return after;
  }

  stats(ids: readonly string[]): Promise<RelationStats[]> {
    return this.transactions.read(() =>
      ids.map((id) => {
        const tally = new Map<string, number>();
        for (const field of COUNTERS) tally.set(field, Number(this.db.get(`t:${id}:${field}`) ?? 0));
        const prefix = `b:${id}:`;
        const contents: [string, number][] = [];
        for (const key of this.db.getKeys({ start: prefix, end: `b:${id};`, limit: MAX_REACTION_CONTENTS })) {
          const content = key.slice(prefix.length + 13);
          contents.push([content, RANK_BASE - Number.parseInt(key.slice(prefix.length, prefix.length + 12), 16)]);
        }
        return statsFromTally(tally, contents);
      }),
    );
  }

  replies(id: string, after: ReplyPosition | null, first: number): Promise<ReplyPosition[]> {
    return this.transactions.read(() => {
      const prefix = `l:${id}:`;
      const start = after ? `${prefix}${replyMember(after)}` : prefix;
      const found: ReplyPosition[] = [];
      for (const { key, value } of this.db.getRange({ start, end: `l:${id};` })) {
        if (key === start && after) continue; // `after` is exclusive
        found.push({ ...replyPositionOf(key.slice(prefix.length)), bytes: Number(value) });
        if (found.length >= first) break;
      }
      return found;
    });
  }

  notes(author: string, kinds: readonly number[], after: ReplyPosition | null, first: number): Promise<ReplyPosition[]> {
    return this.transactions.read(() => this.readNotes({ author, kinds, after, first }));
  }

  timelines(pages: readonly NotePage[]): Promise<ReplyPosition[][]> {
    return this.transactions.read(() => pages.map((page) => this.readNotes(page)));
  }

  /**
   * The first `first` of each kind's list, merged. A feed asks this of 1,000 authors and three
   * kinds a page: one range read each, ended by its `limit` (not by leaving the loop, which costs
   * the range a cleanup), and one object per entry (garbage collection was a third of a page).
   */
  private readNotes({ author, kinds, after, first }: NotePage): ReplyPosition[] {
    const found: ReplyPosition[] = [];
    const place = after ? replyMember(notePlace(after)) : '';
    if (this.homeTimelines && areDefaultFeedKinds(kinds)) {
      const prefix = `h:${author}:`;
      const start = prefix + place;
      for (const { key, value } of this.db.getRange({ start, end: `h:${author};`, limit: after ? first + 1 : first })) {
        if (after && key === start) continue;
        found.push(notePositionOf(key.slice(prefix.length), Number(value.slice(value.indexOf(' ') + 1))));
      }
      return found;
    }
    for (const kind of kinds) {
      const prefix = `n:${author}:${kind}:`;
      const start = prefix + place;
      // `after` is exclusive: its own key, where held, is read and passed over.
      for (const { key, value } of this.db.getRange({ start, end: `n:${author}:${kind};`, limit: after ? first + 1 : first })) {
        if (after && key === start) continue;
        found.push(notePositionOf(key.slice(prefix.length), Number(value)));
      }
    }
    return found.sort(compareNotes).slice(0, first);
  }

  get keepsHomeTimelines(): boolean {
    return this.homeTimelines;
  }

  homeTimelineAuthors(): AsyncIterable<string[]> {
    // `h:` then the author's 64 hex digits.
    return this.homeTimelines ? this.distinct('h', 2, 66) : (async function* () {})();
  }

  async *noteFeeds(): AsyncIterable<NoteFeed[]> {
    // `n:<author>:<kind>:…`: the keys of one list are adjacent.
    let batch: NoteFeed[] = [];
    let last = '';
    for (const key of this.db.getKeys({ start: 'n:', end: 'n;' })) {
      const list = key.slice(2, key.indexOf(':', 67));
      if (list === last) continue;
      last = list;
      batch.push({ author: list.slice(0, 64), kind: Number(list.slice(65)) });
      if (batch.length >= TARGETS_PAGE) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  zapTotals(queries: readonly ZapQuery[]): Promise<ZapTotal[]> {
    return this.transactions.read(() =>
      queries.map(({ subject, recipient, provider }) => {
        const receipts = Number(this.db.get(`z:${subject}:${recipient}`) ?? 0);
        const group = provider === undefined ? undefined : this.zapGroup(subject, recipient, provider);
        return group ? { receipts, group } : { receipts };
      }),
    );
  }

  zapGroups(subjects: readonly ZapSubject[]): Promise<{ groups: ZapGroup[]; receipts: Map<string, number> }[]> {
    return this.transactions.read(() =>
      subjects.map((subject) => {
        const prefix = `z:${subject}:`;
        const groups: ZapGroup[] = [];
        const receipts = new Map<string, number>();
        for (const { key } of this.db.getRange({ start: prefix, end: `z:${subject};` })) {
          const rest = key.slice(prefix.length);
          if (rest.length === 64) receipts.set(rest, Number(this.db.get(key)));
          else {
            const { recipient, provider } = zapGroupOf(rest);
            groups.push(this.zapGroup(subject, recipient, provider) as ZapGroup);
          }
        }
        return { groups, receipts };
      }),
    );
  }

  zapSenders(subject: ZapSubject, groups: readonly { recipient: string; provider: string }[]): Promise<Set<string>> {
    return this.transactions.read(() => {
      const senders = new Set<string>();
      for (const group of groups) {
        const prefix = `y:${subject}:${zapGroupKey(group)}:`;
        for (const key of this.db.getKeys({ start: prefix, end: `${prefix.slice(0, -1)};` })) senders.add(key.slice(prefix.length));
      }
      return senders;
    });
  }

  zapSubjects(): AsyncIterable<ZapSubject[]> {
    // `z:` then the subject: `e` or `p` and 64 hex digits.
    return this.distinct('z', 2, 67);
  }

  followCounts(pubkeys: readonly string[]): Promise<FollowCounts[]> {
    return this.transactions.read(() =>
      pubkeys.map((pubkey) => ({ followers: this.followerCount(pubkey), following: Number(this.db.get(`g:${pubkey}`) ?? 0) })),
    );
  }

  followers(pubkey: string, after: string | null, first: number): Promise<string[]> {
    const followers = this.followerLogs;
    if (!followers) return Promise.resolve([]);
    return this.transactions.read(() => followers.page(Buffer.from(pubkey, 'hex'), after === null ? null : Buffer.from(after, 'hex'), first));
  }

  async *followSubjects(): AsyncIterable<string[]> {
    // Followed pubkeys (`f:`), then following ones (`g:`); a pubkey may come twice.
    yield* this.distinct('f', 2, 66);
    yield* this.distinct('g', 2, 66);
  }

  allReplies(id: string): Promise<ReplyPosition[]> {
    return this.replies(id, null, Number.MAX_SAFE_INTEGER);
  }

  targets(): AsyncIterable<string[]> {
    return this.distinct('t', 2, 66);
  }

  /**
   * The distinct values of `key.slice(start, end)` over the keys of one type (`<type>:…`), in
   * batches: the keys of one value are adjacent, so each comes once.
   */
  private async *distinct(type: string, start: number, end: number): AsyncIterable<string[]> {
    let batch: string[] = [];
    let last = '';
    for (const key of this.db.getKeys({ start: `${type}:`, end: `${type};` })) {
      const value = key.slice(start, end);
      if (value === last) continue;
      last = value;
      batch.push(value);
      if (batch.length >= TARGETS_PAGE) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  totals(): Promise<IndexTotals> {
    return this.transactions.read(() => ({ follows: Number(this.db.get(TOTAL_FOLLOWS) ?? 0), notifications: Number(this.db.get(TOTAL_NOTIFICATIONS) ?? 0) }));
  }

  eventCounts(): Promise<Map<number, number>> {
    return this.transactions.read(() => {
      const counts = new Map<number, number>();
      for (const { key, value } of this.db.getRange({ start: 'ck:', end: 'ck;' })) counts.set(Number((key as string).slice(3)), Number(value));
      return counts;
    });
  }

  async setEventCounts(counts: ReadonlyMap<number, number>): Promise<void> {
    await this.transactions.write(() => {
      for (const key of this.db.getKeys({ start: 'ck:', end: 'ck;' })) inTransaction(this.db.remove(key));
      for (const [kind, count] of counts) if (count !== 0) inTransaction(this.db.put(`ck:${kind}`, String(count)));
    });
  }

  async clear(): Promise<void> {
    await this.transactions.write(() => {
      // All but the log of list changes (logListChange).
      for (const key of this.db.getKeys()) if (key !== LIST_CHANGES_HEAD && !key.startsWith('lc:')) inTransaction(this.db.remove(key));
      // What is rebuilt is written whole, home timelines included.
      inTransaction(this.db.put(HOME_TIMELINES_COMPLETE, '1'));
      this.homeTimelines = true;
      (this.followerLogs as LmdbFollowers).clear();
      this.noteSearch?.clear();
      const legacy = this.legacyFollowerKeys;
      if (legacy) for (const key of legacy.getKeys()) inTransaction(legacy.remove(key));
    });
  }
}
