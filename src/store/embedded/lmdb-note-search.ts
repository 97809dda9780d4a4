import type { Database } from 'lmdb';
import type { NostrEvent } from '../../nostr/event.js';
import {
  indexedWordsOf,
  isSearchableKind,
  NOTE_SEARCH_LIMITS,
  NOTE_SEARCH_SHARDS,
  type NoteSearchIndex,
  type NoteSearchLimits,
  type NoteSearchList,
  type NoteSearchQuery,
  type NoteSearchResult,
  type NotePosting,
} from '../note-search-index.js';
import {
  comparePostings,
  decodeBlock,
  encodeBlock,
  kindOfPosting,
  type Posting,
  postingAt,
  postingKeyBytes,
  postingOfNote,
  POSTINGS_PER_BLOCK,
  positionPast,
  prefixHexOf,
  searchBlock,
} from '../note-postings.js';
import { compareNotes, notePositionOf, type ReplyPosition, storedSizeOf } from '../relation-index.js';
import { inTransaction, type LmdbTransactions } from './lmdb-transactions.js';

/** A servable event the store holds, with its stored size. */
export interface HeldNote {
  event: NostrEvent;
  bytes: number;
}

/** The servable events whose id starts with 8 hex digits (the store's events, read in the caller's transaction). */
export type NotesWithPrefix = (prefix: string) => HeldNote[];

/** `0x01 <word>` → how many postings the word's list holds (4 bytes): the rarest word drives a query; a prefix expands over these. */
const COUNT = 0x01;
/** `0x02 <word> 0x00 <first posting's 12 bytes>` → a block of postings (note-postings.ts). No word holds a NUL. */
const BLOCK = 0x02;

/** After every word starting with a prefix: UTF-8 never holds the bytes F4 90 (past U+10FFFF). */
const PAST_WORDS = Buffer.from([0xf4, 0x90]);

const countKey = (word: string) => Buffer.concat([Buffer.from([COUNT]), Buffer.from(word)]);

/** A block as read: its key and its postings. */
interface Block {
  key: Buffer;
  postings: Posting[];
}

/**
 * One word's blocks. `blockAt` finds the block a posting belongs in: the last whose first posting
 * is not after it (its key ends with that posting: keys sort as postings do).
 */
class WordBlocks {
  /** Before every block key of the word, and after them. */
  readonly start: Buffer;
  readonly end: Buffer;

  constructor(
    private readonly db: Database<Buffer, Buffer>,
    readonly word: string,
  ) {
    const bytes = Buffer.from(word);
    this.start = Buffer.concat([Buffer.from([BLOCK]), bytes, Buffer.from([0])]);
    this.end = Buffer.concat([Buffer.from([BLOCK]), bytes, Buffer.from([1])]);
  }

  keyOf(first: Posting): Buffer {
    return Buffer.concat([this.start, postingKeyBytes(first)]);
  }

  /** The block whose range holds `posting`'s place, or undefined when it is before every block. */
  blockAt(posting: Posting): Block | undefined {
    for (const { key, value } of this.db.getRange({ start: this.keyOf(posting), end: this.start, reverse: true, limit: 1 })) return { key, postings: decodeBlock(value) };
    return undefined;
  }

  first(): Block | undefined {
    for (const { key, value } of this.db.getRange({ start: this.start, end: this.end, limit: 1 })) return { key, postings: decodeBlock(value) };
    return undefined;
  }

  /** The blocks from the one holding `from`'s place (or the first) on, lazily. */
  *blocksFrom(from: Posting | null): Generator<Block> {
    const held = from === null ? undefined : this.blockAt(from);
    for (const { key, value } of this.db.getRange({ start: held?.key ?? this.start, end: this.end })) yield { key, postings: decodeBlock(value) };
  }

  /** Writes postings (in order, at least one) as one block, or two halves past POSTINGS_PER_BLOCK. */
  write(postings: Posting[]): void {
    const halves = postings.length > POSTINGS_PER_BLOCK ? [postings.slice(0, postings.length >> 1), postings.slice(postings.length >> 1)] : [postings];
    for (const half of halves) inTransaction(this.db.put(this.keyOf(half[0] as Posting), encodeBlock(half)));
  }

