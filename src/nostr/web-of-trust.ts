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
 * a web keeps each member as the first 8 bytes of its pubkey (pubkeys are hashes: uniform), sorted,
 * and answers membership by binary search. Two pubkeys sharing their first 8 bytes are one member:
 * an honest key collides with one of 200,000 members about once in 10^14; a key made to pass
 * would take about 2^64 / members tries of key generation.
 */

/** Bytes of a pubkey a web keeps per member. */
export const MEMBER_BYTES = 8;

/** What a web is built from: per reader its latest servable follow and mute lists, and the follow lists of its hop 1. */
export interface WebLists {
  readers: readonly string[];
  /** Each reader's follow list (null: none), in the order of `readers`. */
  followLists: readonly (NostrEvent | null)[];
  /** Each reader's mute list (null: none), in the order of `readers`. */
  muteLists: readonly (Mutes | null)[];
  /** The follow lists of hop 1 (the pubkeys the readers' lists name), any order; null where none. */
  hopLists: readonly (NostrEvent | null)[];
}

export class TrustWeb {
  /** Scratch space for a probe's 8 bytes (one thread: one probe at a time). */
  private static readonly probe = Buffer.alloc(MEMBER_BYTES);

  private constructor(
    /** Members' first 8 bytes read as little-endian integers, sorted ascending, each once. */
    private readonly members: BigUint64Array,
    /** The readers' mutes, united: what filtering by this web also hides. */
    readonly mutes: Mutes,
    /** Hop 1 (with the readers): whose follow list changing changes the web. */
    readonly dependsOn: ReadonlySet<string>,
  ) {}

  /** How many members (distinct 8-byte prefixes). */
  get size(): number {
    return this.members.length;
  }

  /** Bytes the members take. */
  get bytes(): number {
    return this.members.byteLength;
  }

  /** Whether `pubkey` (64 hex, any case) is in the web; false for anything that is not a pubkey. */
  has(pubkey: string): boolean {
    if (pubkey.length !== 64 || TrustWeb.probe.write(pubkey.slice(0, 2 * MEMBER_BYTES), 0, 'hex') !== MEMBER_BYTES || !isHex64(pubkey)) return false;
    const wanted = TrustWeb.probe.readBigUInt64LE(0);
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

  /** The web of `lists.readers` (see the module comment). */
  static of(lists: WebLists): TrustWeb {
    const mutes = unitedMutes(lists.muteLists);
    const hopOne = new Set<string>(lists.readers);
    const keyRuns: Uint8Array[] = [];
    let total = lists.readers.length;
    for (const list of lists.followLists) {
      if (!list) continue;
      const keys = followKeysOf(list);
      keyRuns.push(keys);
      total += keys.length / 32;
      for (let at = 0; at < keys.length; at += 32) hopOne.add(Buffer.from(keys.buffer, keys.byteOffset + at, 32).toString('hex'));
    }
    for (const list of lists.hopLists) {
      if (!list) continue;
      const keys = followKeysOf(list);
      keyRuns.push(keys);
      total += keys.length / 32;
    }
    // Every member's first 8 bytes, then sorted and each kept once.
    const prefixes = Buffer.alloc(total * MEMBER_BYTES);
    let count = 0;
    for (const reader of lists.readers) if (prefixes.write(reader.slice(0, 2 * MEMBER_BYTES), count * MEMBER_BYTES, 'hex') === MEMBER_BYTES) count++;
    for (const keys of keyRuns) {
      const source = Buffer.from(keys.buffer, keys.byteOffset, keys.byteLength);
      for (let at = 0; at < source.length; at += 32) source.copy(prefixes, MEMBER_BYTES * count++, at, at + MEMBER_BYTES);
    }
    const sorted = new BigUint64Array(prefixes.buffer, prefixes.byteOffset, count).sort();
    const muted = new Set<bigint>();
    for (const pubkey of mutes.pubkeys) muted.add(Buffer.from(pubkey.slice(0, 2 * MEMBER_BYTES), 'hex').readBigUInt64LE(0));
    let kept = 0;
    for (let index = 0; index < sorted.length; index++) {
      const value = sorted[index] as bigint;
      if ((kept > 0 && sorted[kept - 1] === value) || muted.has(value)) continue;
      sorted[kept++] = value;
    }
    // A copy of its own: the scratch buffer may be far larger than the members kept.
    return new TrustWeb(sorted.slice(0, kept), mutes, hopOne);
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
