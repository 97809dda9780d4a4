import { randomInt } from 'node:crypto';
import type { NostrEvent } from './event.js';
import { followKeysOf } from './follows.js';
import { isHex64 } from './identifiers.js';
import { type Mutes, NO_MUTES } from './mutes.js';

/**
 * The web of trust of a reader V (DESIGN "Screens", web of trust of V), written once here: V, the
 * pubkeys of V's latest follow list (hop 1) and the pubkeys those lists name (hop 2), minus V's
 * muted pubkeys. Several readers at once (TRUST_SEEDS) trust the union of their webs, minus what
 * any of them muted. A reader without a follow list trusts only itself.
 *
 * Held compactly: hop 2 of someone following 1,000 accounts is of the order of 200,000 pubkeys, so
 * a web keeps each member as 8 bytes, sorted, and answers membership by binary search. The 8 bytes
 * are two 8-byte windows of the pubkey, at offsets drawn when the process starts, XORed: an honest
 * key collides with one of 200,000 members about once in 10^14, and a key ground to pass would have
 * to match a member in windows the grinder does not know (a fixed prefix could be ground against in
 * about 2^64 / members tries: found by review).
 */

/** Bytes a web keeps per member. */
export const MEMBER_BYTES = 8;

/** The two windows' offsets in a pubkey's 32 bytes, distinct, drawn once per process. */
const [FIRST_WINDOW, SECOND_WINDOW] = (() => {
  const first = randomInt(0, 32 - MEMBER_BYTES + 1);
  let second = randomInt(0, 32 - MEMBER_BYTES);
  if (second >= first) second++;
  return [first, second];
})();

/** A pubkey's member value, written at `at` in `into`: its two windows XORed. */
function writeMember(key: Uint8Array, keyAt: number, into: Buffer, at: number): void {
  for (let index = 0; index < MEMBER_BYTES; index++) into[at + index] = (key[keyAt + FIRST_WINDOW + index] as number) ^ (key[keyAt + SECOND_WINDOW + index] as number);
}

/** What a web is built from: per reader its latest servable follow and mute lists, and the follow lists of its hop 1. */
export interface WebLists {
  readers: readonly string[];
  /** Each reader's follow list (null: none), in the order of `readers`. */
  followLists: readonly (Pick<NostrEvent, 'kind' | 'tags'> | null)[];
  /** Each reader's mutes (null: none), in the order of `readers`. */
  muteLists: readonly (Mutes | null)[];
  /** The follow lists of hop 1 (the pubkeys the readers' lists name), any order; null where none. */
  hopLists: readonly (Pick<NostrEvent, 'kind' | 'tags'> | null)[];
}

export class TrustWeb {
  /** Scratch space for a probe's 32 bytes and its member value (one thread: one probe at a time). */
  private static readonly probe = Buffer.alloc(32 + MEMBER_BYTES);

  constructor(
    /** Members' values read as little-endian integers, sorted ascending, each once. */
    private readonly members: BigUint64Array,
    /** The readers' mutes, united: what filtering by this web also hides. */
    readonly mutes: Mutes,
  ) {}

  /** How many members (distinct values). */
  get size(): number {
    return this.members.length;
  }

  /** Bytes the members take. */
  get bytes(): number {
    return this.members.byteLength;
  }

  /** Whether `pubkey` (64 hex, any case) is in the web; false for anything that is not a pubkey. */
  has(pubkey: string): boolean {
    const { probe } = TrustWeb;
    if (pubkey.length !== 64 || !isHex64(pubkey) || probe.write(pubkey, 0, 'hex') !== 32) return false;
    writeMember(probe, 0, probe, 32);
    const wanted = probe.readBigUInt64LE(32);
    const { members } = this;
    let low = 0;
    let high = members.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const value = members[middle] as bigint;
      if (value === wanted) return true;
      if (value < wanted) low = middle + 1;
      else high = middle - 1;
    }
    return false;
  }

  /** The web of `lists.readers` (see the module comment), in one go. */
  static of(lists: WebLists): TrustWeb {
    const builder = new WebBuilder(lists.readers, lists.followLists, lists.muteLists);
    builder.addLists(lists.hopLists);
    return builder.finish();
  }
}

