import type { NoteSearchQuery, NoteSearchResult } from '../store/note-search-index.js';
import DataLoader from 'dataloader';
import { errorCodeOf, LookupError } from '../errors.js';
import { MAX_EVENT_BYTES } from '../nostr/work-caps.js';
import { guarded, type ReadAnswer, type ReadThrough } from '../fill/read-through.js';
import type { RelayRequest } from '../fill/relay-request.js';
import { metrics } from '../metrics/metrics.js';
import { PROFILE_KIND } from '../nostr/kinds.js';
import type { EventStore, Held, StoredEvent } from '../store/event-store.js';
import { nip05VerificationMarkKey } from '../store/mark-store.js';
import type { LedgerScan, RelatedEvents, RelationStats, ReplyPosition } from '../store/relation-index.js';
import type { ZapQuery, ZapSubject, ZapTotal } from '../store/zap-index.js';
import type { FollowCounts } from '../store/follow-index.js';
import { zapProviderMarkKey } from '../zaps/zap-providers.js';
import { storedEventKind, storedEventPubkey } from '../store/stored-event.js';
import { isDeleted } from '../store/tombstones.js';
import type { RelationFill } from './context.js';
import { feedTarget, notesTarget } from '../fill/relation-fill.js';
import type { ObjectBudget } from './object-budget.js';
import type { ReadReceipt } from '../store/read-receipt.js';
import type { NotificationType } from '../nostr/notifications.js';
import type { NotificationCounts, NotificationEntry } from '../store/notification-index.js';

export interface Loaders {
  /** Events by id (DELETED where its author deleted it). */
  events: DataLoader<string, Held>;
  /** Latest kind-0 event by pubkey (DELETED where deleted): every profile read of a request becomes one store call. */
  profiles: DataLoader<string, Held>;
  /** Latest version by NIP-01 coordinate (`<kind>:<pubkey>:<d>`, an naddr; DELETED where deleted). */
  addresses: DataLoader<string, Held>;
  /** The stored NIP-05 verification note of a pubkey's profile (nip05/nip05-verification.ts), or null. */
  nip05Verifications: DataLoader<string, string | null>;
  /** What other events say about each event id (EventStats): every `stats` of a request is one store call. */
  relationStats: DataLoader<string, RelationStats>;
  /** Pages of an event's direct replies (their positions, oldest first); the same page asked twice is read once. */
  replyPages: DataLoader<ReplyPageKey, ReplyPosition[], string>;
  /** What the zap index holds for a recipient of an event or pubkey (store/zap-index.ts): every `zaps` of a request is one store call. */
  zapTotals: DataLoader<ZapQuery, ZapTotal, string>;
  /** The stored provider answer of a zap recipient (zaps/zap-providers.ts), or null. */
  zapProviderNotes: DataLoader<string, string | null>;
  /** Pages of an author's notes of some kinds (newest first); the same page asked twice is read once. */
  notePages: DataLoader<NotePageKey, ReplyPosition[], string>;
  /**
   * Pages of many authors' notes at once, from the index alone (schema/feed.ts merges them): one
   * batch of store reads, not cached (a feed reads each page once).
   */
  timelines(pages: readonly NotePageKey[]): Promise<ReplyPosition[][]>;
  /** Followers and following counts of pubkeys (store/follow-index.ts): every count of a request is one store call. */
  followCounts: DataLoader<string, FollowCounts>;
  /** The same, once the relays were asked for the follow lists naming the pubkeys (with relays): for followersCount and followers. */
  followerCounts: DataLoader<string, FollowCounts>;
  /** Pages of a pubkey's followers (by pubkey); the same page asked twice is read once. */
  followerPages: DataLoader<{ pubkey: string; after: string | null; first: number }, string[], string>;
  /** The pubkeys whose profile matches every word, best ranked first (store/search-index.ts): one read, nothing to batch. */
  searchProfiles(words: readonly string[], first: number): Promise<string[]>;
  /** Notes matching a planned query (store/note-search-index.ts), from the index alone: one read of every shard, nothing to batch. */
  searchNotes(query: NoteSearchQuery): Promise<NoteSearchResult>;
  /** With SEARCH_RELAYS: asks them for the notes a query's words match (NOTE_SEARCH), before the index is read; once per request and query. */
  fillNoteSearch(words: string): Promise<void>;
  /** The words the note search index holds that start with a prefix (a query's last word), at most `limit`. */
  noteWordsStarting(prefix: string, limit: number): Promise<string[]>;
  /** A page of a recipient's notifications (store/notification-index.ts), from the index alone: one read, nothing to batch. */
  notifications(recipient: string, types: readonly NotificationType[], after: ReplyPosition | null, first: number): Promise<NotificationEntry[]>;
  /** A recipient's notification counts per type (created_at >= since), from the index alone. */
  notificationCounts(recipient: string, since: number | undefined): Promise<NotificationCounts>;
  /** With relays: what `authors` wrote lately of `kinds`, asked of their write relays before a feed's first page is read. */
  fillFeed(authors: readonly string[], kinds: readonly number[]): Promise<void>;
  /** Up to `limit` events that relate to an event (RelationIndex.relatedIds): `stats(viewer:)`. */
  relatedIds(target: string, limit: number, scan: LedgerScan): Promise<RelatedEvents>;
  /** The distinct senders of some zap groups of a subject (a zap split's figures; not batched: rare). */
  zapSenders(subject: ZapSubject, groups: readonly { recipient: string; provider: string }[]): Promise<Set<string>>;
}

