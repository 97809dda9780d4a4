import { type FollowChanges, pubkeyBytes } from '../nostr/follows.js';

/**
 * The follow part of the relationship index (DESIGN "Relationships", following and followers rows):
 * for every pubkey followed, its followers, ordered by pubkey, and for every author of a
 * servable follow list, how many it follows; kept by the store in the same write as the lists
 * (rules in nostr/follows.ts). What a list follows, in its own order, is read from the list itself.
 *
 * A list's follows are added (+1) when it is stored and taken away (-1) when it is replaced, deleted
 * or vanished, as counts per (followed, follower) that commute: whatever order two writers apply a
 * replacement's removals and additions in, the figures agree once both have. A follower follows
 * while its changes add up to 1 or more; the count of followers is the sum of all the changes (no
 * store reads a follower's changes to count it: that read was most of a fresh import's cost).
 */
export interface FollowCounts {
  /** Distinct authors whose latest servable follow list names the pubkey. */
  followers: number;
  /** Distinct pubkeys the pubkey's latest servable follow list names. */
  following: number;
}

export interface FollowIndex {
  /** The counts of each pubkey, in the order asked (zeros where none). One round trip. */
  followCounts(pubkeys: readonly string[]): Promise<FollowCounts[]>;
  /** Up to `first` followers of `pubkey` after `after` (exclusive), by pubkey ascending. One round trip. */
  followers(pubkey: string, after: string | null, first: number): Promise<string[]>;
  /** Every pubkey followed or following (for `relations check`), in batches. */
  followSubjects(): AsyncIterable<string[]>;
}

/**
 * The follow writes of a batch of events, gathered so that a store sends them grouped: per followed
 * pubkey, each follower's change (+1, -1), and per author the net change of how many it follows. A
 * batch of 500 lists of 1,000 follows names each popular pubkey many times: one write per pubkey
 * instead of one per follow. A follower may come twice for one pubkey (a list and its replacement
 * in one batch): the stores add the changes up as they apply them (they commute).
 *
 * Gathering keeps each list's change whole (one push a list, not two a follow), each follow's group
 * found as it comes; `byFollowed` hands each followed pubkey its followers in pubkey order: a range
 * of followers (a Redis bucket log, an LMDB key range) then gets its records as one run, at whatever
 * depth the store keeps them, and each follower's pubkey is decoded once per list, not per follow.
 */
export class FollowWrites {
  /**
   * The lists' changes, in arrival order: `follower` now names (+1) or no longer names (-1) each
   * followed pubkey whose group `groupOf` holds (one a follow, in the list's order).
   */
  private readonly changes: { follower: string; delta: number; groupOf: Int32Array }[] = [];
  /** author → net change of how many it follows */
  readonly following = new Map<string, number>();
  // The groups of followed pubkeys met so far, by 30 bits of their first bytes (a number: no string
  // made per follow, strings were most of the grouping's time), pubkeys that share them chained and
  // told apart. Anyone can list pubkeys that share them: past MAX_CHAIN on one chain, the rest are
  // grouped by their bytes as a string (V8's seeded string hash), so that a batch costs linear time
  // whatever its lists name.
  private readonly groups = new Map<number, FollowedGroup>();
  private readonly crowded = new Map<string, FollowedGroup>();
  private readonly inOrder: FollowedGroup[] = [];

  /**
   * `follower`'s list now names (`delta` 1) or no longer names (-1) each of `followed` (nostr/follows.ts
   * followKeysOf). Each follow's group is found now, as the change arrives (a store writing a batch
   * is mostly waiting for its events' writes meanwhile), not when the batch's follows are sent:
   * there it took 1.3–1.4 s of an import of 10,000 lists into Redis, the follows not yet sent and
   * Redis idle (BENCHMARKS.md).
   */
  change(follower: string, followed: Uint8Array, delta: number): void {
    if (followed.length === 0) return;
    if (followed.length % 32 !== 0) throw new Error(`follows are 32 bytes each, not ${followed.length} bytes in all`);
    const groupOf = new Int32Array(followed.length / 32);
    for (let at = 0, follow = 0; at < followed.length; at += 32, follow++) {
      const group = this.groupFor(followed, at);
      group.count++;
      group.net += delta;
      // Anything but an addition: the run's parts are added up record by record (a part that only
      // adds is sent with its length as its sum).
      if (delta !== 1) group.removes = true;
      groupOf[follow] = group.index;
    }
    this.changes.push({ follower, delta, groupOf });
  }

  /** A follow list added (1) or taken away (-1): its author follows each of its follows (followKeysOf), or no longer does. */
  list(author: string, follows: Uint8Array, delta: 1 | -1): void {
    if (follows.length > 0) this.follows(author, (delta * follows.length) / 32);
    this.change(author, follows, delta);
  }

