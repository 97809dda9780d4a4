import type { NostrEvent } from '../nostr/event.js';
import { DEFAULT_FEED_KINDS } from '../nostr/relationships.js';
import type { EventStore } from './event-store.js';
import { NO_RELATIONS, type RelatedEvents, type RelationStats, type ReplyPosition } from './relation-index.js';
import { NOTIFICATION_TYPES } from '../nostr/notifications.js';
import { NO_NOTIFICATION_COUNTS, type NotificationCounts, type NotificationEntry } from './notification-index.js';
import { recountNotifications } from './notification-recount.js';
import { recountRelations, relatedFigure } from './relation-recount.js';
import type { SearchRecord } from './search-index.js';
import { indexedWordsOf, type NotePosting } from './note-search-index.js';
import { compareNotes, storedSizeOf } from './relation-index.js';
import { sortZapGroups, type ZapGroup, type ZapSubject, zapGroupKey } from './zap-index.js';

/**
 * The one rebuild-and-compare path of the relationship index (`nostr-lookup relations rebuild`
 * and `relations check`, and the property tests): the maintained figures held against a recount
 * from the servable events (store/relation-recount.ts). Run it with writers stopped: an event
 * written meanwhile shows as a difference.
 */

/** One target whose maintained figures differ from the recount. */
export interface RelationDifference {
  target: string;
  maintained: TargetFigures;
  recounted: TargetFigures;
}

/** What is kept of one target: its figures, its replies, and which events relate to it (relatedFigure, sorted). */
export interface TargetFigures {
  stats: RelationStats;
  replies: ReplyPosition[];
  related: string[];
}

/** What is kept of one zapped subject (zap-index.ts), in a comparable form. */
export interface ZapFigures {
  groups: ZapGroup[];
  /** recipient → receipts, by recipient */
  receipts: [string, number][];
  /** group key → its senders, sorted, by group */
  senders: [string, string[]][];
}

/** One zapped subject whose maintained figures differ from the recount. */
export interface ZapDifference {
  subject: ZapSubject;
  maintained: ZapFigures;
  recounted: ZapFigures;
}

/** One pubkey whose maintained follows differ from the recount. */
export interface FollowDifference {
  pubkey: string;
  maintained: { followers: number; following: number; list: string[] };
  recounted: { followers: number; following: number; list: string[] };
}

/** One author's list of one kind whose maintained notes differ from the recount. */
export interface NoteDifference {
  author: string;
  /** The list's kind, or `home`: the author's notes of the default feed kinds, where the store keeps them merged (RelationIndex.homeTimelineAuthors). */
  kind: number | 'home';
  maintained: ReplyPosition[];
  recounted: ReplyPosition[];
}

/** One recipient whose maintained notifications (or their counts) differ from the recount. */
export interface NotificationDifference {
  pubkey: string;
  maintained: { entries: NotificationEntry[]; counts: NotificationCounts };
  recounted: { entries: NotificationEntry[]; counts: NotificationCounts };
}

/** One word whose notes in the note search index differ from the recount. */
export interface NoteSearchDifference {
  word: string;
  maintained: NotePosting[];
  recounted: NotePosting[];
}

/** One pubkey whose search record (words, followers it ranks by, entries) differs from the recount. */
export interface SearchDifference {
  pubkey: string;
  maintained: SearchRecord;
  recounted: SearchRecord;
}

export interface RelationCheck {
  /** Servable events read. */
  events: number;
  /** Targets compared (maintained or recounted). */
  targets: number;
  differences: RelationDifference[];
  /** Zapped subjects compared (maintained or recounted). */
  zapSubjects: number;
  zapDifferences: ZapDifference[];
  /** Pubkeys followed or following, compared. */
  followSubjects: number;
  followDifferences: FollowDifference[];
  /** (author, kind) note lists compared, and the home timelines where the store keeps them. */
  noteLists: number;
  noteDifferences: NoteDifference[];
  /** Pubkeys with a profile or followers, compared as the search index holds them. */
  searchSubjects: number;
  searchDifferences: SearchDifference[];
  /** Words of the note search index compared (maintained or recounted). */
  noteSearchWords: number;
  noteSearchDifferences: NoteSearchDifference[];
  /** Recipients of notifications compared. */
  notificationRecipients: number;
  notificationDifferences: NotificationDifference[];
  /** Kinds whose kept count of servable events (eventCounts) differs from the events read. */
  kindDifferences: { kind: number; maintained: number; recounted: number }[];
  /** Kept totals (RelationIndex.totals: follows, notifications) that differ from the recount. */
  totalDifferences: { total: 'follows' | 'notifications'; maintained: number; recounted: number }[];
}