/** A page of replies to read: up to `first` positions after `after` (exclusive) in `id`'s list. */
export interface NotePageKey {
  author: string;
  kinds: readonly number[];
  after: ReplyPosition | null;
  first: number;
}

export interface ReplyPageKey {
  id: string;
  after: ReplyPosition | null;
  first: number;
}

/**
 * The relationship fill's subjects for one request (fill/relation-fill.ts), each asked before its
 * part of the index is read: an event's relationships (a test may hand this one in without relays),
 * and with relays the follow lists naming a pubkey, an author's notes and a search's profiles.
 */
/** A notifications fill asks for the relationships of the pubkey's most recent events of these kinds, this many. */
const RECENT_EVENT_KINDS = [1, 1111, 30023];
const RECENT_EVENTS_FILLED = 10;

export interface RelationFills {
  relations?: RelationFill;
  followers?: RelationFill;
  notes?: RelationFill;
  search?: RelationFill;
  noteSearch?: RelationFill;
  notifications?: RelationFill;
  feed?: RelationFill;
}

/** Relay fill for one request: the shared read-through path and this request's deadline, hints and authors. */
export interface RequestFill {
  fill: ReadThrough;
  request: RelayRequest;
}

/**
 * Per-request DataLoaders: each batch is one call to the read-through path (fill/read-through.ts),
 * or, without relays, one store read.
 */
