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
  addToBlock,
  comparePostings,
  decodeBlock,
  encodeBlock,
  kindOfPosting,
  type Posting,
  postingAt,
  postingKeyBytes,
  postingOfKeyBytes,
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

/**
 * The servable events whose id starts with a posting's prefix (6 hex digits: note-postings.ts)
 * and whose created_at is the posting's (others may be left out unread), in the caller's transaction.
 */
export type NotesWithPrefix = (prefix: string, createdAt: number) => HeldNote[];

/**
 * The keys: a word's *head*, `<word> 0x00` → its count of postings and of blocks (varints), then
 * its first block; its other blocks, `<word> 0x00 <first posting's key bytes>` → a block
 * (note-postings.ts). No word holds a NUL: a word's keys are one range, its head first. Most words
 * are rare: their one block is their head, read and written as one value (a batch's change to it is
 * a get and a put, with no range read).
 */
const WORD_END = Buffer.from([0]);

/**
 * A list of more than one block also has *runs*: a batch's additions that fall past its head are
 * written as one sorted run, `<word> 0x00 0xff <number, 4 bytes>`, listed by `<word> 0x00 0xff` →
 * its runs, the postings they hold and the next run's number (varints), and merged into the blocks
 * once they hold an eighth of the list or are MAX_RUNS. Notes arriving out of order (an import of
 * a year) put a posting into most blocks of a common word: merged into them at once, each batch
 * rewrote the whole list (a block a posting); merged from runs, a block takes many postings a
 * rewrite. A block key's first byte after the NUL is a mirrored created_at's (at most 0x1f): the
 * runs sort after every block of the word. Runs exist only while the list has more than one block.
 */
const RUNS_MARK = Buffer.from([0xff]);

/** Runs a list holds at most before they are merged (a read of the list reads each). */
const MAX_RUNS = 16;

/** After every word starting with a prefix: UTF-8 never holds the bytes F4 90 (past U+10FFFF). */
const PAST_WORDS = Buffer.from([0xf4, 0x90]);

/** Postings of an earlier version's keys moved per write transaction (adopt). */
const ADOPTED_PER_BATCH = 50_000;

/** Whether a key is a head: its first NUL (the word's end) is its last byte. */
const isHead = (key: Buffer) => key.indexOf(0) === key.length - 1;

