/**
 * The follow part of the relationship index (DESIGN "Relationships", following and followers rows;
 * issue 28): for every pubkey followed, its followers, ordered by pubkey, and for every author of a
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
 * pubkey, each follower's change (+1, -1) in arrival order, and per author the net change of how
 * many it follows. A batch of 500 lists of 1,000 follows names each popular pubkey many times: one
 * write per pubkey instead of one per follow. A follower may come twice for one pubkey (a list and
 * its replacement in one batch): the stores add the changes up as they apply them (they commute),
 * so gathering costs two array pushes a follow, not a map entry (the maps were a sixth of a fresh
 * follow-list import's thread, and most of its garbage).
 */
export class FollowWrites {
  /** followed → its followers' changes, in arrival order */
  readonly followers = new Map<string, FollowerChanges>();
  /** author → net change of how many it follows */
  readonly following = new Map<string, number>();

  follow(followed: string, follower: string, delta: number): void {
    let changes = this.followers.get(followed);
    if (!changes) this.followers.set(followed, (changes = { followers: [], deltas: [] }));
    changes.followers.push(follower);
    changes.deltas.push(delta);
  }

  follows(author: string, delta: number): void {
    const net = (this.following.get(author) ?? 0) + delta;
    if (net === 0) this.following.delete(author);
    else this.following.set(author, net);
  }
}

/** One followed pubkey's follower changes: `followers[i]` changed by `deltas[i]` (+1 or -1). */
export interface FollowerChanges {
  followers: string[];
  deltas: number[];
}