export function createLoaders(store: EventStore, relays?: RequestFill, fills: RelationFills = {}, reads?: ReadReceipt): Loaders {
  const { relations: relationFill, followers: followersFill, notes: notesFill, search: searchFill, noteSearch: noteSearchFill, notifications: notificationsFill, feed: feedFill } = fills;
  const profiles = new DataLoader<string, Held>(
    (pubkeys): Promise<ReadAnswer[]> =>
      relays ? relays.fill.profiles(pubkeys, relays.request) : counted('profile', guarded(() => store.getProfiles(pubkeys, reads)), reads),
  );
  // A kind-0 event the index holds is its author's latest profile (older versions are not kept):
  // priming saves the profile read when the response also wants the author. Not so for one a
  // relay returned by id, which may be an old version.
  const primeProfiles = (stored: readonly Held[]) => {
    for (const value of stored) {
      if (value && !isDeleted(value) && storedEventKind(value) === PROFILE_KIND) profiles.prime(storedEventPubkey(value), value);
    }
  };
  const events = new DataLoader<string, Held>(async (ids): Promise<ReadAnswer[]> => {
    if (relays) return relays.fill.events(ids, relays.request, primeProfiles);
    const stored = await counted('event', guarded(() => store.getEvents(ids, reads)), reads);
    primeProfiles(stored);
    return stored;
  });
  const addresses = new DataLoader<string, Held>(
    (coordinates): Promise<ReadAnswer[]> =>
      relays ? relays.fill.addresses(coordinates, relays.request) : counted('address', guarded(() => store.getByCoordinates(coordinates, reads)), reads),
  );
  // Every read below is beside the hot cache (marks, the relationship index, relays): a request that
  // makes one has an answer that is not kept (read-receipt.ts).
  const notKept = () => reads?.spoil();
  const readBeside = <T>(read: () => Promise<T>): Promise<T> => {
    notKept();
    return guarded(read);
  };
  const nip05Verifications = new DataLoader<string, string | null>((pubkeys) => readBeside(() => store.marks.notes(pubkeys.map(nip05VerificationMarkKey))));
  // The relationship fill, when there is one (context.ts), brings what relays know about these
  // events into the index before it is read: once per batch, for every id of the batch.
  const relationStats = new DataLoader<string, RelationStats>(async (ids) => {
    notKept();
    await relationFill?.ensure(ids);
    const stats = await guarded(() => store.relations.stats(ids));
    metrics.lookups('relations', 'index_hit', ids.length);
    return stats;
  });
  const replyPages = new DataLoader<ReplyPageKey, ReplyPosition[], string>(
    async (pages) => {
      notKept();
      await relationFill?.ensure([...new Set(pages.map((page) => page.id))]);
      return guarded(() => Promise.all(pages.map(({ id, after, first }) => store.relations.replies(id, after, first))));
    },
    { cacheKeyFn: ({ id, after, first }) => `${id}:${after ? `${after.createdAt}:${after.id}` : ''}:${first}` },
  );
  const readNotes = (pages: readonly NotePageKey[]) => readBeside(() => Promise.all(pages.map(({ author, kinds, after, first }) => store.relations.notes(author, kinds, after, first))));
  const notePages = new DataLoader<NotePageKey, ReplyPosition[], string>(
    async (pages) => {
      if (!notesFill) return readNotes(pages);
      // A first page always asks the fill, which asks the relays once per RELATIONS_TTL (and
      // refreshes a stale answer in the background), before the index is read: new notes arrive
      // however many the index holds. A later page asks only when the index cannot fill it (fewer
      // positions than asked), from its cursor (`until` its created_at), then is read again.
      const firstPages = pages.filter((page) => page.after === null);
      if (firstPages.length > 0) await notesFill.ensure(firstPages.map(({ author, kinds }) => notesTarget(author, kinds, undefined)));
      const read = await readNotes(pages);
      const short = pages.filter((page, index) => page.after !== null && (read[index]?.length ?? 0) < page.first);
      if (short.length === 0) return read;
      await notesFill.ensure(short.map(({ author, kinds, after }) => notesTarget(author, kinds, after?.createdAt)));
      const again = await readNotes(short);
      return pages.map((page, index) => {
        const at = short.indexOf(page);
        return at >= 0 ? (again[at] as ReplyPosition[]) : (read[index] as ReplyPosition[]);
      });
    },
    { cacheKeyFn: ({ author, kinds, after, first }) => `${author}:${kinds.join(',')}:${after ? `${after.createdAt}:${after.id}` : ''}:${first}` },
  );
  const timelines = (pages: readonly NotePageKey[]) => readBeside(() => store.relations.timelines(pages));
  // With relays, a feed's first page first asks what its authors wrote lately (FEED), within the
  // request's deadline and caps; never fails the read (the index's answer stands).
  const fillFeed = async (authors: readonly string[], kinds: readonly number[]) => {
    if (feedFill) await feedFill.ensure(authors.map((author) => feedTarget(author, kinds)));
  };
  const zapTotals = new DataLoader<ZapQuery, ZapTotal, string>((queries) => readBeside(() => store.relations.zapTotals(queries)), {
    cacheKeyFn: ({ subject, recipient, provider }) => `${subject}:${recipient}:${provider ?? ''}`,
  });
  const zapProviderNotes = new DataLoader<string, string | null>((pubkeys) => readBeside(() => store.marks.notes(pubkeys.map(zapProviderMarkKey))));
  // Once per subject and groups per request, however many objects and aliases ask (each read is
  // every sender of the groups: found by review, 1,500 reads of 2,000 senders in one request).
  const zapSendersRead = new Map<string, Promise<Set<string>>>();
  const zapSenders = (subject: ZapSubject, groups: readonly { recipient: string; provider: string }[]) => {
    const key = `${subject}|${groups.map(({ recipient, provider }) => `${recipient}:${provider}`).join('|')}`;
    let read = zapSendersRead.get(key);
    if (read === undefined) zapSendersRead.set(key, (read = readBeside(() => store.relations.zapSenders(subject, groups))));
    return read;
  };
  const followCounts = new DataLoader<string, FollowCounts>((pubkeys) => readBeside(() => store.relations.followCounts(pubkeys)));
  // With relays, the follow lists naming these pubkeys are asked first (fill/relation-fill.ts
  // FOLLOWERS): for followersCount and followers only (followingCount reads the counts alone).
  const followerCounts = new DataLoader<string, FollowCounts>(async (pubkeys) => {
    notKept();
    await followersFill?.ensure(pubkeys);
    return guarded(() => store.relations.followCounts(pubkeys));
  });
  const followerPages = new DataLoader<{ pubkey: string; after: string | null; first: number }, string[], string>(
    async (pages) => {
      notKept();
      await followersFill?.ensure([...new Set(pages.map((page) => page.pubkey))]);
      return guarded(() => Promise.all(pages.map(({ pubkey, after, first }) => store.relations.followers(pubkey, after, first))));
    },
    { cacheKeyFn: ({ pubkey, after, first }) => `${pubkey}:${after ?? ''}:${first}` },
  );
  // With SEARCH_RELAYS, they are asked first (a fill's failure leaves the index's answer). The
  // same search twice in a request (aliases) is read once.
  const searches = new Map<string, Promise<string[]>>();
  const searchProfiles = (words: readonly string[], first: number) => {
    notKept();
    const key = `${first} ${words.join(' ')}`;
    let search = searches.get(key);
    if (!search) {
      search = (async () => {
        await searchFill?.ensure([words.join(' ')]);
        return guarded(() => store.relations.searchProfiles(words, first));
      })();
      searches.set(key, search);
    }
    return search;
  };
  // With SEARCH_RELAYS, a note search asks them first (once per request and query); a fill's failure leaves the index's answer.
  const noteSearchFills = new Map<string, Promise<void>>();
  const fillNoteSearch = (words: string) => {
    if (!noteSearchFill) return Promise.resolve();
    notKept();
    let filled = noteSearchFills.get(words);
    if (!filled) noteSearchFills.set(words, (filled = noteSearchFill.ensure([words])));
    return filled;
  };
  // With relays, a first page asks them first (once per request and pubkey): what names the
  // pubkey (NOTIFICATIONS), and the relationships of its most recent events (EVENT_RELATIONS), so
  // that a reply that does not tag it is found too. A fill's failure leaves the index's answer.
  const notificationFills = new Map<string, Promise<void>>();
  const fillNotifications = (recipient: string) => {
    let filled = notificationFills.get(recipient);
    if (!filled) {
      filled = (async () => {
        const recent = relationFill ? guarded(() => store.relations.notes(recipient, RECENT_EVENT_KINDS, null, RECENT_EVENTS_FILLED)) : Promise.resolve([]);
        await Promise.all([notificationsFill?.ensure([recipient]), recent.then((positions) => relationFill?.ensure(positions.map(({ id }) => id)))]);
      })().catch(() => {
        // The index's answer stands (the read that follows says if the store fails).
      });
      notificationFills.set(recipient, filled);
    }
    return filled;
  };
  const notifications = async (recipient: string, types: readonly NotificationType[], after: ReplyPosition | null, first: number) => {
    notKept();
    if (after === null && (notificationsFill || relationFill)) await fillNotifications(recipient);
    return guarded(() => store.relations.notifications(recipient, types, after, first));
  };
  const notificationCounts = (recipient: string, since: number | undefined) => {
    notKept();
    return guarded(() => store.relations.notificationCounts(recipient, since));
  };
  const relatedIds = async (target: string, limit: number, scan: LedgerScan) => {
    notKept();
    // As stats and replies: what relays know first (once per request and target).
    await relationFill?.ensure([target]);
    return guarded(() => store.relations.relatedIds(target, limit, scan));
  };
  return {
    events,
    profiles,
    addresses,
    nip05Verifications,
    relationStats,
    replyPages,
    notePages,
    timelines,
    zapTotals,
    zapProviderNotes,
    zapSenders,
    followCounts,
    followerCounts,
    followerPages,
    searchProfiles,
    searchNotes: (query: NoteSearchQuery) => readBeside(() => store.relations.searchNotes(query)),
    noteWordsStarting: (prefix: string, limit: number) => readBeside(() => store.relations.noteWordsStarting(prefix, limit)),
    fillNoteSearch,
    notifications,
    notificationCounts,
    relatedIds,
    fillFeed,
  };
}