  /** Adds a posting; false when the list holds it already. */
  insert(posting: Posting): boolean {
    const block = this.blockAt(posting) ?? this.first();
    if (block === undefined) {
      this.write([posting]);
      return true;
    }
    const { at, found } = searchBlock(block.postings, posting);
    if (found) return false;
    block.postings.splice(at, 0, posting);
    // A new first posting is a new key.
    if (at === 0) inTransaction(this.db.remove(block.key));
    this.write(block.postings);
    return true;
  }

  /** Takes a posting away; false when the list does not hold it. Blocks emptied go; none are merged. */
  remove(posting: Posting): boolean {
    const block = this.blockAt(posting);
    if (block === undefined) return false;
    const { at, found } = searchBlock(block.postings, posting);
    if (!found) return false;
    block.postings.splice(at, 1);
    if (at === 0 || block.postings.length === 0) inTransaction(this.db.remove(block.key));
    if (block.postings.length > 0) this.write(block.postings);
    return true;
  }
}

/**
 * A word's list read in order from a posting on (a query's driving side), and asked whether it
 * holds postings asked in order (its other sides): the block last read answers until a posting
 * is past it. `onRead` counts each block read as a unit of work.
 */
class ListReader {
  private readonly blocks: Iterator<Block>;
  private current: Posting[] = [];
  private at = 0;
  private ended = false;
  /** The block a lookup read last. */
  private looked: Posting[] | undefined;

  constructor(
    private readonly list: WordBlocks,
    private readonly from: Posting | null,
    private readonly onRead: () => void,
  ) {
    this.blocks = list.blocksFrom(from);
  }

  /** The next posting at or after `from`, or undefined at the end of the list. */
  peek(): Posting | undefined {
    while (this.at >= this.current.length) {
      if (this.ended) return undefined;
      this.onRead();
      const next = this.blocks.next();
      if (next.done) {
        this.ended = true;
        return undefined;
      }
      this.current = next.value.postings;
      this.at = 0;
      if (this.from !== null) while (this.at < this.current.length && comparePostings(this.current[this.at] as Posting, this.from) < 0) this.at++;
    }
    return this.current[this.at];
  }

  advance(): void {
    this.at++;
  }

  holds(posting: Posting): boolean {
    const looked = this.looked;
    if (looked === undefined || comparePostings(posting, looked[0] as Posting) < 0 || comparePostings(posting, looked[looked.length - 1] as Posting) > 0) {
      this.onRead();
      this.looked = this.list.blockAt(posting)?.postings;
      if (this.looked === undefined) return false;
    }
    return searchBlock(this.looked as Posting[], posting).found;
  }
}

/**
 * The note search index in its own database, `note-search` (store/note-search-index.ts; packed
 * postings: note-postings.ts), written inside the events' own write transaction (one writer, in
 * order: no tombstones needed). A posting names its notes by created_at, kind and the first 4 bytes
 * of the id; the store's events are read by those 4 bytes for the notes a page shows. One process
 * reads it: no shards; a query does NOTE_SEARCH_SHARDS × scanPerShard units of work at most, as a
 * Redis query of all its shards does.
 */
export class LmdbNoteSearch implements Omit<NoteSearchIndex, 'noteSearchEnabled'> {
  constructor(
    private readonly db: Database<Buffer, Buffer>,
    private readonly transactions: LmdbTransactions,
    private readonly notesWithPrefix: NotesWithPrefix,
  ) {}

  /** Adds (+1) or removes (-1) a note's postings, inside the write transaction. */
  apply(event: NostrEvent, delta: 1 | -1): void {
    const words = indexedWordsOf(event);
    if (words.length === 0) return;
    const posting = postingOfNote(event.created_at, event.id, event.kind);
    // A posting stands for every note of its place, prefix and kind that holds the word: taken
    // away only where none of the others does.
    const others = delta > 0 ? [] : this.notesOf(posting).filter((held) => held.event.id !== event.id);
    const othersHold = others.length === 0 ? undefined : new Set(others.flatMap((held) => indexedWordsOf(held.event)));
    for (const word of words) {
      if (othersHold?.has(word)) continue;
      const list = new WordBlocks(this.db, word);
      if (delta > 0 ? list.insert(posting) : list.remove(posting)) this.count(word, delta);
    }
  }

