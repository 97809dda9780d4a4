import calculateSlot from 'cluster-key-slot';

/**
 * The Redis key layout, in one place. Every command touches one key or, for reads, keys that are
 * grouped by hash slot before they are sent (see mget-by-slot.ts), so the layout works unchanged on
 * Redis Cluster. A prefix containing a `{hash tag}` pins a whole namespace to one slot if ever wanted.
 *
 * - `<prefix>e:<id>`: the event's wire JSON, or, for a replaceable/addressable event, a marker
 *   `@<address>` naming the slot below (the event is kept once, in its slot); or what a deletion
 *   left (store/tombstones.ts).
 * - `<prefix>r:<kind>:<pubkey>[:<d>]`: the latest event of a replaceable/addressable address (NIP-01),
 *   or a deletion's bar. Profiles are `r:0:<pubkey>`, so a batch of profiles is one MGET.
 * - `<prefix>rj:{<tag>}<address>`: the journal of an address's transitions whose relations may not
 *   all be applied yet (lua-scripts.ts REPLACE, BAR_VERSION, RAISE_BAR; redis-event-store.ts heal):
 *   in the slot of `r:<address>` (`<tag>` is any tag that hashes there, slotTag), so that the script
 *   that changes the slot writes it; gone once its writer has applied them.
 * - `<prefix>v:<pubkey>`: the time of the pubkey's latest request to vanish (NIP-62).
 * - `<prefix>a:<pubkey>`: the author index of stores written before the author's list below held
 *   it (event ids scored by created_at, addresses scored -1): read, then removed, by a request to vanish.
 * - `<prefix>m:<key>`: a mark (negative cache, profile freshness), expiring by Redis TTL.
 * - `<prefix>c:<name>`: a cursor.
 * - `<prefix>t:{<id64>}`, `l:{<id64>}`, `d:{<id64>}`, `b:{<id64>}`: the relationship index of event
 *   `<id>` (store/relation-index.ts, lua-scripts.ts RELATE): its tally with who reacted and reposted
 *   (one hash), its replies and their tombstones, and its reaction contents once they are many;
 *   hash-tagged by the id, so that one script updates them together on a cluster.
 * - `<prefix>z:{<id64>}` (an event's zaps) and `zp:{<pubkey64>}` (a pubkey's): the zap groups of a
 *   subject (store/zap-index.ts, lua-scripts.ts ZAP), each group's receipts, millisatoshis and
 *   distinct senders, and each recipient's receipts; `y:{<id64>}:<group>` and `yp:{…}:<group>`: the
 *   receipts per sender in one group (a short id of the group, in base64url).
 * - `<prefix>fl:{<pubkey64>}`: the followers of a pubkey (store/follow-index.ts, lua-scripts.ts
 *   FOLLOW), a log of changes: records of a signed byte and the follower's 32 bytes after a header
 *   with the count, added up when read; once they are many, `fs:{<pubkey64>}:<hex digits>` instead,
 *   the same split into bucket logs by the followers' first hex digits (as many digits as
 *   `fn:{<pubkey64>}` says, with the count: `<depth> <followers>`); `fg:{<pubkey64>}`: how many
 *   pubkeys its list follows. `fr`, `fk` and `fb` are the sorted sets of the same before the
 *   logs: no longer read, emptied by `relations rebuild`.
 * - `<prefix>n:{<pubkey64>}`: the author's list (author-list.ts): its notes, read BYLEX one range
 *   per kind, newest first, and the author index a request to vanish reads (every regular and
 *   addressable event, every replaceable address), one sorted set per author (most authors write a
 *   few events: one key per author, not per kind nor per use); `nd:{<pubkey64>}`: tombstones of
 *   its events (lua-scripts.ts NOTE).
 *   The id is written in base64url (43 characters, never a brace): most notes have a reaction or
 *   two, and a key's name is a good part of what such a small key costs.
 * - `<prefix>ni:{<id64>}`: the events that notify the author of event `<id>` once it is known
 *   (inbound records), `nr:{<pubkey64>}` and `nz:{<pubkey64>}`: a recipient's notifications, the
 *   reasons of an event that has more than one (or a tombstone), and the page order (store/notification-index.ts, lua-scripts.ts INBOUND, NOTIFY);
 *   past 128 notifications the order is split into buckets of at most 128, `nz:{<pubkey64>}:<low>`,
 *   listed in `nb:{<pubkey64>}`, with the counts by type in `nk:{<pubkey64>}` (lua-scripts.ts
 *   ORDER_FUNCTIONS): one large sorted set costs about three times a member what small ones do.
 * - `<prefix>s:{s}:w`, `:d`, `:x`, `:c` and `:k:<prefix>`: the search index (store/search-index.ts,
 *   lua-scripts.ts SEARCH_PROFILE, SEARCH_FOLLOWERS, SEARCH): each pubkey's words and the place of
 *   the profile they come from, removals ahead of their additions, the words in lexical order with
 *   their pubkeys, every followed pubkey's followers, and per prefix of 1 and of 3 characters of a word
 *   its pubkeys in rank order. One hash slot (`{s}`), so that one script answers a query: on a cluster that
 *   slot's node takes every search and every batch of follows (BENCHMARKS.md, hot keys).
 * - `<prefix>q:{q<h>}:w:<word>`, `q:{q<h>}:v`, `q:{q<h>}:d`: the note search index (store/note-search-index.ts,
 *   redis/redis-note-search.ts), one shard per hex digit `<h>` a note's id starts with: each word's
 *   notes, the shard's words, its removed postings. A shard's keys share its hash tag.
 * - `<prefix>ck:{k}`: servable events by kind, kind → count (relation-index.ts eventCounts), one
 *   HINCRBY per kind a batch changed.
 */