/** Index-only lookups (relays off) as metrics count them; the read-through path counts its own. */
async function counted(kind: string, read: Promise<Held[]>, reads: ReadReceipt | undefined): Promise<Held[]> {
  const held = await read;
  let hits = 0;
  for (const value of held) if (value !== null) hits += 1;
  metrics.lookups(kind, 'index_hit', hits, reads);
  metrics.lookups(kind, 'index_miss', held.length - hits, reads);
  return held;
}

/** A request fails as a whole if any read failed. */
export function loadAll<V>(loader: DataLoader<string, V>, keys: readonly string[]): Promise<V[]> {
  return Promise.all(keys.map((key) => loader.load(key)));
}

/**
 * Events or profiles read in slices that fit in what is left of the read bound (ObjectBudget), each
 * at most `maxBytesEach` (MAX_PROFILE_BYTES for profiles, MAX_EVENT_BYTES for events). Found by review: a
 * hundred profiles of 900 KB were read, 90 MB, before the response cap left them out. With the
 * defaults (4 MiB) that is one read for up to 64 profiles, or 16 events of any size.
 * A slice's bytes are promised before it is read, so that the reads of every item of a list share
 * the bound rather than each taking all of it (found by review); once what the request read is past
 * it, nothing more is read: the answer is shorter than `keys` (ObjectBudget.overRead 'stop') or
 * response_too_large is thrown.
 */