  private count(word: string, delta: number): void {
    const key = countKey(word);
    const count = (this.db.get(key)?.readUInt32BE(0) ?? 0) + delta;
    if (count <= 0) {
      inTransaction(this.db.remove(key));
      return;
    }
    const value = Buffer.allocUnsafe(4);
    value.writeUInt32BE(count);
    inTransaction(this.db.put(key, value));
  }

  private countOf(word: string): number {
    return this.db.get(countKey(word))?.readUInt32BE(0) ?? 0;
  }

  /** The servable notes a posting may stand for: its place, prefix and kind. */
  private notesOf(posting: Posting): HeldNote[] {
    const kind = kindOfPosting(posting);
    return this.notesWithPrefix(prefixHexOf(posting)).filter(({ event }) => event.created_at === posting.createdAt && event.kind === kind);
  }

  noteWordsStarting(prefix: string, limit: number): Promise<string[]> {
    const start = countKey(prefix);
    return this.transactions.read(() => [...this.db.getKeys({ start, end: Buffer.concat([start, PAST_WORDS]), limit })].map((key) => key.toString('utf8', 1)));
  }

  searchNotes(query: NoteSearchQuery, limits: NoteSearchLimits = NOTE_SEARCH_LIMITS): Promise<NoteSearchResult> {
    return this.transactions.read(() => this.search(query, NOTE_SEARCH_SHARDS * limits.scanPerShard));
  }

  /**
   * As NOTE_SEARCH_SCRIPT (lua-scripts.ts) does in one shard: the smallest side drives (the rarest
   * whole word, or the expansion's lists merged when they hold fewer), every posting it reads
   * checked against the other lists, until `cap` units of work are done (a posting looked at, a
   * lookup, a block read). A posting found in every list becomes its notes (the store's events by
   * its prefix); where two or more share it, those whose words hold the query.
   */
  private search(query: NoteSearchQuery, cap: number): NoteSearchResult {
    const whole = query.words.map((word) => ({ word, count: this.countOf(word) }));
    if (whole.some(({ count }) => count === 0)) return { notes: [], stoppedAt: null };
    const anyOf = (query.anyOf ?? []).map((word) => ({ word, count: this.countOf(word) }));
    const expansion = anyOf.reduce((sum, { count }) => sum + count, 0);
    const rarest = whole.reduce<{ word: string; count: number } | undefined>((least, entry) => (!least || entry.count < least.count ? entry : least), undefined);
    const drivenByExpansion = anyOf.length > 0 && (!rarest || expansion < rarest.count);
    const drive = drivenByExpansion ? anyOf.map(({ word }) => word) : [(rarest as { word: string }).word];
    const checks = drivenByExpansion ? query.words : query.words.filter((word) => word !== rarest?.word);
    const oneOf = drivenByExpansion ? [] : anyOf.map(({ word }) => word);

    const { after, since, until } = query;
    const fromCursor = after !== null && (until === null || after.createdAt <= until);
    const from = fromCursor ? postingAt(after) : until !== null ? postingAt({ createdAt: until, id: '' }) : null;
    const kinds = new Set(query.kinds);
    let work = 0;
    const onRead = () => {
      work += 1;
    };
    const reader = (word: string) => new ListReader(new WordBlocks(this.db, word), from, onRead);
    const heads = drive.map(reader);
    const checked = checks.map(reader);
    const either = oneOf.map(reader);
    const notes: NotePosting[] = [];
    let last: Posting | undefined;
    for (;;) {
      let least: ListReader | undefined;
      let leastPosting: Posting | undefined;
      for (const head of heads) {
        const next = head.peek();
        if (next !== undefined && (leastPosting === undefined || comparePostings(next, leastPosting) < 0)) {
          least = head;
          leastPosting = next;
        }
      }
      if (least === undefined || leastPosting === undefined || (since !== null && leastPosting.createdAt < since)) return { notes, stoppedAt: null };
      least.advance();
      const posting = leastPosting;
      if (last !== undefined && comparePostings(posting, last) === 0) continue;
      if (last !== undefined && work >= cap) return { notes, stoppedAt: positionPast(last) };
      work += 1;
      last = posting;
      if (!kinds.has(kindOfPosting(posting))) continue;
      if (!checked.every((list) => (work++, list.holds(posting)))) continue;
      if (either.length > 0 && !either.some((list) => (work++, list.holds(posting)))) continue;
      for (const note of this.matchesOf(posting, query, fromCursor ? after : null)) {
        notes.push(note);
        if (notes.length >= query.first) return { notes, stoppedAt: null };
      }
    }
  }

