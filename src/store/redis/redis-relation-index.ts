import { Cluster, type Result } from 'ioredis';
import type { NostrEvent } from '../../nostr/event.js';
import { FOLLOW_LIST_KIND, followChanges, followKeysOf, followsOf } from '../../nostr/follows.js';
import { profileWords, rankedPrefixes } from '../../nostr/profile-search.js';
import { isNoteKind, relationEdgesOf } from '../../nostr/relationships.js';
import { type FollowCounts, FollowWrites, recordDelta } from '../follow-index.js';
import {
  COUNTERS,
  contentKey,
  decodeCounts,
  compareNotes,
  MAX_REACTION_CONTENTS,
  type NoteFeed,
  type NotePage,
  notePlace,
  type IndexTotals,
  type RelationIndex,
  type LedgerScan,
  type RelatedEvents,
  type RelationStats,
  type ReplyPosition,
  replyMemberBytes,
  replyPositionOfBytes,
  statsFromTally,
  storedSizeOf,
} from '../relation-index.js';
import { SEARCH_LIMITS, type SearchLimits, type SearchRecord } from '../search-index.js';
import { eventZapSubject, msatsOfParts, msatsParts, type ZapGroup, type ZapQuery, type ZapSubject, type ZapTotal, zapEntriesOf, zapGroupKey } from '../zap-index.js';
import { EVENTS_END, eventMember, isListedKind, kindRange } from './author-list.js';
import { AUTHOR_LIST_KEY_TYPE, RELATION_KEY_TYPES, type RedisKeys, ZAP_GROUP_KEY_TYPES } from './keys.js';
import { ENSURE_NOTE_SCRIPT, FOLLOW_MANY_SCRIPT, FOLLOW_SCRIPT, FOLLOW_SET_SCRIPT, FOLLOWER_COUNT_SCRIPT, FOLLOWERS_PAGE_SCRIPT, FOLLOWING_SCRIPT, NOTE_SCRIPT, RELATE_SCRIPT, SEARCH_FOLLOWERS_SCRIPT, SEARCH_PROFILE_SCRIPT, SEARCH_SCRIPT, TIMELINES_SCRIPT, ZAP_SCRIPT, LIST_CHANGES_SCRIPT } from './lua-scripts.js';
import { LIST_CHANGES_KEPT, type ListChanges, LOGGED_LIST_KINDS } from '../list-changes.js';
import type { RedisClient } from './mget-by-slot.js';
import type { RedisCommands } from './redis-commands.js';
import type { NotificationType } from '../../nostr/notifications.js';
import type { NotificationCounts, NotificationEntry } from '../notification-index.js';
import { type AuthorsOf, type EventsOf, NotificationWrites, RedisNotificationIndex } from './redis-notification-index.js';
import { escapeGlob, scanKeys } from './scan-keys.js';
import { type NoteChange, RedisNoteSearch } from './redis-note-search.js';
import { isSearchableKind, type NoteSearchLimits, type NoteSearchList, type NoteSearchQuery, type NoteSearchResult } from '../note-search-index.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    nostrRelate(
      tally: string,
      replies: string,
      tombstones: string,
      contents: string,
      delta: string,
      author: Buffer,
      roles: string,
      member: Buffer | string,
      content: string,
      ledger: Buffer,
      size: string,
      legacyLedger: Buffer,
    ): Result<number, Context>;
    nostrFollow(followers: string, depth: string, records: Buffer, buckets: string, bucketSize: string, net: string): Result<number, Context>;
    nostrFollowSet(followers: string, depth: string, follower: Buffer, follows: '0' | '1', buckets: string, bucketSize: string): Result<number, Context>;
    nostrFollowMany(numberOfKeys: number, ...keysThenArguments: (string | Buffer)[]): Result<(number | Error)[], Context>;
    nostrFollowerCount(followers: string, depth: string): Result<number, Context>;
    nostrFollowersPageBuffer(followers: string, depth: string, buckets: string, after: Buffer | string, first: string): Result<Buffer[], Context>;
    nostrNote(list: string, tombstones: string, delta: string, member: Buffer): Result<number, Context>;
    nostrEnsureNote(list: string, tombstones: string, member: Buffer): Result<number, Context>;
    nostrFollowing(following: string, delta: string): Result<number, Context>;
    nostrZap(groups: string, senders: string, delta: string, group: Buffer, recipient: Buffer, sender: Buffer, high: string, low: string, ledger: Buffer, size: string, legacyLedger: Buffer): Result<number | null, Context>;
    nostrSearchProfile(words: string, removals: string, lexical: string, followers: string, ranks: string, pubkey: Buffer, delta: string, createdAt: string, id: string, profileWords: string): Result<number, Context>;
    nostrSearchFollowers(words: string, followers: string, ranks: string, records: Buffer): Result<number, Context>;
    nostrListChanges(key: string, after: string, count: string): Result<[number, [string, string[]][]], Context>;
    nostrTimelinesBuffer(numberOfKeys: number, ...keysThenArguments: (string | Buffer)[]): Result<Buffer[][], Context>;
    nostrSearchBuffer(words: string, lexical: string, followers: string, ranks: string, first: string, limit: string, walk: string, ...asked: string[]): Result<Buffer[], Context>;
  }
}

/**
 * An event's entry in its targets' ledgers (lua-scripts.ts RELATE, ZAP): `i` and the 32 bytes of
 * its id, so that a relation counts once whatever is sent again, and `stats(viewer:)` can read which
 * events relate (relatedIds). The `i` keeps it apart from every other field of those hashes (a
 * 32-byte recipient, `o`/`k` and an author). Ledgers written before held the first 12 bytes alone:
 * the scripts move such an entry to this form when its event is related again (a replay, a
 * deletion), so it still counts once; `stats(viewer:)` does not see one until then, nor until
 * `relations rebuild` (docs/operations.md).
 */
