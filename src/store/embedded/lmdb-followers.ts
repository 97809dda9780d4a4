import type { Database } from 'lmdb';
import { inTransaction } from './lmdb-transactions.js';

/**
 * When a followed pubkey's logs are folded into its chunks, and how large a chunk grows. A page
 * reads every log of its pubkey (at most `foldRecords` changes in at most `foldLogs` values), a
 * fold rewrites only the chunks its changes fall in.
 */
export interface FollowerLimits {
  /** Changes held in logs at most (a page reads them all). */
  foldRecords: number;
  /** Logs held at most (one per batch that changed the pubkey's followers). */
  foldLogs: number;
  /** Followers in one chunk at most; a larger one is split in chunks of about half as many. */
  chunkFollowers: number;
}

/** 2,048 changes of 33 bytes, 66 KB, at most a page reads besides its chunks; chunks of up to 32 KB. */
export const FOLLOWER_LIMITS: FollowerLimits = { foldRecords: 2048, foldLogs: 32, chunkFollowers: 1024 };

/** The byte after the followed pubkey: a chunk, a log, or the logs' state (below). */
const CHUNK = 0x00;
const LOG = 0x01;
const STATE = 0x02;

/** A record of a log (FollowRecords): the change, a signed byte, then the follower's 32 bytes. */
const RECORD = 33;
const PUBKEY = 32;
const ZERO_BOUND = Buffer.alloc(PUBKEY);

/** The logs' state: the next log's number, how many logs, how many records they hold. */
interface LogState {
  next: number;
  logs: number;
  records: number;
}

function keyOf(followed: Uint8Array, type: number, rest: Uint8Array = Buffer.alloc(0)): Buffer {
  const key = Buffer.allocUnsafe(PUBKEY + 1 + rest.length);
  key.set(followed);
  key[PUBKEY] = type;
  key.set(rest, PUBKEY + 1);
  return key;
}

function logKey(followed: Uint8Array, number: number): Buffer {
  const sequence = Buffer.allocUnsafe(4);
  sequence.writeUInt32BE(number);
  return keyOf(followed, LOG, sequence);
}