export interface RedisKeys {
  event(id: string): string;
  replaceable(address: string): string;
  /** The journal of the address's transitions (keys the slot's scripts write beside it). */
  journal(address: string): string;
  mark(key: string): string;
  cursor(name: string): string;
  vanished(pubkey: string): string;
  legacyAuthor(pubkey: string): string;
  relations(id: string): [tally: string, replies: string, replyTombstones: string, contents: string];
  zaps(subject: string): { groups: string; senders(group: { recipient: string; provider: string }): string };
  follows(pubkey: string): { followers: string; following: string; depth: string; buckets: string };
  author(pubkey: string): { list: string; tombstones: string };
  search: { words: string; removals: string; lexical: string; followers: string; ranks: string };
  notifications(pubkey: string): { records: string; order: string };
  /** A shard of the note search index (0 to 15): its words, its tombstones, and each word's list. */
  noteSearch(shard: number): { words: string; tombstones: string; list(word: string): string };
  inbound(id: string): string;
  /** Servable events by kind (a hash, kind → count; relation-index.ts eventCounts). */
  eventCounts: string;
  /** Whose follow and mute lists changed (a stream; store/list-changes.ts). */
  listChanges: string;
  /** Follows and notifications held (a hash: `follows`, `notifications`; relation-index.ts totals). */
  totals: string;
}

/** The first letters of the relationship index's keys (after the prefix). */
export const RELATION_KEY_TYPES = ['t', 'l', 'd', 'b', 'z', 'y', 'zp', 'yp', 'fl', 'fn', 'fs', 'fg', 'fr', 'fk', 'fb', 'n', 'nd', 's', 'ni', 'nr', 'nz', 'nb', 'nk', 'ck', 'lc', 'ct', 'rj', 'q'] as const;

/** The notification index's key types among them (store/notification-index.ts). */
export const NOTIFICATION_KEY_TYPES = ['ni', 'nr', 'nz', 'nb', 'nk'] as const satisfies readonly (typeof RELATION_KEY_TYPES)[number][];

/**
 * The key type of the authors' lists among them: also the author index every stored event has (it
 * outlives a rebuild's clear, and the benches count it apart from the relationship index).
 */