const LEDGER_MARK = 0x69; // 'i'
const ledgerOf = (event: NostrEvent) => Buffer.concat([Buffer.of(LEDGER_MARK), Buffer.from(event.id, 'hex')]);
const isLedgerField = (field: Buffer) => field.length === 33 && field[0] === LEDGER_MARK;
/** The entry as the earlier format kept it: moved to ledgerOf's by the scripts where they find it. */
const legacyLedgerOf = (event: NostrEvent) => Buffer.from(event.id.slice(0, 24), 'hex');

/** Ledger fields read per HSCAN call (relatedIds). */
const LEDGER_SCAN_COUNT = 500;

/** Events read at once where a target's removal reads what relates to it (relatedEvents). */
const RELATED_READS = 500;

/** Authors' lists per TIMELINES call, at most (a feed reads up to 2,000: a few calls). */
const TIMELINES_PER_CALL = 500;

/** Follower changes per FOLLOW call, at most: a script runs alone on its node, so a long one holds it. */
const FOLLOW_PAIRS = 500;

/** Follower changes per FOLLOW_MANY call, at most, whatever the pubkeys they are of (as FOLLOW_PAIRS). */
const FOLLOW_GROUP_RECORDS = 2000;
/** Followed pubkeys per FOLLOW_MANY call, at most. */
const FOLLOW_GROUP_PARTS = 256;

/**
 * The FOLLOW parts of a batch, sent: on one Redis, many pubkeys' parts in one FOLLOW_MANY call (a
 * call per followed pubkey, 6,500 of them for a batch of 500 lists, was most of the main thread's
 * time writing a batch, in the client's making of commands); on a cluster, whose scripts must keep
 * to one slot, each in a FOLLOW call of its own. Each part's promise is its own outcome either way
 * (FOLLOW_MANY answers the error of a part whose script failed, the others applied).
 */
class FollowGroups {
  private keys: string[] = [];
  private args: (string | Buffer)[] = [];
  private records = 0;
  private outcomes: { resolve(value: number): void; reject(error: unknown): void }[] = [];

  constructor(
    private readonly client: RedisClient,
    private readonly bucketSize: number,
  ) {}

  follow(keys: { followers: string; depth: string; buckets: string }, records: Buffer, net: number): Promise<number> {
    if (this.client instanceof Cluster) return this.client.nostrFollow(keys.followers, keys.depth, records, keys.buckets, String(this.bucketSize), String(net));
    if (this.records + records.length > 33 * FOLLOW_GROUP_RECORDS || this.outcomes.length >= FOLLOW_GROUP_PARTS) this.send();
    this.keys.push(keys.followers, keys.depth);
    this.args.push(records, keys.buckets, String(net));
    this.records += records.length;
    return new Promise<number>((resolve, reject) => this.outcomes.push({ resolve, reject }));
  }

  /** Sends the parts gathered since the last call. */
  send(): void {
    if (this.outcomes.length === 0) return;
    const outcomes = this.outcomes;
    this.client.nostrFollowMany(this.keys.length, ...this.keys, String(this.bucketSize), ...this.args).then(
      (nets) => outcomes.forEach((outcome, index) => {
        const net = nets[index];
        if (typeof net === 'number') outcome.resolve(net);
        else outcome.reject(new Error(`FOLLOW failed for one of the pubkeys of a FOLLOW_MANY call: ${net instanceof Error ? net.message : 'no answer'}`));
      }),
      (error: unknown) => outcomes.forEach((outcome) => outcome.reject(error)),
    );
    this.keys = [];
    this.args = [];
    this.records = 0;
    this.outcomes = [];
  }
}

/**
 * Followers per bucket log, on average, before a pubkey's followers move to 16 times as many
 * (lua-scripts.ts FOLLOW; a bucket crowds past 4 times as many): a page reads whole logs, and a fold
 * reads one whole, so a log of random followers stays some 25 KB (one of followers ground to share
 * its prefix up to some 80 KB before a fold makes it a sorted set). 384, not 96 (until b6bd54e): a fresh import
 * of 10,000 lists moved every pubkey it followed at 96 and again at 1,536 followers (more records
 * moved than followed), and took 46.3 s into Redis against 31.8 s at 384 (BENCHMARKS.md).
 * Where a pubkey's followers are is kept beside them (its depth), so data written with another size
 * is read as it is, and moves at this size's thresholds from then on.
 */
export const FOLLOW_BUCKET_SIZE = 384;

/** Pubkeys per SEARCH_FOLLOWERS call, at most (a script holds its node while it runs). */
const SEARCH_FOLLOWER_RECORDS = 2000;

/** A zap group's 64 bytes (recipient, signer) as kept in Redis fields. */
const groupBytes = (group: { recipient: string; provider: string }) => Buffer.from(zapGroupKey(group), 'hex');

/** A stream entry's id: milliseconds, a dash, a sequence number. */
const STREAM_ID = /^\d{1,20}-\d{1,20}$/;

/** A group's figures from its field's value (`<receipts> <high> <low> <senders>`). */
function zapGroupFrom(group: { recipient: string; provider: string }, value: string): ZapGroup {
  const [count = 0, high = 0, low = 0, senders = 0] = value.split(' ').map(Number);
  return { ...group, count, msats: msatsOfParts(high, low), senders };
}

/**
 * The relationship index in Redis (keys.ts `relations`): one RELATE script per (event, target),
 * each over the target's four keys in one hash slot. The store calls `relate` on every transition
 * of an event (stored, replaced, deleted, vanished), which its own scripts report exactly once.
 */
export class RedisRelationIndex implements RelationIndex {
  /** Notifications, kept on the same transitions (redis-notification-index.ts). */
  readonly notificationIndex: RedisNotificationIndex;
  /** The note search index, kept on the same transitions (redis-note-search.ts). */
  private readonly noteSearch: RedisNoteSearch;
  /** A batch's notification writes, gathered beside its follows and sent when they are (flushFollows). */
  private readonly batchNotifications = new WeakMap<FollowWrites, NotificationWrites>();
  /** A batch's changes of the events held by kind, sent with its follows (flushFollows). */
  private readonly batchKinds = new WeakMap<FollowWrites, Map<number, number>>();
  /** A batch's notes for the note search index, sent with its follows: a script a shard (flushFollows). */
  private readonly batchNotes = new WeakMap<FollowWrites, NoteChange[]>();