/**
 * The store's servable events in its batches, each event once: a Redis SCAN may hand a key over
 * twice, and neither the recount nor a rebuild may take an event twice (a follow list's scripts add
 * up what they are sent).
 */
async function* distinctServable(store: EventStore): AsyncIterable<NostrEvent[]> {
  const seen = new Set<string>();
  for await (const batch of store.servableEvents()) {
    const fresh = batch.filter((event) => !seen.has(event.id));
    for (const event of fresh) seen.add(event.id);
    if (fresh.length > 0) yield fresh;
  }
}

/** Every servable event the store holds, each once, in memory (the recount needs them all at once). */
async function servable(store: EventStore): Promise<NostrEvent[]> {
  const events: NostrEvent[] = [];
  for await (const batch of distinctServable(store)) events.push(...batch);
  return events;
}

/** Adds events to a tally of events by kind. */
function tallyKinds(byKind: Map<number, number>, events: readonly NostrEvent[]): Map<number, number> {
  for (const event of events) byKind.set(event.kind, (byKind.get(event.kind) ?? 0) + 1);
  return byKind;
}

/** Subjects per read of the maintained figures. */
const CHECK_BATCH = 200;

/**
 * One part of the index compared: every subject the recount has or the store lists, sorted, its
 * maintained figures read in batches and held against the recounted ones (compared as JSON).
 */
async function compareSubjects<F>(
  recounted: Iterable<string>,
  listed: AsyncIterable<string[]>,
  readMaintained: (batch: string[]) => Promise<F[]>,
  recountedOf: (subject: string) => F,
): Promise<{ compared: number; differences: { subject: string; maintained: F; recounted: F }[] }> {
  const subjects = new Set(recounted);
  for await (const batch of listed) for (const subject of batch) subjects.add(subject);
  const all = [...subjects].sort();
  const differences: { subject: string; maintained: F; recounted: F }[] = [];
  for (let start = 0; start < all.length; start += CHECK_BATCH) {
    const batch = all.slice(start, start + CHECK_BATCH);
    const maintained = await readMaintained(batch);
    batch.forEach((subject, index) => {
      const recounted = recountedOf(subject);
      if (JSON.stringify(maintained[index]) !== JSON.stringify(recounted)) differences.push({ subject, maintained: maintained[index] as F, recounted });
    });
  }
  return { compared: all.length, differences };
}

/** A note list's name in the comparison: `<author>:<kind>`. */
async function* noteLists(store: EventStore): AsyncIterable<string[]> {
  for await (const batch of store.relations.noteFeeds()) yield batch.map(({ author, kind }) => `${author}:${kind}`);
  for await (const batch of store.relations.homeTimelineAuthors()) yield batch.map((author) => `${author}:home`);
}