function writeVarint(value: number, out: number[]): void {
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

/** A head's value: the counts, then the first block. */
interface Head {
  count: number;
  blocks: number;
  postings: Posting[];
}

/** A head's counts, and where its block starts. */
function readCounts(value: Buffer): { count: number; blocks: number; at: number } {
  const { values, at } = readVarints(value, 2);
  return { count: values[0] as number, blocks: values[1] as number, at };
}

function readHead(value: Buffer, postings = true): Head {
  const { count, blocks, at } = readCounts(value);
  return { count, blocks, postings: postings ? decodeBlock(value.subarray(at)) : [] };
}

function countsValue(count: number, blocks: number): Buffer {
  const counts: number[] = [];
  writeVarint(count, counts);
  writeVarint(blocks, counts);
  return Buffer.from(counts);
}

const headValue = (head: Head): Buffer => Buffer.concat([countsValue(head.count, head.blocks), encodeBlock(head.postings)]);

const EMPTY = Buffer.alloc(0);

/** A block as read: its key and its postings (and, read from the head, the list's count of blocks). */
interface Block {
  key: Buffer;
  postings: Posting[];
  blocks?: number;
}

/** A list's runs as listed (RUNS_MARK). */
interface RunDirectory {
  runs: number;
  postings: number;
  next: number;
}

/** The first `count` varints of a value, and where they end. */
function readVarints(value: Buffer, count: number): { values: number[]; at: number } {
  const values: number[] = [];
  let at = 0;
  while (values.length < count) {
    let result = 0;
    let scale = 1;
    for (;;) {
      const byte = value[at++] as number;
      result += (byte & 0x7f) * scale;
      if (!(byte & 0x80)) break;
      scale *= 0x80;
    }
    values.push(result);
  }
  return { values, at };
}

/** Postings of several ordered lists as one ordered list, each posting once. */
function mergePostings(lists: readonly (readonly Posting[])[]): Posting[] {
  const all = lists.flat().sort(comparePostings);
  return all.filter((posting, at) => at === 0 || comparePostings(all[at - 1] as Posting, posting) !== 0);
}

/**
 * One word's blocks. `blockAt` finds the block a posting belongs in: the last whose first posting
 * is not after it (its key ends with that posting: keys sort as postings do), the head where none.
 */
class WordBlocks {
  /** The head key; after every block of the word (its runs' directory); after every key of the word. */
  readonly head: Buffer;
  readonly runs: Buffer;
  readonly end: Buffer;
  /** Before the head: where a reverse read of the word's keys ends. */
  readonly before: Buffer;

  constructor(
    private readonly db: Database<Buffer, Buffer>,
    readonly word: string,
  ) {
    const bytes = Buffer.from(word);
    this.head = Buffer.concat([bytes, WORD_END]);
    this.runs = Buffer.concat([this.head, RUNS_MARK]);
    this.end = Buffer.concat([bytes, Buffer.from([1])]);
    this.before = bytes;
  }

  /** The runs' directory and the runs (one range read), or none. */
  readRuns(): { directory: RunDirectory; runs: Block[] } | undefined {
    let directory: RunDirectory | undefined;
    const runs: Block[] = [];
    for (const { key, value } of this.db.getRange({ start: this.runs, end: this.end })) {
      if (key.length === this.runs.length) {
        const [count, postings, next] = readVarints(value, 3).values as [number, number, number];
        directory = { runs: count, postings, next };
      } else runs.push({ key, postings: decodeBlock(value) });
    }
    return directory && { directory, runs };
  }

  /** Every posting the runs hold, in order, each once. */
  runPostings(): Posting[] {
    return mergePostings(this.readRuns()?.runs.map((run) => run.postings) ?? []);
  }

  private writeRuns(directory: RunDirectory): void {
    if (directory.runs === 0) {
      inTransaction(this.db.remove(this.runs));
      return;
    }
    const out: number[] = [];
    for (const value of [directory.runs, directory.postings, directory.next]) writeVarint(value, out);
    inTransaction(this.db.put(this.runs, Buffer.from(out)));
  }

  keyOf(first: Posting): Buffer {
    return Buffer.concat([this.head, postingKeyBytes(first)]);
  }

  readHead(postings = true): Head | undefined {
    const value = this.db.get(this.head);
    return value === undefined ? undefined : readHead(value, postings);
  }

  private blockOf(key: Buffer, value: Buffer): Block {
    if (key.length !== this.head.length) return { key, postings: decodeBlock(value) };
    const { postings, blocks } = readHead(value);
    return { key, postings, blocks };
  }

  /** The block whose range holds `posting`'s place: the head where the list has it before every other block (undefined: no list). */
  blockAt(posting: Posting): Block | undefined {
    for (const { key, value } of this.db.getRange({ start: this.keyOf(posting), end: this.before, reverse: true, limit: 1 })) return this.blockOf(key, value);
    return undefined;
  }

  /** The blocks from the one holding `from`'s place (or the head) on, lazily. */
  *blocksFrom(from: Posting | null): Generator<Block> {
    const held = from === null ? undefined : this.blockAt(from);
    for (const { key, value } of this.db.getRange({ start: held?.key ?? this.head, end: this.runs })) yield this.blockOf(key, value);
  }

  /**
   * Writes postings (in order) in place of the block `held` as blocks of POSTINGS_PER_BLOCK at
   * most, of even sizes; or, where `head` is given, in the head's place: the head keeps the first
   * of them and the rest go out as full blocks (notes arriving newest first fill the head, and each
   * overflow moves out a full block, where halves left blocks half full). Returns the blocks
   * written less the one replaced.
   */
  private rewrite(held: Buffer | undefined, postings: readonly Posting[], head?: Head): number {
    const put = (block: readonly Posting[]) => inTransaction(this.db.put(this.keyOf(block[0] as Posting), encodeBlock(block)));
    if (head) {
      const others = Math.max(0, Math.ceil(postings.length / POSTINGS_PER_BLOCK) - 1);
      const kept = postings.length - others * POSTINGS_PER_BLOCK;
      head.postings = postings.slice(0, kept);
      for (let at = kept; at < postings.length; at += POSTINGS_PER_BLOCK) put(postings.slice(at, at + POSTINGS_PER_BLOCK));
      return others - (kept === 0 ? 1 : 0);
    }
    const blocks = Math.ceil(postings.length / POSTINGS_PER_BLOCK);
    const size = Math.ceil(postings.length / Math.max(1, blocks));
    // A new first posting is a new key.
    if (held !== undefined && (postings.length === 0 || !this.keyOf(postings[0] as Posting).equals(held))) inTransaction(this.db.remove(held));
    for (let at = 0; at < postings.length; at += size) put(postings.slice(at, at + size));
    return blocks - (held !== undefined ? 1 : 0);
  }

  /**
   * Applies changes (in order; each posting once: added, or taken away). To a list of one block,
   * or within its head's postings, they go to the blocks (applyToBlocks); other additions to a list
   * of more blocks go as one new run, and a removal is taken from the blocks and the runs (RUNS_MARK).
   * The runs are merged into the blocks once they hold an eighth of the list or are MAX_RUNS, or the
   * list is down to one block. Returns how many postings the list holds more (or fewer).
   */
  change(changes: readonly PostingChange[]): number {
    const value = this.db.get(this.head);
    // Additions to a list of one block that stays one: its bytes, merged as they are (addToBlock).
    if (changes.every((change) => change.add)) {
      const { count, blocks, at } = value === undefined ? { count: 0, blocks: 1, at: 0 } : readCounts(value);
      const merged = blocks === 1 ? addToBlock(value === undefined ? EMPTY : value.subarray(at), changes.map((change) => change.posting), POSTINGS_PER_BLOCK) : undefined;
      if (merged) {
        inTransaction(this.db.put(this.head, Buffer.concat([countsValue(merged.count, 1), merged.block])));
        return merged.count - count;
      }
    }
    const head = value === undefined ? { count: 0, blocks: 1, postings: [] } : readHead(value);
    const before = head.count;
    if (head.blocks === 1) {
      this.applyToBlocks(head, changes);
    } else {
      const held = this.readRuns() ?? { directory: { runs: 0, postings: 0, next: 0 }, runs: [] };
      const { directory } = held;
      const headLast = head.postings[head.postings.length - 1];
      const toBlocks: PostingChange[] = [];
      const toRun: Posting[] = [];
      for (const change of changes) {
        // A posting a removal kept (another note holds it) is most likely held by the blocks: there, counted exactly.
        if (change.add && !change.kept && headLast !== undefined && comparePostings(change.posting, headLast) > 0) toRun.push(change.posting);
        else toBlocks.push(change);
      }
      // A removal is taken from every run that holds it.
      const removals = changes.filter((change) => !change.add);
      if (removals.length > 0) {
        for (const run of held.runs) {
          const kept = mergeChanges(run.postings, removals);
          if (kept.length === run.postings.length) continue;
          directory.postings -= run.postings.length - kept.length;
          head.count -= run.postings.length - kept.length;
          run.postings = kept;
          if (kept.length > 0) inTransaction(this.db.put(run.key, encodeBlock(kept)));
          else {
            inTransaction(this.db.remove(run.key));
            directory.runs -= 1;
          }
        }
        held.runs = held.runs.filter((run) => run.postings.length > 0);
      }
      this.applyToBlocks(head, toBlocks);
      if (toRun.length > 0) {
        const key = Buffer.alloc(this.runs.length + 4);
        this.runs.copy(key);
        key.writeUInt32BE(directory.next, this.runs.length);
        inTransaction(this.db.put(key, encodeBlock(toRun)));
        held.runs.push({ key, postings: toRun });
        directory.runs += 1;
        directory.postings += toRun.length;
        directory.next += 1;
        // Counted as new: an addition of a posting the blocks hold already (a new note sharing a
        // posting with one of them, by chance or ground) is told apart as the runs are merged; until
        // then the count, which only picks the rarest word, is that much over.
        head.count += toRun.length;
      }
      if (directory.runs > 0 && (directory.runs >= MAX_RUNS || directory.postings * 8 >= head.count || head.blocks === 1)) {
        for (const run of held.runs) inTransaction(this.db.remove(run.key));
        head.count -= directory.postings;
        this.applyToBlocks(
          head,
          mergePostings(held.runs.map((run) => run.postings)).map((posting) => ({ posting, add: true })),
        );
        directory.runs = 0;
        directory.postings = 0;
      }
      this.writeRuns(directory);
    }
    if (head.count > 0) inTransaction(this.db.put(this.head, headValue(head)));
    else if (before > 0) inTransaction(this.db.remove(this.head));
    return head.count - before;
  }

  /**
   * Applies changes (in order) to the blocks, block by block: each block they fall in is read and
   * written once, the head last (with its counts). Of a list of more than one block, only the keys
   * from the block of the first change to the one past the last are read. Adjusts the head's
   * counts; the caller writes it.
   */
  private applyToBlocks(head: Head, changes: readonly PostingChange[]): void {
    // The blocks the changes span (the first may be the head), then the one after them.
    const spanned: Buffer[] = [this.head];
    if (head.blocks > 1 && changes.length > 0) {
      const first = (changes[0] as PostingChange).posting;
      const last = (changes[changes.length - 1] as PostingChange).posting;
      for (const key of this.db.getKeys({ start: this.keyOf(first), end: this.before, reverse: true, limit: 1 })) spanned[0] = key;
      for (const key of this.db.getKeys({ start: spanned[0] as Buffer, end: this.runs })) {
        if (key.equals(spanned[0] as Buffer)) continue;
        spanned.push(key);
        if (comparePostings(postingOfKeyBytes(key.subarray(this.head.length)), last) > 0) break;
      }
    }
    // Block i holds what sorts from firsts[i] on (the first, whatever the changes start with).
    const firsts = spanned.map((key, at) => (at === 0 ? undefined : postingOfKeyBytes(key.subarray(this.head.length))));
    let index = 0;
    let block = 0;
    while (index < changes.length) {
      const posting = (changes[index] as PostingChange).posting;
      while (block + 1 < spanned.length && comparePostings(firsts[block + 1] as Posting, posting) <= 0) block++;
      const next = firsts[block + 1];
      const mine: PostingChange[] = [];
      while (index < changes.length && (next === undefined || comparePostings((changes[index] as PostingChange).posting, next) < 0)) mine.push(changes[index++] as PostingChange);
      const key = spanned[block] as Buffer;
      const isHead = key.length === this.head.length;
      const held = isHead ? head.postings : decodeBlock(this.db.get(key) as Buffer);
      const merged = mergeChanges(held, mine);
      head.count += merged.length - held.length;
      head.blocks += isHead ? this.rewrite(undefined, merged, head) : this.rewrite(key, merged);
    }
    // A head left empty takes the next block's place (and its count in `blocks`), if the list has one.
    if (head.postings.length === 0 && head.count > 0) {
      for (const { key, value } of this.db.getRange({ start: Buffer.concat([this.head, WORD_END]), end: this.runs, limit: 1 })) {
        head.postings = decodeBlock(value);
        inTransaction(this.db.remove(key));
      }
      // No block to take its place (the runs hold the rest): the head is the list's one block, and
      // the caller merges the runs into it (found by review: `blocks` went to 0, and every read
      // and write after it counted a block short).
      if (head.postings.length === 0) head.blocks = 1;
    }
  }
}
/** A posting as a map key. */
const keyOfPosting = (posting: Posting) => `${posting.createdAt} ${posting.prefix} ${posting.kindBit}`;

/** A posting added to a list (`add`) or taken from it; `kept`: a removal turned back into an addition (batch()). */
interface PostingChange {
  posting: Posting;
  add: boolean;
  kept?: boolean;
}

/** A block's postings with changes applied (both in order): an addition of a posting held, or a removal of one not held, changes nothing. */
function mergeChanges(held: readonly Posting[], changes: readonly PostingChange[]): Posting[] {
  const merged: Posting[] = [];
  let at = 0;
  for (const { posting, add } of changes) {
    while (at < held.length && comparePostings(held[at] as Posting, posting) < 0) merged.push(held[at++] as Posting);
    if (at < held.length && comparePostings(held[at] as Posting, posting) === 0) at++;
    if (add) merged.push(posting);
  }
  while (at < held.length) merged.push(held[at++] as Posting);
  return merged;
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
  /** The list's postings where it is one block (null where it is more; undefined: not read yet). */
  private whole: Posting[] | null | undefined;
  /** The block a lookup read last, and whether it is the head. */
  private looked: { postings: Posting[]; head: boolean } | undefined;
  /** The list's runs (RUNS_MARK; undefined: not read yet), and where peek is in each (from `from` on). */
  private runLists: Posting[][] | undefined;
  private runAt: number[] = [];
  /** The run of peek's posting, when it is a run's. */
  private peekedRun = -1;

  constructor(
    private readonly list: WordBlocks,
    private readonly from: Posting | null,
    private readonly onRead: () => void,
  ) {
    this.blocks = list.blocksFrom(from);
  }

  /** The runs, read once (a unit of work). */
  private readRuns(): Posting[][] {
    if (this.runLists === undefined) {
      this.onRead();
      const runs = this.list.readRuns()?.runs.map((run) => run.postings) ?? [];
      this.runLists = runs;
      this.runAt = runs.map((run) => (this.from === null ? 0 : searchBlock(run, this.from).at));
    }
    return this.runLists;
  }

  /** The least next posting of the runs (merged as they are read: at most MAX_RUNS to compare), and its run. */
  private peekRuns(): { posting: Posting; run: number } | undefined {
    const runs = this.readRuns();
    let least: { posting: Posting; run: number } | undefined;
    for (let run = 0; run < runs.length; run++) {
      const posting = (runs[run] as Posting[])[this.runAt[run] as number];
      if (posting === undefined) continue;
      const order = least === undefined ? -1 : comparePostings(posting, least.posting);
      // The same posting in two runs: past it in the later one.
      if (order === 0) (this.runAt[run] as number)++;
      if (order < 0) least = { posting, run };
    }
    return least;
  }

  /** The next posting of the blocks at or after `from`. */
  private peekBlocks(): Posting | undefined {
    while (this.at >= this.current.length) {
      if (this.ended) return undefined;
      this.onRead();
      const next = this.blocks.next();
      if (next.done) {
        this.ended = true;
        return undefined;
      }
      this.current = next.value.postings;
      // A list of one block has no runs (RUNS_MARK): not read.
      if (next.value.blocks === 1 && this.runLists === undefined) this.runLists = [];
      this.at = 0;
      if (this.from !== null) while (this.at < this.current.length && comparePostings(this.current[this.at] as Posting, this.from) < 0) this.at++;
    }
    return this.current[this.at];
  }

  /** The next posting at or after `from` (of the blocks and the runs, each once), or undefined at the end of the list. */
  peek(): Posting | undefined {
    const block = this.peekBlocks();
    let run = this.peekRuns();
    // A posting in both (an addition the runs hold until merged): the blocks' one.
    while (run !== undefined && block !== undefined && comparePostings(run.posting, block) === 0) {
      (this.runAt[run.run] as number)++;
      run = this.peekRuns();
    }
    this.peekedRun = run !== undefined && (block === undefined || comparePostings(run.posting, block) < 0) ? run.run : -1;
    return this.peekedRun >= 0 ? run?.posting : block;
  }

  advance(): void {
    if (this.peekedRun >= 0) (this.runAt[this.peekedRun] as number)++;
    else this.at++;
  }

  holds(posting: Posting): boolean {
    return this.blocksHold(posting) || (this.whole === null && this.readRuns().some((run) => searchBlock(run, posting).found));
  }

  /** Whether the blocks hold a posting (a list of one block: its head, with no runs). */
  private blocksHold(posting: Posting): boolean {
    if (this.whole === undefined) {
      // A list of one block (most lists: their head) answers every lookup from one read.
      this.onRead();
      const head = this.list.readHead();
      this.whole = head?.blocks === 1 ? head.postings : null;
    }
    if (this.whole !== null) return searchBlock(this.whole, posting).found;
    const looked = this.looked;
    // The block read last answers from its first posting (from the start, the head) to its last.
    if (looked === undefined || (!looked.head && comparePostings(posting, looked.postings[0] as Posting) < 0) || comparePostings(posting, looked.postings[looked.postings.length - 1] as Posting) > 0) {
      this.onRead();
      const block = this.list.blockAt(posting);
      if (block === undefined) return false;
      this.looked = { postings: block.postings, head: block.key.length === this.list.head.length };
    }
    return searchBlock((this.looked as { postings: Posting[] }).postings, posting).found;
  }
}

/**
 * The note search index in its own database, `note-search` (store/note-search-index.ts; packed
 * postings: note-postings.ts), written inside the events' own write transaction (one writer, in
 * order: no tombstones needed). A posting names its notes by created_at, kind and the first 3 bytes
 * of the id; the store's events are read by those 3 bytes for the postings found in every list
 * (and, as a batch that removes notes ends, once for each posting it removes). One process
 * reads it: no shards; a query does NOTE_SEARCH_SHARDS × scanPerShard units of work at most, as a
 * Redis query of all its shards does.
 */
export class LmdbNoteSearch implements Omit<NoteSearchIndex, 'noteSearchEnabled'> {
  constructor(
    private readonly db: Database<Buffer, Buffer>,
    private readonly transactions: LmdbTransactions,
    private readonly notesWithPrefix: NotesWithPrefix,
  ) {}

  /** While a batch of events is written (batch()): per word, each posting's last change (by its posting's key). */
  private pending: Map<string, Map<string, PostingChange>> | undefined;
  /** While a batch is written: the postings it takes from lists, by key (their notes are read once, as the batch ends). */
  private removed: Map<string, Posting> | undefined;

  /**
   * Runs `write` (inside the write transaction, a batch of events) with the changes of the index
   * gathered, then applies them word by word: each block a batch changes is read and written once,
   * where a change a posting cost a block's read and write (a batch of 2,000 notes adds 2,000
   * postings to the list of every note, and a thousand to a word in half of them).
   *
   * A posting stands for every servable note of its place, prefix and kind that holds the word: a
   * removal is kept only where none of them does once the batch is written (its notes read then,
   * once a posting, not once a removal: a thousand notes ground to share one would make a request
   * to vanish read each of them a thousand times).
   */
  batch<T>(write: (pending: Map<string, Map<string, PostingChange>>) => T): T {
    if (this.pending) return write(this.pending);
    const pending = new Map<string, Map<string, PostingChange>>();
    const removed = new Map<string, Posting>();
    this.pending = pending;
    this.removed = removed;
    try {
      return write(pending);
    } finally {
      this.pending = undefined;
      this.removed = undefined;
      const stillHeld = new Map<string, Set<string>>();
      for (const [key, posting] of removed) stillHeld.set(key, new Set(this.notesOf(posting).flatMap((held) => indexedWordsOf(held.event))));
      for (const [word, changes] of pending) {
        for (const [key, change] of changes) {
          if (!change.add && stillHeld.get(key)?.has(word)) {
            change.add = true;
            change.kept = true;
          }
        }
        new WordBlocks(this.db, word).change([...changes.values()].sort((a, b) => comparePostings(a.posting, b.posting)));
      }
    }
  }

  /**
   * Adds (+1) or removes (-1) a note's postings, inside the write transaction (a change each,
   * applied when the batch ends: the last change of a posting is what it ends as, as when each
   * is applied in turn).
   */
  apply(event: NostrEvent, delta: 1 | -1): void {
    const words = indexedWordsOf(event);
    if (words.length === 0) return;
    if (!this.pending) {
      this.batch(() => this.apply(event, delta));
      return;
    }
    const posting = postingOfNote(event.created_at, event.id, event.kind);
    const key = keyOfPosting(posting);
    if (delta < 0) this.removed?.set(key, posting);
    for (const word of words) this.change(this.pending, word, posting, delta > 0, key);
  }

  /** A posting's change, in place of any earlier one of the batch. */
  private change(pending: Map<string, Map<string, PostingChange>>, word: string, posting: Posting, add: boolean, key = keyOfPosting(posting)): void {
    let changes = pending.get(word);
    if (!changes) pending.set(word, (changes = new Map()));
    changes.set(key, { posting, add });
  }

  private countOf(word: string): number {
    return new WordBlocks(this.db, word).readHead(false)?.count ?? 0;
  }

  /** The words held from `start` on (a head key's word each), below `end`, at most `limit`: a read from each head past the word's other blocks. */
  private wordsFrom(start: Buffer, end: Buffer, limit: number): string[] {
    const words: string[] = [];
    let from = start;
    while (words.length < limit) {
      let found: Buffer | undefined;
      for (const key of this.db.getKeys({ start: from, end, limit: 1 })) found = key;
      if (found === undefined) break;
      const wordEnd = found.indexOf(0);
      if (isHead(found)) words.push(found.toString('utf8', 0, wordEnd));
      from = Buffer.concat([found.subarray(0, wordEnd), Buffer.from([1])]);
    }
    return words;
  }

  /** The servable notes a posting may stand for: its place, prefix and kind. */
  private notesOf(posting: Posting): HeldNote[] {
    const kind = kindOfPosting(posting);
    return this.notesWithPrefix(prefixHexOf(posting), posting.createdAt).filter(({ event }) => event.created_at === posting.createdAt && event.kind === kind);
  }

  noteWordsStarting(prefix: string, limit: number): Promise<string[]> {
    const start = Buffer.from(prefix);
    return this.transactions.read(() => this.wordsFrom(start, Buffer.concat([start, PAST_WORDS]), limit));
  }

  searchNotes(query: NoteSearchQuery, limits: NoteSearchLimits = NOTE_SEARCH_LIMITS): Promise<NoteSearchResult> {
    return this.transactions.read(() => this.search(query, NOTE_SEARCH_SHARDS * limits.scanPerShard));
  }

  /**
   * As NOTE_SEARCH_SCRIPT (lua-scripts.ts) does in one shard: the smallest side drives (the rarest
   * whole word, or the expansion's lists merged when they hold fewer), every posting it reads
   * checked against the other lists, until `cap` units of work are done (a posting looked at, a
   * note read, a lookup, a block read), stopping only where the next posting is of another second
   * or prefix. A posting found in every list becomes its notes (the store's events by its prefix);
   * where two or more share it, those whose words hold the query.
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
    // The notes found of one place and prefix (postings of both kinds sort together, their notes
    // by id across them): added to the page in order once the next place or prefix comes.
    let group: NotePosting[] = [];
    const closeGroup = () => {
      notes.push(...group.sort(compareNotes));
      group = [];
      return notes.length >= query.first;
    };
    const page = () => notes.slice(0, query.first);
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
      if (least === undefined || leastPosting === undefined || (since !== null && leastPosting.createdAt < since)) {
        closeGroup();
        return { notes: page(), stoppedAt: null };
      }
      const posting = leastPosting;
      if (last !== undefined && comparePostings(posting, last) === 0) {
        least.advance();
        continue;
      }
      // Stopped only between groups: where it stops, the next page goes on past the whole group.
      // Never right after the group of the cursor it goes on from (read again, and maybe all of its
      // work): each call gets past one group at least.
      if (last !== undefined && (posting.createdAt !== last.createdAt || posting.prefix !== last.prefix)) {
        if (closeGroup()) return { notes: page(), stoppedAt: null };
        const cursorGroup = from !== null && fromCursor && last.createdAt === from.createdAt && last.prefix === from.prefix;
        if (work >= cap && !cursorGroup) return { notes, stoppedAt: positionPast(last) };
      }
      least.advance();
      work += 1;
      last = posting;
      if (!kinds.has(kindOfPosting(posting))) continue;
      if (!checked.every((list) => (work++, list.holds(posting)))) continue;
      if (either.length > 0 && !either.some((list) => (work++, list.holds(posting)))) continue;
      group.push(...this.matchesOf(posting, query, fromCursor ? after : null, (read) => (work += read)));
    }
  }

  /** The notes a posting found in every list stands for, after the cursor. */
  private matchesOf(posting: Posting, query: NoteSearchQuery, after: ReplyPosition | null, onRead: (notes: number) => void): NotePosting[] {
    let held = this.notesOf(posting);
    // Each note read is a unit of work (a lookup), as the lists' reads are.
    onRead(Math.max(1, held.length));
    if (held.length > 1) {
      held = held.filter(({ event }) => {
        const words = new Set(indexedWordsOf(event));
        return query.words.every((word) => words.has(word)) && (query.anyOf === null || query.anyOf.some((word) => words.has(word)));
      });
    }
    return held
      .map(({ event, bytes }) => ({ createdAt: event.created_at, id: event.id, kind: event.kind, bytes }))
      .filter((note) => after === null || compareNotes(note, after) > 0);
  }

  async *noteSearchLists(): AsyncIterable<NoteSearchList[]> {
    let from = Buffer.alloc(0);
    const end = Buffer.from([0xff]);
    for (;;) {
      const start = from;
      const words = await this.transactions.read(() => this.wordsFrom(start, end, 200));
      if (words.length === 0) return;
      yield await this.transactions.read(() => words.map((word) => ({ word, notes: this.notesOfWord(word) })));
      from = Buffer.concat([Buffer.from(words.at(-1) as string), Buffer.from([1])]);
    }
  }

  /**
   * Every note a word's list stands for (relations check): of the notes of each posting, those whose
   * words hold it (each checked, one or many: the check is what proves the index). A posting that
   * stands for none (stale) is listed as its place, prefix and `?`s, so that the check shows it.
   */
  private notesOfWord(word: string): NotePosting[] {
    const notes: NotePosting[] = [];
    const list = new WordBlocks(this.db, word);
    // Blocks and runs together, each posting once (a run may hold a posting the blocks hold, until merged).
    for (const posting of mergePostings([...[...list.blocksFrom(null)].map((block) => block.postings), list.runPostings()])) {
      const held = this.notesOf(posting).filter(({ event }) => indexedWordsOf(event).includes(word));
      notes.push(...held.map(({ event, bytes }) => ({ createdAt: event.created_at, id: event.id, kind: event.kind, bytes })));
      if (held.length === 0) notes.push({ createdAt: posting.createdAt, id: prefixHexOf(posting) + '?'.repeat(64 - prefixHexOf(posting).length), kind: kindOfPosting(posting), bytes: 0 });
    }
    return notes.sort(compareNotes);
  }

  /**
   * Moves what an earlier version kept in the relationship database (a key per posting,
   * `Q:<word> <place>` → `<kind> <size>`, and `Qv:<word>` → the count) here on open, a write
   * transaction per ADOPTED_PER_BATCH postings (each moves its keys: whatever commits is whole).
   * False where a write failed (a full disk): what is left stays, and searches read this index as
   * it is until the next open or `relations rebuild`.
   */
  adopt(relations: Database<string, string>): boolean {
    try {
      for (;;) {
        const keys = [...relations.getKeys({ start: 'Q:', end: 'Q;', limit: ADOPTED_PER_BATCH })];
        if (keys.length === 0) break;
        relations.transactionSync(() =>
          this.batch((pending) => {
            for (const key of keys) {
              const space = key.indexOf(' ', 2);
              const kind = Number((relations.get(key) ?? '').split(' ')[0]);
              if (space > 2 && isSearchableKind(kind)) {
                const { createdAt, id } = notePositionOf(key.slice(space + 1), 0);
                this.change(pending, key.slice(2, space), postingOfNote(createdAt, id, kind), true);
              }
              inTransaction(relations.remove(key));
            }
          }),
        );
      }
      relations.transactionSync(() => {
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