  private notificationsOf(batch: FollowWrites): NotificationWrites {
    let writes = this.batchNotifications.get(batch);
    if (!writes) this.batchNotifications.set(batch, (writes = new NotificationWrites()));
    return writes;
  }

  constructor(
    private readonly client: RedisClient,
    private readonly commands: RedisCommands,
    private readonly keys: RedisKeys,
    private readonly prefix: string,
    /** Servable events by id: whose a notification's target is, and what relates to a target gone. */
    eventsOf: EventsOf,
    /** The authors of events by id, servable or removed (their tombstones keep them): redis-notification-index.ts. */
    removedAuthorsOf: AuthorsOf,
    /** Followers per bucket log before they move (FOLLOW_BUCKET_SIZE unless a test says). */
    private readonly followBucketSize = FOLLOW_BUCKET_SIZE,
    /** NOTE_SEARCH: whether the note search index is kept. */
    readonly noteSearchEnabled = false,
  ) {
    const authorsOf = async (ids: readonly string[]) => (await eventsOf(ids)).map((event) => event?.pubkey);
    this.notificationIndex = new RedisNotificationIndex(client, commands, keys, prefix, authorsOf, (target, each) => this.relatedEvents(target, each, eventsOf), removedAuthorsOf);
    this.noteSearch = new RedisNoteSearch(client, commands, keys, prefix);
    client.defineCommand('nostrRelate', { numberOfKeys: 4, lua: RELATE_SCRIPT });
    client.defineCommand('nostrZap', { numberOfKeys: 2, lua: ZAP_SCRIPT });
    client.defineCommand('nostrFollow', { numberOfKeys: 2, lua: FOLLOW_SCRIPT });
    client.defineCommand('nostrFollowMany', { lua: FOLLOW_MANY_SCRIPT });
    client.defineCommand('nostrFollowSet', { numberOfKeys: 2, lua: FOLLOW_SET_SCRIPT });
    client.defineCommand('nostrFollowersPage', { numberOfKeys: 2, lua: FOLLOWERS_PAGE_SCRIPT });
    client.defineCommand('nostrFollowerCount', { numberOfKeys: 2, lua: FOLLOWER_COUNT_SCRIPT });
    client.defineCommand('nostrFollowing', { numberOfKeys: 1, lua: FOLLOWING_SCRIPT });
    client.defineCommand('nostrNote', { numberOfKeys: 2, lua: NOTE_SCRIPT });
    client.defineCommand('nostrEnsureNote', { numberOfKeys: 2, lua: ENSURE_NOTE_SCRIPT });
    client.defineCommand('nostrSearchProfile', { numberOfKeys: 4, lua: SEARCH_PROFILE_SCRIPT });
    client.defineCommand('nostrSearchFollowers', { numberOfKeys: 2, lua: SEARCH_FOLLOWERS_SCRIPT });
    client.defineCommand('nostrSearch', { numberOfKeys: 3, lua: SEARCH_SCRIPT });
    client.defineCommand('nostrTimelines', { lua: TIMELINES_SCRIPT });
    client.defineCommand('nostrListChanges', { numberOfKeys: 1, lua: LIST_CHANGES_SCRIPT });
  }

  /**
   * Adds (+1) or removes (-1) the relations of an event, one script per target, all sent at once.
   * `size`: its stored JSON's bytes, where the caller has them (else serialised again for a reply).
   * Each target counts an event once (RELATE, ZAP), so a relate sent again changes nothing.
   * `listed` false: not its member of its author's list (a `duplicate` put checks that apart).
   * `counts` false: not a transition of the events held by kind (eventCounts): a replay.
   */
  async relate(event: NostrEvent, delta: 1 | -1, size?: number, withFollows = true, batch?: FollowWrites, listed = true, counts = listed): Promise<void> {
    const edges = relationEdgesOf(event);
    const zaps = zapEntriesOf(event);
    const ledger = ledgerOf(event);
    const legacyLedger = legacyLedgerOf(event);
    // Its size, in its targets' ledgers: what `stats(viewer:)` reserves to read it (relatedIds).
    const bytes = edges.length > 0 || zaps.length > 0 ? String(size ?? storedSizeOf(event)) : '';
    // Scripts of other slots than the targets': a zap receipt's, one per subject (its target, its
    // recipient); a follow list's, one per pubkey it follows.
    const writes: Promise<unknown>[] = zaps.map(({ subject, sender, msats, ...group }) => {
      const keys = this.keys.zaps(subject);
      const [high, low] = msatsParts(msats);
      const hex = (value: string) => Buffer.from(value, 'hex');
      return this.client.nostrZap(keys.groups, keys.senders(group), String(delta), groupBytes(group), hex(group.recipient), hex(sender), String(delta * high), String(delta * low), ledger, bytes, legacyLedger);
    });
    // Whom it notifies, and whom what notifies about it now notifies (redis-notification-index.ts).
    // Gathered now, sent once this event's own relations are written (alone) or with the batch's
    // (flushFollows, after every event of the batch is related): a target's removal finds the
    // events that notify about it by its relations (redis-notification-index.ts flush).
    const notifications = batch ? this.notificationsOf(batch) : new NotificationWrites();
    notifications.add(event, delta);
    // A follow or mute list: webs of trust made with it are dropped by their next read (list-changes.ts).
    writes.push(this.logListChange(event));
    // The events held of its kind: a transition only (a `duplicate` put's replay, a deletion's, are not).
    if (counts) {
      if (!batch) writes.push(this.client.hincrby(this.keys.eventCounts, String(event.kind), delta));
      else {
        let kinds = this.batchKinds.get(batch);
        if (!kinds) this.batchKinds.set(batch, (kinds = new Map()));
        kinds.set(event.kind, (kinds.get(event.kind) ?? 0) + delta);
      }
    }
    // A profile: its words in the search index (one slot for all).
    if (event.kind === 0) {
      const { words, removals, lexical, followers, ranks } = this.keys.search;
      const pubkey = Buffer.from(event.pubkey, 'hex');
      writes.push(this.client.nostrSearchProfile(words, removals, lexical, followers, ranks, pubkey, String(delta), String(event.created_at), event.id, profileWords(event).join(' ')));
    }
    // A note or an article: its words in the note search index (one script, in its shard).
    if (this.noteSearchEnabled && isSearchableKind(event.kind)) {
      if (!batch) writes.push(this.noteSearch.index(event, delta, size));
      else {
        let notes = this.batchNotes.get(batch);
        if (!notes) this.batchNotes.set(batch, (notes = []));
        notes.push({ event, delta, size });
      }
    }
    // Its place in its author's list (its notes; what a request to vanish finds).
    if (listed && isListedKind(event.kind)) {
      const { list, tombstones } = this.keys.author(event.pubkey);
      writes.push(this.client.nostrNote(list, tombstones, String(delta), this.listMember(event, size ?? storedSizeOf(event))));
    }
    // A follow list: its follows, one script per pubkey it follows (each in that pubkey's slot) and
    // its author's count; gathered with the batch's others when there is a batch (flushFollows).
    if (withFollows && event.kind === FOLLOW_LIST_KIND) {
      const follows = batch ?? new FollowWrites();
      follows.list(event.pubkey, followKeysOf(event), delta);
      if (!batch) writes.push(this.flushFollows(follows));
    }
    const author = Buffer.from(event.pubkey, 'hex');
    const member = edges.some((edge) => edge.reply) ? replyMemberBytes({ createdAt: event.created_at, id: event.id, bytes: Number(bytes) }) : '';
    writes.push(
      ...edges.map((edge) => {
        const roles = `${edge.reply ? 'R' : ''}${edge.threadReply ? 'T' : ''}${edge.quote ? 'Q' : ''}${edge.repost ? 'O' : ''}${edge.reaction !== undefined ? 'K' : ''}`;
        const [tally, replies, tombstones, contents] = this.keys.relations(edge.target);
        return this.client.nostrRelate(
          tally,
          replies,
          tombstones,
          contents,
          String(delta),
          author,
          roles,
          edge.reply ? member : '',
          edge.reaction !== undefined ? contentKey(edge.reaction) : '',
          ledger,
          bytes,
          legacyLedger,
        );
      }),
    );
    await Promise.all(writes);
    if (!batch) await this.notificationIndex.flush(notifications);
  }