/**
 * A web built a batch of hop-1 lists at a time: each list's follows are kept as member values only
 * (8 bytes each), so that the lists themselves can go as soon as they are read (a build over 1,000
 * lists of 2,000 held them all, some 450 MB of heap: found by review).
 */
export class WebBuilder {
  private values = Buffer.alloc(1 << 16);
  private count = 0;
  private readonly mutes: Mutes;
  /** The readers and the pubkeys their lists name: whose follow lists the web is made of. */
  readonly hopOne: ReadonlySet<string>;

  constructor(readers: readonly string[], followLists: readonly (Pick<NostrEvent, 'kind' | 'tags'> | null)[], muteLists: readonly (Mutes | null)[]) {
    this.mutes = unitedMutes(muteLists);
    const hopOne = new Set<string>(readers);
    const key = Buffer.alloc(32);
    for (const reader of readers) if (key.write(reader, 0, 'hex') === 32) this.addKeys(key);
    for (const list of followLists) {
      if (!list) continue;
      const keys = followKeysOf(list);
      this.addKeys(keys);
      for (let at = 0; at < keys.length; at += 32) hopOne.add(Buffer.from(keys.buffer, keys.byteOffset + at, 32).toString('hex'));
    }
    this.hopOne = hopOne;
  }

  /** Adds the follows of hop-1 lists (null: none). */
  addLists(lists: readonly (Pick<NostrEvent, 'kind' | 'tags'> | null)[]): void {
    for (const list of lists) if (list) this.addKeys(followKeysOf(list));
  }

  private addKeys(keys: Uint8Array): void {
    const added = keys.length / 32;
    if ((this.count + added) * MEMBER_BYTES > this.values.length) {
      const grown = Buffer.alloc(Math.max(2 * this.values.length, (this.count + added) * MEMBER_BYTES));
      this.values.copy(grown, 0, 0, this.count * MEMBER_BYTES);
      this.values = grown;
    }
    for (let at = 0; at < keys.length; at += 32) writeMember(keys, at, this.values, MEMBER_BYTES * this.count++);
  }

  /** The web: the values sorted, each once, the readers' muted pubkeys taken out. */
  finish(): TrustWeb {
    const sorted = new BigUint64Array(this.values.buffer, this.values.byteOffset, this.count).sort();
    const muted = new Set<bigint>();
    const probe = Buffer.alloc(32 + MEMBER_BYTES);
    for (const pubkey of this.mutes.pubkeys) {
      probe.write(pubkey, 0, 'hex');
      writeMember(probe, 0, probe, 32);
      muted.add(probe.readBigUInt64LE(32));
    }
    let kept = 0;
    for (let index = 0; index < sorted.length; index++) {
      const value = sorted[index] as bigint;
      if ((kept > 0 && sorted[kept - 1] === value) || muted.has(value)) continue;
      sorted[kept++] = value;
    }
    // A copy of its own: the buffer grown while building may be far larger than the members kept.
    return new TrustWeb(sorted.slice(0, kept), this.mutes);
  }
}

/** Mutes of several readers as one: every entry of any of them. */
export function unitedMutes(lists: readonly (Mutes | null)[]): Mutes {
  const present = lists.filter((mutes): mutes is Mutes => mutes !== null);
  if (present.length === 0) return NO_MUTES;
  if (present.length === 1) return present[0] as Mutes;
  return {
    pubkeys: new Set(present.flatMap((mutes) => [...mutes.pubkeys])),
    events: new Set(present.flatMap((mutes) => [...mutes.events])),
    hashtags: new Set(present.flatMap((mutes) => [...mutes.hashtags])),
    words: [...new Set(present.flatMap((mutes) => mutes.words))],
  };
}