  /** The notes a posting found in every list stands for, after the cursor, in page order. */
  private matchesOf(posting: Posting, query: NoteSearchQuery, after: ReplyPosition | null): NotePosting[] {
    let held = this.notesOf(posting);
    if (held.length > 1) {
      held = held.filter(({ event }) => {
        const words = new Set(indexedWordsOf(event));
        return query.words.every((word) => words.has(word)) && (query.anyOf === null || query.anyOf.some((word) => words.has(word)));
      });
    }
    return held
      .map(({ event, bytes }) => ({ createdAt: event.created_at, id: event.id, kind: event.kind, bytes }))
      .filter((note) => after === null || compareNotes(note, after) > 0)
      .sort(compareNotes);
  }

  async *noteSearchLists(): AsyncIterable<NoteSearchList[]> {
    let after = countKey('');
    const end = Buffer.from([COUNT + 1]);
    for (;;) {
      const start = after;
      const words = await this.transactions.read(() => [...this.db.getKeys({ start, end, limit: 200 })].filter((key) => !key.equals(start)).map((key) => key.toString('utf8', 1)));
      if (words.length === 0) return;
      yield await this.transactions.read(() => words.map((word) => ({ word, notes: this.notesOfWord(word) })));
      after = countKey(words.at(-1) as string);
    }
  }

  /** Every note a word's list stands for (relations check): where a posting stands for two or more, those whose words hold it. */
  private notesOfWord(word: string): NotePosting[] {
    const notes: NotePosting[] = [];
    for (const { postings } of new WordBlocks(this.db, word).blocksFrom(null)) {
      for (const posting of postings) {
        let held = this.notesOf(posting);
        if (held.length > 1) held = held.filter(({ event }) => indexedWordsOf(event).includes(word));
        notes.push(...held.map(({ event, bytes }) => ({ createdAt: event.created_at, id: event.id, kind: event.kind, bytes })));
      }
    }
    return notes.sort(compareNotes);
  }

  /**
   * Moves what an earlier version kept in the relationship database (a key per posting,
   * `Q:<word> <place>` → `<kind> <size>`, and `Qv:<word>` → the count) here, in one write
   * transaction, on open. False where the write failed (a full disk): the old keys stay, and
   * searches read this index as it is until `relations rebuild`.
   */
  adopt(relations: Database<string, string>): boolean {
    if ([...relations.getKeys({ start: 'Q:', end: 'Q;', limit: 1 })].length === 0) return true;
    try {
      relations.transactionSync(() => {
        for (const key of relations.getKeys({ start: 'Q:', end: 'Q;' })) {
          const space = key.indexOf(' ', 2);
          if (space > 2) {
            const word = key.slice(2, space);
            const { createdAt, id } = notePositionOf(key.slice(space + 1), 0);
            const kind = Number((relations.get(key) ?? '').split(' ')[0]);
            if (isSearchableKind(kind) && new WordBlocks(this.db, word).insert(postingOfNote(createdAt, id, kind))) this.count(word, 1);
          }
          inTransaction(relations.remove(key));
        }
        for (const key of relations.getKeys({ start: 'Qv:', end: 'Qv;' })) inTransaction(relations.remove(key));
      });
      return true;
    } catch {
      return false;
    }
  }

  /** Empties the index (relations rebuild), inside the write transaction. */
  clear(): void {
    for (const key of this.db.getKeys()) inTransaction(this.db.remove(key));
  }
}

/** A held note's size as the index reports it (the events' stored JSON). */
export const heldNoteOf = (event: NostrEvent): HeldNote => ({ event, bytes: storedSizeOf(event) });