  /**
   * An event's member of its author's list, written where missing (and no removal waits for it):
   * true when it was; `unlist` takes such a member back. For a `duplicate` put (author-list.ts).
   */
  async ensureListed(event: NostrEvent, size: number): Promise<boolean> {
    if (!isListedKind(event.kind)) return false;
    const { list, tombstones } = this.keys.author(event.pubkey);
    return (await this.client.nostrEnsureNote(list, tombstones, this.listMember(event, size))) === 1;
  }

  /** A change of the events held of one kind, sent now (eventCounts: a deletion's settled tombstone). */
  async countKind(kind: number, delta: number): Promise<void> {
    await this.client.hincrby(this.keys.eventCounts, String(kind), delta);
  }

  async setEventCounts(counts: ReadonlyMap<number, number>): Promise<void> {
    await this.commands.run(async () => {
      await this.client.unlink(this.keys.eventCounts);
      if (counts.size > 0) await this.client.hset(this.keys.eventCounts, Object.fromEntries([...counts].map(([kind, count]) => [String(kind), String(count)])));
    });
  }

  async unlist(event: NostrEvent, size: number): Promise<void> {
    await this.client.zrem(this.keys.author(event.pubkey).list, this.listMember(event, size));
  }

  private listMember(event: NostrEvent, size: number): Buffer {
    return eventMember(event.kind, { createdAt: event.created_at, id: event.id, bytes: size });
  }

  /**
   * A replaceable slot changed hands: `previous` (if any) leaves and `next` comes, all sent at once.
   * A follow list replacing another changes only by their difference. `withFollows` false: not
   * their follows (the store sets them after, healing another transition: redis-event-store.ts).
   */
  async replace(previous: NostrEvent | undefined, next: NostrEvent, size?: number, batch?: FollowWrites, withFollows = true): Promise<void> {
    const changes = withFollows && previous ? followChanges(previous, next) : undefined;
    const follows = batch ?? new FollowWrites();
    if (changes) follows.replaced(next.pubkey, changes);
    await Promise.all([previous ? this.relate(previous, -1, undefined, withFollows && !changes, follows) : undefined, this.relate(next, 1, size, withFollows && !changes, follows)]);
    // Alone: its notifications once both versions are related (a target's removal reads its relations: flush).
    if (!batch) await this.flushFollows(follows);
  }