export const AUTHOR_LIST_KEY_TYPE = 'n' satisfies (typeof RELATION_KEY_TYPES)[number];

/** The key types of the zap groups of event subjects and of pubkey subjects (zap-index.ts). */
export const ZAP_GROUP_KEY_TYPES = { e: 'z', p: 'zp' } as const;

export function redisKeys(prefix: string): RedisKeys {
  return {
    event: (id) => `${prefix}e:${id}`,
    replaceable: (address) => `${prefix}r:${address}`,
    journal: (address) => `${prefix}rj:{${slotTag(calculateSlot(`${prefix}r:${address}`))}}${address}`,
    mark: (key) => `${prefix}m:${key}`,
    cursor: (name) => `${prefix}c:${name}`,
    vanished: (pubkey) => `${prefix}v:${pubkey}`,
    legacyAuthor: (pubkey) => `${prefix}a:${pubkey}`,
    relations: (id) => {
      const tag = Buffer.from(id, 'hex').toString('base64url');
      return [`${prefix}t:{${tag}}`, `${prefix}l:{${tag}}`, `${prefix}d:{${tag}}`, `${prefix}b:{${tag}}`];
    },
    follows: (pubkey) => {
      const tag = Buffer.from(pubkey, 'hex').toString('base64url');
      return { followers: `${prefix}fl:{${tag}}`, following: `${prefix}fg:{${tag}}`, depth: `${prefix}fn:{${tag}}`, buckets: `${prefix}fs:{${tag}}:` };
    },
    author: (pubkey) => {
      const tag = Buffer.from(pubkey, 'hex').toString('base64url');
      return { list: `${prefix}n:{${tag}}`, tombstones: `${prefix}nd:{${tag}}` };
    },
    notifications: (pubkey) => {
      const tag = Buffer.from(pubkey, 'hex').toString('base64url');
      return { records: `${prefix}nr:{${tag}}`, order: `${prefix}nz:{${tag}}` };
    },
    noteSearch: (shard) => {
      const tag = `${prefix}q:{q${shard.toString(16)}}:`;
      return { words: `${tag}v`, tombstones: `${tag}d`, list: (word) => `${tag}w:${word}` };
    },
    inbound: (id) => `${prefix}ni:{${Buffer.from(id, 'hex').toString('base64url')}}`,
    eventCounts: `${prefix}ck:{k}`,
    listChanges: `${prefix}lc:{c}`,
    totals: `${prefix}ct:{k}`,
    search: { words: `${prefix}s:{s}:w`, removals: `${prefix}s:{s}:d`, lexical: `${prefix}s:{s}:x`, followers: `${prefix}s:{s}:c`, ranks: `${prefix}s:{s}:k:` },
    zaps: (subject) => {
      const tag = Buffer.from(subject.slice(1), 'hex').toString('base64url');
      const pubkey = subject.startsWith('p') ? 'p' : '';
      return {
        groups: `${prefix}z${pubkey}:{${tag}}`,
        // 8 bytes of the recipient and 8 of the signer: two groups of one subject with the same
        // would need keys ground to share 64-bit prefixes with both of another's.
        senders: ({ recipient, provider }) => `${prefix}y${pubkey}:{${tag}}:${Buffer.from(recipient.slice(0, 16) + provider.slice(0, 16), 'hex').toString('base64url')}`,
      };
    },
  };
}

/**
 * A hash tag for each of the cluster's 16,384 slots (found once, by counting up: a few milliseconds),
 * so that a key can be put in the slot of another whose name it cannot share (an address may hold
 * braces of its own).
 */
let slotTags: string[] | undefined;
export function slotTag(slot: number): string {
  if (!slotTags) {
    const tags: string[] = new Array(16384);
    let found = 0;
    for (let n = 0; found < 16384; n++) {
      const tag = n.toString(36);
      const at = calculateSlot(tag);
      if (tags[at] === undefined) {
        tags[at] = tag;
        found++;
      }
    }
    slotTags = tags;
  }
  return slotTags[slot] as string;
}