export async function checkRelations(store: EventStore): Promise<RelationCheck> {
  const events = await servable(store);
  const recount = recountRelations(events);
  const { relations } = store;
  const targets = await compareSubjects<TargetFigures>(
    [...recount.stats.keys(), ...recount.related.keys()],
    relations.targets(),
    async (batch) => {
      const [stats, replies, related] = await Promise.all([
        relations.stats(batch),
        Promise.all(batch.map((target) => relations.allReplies(target))),
        Promise.all(batch.map((target) => relations.relatedIds(target, Number.MAX_SAFE_INTEGER))),
      ]);
      return batch.map((_, index) => ({ stats: stats[index] as RelationStats, replies: replies[index] as ReplyPosition[], related: (related[index] as RelatedEvents).events.map(relatedFigure).sort() }));
    },
    (target) => ({ stats: recount.stats.get(target) ?? NO_RELATIONS, replies: recount.replies.get(target) ?? [], related: recount.related.get(target) ?? [] }),
  );
  const zaps = await compareSubjects<ZapFigures>(
    recount.zaps.keys(),
    relations.zapSubjects(),
    async (batch) => {
      const held = await relations.zapGroups(batch);
      return Promise.all(
        batch.map(async (subject, index) => {
          const { groups, receipts } = held[index] ?? { groups: [], receipts: new Map<string, number>() };
          const senders = await Promise.all(groups.map(async (group) => [zapGroupKey(group), [...(await relations.zapSenders(subject, [group]))].sort()] as [string, string[]]));
          return { groups: sortZapGroups([...groups]), receipts: [...receipts].sort(), senders: senders.sort() };
        }),
      );
    },
    (subject) => {
      const fromEvents = recount.zaps.get(subject);
      return fromEvents
        ? { groups: fromEvents.groups, receipts: [...fromEvents.receipts].sort(), senders: [...fromEvents.senders].map(([key, set]) => [key, [...set].sort()] as [string, string[]]).sort() }
        : { groups: [], receipts: [], senders: [] };
    },
  );
  const follows = await compareSubjects(
    [...recount.followers.keys(), ...recount.following.keys()],
    relations.followSubjects(),
    async (batch) => {
      const counts = await relations.followCounts(batch);
      const lists = await Promise.all(batch.map((pubkey) => relations.followers(pubkey, null, Number.MAX_SAFE_INTEGER)));
      return batch.map((_, index) => ({ followers: counts[index]?.followers ?? 0, following: counts[index]?.following ?? 0, list: lists[index] as string[] }));
    },
    (pubkey) => {
      const list = recount.followers.get(pubkey) ?? [];
      return { followers: list.length, following: recount.following.get(pubkey) ?? 0, list };
    },
  );
  // A home timeline (`<author>:home`) is compared where the store keeps one: its notes of the
  // default feed kinds, merged, against the recounted lists of those kinds.
  const homes = relations.keepsHomeTimelines ? [...new Set([...recount.notes.keys()].filter((list) => DEFAULT_FEED_KINDS.includes(Number(list.slice(65)))).map((list) => `${list.slice(0, 64)}:home`))] : [];
  const notes = await compareSubjects(
    [...recount.notes.keys(), ...homes],
    noteLists(store),
    (batch) =>
      Promise.all(
        batch.map((list) => {
          const kind = list.slice(65);
          return relations.notes(list.slice(0, 64), kind === 'home' ? DEFAULT_FEED_KINDS : [Number(kind)], null, Number.MAX_SAFE_INTEGER);
        }),
      ),
    (list) => {
      const author = list.slice(0, 64);
      if (list.slice(65) !== 'home') return recount.notes.get(list) ?? [];
      return DEFAULT_FEED_KINDS.flatMap((kind) => recount.notes.get(`${author}:${kind}`) ?? []).sort(compareNotes);
    },
  );
  const search = await compareSubjects<SearchRecord>(
    [...recount.profileWords.keys(), ...recount.followers.keys()],
    relations.searchSubjects(),
    (batch) => relations.searchRecords(batch),
    (pubkey) => ({ words: recount.profileWords.get(pubkey) ?? [], followers: recount.followers.get(pubkey)?.length ?? 0, indexed: true }),
  );
  const noteSearch = await compareNoteSearch(store, events);
  const notified = recountNotifications(events);
  const countsOf = (entries: readonly NotificationEntry[]): NotificationCounts => {
    const counts = { ...NO_NOTIFICATION_COUNTS };
    for (const entry of entries) counts[entry.type] += 1;
    return counts;
  };
  const notifications = await compareSubjects(
    notified.keys(),
    relations.notificationRecipients(),
    (batch) =>
      Promise.all(
        batch.map(async (pubkey) => {
          const [entries, counts] = await Promise.all([relations.notifications(pubkey, NOTIFICATION_TYPES, null, Number.MAX_SAFE_INTEGER), relations.notificationCounts(pubkey)]);
          return { entries, counts };
        }),
      ),
    (pubkey) => {
      const entries = notified.get(pubkey) ?? [];
      return { entries, counts: countsOf(entries) };
    },
  );
  const byKind = tallyKinds(new Map(), events);
  const [kept, totals] = await Promise.all([relations.eventCounts(), relations.totals()]);
  const recountedTotals = {
    follows: [...recount.followers.values()].reduce((sum, list) => sum + list.length, 0),
    notifications: [...notified.values()].reduce((sum, entries) => sum + entries.length, 0),
  };
  const totalDifferences = (['follows', 'notifications'] as const).flatMap((total) =>
    totals[total] === recountedTotals[total] ? [] : [{ total, maintained: totals[total], recounted: recountedTotals[total] }],
  );
  const kindDifferences = [...new Set([...byKind.keys(), ...kept.keys()])]
    .sort((a, b) => a - b)
    .flatMap((kind) => ((kept.get(kind) ?? 0) === (byKind.get(kind) ?? 0) ? [] : [{ kind, maintained: kept.get(kind) ?? 0, recounted: byKind.get(kind) ?? 0 }]));
  return {
    events: events.length,
    targets: targets.compared,
    differences: targets.differences.map(({ subject, ...rest }) => ({ target: subject, ...rest })),
    zapSubjects: zaps.compared,
    zapDifferences: zaps.differences.map(({ subject, ...rest }) => ({ subject: subject as ZapSubject, ...rest })),
    followSubjects: follows.compared,
    followDifferences: follows.differences.map(({ subject, ...rest }) => ({ pubkey: subject, ...rest })),
    noteLists: notes.compared,
    noteDifferences: notes.differences.map(({ subject, ...rest }) => ({ author: subject.slice(0, 64), kind: subject.slice(65) === 'home' ? 'home' : Number(subject.slice(65)), ...rest })),
    searchSubjects: search.compared,
    searchDifferences: search.differences.map(({ subject, ...rest }) => ({ pubkey: subject, ...rest })),
    noteSearchWords: noteSearch.compared,
    noteSearchDifferences: noteSearch.differences,
    notificationRecipients: notifications.compared,
    notificationDifferences: notifications.differences.map(({ subject, ...rest }) => ({ pubkey: subject, ...rest })),
    kindDifferences,
    totalDifferences,
  };
}