  /**
   * Sends follow writes gathered over a batch: per followed pubkey its followers' changes, in parts
   * of FOLLOW_PAIRS at most (FollowGroups: many pubkeys' parts to a FOLLOW_MANY call on one Redis,
   * one FOLLOW call each on a cluster), and one FOLLOWING per author.
   */
  async flushFollows(follows: FollowWrites): Promise<void> {
    const writes: Promise<unknown>[] = [];
    const notifications = this.batchNotifications.get(follows);
    if (notifications) {
      this.batchNotifications.delete(follows);
      writes.push(this.notificationIndex.flush(notifications));
    }
    for (const [author, delta] of follows.following) writes.push(this.client.nostrFollowing(this.keys.follows(author).following, String(delta)));
    const notes = this.batchNotes.get(follows);
    if (notes) {
      this.batchNotes.delete(follows);
      writes.push(this.noteSearch.indexMany(notes));
    }
    const kinds = this.batchKinds.get(follows);
    if (kinds) {
      this.batchKinds.delete(follows);
      for (const [kind, delta] of kinds) if (delta !== 0) writes.push(this.client.hincrby(this.keys.eventCounts, String(kind), delta));
    }
    // Each followed pubkey's change in followers, for the search ranks once its scripts have run.
    const gained: Promise<[string, number]>[] = [];
    const partsSent: Promise<number>[] = [];
    // Records of 33 bytes, a signed change then the follower (the script adds up a follower's
    // changes), every followed pubkey's in one buffer: a part sends its run's records as they are.
    const { records: allRecords, byFollowed } = follows.byFollowed();
    const grouping = new FollowGroups(this.client, this.followBucketSize);
    for (const [followed, run] of byFollowed) {
      const keys = this.keys.follows(followed);
      const parts: Promise<number>[] = [];
      for (let start = run.start; start < run.start + run.count; start += FOLLOW_PAIRS) {
        const end = Math.min(run.start + run.count, start + FOLLOW_PAIRS);
        // The parts of a run that only adds (a fresh import's) sum to their lengths: no record read.
        let net = end - start;
        if (run.removes) {
          net = 0;
          for (let index = start; index < end; index++) net += recordDelta(allRecords, index);
        }
        // Their sum beside them: the script decides a depth move from it before it reads a record.
        parts.push(grouping.follow(keys, allRecords.subarray(33 * start, 33 * end), net));
        partsSent.push(parts.at(-1) as Promise<number>);
      }
      // Settled: the parts that ran count even when another failed.
      gained.push(Promise.allSettled(parts).then((outcomes) => [followed, outcomes.reduce((sum, part) => sum + (part.status === 'fulfilled' ? part.value : 0), 0)]));
    }
    grouping.send();
    // Settled, not all: a failed part leaves the others' changes to be ranked all the same.
    const counted = (await Promise.allSettled(gained)).flatMap((outcome) => (outcome.status === 'fulfilled' && outcome.value[1] !== 0 ? [outcome.value] : []));
    writes.push(...this.followersChanged(counted));
    await Promise.all([...writes, ...gained]);
    // A failed part fails the batch (its events are written again), after the ranks of the others.
    await Promise.all(partsSent);
  }

  /**
   * A follower's follows set to what its latest list (`current`, or none) names, at every pubkey
   * that list or `lists` name (versions of it an address's journal holds): the heal of a follow
   * list's transition whose reply was lost, applied in part, or twice (redis-event-store.ts heal).
   * FOLLOW_SET sets a follower's change where FOLLOW adds one: sent again, it changes nothing. The
   * count it follows is set too, the totals and search ranks changed by what the sets changed.
   */
  async setFollows(follower: string, current: NostrEvent | undefined, lists: readonly NostrEvent[]): Promise<void> {
    const named = new Set(current?.kind === FOLLOW_LIST_KIND ? followsOf(current) : []);
    const candidates = new Set(named);
    for (const list of lists) for (const followed of followsOf(list)) candidates.add(followed);
    const member = Buffer.from(follower, 'hex');
    const changes = await Promise.all(
      [...candidates].map(async (followed): Promise<[string, number]> => {
        const keys = this.keys.follows(followed);
        return [followed, await this.client.nostrFollowSet(keys.followers, keys.depth, member, named.has(followed) ? '1' : '0', keys.buckets, String(this.followBucketSize))];
      }),
    );
    const following = this.keys.follows(follower).following;
    await Promise.all([
      named.size > 0 ? this.client.set(following, String(named.size)) : this.client.del(following),
      ...this.followersChanged(changes.filter(([, change]) => change !== 0)),
    ]);
  }

  /** The follows held (totals) and the search ranks, changed by what FOLLOW or FOLLOW_SET scripts changed (followed pubkey, change). */
  private followersChanged(counted: readonly [string, number][]): Promise<unknown>[] {
    const writes: Promise<unknown>[] = [];
    const followsChanged = counted.reduce((sum, [, change]) => sum + change, 0);
    if (followsChanged !== 0) writes.push(this.client.hincrby(this.keys.totals, 'follows', followsChanged));
    for (let start = 0; start < counted.length; start += SEARCH_FOLLOWER_RECORDS) {
      const part = counted.slice(start, start + SEARCH_FOLLOWER_RECORDS);
      const records = Buffer.alloc(36 * part.length);
      part.forEach(([pubkey, change], index) => {
        records.write(pubkey, 36 * index, 'hex');
        records.writeInt32BE(change, 36 * index + 32);
      });
      const { words, followers, ranks } = this.keys.search;
      writes.push(this.client.nostrSearchFollowers(words, followers, ranks, records));
    }
    return writes;
  }

  searchProfiles(words: readonly string[], first: number, limits: SearchLimits = SEARCH_LIMITS): Promise<string[]> {
    const { words: records, lexical, followers, ranks } = this.keys.search;
    return this.commands.read(async () => {
      const found = await this.client.nostrSearchBuffer(records, lexical, followers, ranks, String(first), String(limits.lexRange), String(limits.rankWalk), ...words);
      return found.map((pubkey) => pubkey.toString('hex'));
    });
  }

  noteWordsStarting(prefix: string, limit: number): Promise<string[]> {
    return this.noteSearch.noteWordsStarting(prefix, limit);
  }

  searchNotes(query: NoteSearchQuery, limits?: NoteSearchLimits): Promise<NoteSearchResult> {
    return this.noteSearch.searchNotes(query, limits);
  }

  noteSearchLists(): AsyncIterable<NoteSearchList[]> {
    return this.noteSearch.noteSearchLists();
  }

  searchRecords(pubkeys: readonly string[]): Promise<SearchRecord[]> {
    const { words: records, lexical, followers, ranks } = this.keys.search;
    return this.commands.read(() =>
      Promise.all(
        pubkeys.map(async (pubkey) => {
          const member = Buffer.from(pubkey, 'hex');
          const [record, count] = await Promise.all([this.client.hget(records, member), this.client.hget(followers, member)]);
          const words = record ? record.split(' ').slice(2).filter(Boolean) : [];
          const held = Number(count ?? 0);
          if (!record) return { words, followers: held, indexed: true };
          const lexed = await Promise.all(words.map((word) => this.client.zscore(lexical, Buffer.concat([Buffer.from(`${word} `), member]))));
          const ranked = await Promise.all(rankedPrefixes(words).map((prefix) => this.client.zscore(`${ranks}${prefix}`, member)));
          return { words, followers: held, indexed: lexed.every((score) => score !== null) && ranked.every((score) => score !== null && Number(score) === -held) };
        }),
      ),
    );
  }