  /** A follow list replacing another of its author's, by their difference (followChanges). */
  replaced(author: string, { added, removed, following }: FollowChanges): void {
    if (following !== 0) this.follows(author, following);
    this.change(author, pubkeyBytes(removed), -1);
    this.change(author, pubkeyBytes(added), 1);
  }

  /** One follow: `follower` now follows `followed` (1) or no longer does (-1). */
  follow(followed: string, follower: string, delta: number): void {
    this.change(follower, Buffer.from(followed, 'hex'), delta);
  }

  follows(author: string, delta: number): void {
    const net = (this.following.get(author) ?? 0) + delta;
    if (net === 0) this.following.delete(author);
    else this.following.set(author, net);
  }

  /**
   * The batch's changes as records grouped by followed pubkey (FollowRecords): each followed
   * pubkey's run holds its followers' changes, followers ascending (one follower's in arrival
   * order). Lowercase hex (what verified events hold) sorts as its bytes do. Written straight into
   * one buffer (each change placed in its group's run, the groups found as the changes came), so
   * that a batch of half a million follows makes no array per followed pubkey (their growth and the
   * records copied from them were most of the grouping's time and garbage).
   */
  byFollowed(): FollowRecords {
    // Stable: one follower's changes stay in arrival order.
    const ordered = [...this.changes].sort((a, b) => (a.follower < b.follower ? -1 : a.follower > b.follower ? 1 : 0));
    // Each group's run, in the order first met.
    const byFollowed = new Map<string, FollowedRun>();
    const next = new Int32Array(this.inOrder.length);
    let total = 0;
    for (const { keys, at, index, count, net, removes } of this.inOrder) {
      byFollowed.set(Buffer.from(keys.buffer, keys.byteOffset + at, 32).toString('hex'), { start: total, count, net, removes });
      next[index] = total;
      total += count;
    }
    const records = Buffer.allocUnsafe(33 * total);
    let bytes: Uint8Array = Buffer.alloc(0);
    let of: string | undefined;
    for (const { follower, delta, groupOf } of ordered) {
      if (follower !== of) {
        bytes = Buffer.from(follower, 'hex');
        of = follower;
      }
      for (let follow = 0; follow < groupOf.length; follow++) {
        const group = groupOf[follow] as number;
        const record = 33 * (next[group] as number);
        next[group] = (next[group] as number) + 1;
        records[record] = delta & 0xff;
        records.set(bytes, record + 1);
      }
    }
    return { records, byFollowed };
  }

  /** The group of the followed pubkey at `keys[at…at+32]`, made the first time it is met. */
  private groupFor(keys: Uint8Array, at: number): FollowedGroup {
    const hash = (((keys[at] as number) & 0x3f) << 24) | ((keys[at + 1] as number) << 16) | ((keys[at + 2] as number) << 8) | (keys[at + 3] as number);
    const first = this.groups.get(hash);
    let group = first;
    let steps = 0;
    while (group && !samePubkey(group.keys, group.at, keys, at)) {
      group = group.next;
      steps++;
    }
    if (group) return group;
    const made: FollowedGroup = { keys, at, index: this.inOrder.length, count: 0, net: 0, removes: false, next: undefined };
    if (steps >= MAX_CHAIN) {
      const name = Buffer.from(keys.buffer, keys.byteOffset + at, 32).toString('latin1');
      const held = this.crowded.get(name);
      if (held) return held;
      this.crowded.set(name, made);
    } else {
      made.next = first;
      this.groups.set(hash, made);
    }
    this.inOrder.push(made);
    return made;
  }
}

/**
 * A batch's follow changes as the stores write them: records of 33 bytes, a signed byte (the change,
 * +1 or -1) then the follower's 32 bytes, each followed pubkey's in one run, followers ascending.
 */
export interface FollowRecords {
  records: Buffer;
  /** followed (hex) → its run: `count` records from record `start`. */
  byFollowed: Map<string, FollowedRun>;
}

/** A followed pubkey's run of records: where, how many, their changes' sum, and whether one is anything but +1. */
export interface FollowedRun {
  start: number;
  count: number;
  net: number;
  removes: boolean;
}

/** Records of a FollowRecords run: the change (+1 or -1) of record `index`. */
export function recordDelta(records: Buffer, index: number): number {
  return records.readInt8(33 * index);
}

/** Pubkeys told apart on one chain of FollowWrites' groups before the rest sharing its hash go by string. */
const MAX_CHAIN = 8;

/**
 * A followed pubkey met in a batch: where its 32 bytes are, its group's number, its changes' count
 * and sum and whether one is anything but +1, and the next group sharing its hash.
 */
interface FollowedGroup {
  keys: Uint8Array;
  at: number;
  index: number;
  count: number;
  net: number;
  removes: boolean;
  next: FollowedGroup | undefined;
}

function samePubkey(a: Uint8Array, at: number, b: Uint8Array, bt: number): boolean {
  for (let index = 0; index < 32; index++) if (a[at + index] !== b[bt + index]) return false;
  return true;
}