/** The index of the first follower of `chunk` (32 bytes each, ascending) at or above `follower`, from `from`. */
function positionIn(chunk: Buffer, follower: Buffer, from: number): number {
  let low = from;
  let high = chunk.length / PUBKEY;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (chunk.compare(follower, 0, PUBKEY, middle * PUBKEY, middle * PUBKEY + PUBKEY) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * The followers on LMDB (the follow part of the relationship index, store/follow-index.ts), in a
 * database of their own, under keys that start with the followed pubkey's 32 bytes, then a byte:
 * - CHUNK and a bound (32 bytes) → a chunk: followers, 32 bytes each, ascending, each at or above
 *   its bound and below the next chunk's. Followers below every bound go to a chunk of bound zero;
 * - LOG and a number (4 bytes, big-endian) → a log: the records of one batch's changes to the
 *   pubkey's followers (FollowRecords: +1 or -1, then the follower), followers ascending;
 * - STATE → the logs' state (LogState, three 32-bit numbers).
 *
 * Why logs: a key per follow (as before) had a fresh import of 10,000 lists of 1,000 follows dirty
 * some 175,000 B-tree pages per batch of 500 lists, and LMDB keeps a transaction's dirty pages in
 * a sorted list that each new page is inserted into (mdb_mid2l_insert: 59% of that import's CPU,
 * perf). A batch now writes one log per followed pubkey, and its logs are folded into the chunks
 * once they hold `foldRecords` changes or number `foldLogs`, rewriting the chunks their changes
 * fall in (with random followers, most of a large pubkey's: some 6 MB at 200,000 followers, once
 * per 2,048 changes). A chunk emptied goes; small ones are not merged.
 *
 * One writer applies every change in order (LmdbRelationIndex), each +1 only where the follower is
 * not held and each -1 only where it is: a follower's last change in the logs says whether it
 * follows, else its chunk does.
 */
export class LmdbFollowers {
  constructor(
    private readonly db: Database<Buffer, Buffer>,
    private readonly limits: FollowerLimits = FOLLOWER_LIMITS,
  ) {}

  /** Inside the write transaction: one batch's records (a FollowRecords run) of `followed`'s followers. */
  write(followed: Uint8Array, records: Buffer): void {
    if (records.length === 0) return;
    const state = this.stateOf(followed);
    inTransaction(this.db.put(logKey(followed, state.next), records));
    const after = { next: state.next + 1, logs: state.logs + 1, records: state.records + records.length / RECORD };
    if (after.records >= this.limits.foldRecords || after.logs >= this.limits.foldLogs) return this.fold(followed);
    const value = Buffer.allocUnsafe(12);
    value.writeUInt32LE(after.next, 0);
    value.writeUInt32LE(after.logs, 4);
    value.writeUInt32LE(after.records, 8);
    inTransaction(this.db.put(keyOf(followed, STATE), value));
  }

  private stateOf(followed: Uint8Array): LogState {
    const value = this.db.getBinary(keyOf(followed, STATE));
    if (value === undefined) return { next: 0, logs: 0, records: 0 };
    return { next: value.readUInt32LE(0), logs: value.readUInt32LE(4), records: value.readUInt32LE(8) };
  }

  /**
   * The logs' last word on each follower above `after` (all when null), as latin1 strings of its
   * bytes (which sort as the bytes do): true where it follows, false where it no longer does.
   */
  private logged(followed: Uint8Array, after: Buffer | null): Map<string, boolean> {
    const state = new Map<string, boolean>();
    for (const { value } of this.db.getRange({ start: keyOf(followed, LOG), end: keyOf(followed, STATE) })) {
      // Each log is in follower order: its followers above `after` start where the search says.
      let record = after === null ? 0 : this.recordsAbove(value, after);
      for (; record * RECORD < value.length; record++) {
        const at = record * RECORD;
        state.set(value.toString('latin1', at + 1, at + RECORD), value.readInt8(at) > 0);
      }
    }
    return state;
  }

  /** The index of a log's first record whose follower is above `after`. */
  private recordsAbove(log: Buffer, after: Buffer): number {
    let low = 0;
    let high = log.length / RECORD;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (log.compare(after, 0, PUBKEY, middle * RECORD + 1, middle * RECORD + RECORD) <= 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The logs folded into the chunks, and removed. */
  private fold(followed: Uint8Array): void {
    const changes = [...this.logged(followed, null)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const key of [...this.db.getKeys({ start: keyOf(followed, LOG), end: keyOf(followed, STATE + 1) })]) inTransaction(this.db.remove(key));
    const bounds = [...this.db.getKeys({ start: keyOf(followed, CHUNK), end: keyOf(followed, LOG) })].map((key) => key.subarray(PUBKEY + 1));
    // Each chunk (bounds[chunk], or the bound zero below them all: -1) with the changes in its range.
    let chunk = -1;
    let change = 0;
    while (change < changes.length) {
      const first = Buffer.from((changes[change] as [string, boolean])[0], 'latin1');
      while (chunk + 1 < bounds.length && (bounds[chunk + 1] as Buffer).compare(first) <= 0) chunk++;
      const end = bounds[chunk + 1];
      let last = change + 1;
      while (last < changes.length && (end === undefined || end.compare(Buffer.from((changes[last] as [string, boolean])[0], 'latin1')) > 0)) last++;
      this.rewrite(followed, chunk < 0 ? undefined : (bounds[chunk] as Buffer), changes.slice(change, last));
      change = last;
    }
  }

  /** One chunk (or the bound zero's, not held yet) with `changes` (in its range, ascending) applied, split if too large. */
  private rewrite(followed: Uint8Array, bound: Buffer | undefined, changes: readonly [string, boolean][]): void {
    const key = keyOf(followed, CHUNK, bound ?? ZERO_BOUND);
    const held = (bound === undefined ? undefined : this.db.getBinary(key)) ?? Buffer.alloc(0);
    const merged = Buffer.allocUnsafe(held.length + changes.length * PUBKEY);
    let length = 0;
    let position = 0;
    for (const [name, follows] of changes) {
      const follower = Buffer.from(name, 'latin1');
      const at = positionIn(held, follower, position);
      length += held.copy(merged, length, position * PUBKEY, at * PUBKEY);
      position = at;
      const holds = at * PUBKEY < held.length && held.compare(follower, 0, PUBKEY, at * PUBKEY, at * PUBKEY + PUBKEY) === 0;
      if (holds) position++;
      if (follows) length += follower.copy(merged, length);
    }
    length += held.copy(merged, length, position * PUBKEY);
    const count = length / PUBKEY;
    if (count === 0) {
      inTransaction(this.db.remove(key));
      return;
    }
    // Split in pieces of about half the limit: the first keeps the bound, the others start at their first follower.
    const pieces = count > this.limits.chunkFollowers ? Math.ceil(count / Math.max(1, Math.floor(this.limits.chunkFollowers / 2))) : 1;
    for (let piece = 0; piece < pieces; piece++) {
      const from = Math.floor((piece * count) / pieces) * PUBKEY;
      const to = Math.floor(((piece + 1) * count) / pieces) * PUBKEY;
      const pieceKey = piece === 0 ? key : keyOf(followed, CHUNK, merged.subarray(from, from + PUBKEY));
      inTransaction(this.db.put(pieceKey, merged.subarray(from, to)));
    }
  }

  /** Up to `first` followers of `followed` above `after` (exclusive), ascending, as hex. Inside a read. */
  page(followed: Uint8Array, after: Buffer | null, first: number): string[] {
    const logged = this.logged(followed, after);
    const added = [...logged].filter(([, follows]) => follows).map(([name]) => name).sort();
    const found: string[] = [];
    let next = 0;
    const take = (name: string) => found.push(Buffer.from(name, 'latin1').toString('hex'));
    // The chunk holding `after` (the last bound at or below it), then the chunks after it.
    const start = keyOf(followed, CHUNK, after ?? ZERO_BOUND);
    let from = keyOf(followed, CHUNK);
    for (const key of this.db.getKeys({ start, end: from, reverse: true, limit: 1 })) from = key;
    for (const { value: chunk } of this.db.getRange({ start: from, end: keyOf(followed, LOG) })) {
      let at = after === null ? 0 : positionIn(chunk, after, 0);
      if (after !== null && at * PUBKEY < chunk.length && chunk.compare(after, 0, PUBKEY, at * PUBKEY, at * PUBKEY + PUBKEY) === 0) at++;
      for (; at * PUBKEY < chunk.length && found.length < first; at++) {
        const name = chunk.toString('latin1', at * PUBKEY, at * PUBKEY + PUBKEY);
        while (next < added.length && (added[next] as string) < name && found.length < first) take(added[next++] as string);
        if (found.length >= first) break;
        if (added[next] === name) next++;
        if (logged.get(name) !== false) take(name);
      }
      if (found.length >= first) return found;
    }
    while (next < added.length && found.length < first) take(added[next++] as string);
    return found;
  }

  /** Inside the write transaction: every follower of every pubkey removed. */
  clear(): void {
    for (const key of this.db.getKeys()) inTransaction(this.db.remove(key));
  }
}