/**
 * The note search index against its recount: every word's notes (all shards), held in memory as
 * the other parts' recounts are.
 */
async function compareNoteSearch(store: EventStore, events: readonly NostrEvent[]): Promise<{ compared: number; differences: NoteSearchDifference[] }> {
  // Not kept (NOTE_SEARCH off): nothing to compare; a rebuild after it is turned on writes it.
  if (!store.relations.noteSearchEnabled) return { compared: 0, differences: [] };
  const recounted = new Map<string, NotePosting[]>();
  for (const event of events) {
    const words = indexedWordsOf(event);
    if (words.length === 0) continue;
    const posting = { createdAt: event.created_at, id: event.id, kind: event.kind, bytes: storedSizeOf(event) };
    for (const word of words) {
      const list = recounted.get(word) ?? [];
      recounted.set(word, list);
      list.push(posting);
    }
  }
  const maintained = new Map<string, NotePosting[]>();
  for await (const batch of store.relations.noteSearchLists()) {
    for (const { word, notes } of batch) maintained.set(word, [...(maintained.get(word) ?? []), ...notes]);
  }
  const words = [...new Set([...recounted.keys(), ...maintained.keys()])].sort();
  const differences: NoteSearchDifference[] = [];
  // One shape whatever each store's objects hold (compared as JSON).
  const canonical = (postings: readonly NotePosting[]) => [...postings].sort(compareNotes).map(({ createdAt, id, kind, bytes }) => ({ createdAt, id, kind, bytes }));
  for (const word of words) {
    const held = canonical(maintained.get(word) ?? []);
    const counted = canonical(recounted.get(word) ?? []);
    if (JSON.stringify(held) !== JSON.stringify(counted)) differences.push({ word, maintained: held, recounted: counted });
  }
  return { compared: words.length, differences };
}

/** Empties the index and relates every servable event again. Returns how many events it read. */
export async function rebuildRelations(store: EventStore, onBatch?: (events: number) => void): Promise<number> {
  await store.relations.clear();
  let count = 0;
  const byKind = new Map<number, number>();
  for await (const batch of distinctServable(store)) {
    await store.relateStored(batch);
    tallyKinds(byKind, batch);
    count += batch.length;
    onBatch?.(count);
  }
  await store.finishRebuild();
  await store.relations.setEventCounts(byKind);
  return count;
}