  async *searchSubjects(): AsyncIterable<string[]> {
    for (const key of [this.keys.search.words, this.keys.search.followers]) {
      let cursor = '0';
      do {
        const [next, fields] = await this.commands.read(() => this.client.hscanBuffer(key, cursor, 'COUNT', 500));
        cursor = next.toString();
        const pubkeys: string[] = [];
        for (let index = 0; index < fields.length; index += 2) pubkeys.push((fields[index] as Buffer).toString('hex'));
        if (pubkeys.length > 0) yield pubkeys;
      } while (cursor !== '0');
    }
  }

  zapTotals(queries: readonly ZapQuery[]): Promise<ZapTotal[]> {
    // One HMGET per query (the recipient's receipts, the provider's group), sent together.
    return this.commands.read(() =>
      Promise.all(
        queries.map(async ({ subject, recipient, provider }) => {
          const fields = provider === undefined ? [Buffer.from(recipient, 'hex')] : [Buffer.from(recipient, 'hex'), groupBytes({ recipient, provider })];
          const [receipts, group] = await this.client.hmgetBuffer(this.keys.zaps(subject).groups, ...fields);
          const total: ZapTotal = { receipts: Number(receipts?.toString() ?? 0) };
          if (provider !== undefined && group) total.group = zapGroupFrom({ recipient, provider }, group.toString());
          return total;
        }),
      ),
    );
  }

  zapGroups(subjects: readonly ZapSubject[]): Promise<{ groups: ZapGroup[]; receipts: Map<string, number> }[]> {
    return this.commands.read(() =>
      Promise.all(
        subjects.map(async (subject) => {
          const reply = (await this.client.callBuffer('HGETALL', this.keys.zaps(subject).groups)) as Buffer[];
          const groups: ZapGroup[] = [];
          const receipts = new Map<string, number>();
          for (let index = 0; index + 1 < reply.length; index += 2) {
            const field = reply[index] as Buffer;
            const value = (reply[index + 1] as Buffer).toString();
            if (field.length === 32) receipts.set(field.toString('hex'), Number(value));
            // Other lengths: the ledger's entries (ledgerOf).
            else if (field.length === 64) groups.push(zapGroupFrom({ recipient: field.toString('hex', 0, 32), provider: field.toString('hex', 32) }, value));
          }
          return { groups, receipts };
        }),
      ),
    );
  }

  zapSenders(subject: ZapSubject, groups: readonly { recipient: string; provider: string }[]): Promise<Set<string>> {
    const keys = this.keys.zaps(subject);
    return this.commands.read(async () => {
      const senders = new Set<string>();
      const replies = await Promise.all(groups.map((group) => this.client.callBuffer('HKEYS', keys.senders(group)) as Promise<Buffer[]>));
      for (const fields of replies) for (const field of fields) senders.add(field.toString('hex'));
      return senders;
    });
  }

  followCounts(pubkeys: readonly string[]): Promise<FollowCounts[]> {
    // Two commands per pubkey, sent together, each O(1) whatever the followers.
    return this.commands.read(() =>
      Promise.all(
        pubkeys.map(async (pubkey) => {
          // Many followers: their count is kept with the buckets' depth; few: in their log's header.
          const keys = this.keys.follows(pubkey);
          const [followers, following] = await Promise.all([this.client.nostrFollowerCount(keys.followers, keys.depth), this.client.get(keys.following)]);
          return { followers, following: Number(following ?? 0) };
        }),
      ),
    );
  }

  followers(pubkey: string, after: string | null, first: number): Promise<string[]> {
    const keys = this.keys.follows(pubkey);
    return this.commands.read(async () => {
      // The followers of whole bucket logs, unsorted (FOLLOWERS_PAGE): sorted here, off Redis' thread.
      const members = await this.client.nostrFollowersPageBuffer(keys.followers, keys.depth, keys.buckets, after === null ? '' : Buffer.from(after, 'hex'), String(first));
      return members
        .sort(Buffer.compare)
        .slice(0, first)
        .map((member) => member.toString('hex'));
    });
  }

  async *followSubjects(): AsyncIterable<string[]> {
    for (const type of ['fl', 'fn', 'fg']) {
      const start = `${this.prefix}${type}:{`.length;
      for await (const keys of scanKeys(this.client, this.commands, `${escapeGlob(this.prefix)}${type}:{*}`)) {
        yield keys.map((key) => Buffer.from(key.slice(start, -1), 'base64url').toString('hex'));
      }
    }
  }

  async *zapSubjects(): AsyncIterable<ZapSubject[]> {
    for (const [kind, type] of Object.entries(ZAP_GROUP_KEY_TYPES)) {
      const start = `${this.prefix}${type}:{`.length;
      for await (const keys of scanKeys(this.client, this.commands, `${escapeGlob(this.prefix)}${type}:{*}`)) {
        yield keys.map((key) => kind + Buffer.from(key.slice(start, -1), 'base64url').toString('hex'));
      }
    }
  }

  stats(ids: readonly string[]): Promise<RelationStats[]> {
    // One HMGET of the fixed fields per target, sent together: one socket write per connection
    // (coalesced-writes.ts), whoever and however many reacted; a target with many contents reads
    // the first MAX_REACTION_CONTENTS of their sorted set after.
    return this.commands.read(() =>
      Promise.all(
        ids.map(async (id) => {
          const [tallyKey, , , contentsKey] = this.keys.relations(id);
          const values = await this.client.hmget(tallyKey, ...COUNTERS, 'C', 'Z');
          const tally = new Map<string, number>();
          COUNTERS.forEach((field, index) => tally.set(field, Number(values[index] ?? 0)));
          if (values[COUNTERS.length + 1] === null) return statsFromTally(tally, decodeCounts(values[COUNTERS.length]));
          const ranked = await this.client.zrange(contentsKey, '0', String(MAX_REACTION_CONTENTS - 1), 'WITHSCORES');
          const contents: [string, number][] = [];
          for (let index = 0; index < ranked.length; index += 2) contents.push([ranked[index] as string, -Number(ranked[index + 1])]);
          return statsFromTally(tally, contents);
        }),
      ),
    );
  }