export async function loadWithinReadBound(
  loader: DataLoader<string, Held>,
  keys: readonly string[],
  budget: ObjectBudget,
  maxBytesEach: number,
  /** Each key's size where known (a reply's, from the index): reserved exactly, not at maxBytesEach. */
  sizes?: readonly (number | undefined)[],
): Promise<(Held | null)[]> {
  const found: (Held | null)[] = [];
  const sizeOf = (index: number) => Math.min(sizes?.[index] ?? maxBytesEach, maxBytesEach);
  while (found.length < keys.length) {
    // As many as fit in what is left of the bound (at least one: past it, settleRead stops the reads).
    let end = found.length;
    let reserved = 0;
    while (end < keys.length && (end === found.length || reserved + sizeOf(end) <= budget.readBytesLeft)) reserved += sizeOf(end++);
    budget.reserveRead(reserved);
    let read: (Held | null)[];
    try {
      read = await loadAvailable(loader, keys.slice(found.length, end));
    } catch (error) {
      budget.reserveRead(-reserved);
      throw error;
    }
    found.push(...read);
    if (!budget.settleRead(reserved, read.filter((held): held is StoredEvent => held !== null && !isDeleted(held)))) break;
  }
  return found;
}

/**
 * Every event of `ids` (null where none is held), read within the read bound as loadWithinReadBound
 * reads them: all of them, or response_too_large (a count or a page judged on part of its events
 * would be wrong, not short). `sizes`: each one's where the index knows it.
 */
export async function loadEveryEvent(loader: DataLoader<string, Held>, ids: readonly string[], budget: ObjectBudget, sizes?: readonly (number | undefined)[]): Promise<(Held | null)[]> {
  const found = await loadWithinReadBound(loader, ids, budget, MAX_EVENT_BYTES, sizes);
  if (found.length < ids.length) throw new LookupError('response_too_large');
  return found;
}

/**
 * For profiles that accompany something else (an event's author and mentions): a profile the
 * relays could not deliver in time is simply absent; a store failure still fails the request.
 * (Not `loadMany`, which adds a promise per key to catch failures that are rare: the failures are
 * sorted out only when there is one.)
 */
export async function loadAvailable<V>(loader: DataLoader<string, V>, keys: readonly string[]): Promise<(V | null)[]> {
  const loads = keys.map((key) => loader.load(key));
  try {
    return await Promise.all(loads);
  } catch {
    const settled = await Promise.allSettled(loads);
    return settled.map((outcome) => {
      if (outcome.status === 'fulfilled') return outcome.value;
      const code = errorCodeOf(outcome.reason);
      if (code === 'relays_unavailable' || code === 'too_many_requests' || code === 'rate_limited') return null;
      throw outcome.reason;
    });
  }
}