  replies(id: string, after: ReplyPosition | null, first: number): Promise<ReplyPosition[]> {
    // Exclusive of `after`'s place whatever its size (a cursor carries none: the bound is past all).
    const start = after ? Buffer.concat([Buffer.from('('), replyMemberBytes({ createdAt: after.createdAt, id: after.id })]) : '-';
    return this.commands.read(async () => {
      const members = await this.client.zrangeBuffer(this.keys.relations(id)[1], start, '+', 'BYLEX', 'LIMIT', 0, first);
      return members.map(replyPositionOfBytes);
    });
  }

  notes(author: string, kinds: readonly number[], after: ReplyPosition | null, first: number): Promise<ReplyPosition[]> {
    // One range per kind of the author's one list, sent together. Exclusive of `after`'s place
    // whatever its size (the bound's size is past all), as replies.
    const key = this.keys.author(author).list;
    return this.commands.read(async () => {
      const lists = await Promise.all(kinds.map((kind) => this.client.zrangeBuffer(key, ...kindRange(kind, after), 'BYLEX', 'LIMIT', 0, first)));
      return lists
        .flat()
        .map((member) => notePlace(replyPositionOfBytes(member.subarray(2))))
        .sort(compareNotes)
        .slice(0, first);
    });
  }

  timelines(pages: readonly NotePage[]): Promise<ReplyPosition[][]> {
    // A cluster's scripts keep to one slot: a page each, sent together.
    if (this.client instanceof Cluster) return Promise.all(pages.map(({ author, kinds, after, first }) => this.notes(author, kinds, after, first)));
    return this.commands.read(async () => {
      const found: Buffer[][] = [];
      // Pages of one `first`, kinds and `after` in one call (the bounds sent once), TIMELINES_PER_CALL
      // at most (a script holds its node): a page's first read is one group, what the merge reads on
      // is a group per author's place.
      const groups = new Map<string, number[]>();
      pages.forEach(({ first, kinds, after }, index) => {
        const group = `${first} ${kinds.join(',')} ${after ? `${after.createdAt} ${after.id}` : '-'}`;
        const members = groups.get(group);
        if (members) members.push(index);
        else groups.set(group, [index]);
      });
      const calls: Promise<void>[] = [];
      for (const indexes of groups.values()) {
        const { first, kinds, after } = pages[indexes[0] as number] as NotePage;
        const bounds = kinds.flatMap((kind) => kindRange(kind, after));
        for (let start = 0; start < indexes.length; start += TIMELINES_PER_CALL) {
          const part = indexes.slice(start, start + TIMELINES_PER_CALL);
          const keys = part.map((index) => this.keys.author((pages[index] as NotePage).author).list);
          calls.push(
            this.client.nostrTimelinesBuffer(keys.length, ...keys, String(first), String(kinds.length), ...bounds).then((lists) => {
              part.forEach((index, at) => {
                found[index] = lists[at] ?? [];
              });
            }),
          );
        }
      }
      await Promise.all(calls);
      return pages.map(({ first }, index) =>
        (found[index] ?? [])
          .map((member) => notePlace(replyPositionOfBytes(member.subarray(2))))
          .sort(compareNotes)
          .slice(0, first),
      );
    });
  }

  /** Notes are merged across kinds by the TIMELINES script as it reads them. */
  readonly keepsHomeTimelines = false;

  async *homeTimelineAuthors(): AsyncIterable<string[]> {}

  async *noteFeeds(): AsyncIterable<NoteFeed[]> {
    for await (const lists of this.authorLists()) {
      const feeds: NoteFeed[] = [];
      for (const { author, key } of lists) {
        const members = await this.commands.read(() => this.client.zrangeBuffer(key, '-', EVENTS_END, 'BYLEX'));
        const kinds = new Set(members.map((member) => member.readUInt16BE(0)));
        for (const kind of kinds) if (isNoteKind(kind)) feeds.push({ author, kind });
      }
      yield feeds;
    }
  }

  relatedIds(target: string, limit: number, scan: LedgerScan = { entries: Number.POSITIVE_INFINITY }): Promise<RelatedEvents> {
    const [tally, replies] = this.keys.relations(target);
    const zaps = this.keys.zaps(eventZapSubject(target)).groups;
    return this.commands.read(async () => {
      // The replies' list and both ledgers read at once, each up to one past `limit`.
      const [members, edges, receipts] = await Promise.all([this.client.zrangeBuffer(replies, '-', '+', 'BYLEX', 'LIMIT', 0, limit + 1), this.ledger(tally, limit, scan), this.ledger(zaps, limit, scan)]);
      scan.entries -= members.length;
      const related = new Map<string, number>();
      for (const member of members) {
        const { id, bytes } = replyPositionOfBytes(member);
        related.set(id, bytes ?? 0);
      }
      for (const [id, bytes] of [...edges.found, ...receipts.found]) related.set(id, bytes);
      const events = [...related].slice(0, limit).map(([id, bytes]) => ({ id, bytes }));
      return { events, complete: !edges.cut && !receipts.cut && related.size <= limit };
    });
  }

  /**
   * A ledger's entries (an id → its size; `-` once removed: a removed entry is read too, so what
   * every page hands over is taken from `scan`, and no page is asked for once it is spent), up to
   * one past `limit`; `each` gets every page's live ids as it is read.
   */
  private async ledger(key: string, limit: number, scan: LedgerScan, each?: (ids: string[]) => Promise<void>): Promise<{ found: Map<string, number>; cut: boolean }> {
    const found = new Map<string, number>();
    let cursor = '0';
    do {
      if (scan.entries <= 0 || found.size > limit) return { found, cut: true };
      const [next, fields] = (await this.client.callBuffer('HSCAN', key, cursor, 'MATCH', 'i*', 'COUNT', String(LEDGER_SCAN_COUNT))) as [Buffer, Buffer[]];
      cursor = next.toString();
      scan.entries -= fields.length / 2;
      const page: string[] = [];
      for (let index = 0; index + 1 < fields.length; index += 2) {
        const field = fields[index] as Buffer;
        const value = (fields[index + 1] as Buffer).toString();
        const id = field.toString('hex', 1);
        // A rehashing hash may hand an entry over twice: kept once.
        if (isLedgerField(field) && value !== '-' && !found.has(id)) {
          found.set(id, Number(value));
          page.push(id);
        }
      }
      if (each && page.length > 0) await each(page);
    } while (cursor !== '0');
    return { found, cut: false };
  }

  /**
   * The servable events that may notify about a target (its replies and the events in its ledger:
   * quotes, reposts, reactions; not its zap receipts, whose notifications name their recipient), a
   * part of RELATED_READS at a time. A write's read: no read deadline (redis-commands.ts), however
   * many relate to it.
   */
  private async relatedEvents(target: string, each: (events: NostrEvent[]) => void, eventsOf: EventsOf): Promise<void> {
    const [tally, replies] = this.keys.relations(target);
    const read = async (ids: readonly string[]) => {
      for (let start = 0; start < ids.length; start += RELATED_READS) {
        const events = (await eventsOf(ids.slice(start, start + RELATED_READS))).filter((event): event is NostrEvent => event !== undefined);
        if (events.length > 0) each(events);
      }
    };
    await this.commands.run(async () => {
      for (let from: Buffer | string = '-'; ; ) {
        const members = await this.client.zrangeBuffer(replies, from, '+', 'BYLEX', 'LIMIT', 0, RELATED_READS);
        await read(members.map((member) => replyPositionOfBytes(member).id));
        const last = members.at(-1);
        if (last === undefined || members.length < RELATED_READS) break;
        from = Buffer.concat([Buffer.from('('), last]);
      }
      await this.ledger(tally, Number.POSITIVE_INFINITY, { entries: Number.POSITIVE_INFINITY }, read);
    });
  }

  allReplies(id: string): Promise<ReplyPosition[]> {
    return this.commands.read(async () => (await this.client.zrangeBuffer(this.keys.relations(id)[1], '-', '+', 'BYLEX')).map(replyPositionOfBytes));
  }

  async *targets(): AsyncIterable<string[]> {
    const start = `${this.prefix}t:{`.length;
    for await (const keys of scanKeys(this.client, this.commands, `${escapeGlob(this.prefix)}t:{*}`)) {
      yield keys.map((key) => Buffer.from(key.slice(start, -1), 'base64url').toString('hex'));
    }
  }

  /**
   * Empties the index, but for the authors' lists: a request to vanish reads them while a rebuild
   * runs, so their members stay, are written again by the replay (idempotent) and pruned after it
   * (redis-event-store.ts finishRebuild). Their pending removals (`nd`) go.
   */
  async clear(): Promise<void> {
    for (const type of RELATION_KEY_TYPES) {
      // The log of list changes outlives a rebuild too: no list changes by it (list-changes.ts).
      if (type === AUTHOR_LIST_KEY_TYPE || type === 'lc') continue;
      // `y:{…}:<group>` ends past its brace: the pattern leaves the end open.
      for await (const keys of scanKeys(this.client, this.commands, `${escapeGlob(this.prefix)}${type}:{*`)) {
        // One key per command: on a cluster the keys sit in different slots.
        await this.commands.run(() => Promise.all(keys.map((key) => this.client.unlink(key))));
      }
    }
  }

  /** Logs a change of a follow or mute list (list-changes.ts); nothing for another kind. */
  async logListChange(event: NostrEvent): Promise<void> {
    if (LOGGED_LIST_KINDS.has(event.kind)) await this.client.xadd(this.keys.listChanges, 'MAXLEN', '~', String(LIST_CHANGES_KEPT), '*', 'p', event.pubkey);
  }

  /**
   * The authors of the stream's entries after `after` (exclusive), at most LIST_CHANGES_KEPT (the
   * stream's last entry id as the cursor when `after` is null); `all` for a cursor the stream
   * cannot be read from.
   */
  listChanges(after: string | null): Promise<ListChanges> {
    return this.commands.read(async () => {
      const key = this.keys.listChanges;
      // The log's end: the cursor to read from next, where `after` gives none to go on from.
      const end = async () => ((await this.client.xrevrange(key, '+', '-', 'COUNT', 1)) as [string, string[]][])[0]?.[0] ?? '0-0';
      if (after === null) return { cursor: await end(), pubkeys: [] };
      if (!STREAM_ID.test(after)) return { cursor: '0-0', all: true };
      const [unreadable, entries] = (await this.client.nostrListChanges(key, after, String(LIST_CHANGES_KEPT))) as [number, [string, string[]][]];
      // Not a cursor of this log (trimmed past, made again, never its own), or too far behind:
      // anything may have changed; the next read starts from the log's end.
      if (unreadable === 1 || entries.length >= LIST_CHANGES_KEPT) return { cursor: await end(), all: true };
      const cursor = entries.at(-1)?.[0] ?? after;
      return { cursor, pubkeys: entries.map(([, fields]) => fields[1] ?? '') };
    });
  }

  totals(): Promise<IndexTotals> {
    return this.commands.read(async () => {
      const [follows, notifications] = await this.client.hmget(this.keys.totals, 'follows', 'notifications');
      return { follows: Number(follows ?? 0), notifications: Number(notifications ?? 0) };
    });
  }

  eventCounts(): Promise<Map<number, number>> {
    return this.commands.run(async () => {
      const held = await this.client.hgetall(this.keys.eventCounts);
      return new Map(Object.entries(held).flatMap(([kind, count]) => (Number(count) === 0 ? [] : [[Number(kind), Number(count)] as const])));
    });
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

  /** Every author's list (its author, its key), in batches: for the prune after a rebuild. */
  async *authorLists(): AsyncIterable<{ author: string; key: string }[]> {
    const start = `${this.prefix}n:{`.length;
    for await (const keys of scanKeys(this.client, this.commands, `${escapeGlob(this.prefix)}n:{*}`)) {
      yield keys.map((key) => ({ author: Buffer.from(key.slice(start, -1), 'base64url').toString('hex'), key }));
    }
  }
}
