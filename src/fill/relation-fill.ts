import { type Filter, matchFilter } from 'nostr-tools/filter';
import { ClientSlots } from '../client-key.js';
import type { RelayConfig } from '../config/env.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics/metrics.js';
import { DELETION_KIND } from '../nostr/deletions.js';
import type { NostrEvent } from '../nostr/event.js';
import { isLowerHex64 } from '../nostr/identifiers.js';
import { isEphemeralKind, supersedes } from '../nostr/kinds.js';
import { FOLLOW_LIST_KIND } from '../nostr/follows.js';
import { COMMENT_KIND, RELATION_KINDS } from '../nostr/relationships.js';
import { ZAP_RECEIPT_KIND } from '../nostr/zaps.js';
import { readRelaysOf, RELAY_LIST_KIND, writeRelaysOf } from '../nostr/relay-list.js';
import type { RelayPool } from '../relays/relay-pool.js';
import { relayUrlForLog } from '../relays/relay-url.js';
import { isOversized } from '../store/derived-values.js';
import type { EventStore } from '../store/event-store.js';
import { relayListMarkKey } from '../store/mark-store.js';
import { isDeleted } from '../store/tombstones.js';
import { timeoutSignal, untilAborted } from '../abortable.js';
import { InFlightLookups } from './coalescing.js';
import { ABSENT, type Fetched, UNAVAILABLE } from './fetched.js';
import { acrossInstances } from './instance-claims.js';
import { chunks, MAX_VALUES_PER_FILTER } from './lookup-kind.js';
import { planOutbox } from './outbox-plan.js';
import { RelayRequest } from './relay-request.js';
import { warnStoreFailure } from '../store/store-failure.js';

/**
 * The mark of an event's relationships asked of relays: set for RELATIONS_TTL once a
 * relay answered, its note the time they were asked (unix seconds). Kept with the other marks
 * (store/mark-store.ts), so it expires as they do.
 */
export function relationsMarkKey(id: string): string {
  return `relations:${id}`;
}

/** The claim to refresh an event's relationships in the background: once per half RELATIONS_TTL across instances. */
export function relationsRefreshMarkKey(id: string): string {
  return `relations-refresh:${id}`;
}

/**
 * What one fill asks relays about its targets (an event's relationships; the
 * follow lists naming a pubkey). The engine (RelationFill, RelationRun) is the same for both:
 * marks and their TTL (RELATIONS_TTL), claims across instances, paging with `until`, caps, the
 * deletions of what came back.
 */
export interface FillSubject {
  /** Names its in-flight lookups and background refresh metrics. */
  readonly name: string;
  markKey(target: string): string;
  refreshMarkKey(target: string): string;
  /** The filters paged for one target. */
  filters(target: string): Filter[];
  /** Events one fill takes per target, at most. */
  maxEvents(config: RelayConfig): number;
  /** The relays asked for every target; they alone decide for everyone that a target was asked. */
  relays(config: RelayConfig): string[];
  /** Whether a target is one (anything else is ignored: targets come from client input). */
  isTarget(target: string): boolean;
  /**
   * A refresh asks only what was published since the last fill (`since` its mark's time, less
   * SINCE_SLACK_SECONDS): for subjects whose filters name authors, where a relay's newest page is
   * what matters. Absent: a refresh asks again from the newest.
   */
  readonly sinceLastFill?: boolean;
  /**
   * The share of RELAY_MAX_KEYS_PER_REQUEST this subject's fill may take in a request (the rest is
   * left for what the request reads next, its events' profiles): all of it unless said.
   */
  readonly keysShare?: number;
  /**
   * Cover the authors with few relays (FEED: many authors, most writing to the same few relays): the
   * authors' relays chosen together by a greedy set cover (outbox-plan.ts), OUTBOX_RELAYS_PER_PUBKEY
   * an author within the request's OUTBOX_MAX_RELAYS, rather than each author's first few.
   */
  readonly coverAuthors?: boolean;
  /** Targets asked together in one REQ (a filter each, or a few): TARGETS_PER_REQ unless said. */
  readonly targetsPerReq?: number;
  /**
   * Relays of an author's NIP-65 list asked too (with OUTBOX on): each target's author, and which
   * of the author's relays (read relays for what others wrote about its event, write relays for
   * what it wrote itself). Absent: none.
   */
  readonly authorRelays?: {
    authorsOf(targets: readonly string[], store: EventStore): Promise<Map<string, string>>;
    relaysOf(list: NostrEvent): string[];
  };
}

/** An event's replies, reactions, reposts, quotes and zaps. */
export const EVENT_RELATIONS: FillSubject = {
  name: 'relations',
  markKey: relationsMarkKey,
  refreshMarkKey: relationsRefreshMarkKey,
  // A NIP-22 comment deeper in a thread names its root only in its `E` tag (DESIGN: a kind 1111's
  // root is its first `E` tag): `#e` alone never brings it.
  filters: (id) => [{ '#e': [id], kinds: [...RELATION_KINDS] }, { '#E': [id], kinds: [COMMENT_KIND] }, { '#q': [id] }],
  maxEvents: (config) => config.relations.maxEvents,
  relays: (config) => config.urls,
  isTarget: isLowerHex64,
  // The read (inbox) relays of the event's author, where the index holds the event.
  authorRelays: {
    async authorsOf(targets, store) {
      const held = await store.getEvents(targets);
      const authors = new Map<string, string>();
      targets.forEach((target, index) => {
        const stored = held[index];
        if (stored && !isDeleted(stored)) authors.set(target, stored.event.pubkey);
      });
      return authors;
    },
    relaysOf: readRelaysOf,
  },
};

/**
 * The follow lists (kind 3) naming a pubkey: asked of INDEXER_RELAYS, which collect
 * follow lists from across the network, and RELAYS, up to FOLLOWERS_MAX_EVENTS per pubkey.
 */
export const FOLLOWERS: FillSubject = {
  name: 'followers',
  markKey: (pubkey) => `followers:${pubkey}`,
  refreshMarkKey: (pubkey) => `followers-refresh:${pubkey}`,
  filters: (pubkey) => [{ kinds: [FOLLOW_LIST_KIND], '#p': [pubkey] }],
  maxEvents: (config) => config.followers.maxEvents,
  relays: (config) => [...new Set([...config.urls, ...config.indexerUrls])],
  isTarget: isLowerHex64,
};

/** Events one notes fill takes: one page of the relays (RELATIONS_PAGE_LIMIT). */
export const NOTES_PER_FILL = 500;

/** A notes fill's target: `<pubkey>:<kinds, ascending, by commas>:<until, or empty for the newest>`. */
const NOTES_TARGET = /^([0-9a-f]{64}):((?:0|[1-9][0-9]{0,4})(?:,(?:0|[1-9][0-9]{0,4})){0,19}):((?:0|[1-9][0-9]{0,15})?)$/;

export function notesTarget(author: string, kinds: readonly number[], until: number | undefined): string {
  return `${author}:${kinds.join(',')}:${until ?? ''}`;
}

/**
 * What an author wrote (`Profile.notes`): `{"authors":[pubkey],"kinds":[…]}`, with
 * `until` for a page after a cursor, asked of RELAYS and the author's write relays (NIP-65: where
 * it publishes), NOTES_PER_FILL events per fill: for a first page once per RELATIONS_TTL, for a
 * later page when the index holds fewer than it asks (schema/loaders.ts notePages).
 */
export const NOTES: FillSubject = {
  name: 'notes',
  markKey: (target) => `notes:${target}`,
  refreshMarkKey: (target) => `notes-refresh:${target}`,
  filters: (target) => {
    const [, author = '', kinds = '', until = ''] = NOTES_TARGET.exec(target) ?? [];
    return [{ authors: [author], kinds: kinds.split(',').map(Number), ...(until !== '' ? { until: Number(until) } : {}) }];
  },
  maxEvents: () => NOTES_PER_FILL,
  relays: (config) => config.urls,
  isTarget: (target) => NOTES_TARGET.test(target),
  authorRelays: {
    authorsOf: async (targets) => new Map(targets.map((target) => [target, target.slice(0, 64)])),
    relaysOf: writeRelaysOf,
  },
};

/** Events one feed fill takes per followed author: its newest page, what a home feed's first pages show. */
export const FEED_PER_AUTHOR = 20;

/** A feed fill's target: `<author>:<kinds, ascending, by commas>`. */
const FEED_TARGET = /^([0-9a-f]{64}):((?:0|[1-9][0-9]{0,4})(?:,(?:0|[1-9][0-9]{0,4})){0,19})$/;

export function feedTarget(author: string, kinds: readonly number[]): string {
  return `${author}:${[...kinds].sort((a, b) => a - b).join(',')}`;
}

/**
 * A home feed (`Pubkey.feed`): what each followed author wrote lately, `{"authors":[…],"kinds":[…]}`,
 * asked of RELAYS and the author's write relays (NIP-65: where it publishes), the relays shared by
 * many authors asked once for all of them (ten authors a REQ, a filter each, so that one prolific
 * author does not crowd the others out of a page), FEED_PER_AUTHOR
 * events per author, once per RELATIONS_TTL per author and kinds (whoever follows it: the marks are
 * the author's, not the reader's); a refresh asks `since` the last fill.
 */
export const FEED: FillSubject = {
  name: 'feed',
  markKey: (target) => `feed:${target}`,
  refreshMarkKey: (target) => `feed-refresh:${target}`,
  filters: (target) => {
    const [, author = '', kinds = ''] = FEED_TARGET.exec(target) ?? [];
    return [{ authors: [author], kinds: kinds.split(',').map(Number) }];
  },
  maxEvents: () => FEED_PER_AUTHOR,
  relays: (config) => config.urls,
  isTarget: (target) => FEED_TARGET.test(target),
  sinceLastFill: true,
  // One filter an author: ten a REQ (relays commonly take that many), so 500 authors are 50 REQs a relay.
  targetsPerReq: 10,
  // Half a request's keys at most: the page's authors' profiles are asked after it.
  keysShare: 0.5,
  coverAuthors: true,
  authorRelays: {
    authorsOf: async (targets) => new Map(targets.map((target) => [target, target.slice(0, 64)])),
    relaysOf: writeRelaysOf,
  },
};

/** How far before the last fill a refresh's `since` reaches (sinceLastFill): events relays took late, clocks that differ. */
export const SINCE_SLACK_SECONDS = 600;

/**
 * The kinds that may notify a pubkey by naming it in a `p` tag (nostr/notifications.ts): notes,
 * comments and articles (mentions, and replies that tag it), follow lists, reposts, reactions, zap
 * receipts.
 */
export const NOTIFYING_KINDS = [1, 3, 6, 7, 16, COMMENT_KIND, ZAP_RECEIPT_KIND, 30023];

/**
 * What names a pubkey (`Pubkey.notifications`): `{"#p":[pubkey],"kinds":NOTIFYING_KINDS}`, asked of
 * RELAYS and the pubkey's read (inbox) relays (NIP-65: where others write to it), up to
 * RELATIONS_MAX_EVENTS per fill, once per RELATIONS_TTL. Replies and reactions that do not tag the
 * pubkey are found through its recent events' relationships (EVENT_RELATIONS), which the
 * notifications loader asks for beside this (schema/loaders.ts).
 */
export const NOTIFICATIONS: FillSubject = {
  name: 'notifications',
  markKey: (pubkey) => `notifications:${pubkey}`,
  refreshMarkKey: (pubkey) => `notifications-refresh:${pubkey}`,
  filters: (pubkey) => [{ '#p': [pubkey], kinds: NOTIFYING_KINDS }],
  maxEvents: (config) => config.relations.maxEvents,
  relays: (config) => config.urls,
  isTarget: isLowerHex64,
  authorRelays: {
    authorsOf: async (targets) => new Map(targets.map((target) => [target, target])),
    relaysOf: readRelaysOf,
  },
};

/** Profiles one search fill takes: a page of answers (NIP-50 relays sort by relevance). */
export const SEARCH_PER_FILL = 100;

/** A search fill's target: a query's words (nostr/profile-search.ts queryWords), by single spaces. */
const SEARCH_TARGET = /^[\p{L}\p{N}][\p{L}\p{M}\p{N}]*(?: [\p{L}\p{N}][\p{L}\p{M}\p{N}]*){0,63}$/u;

/**
 * Who is called what (`searchProfiles`): `{"kinds":[0],"search":"<words>"}` asked of
 * SEARCH_RELAYS (NIP-50), SEARCH_PER_FILL profiles per fill, once per RELATIONS_TTL per query; the
 * profiles are verified and stored, and the index ranks them with the rest.
 */
export const SEARCH: FillSubject = {
  name: 'search',
  markKey: (words) => `search:${words}`,
  refreshMarkKey: (words) => `search-refresh:${words}`,
  filters: (words) => [{ kinds: [0], search: words }],
  maxEvents: () => SEARCH_PER_FILL,
  relays: (config) => config.searchUrls,
  isTarget: (words) => words.length <= 256 && SEARCH_TARGET.test(words),
};

/**
 * What people wrote (`searchNotes`): `{"kinds":[1,30023],"search":"<words>"}` asked of
 * SEARCH_RELAYS (NIP-50), SEARCH_PER_FILL notes per fill, once per RELATIONS_TTL per query (its words
 * as nostr/note-search.ts reads them, the last one as typed); the notes are verified, stored and
 * indexed, and the index answers by its own rule, whatever the relays matched.
 */
export const NOTE_SEARCH: FillSubject = {
  name: 'note-search',
  markKey: (words) => `note-search:${words}`,
  refreshMarkKey: (words) => `note-search-refresh:${words}`,
  filters: (words) => [{ kinds: [1, 30023], search: words }],
  maxEvents: () => SEARCH_PER_FILL,
  relays: (config) => config.searchUrls,
  isTarget: (words) => words.length <= 256 && SEARCH_TARGET.test(words),
};

/** What a resolver holds for one request: `ensure` before reading an event's relationships from the index. */
export interface RequestRelationFill {
  ensure(ids: readonly string[]): Promise<void>;
}

export interface RelationFillDependencies {
  pool: RelayPool;
  store: EventStore;
  config: RelayConfig;
  logger: Logger;
}

export interface RelationFillOptions {
  /** Events asked per page of one filter (RELATIONS_PAGE_LIMIT; tests page with fewer). */
  pageLimit?: number;
  /** What it asks about its targets (EVENT_RELATIONS by default). */
  subject?: FillSubject;
  /** Fills under way per client, shared by the fills of one service (MISS_CONCURRENCY_PER_CLIENT holds for all of them together). */
  clientSlots?: ClientSlots;
  /** How long one fill goes on, at most (FILL_DEADLINE_FACTOR × RELAY_TIMEOUT_MS; tests wait for less). */
  fillMs?: number;
}

/**
 * Events asked per page of one filter (`limit`): relays cap a filter's limit (strfry at 500 by
 * default) and answer newest first; a full page is followed by the next with `until`.
 */
export const RELATIONS_PAGE_LIMIT = 500;

/** Read (inbox) relays asked per author, at most, the first of their list: others publish to a few of them. */
export const INBOX_RELAYS_PER_AUTHOR = 4;

/**
 * The share of the time left at a fill's start that paging may take; the deletions of what came
 * back (NIP-09) have the rest (at once, when paging ends sooner).
 */
const PAGING_SHARE = 0.7;

/** Discovery waits for the configured relays' relay lists (NIP-65) at most this share of the time left. */
const DISCOVERY_SHARE = 0.35;

/**
 * Ids asked of a relay in one REQ (three filters each, nine in all: relays cap the filters of a REQ,
 * and a list of events read together would otherwise cost a subscription per event and relay).
 */
const TARGETS_PER_REQ = 3;

/**
 * How long a fill goes on, at most, as a multiple of RELAY_TIMEOUT_MS: a read waits for it within
 * its own deadline, and what the deadline cut goes on in the background to the fill's caps
 * (RELATIONS_MAX_EVENTS, FOLLOWERS_MAX_EVENTS) before the targets are marked as asked.
 */
export const FILL_DEADLINE_FACTOR = 10;

/**
 * Once a configured relay has answered for every id of a fill a read waits for, the relays still
 * paging (slow ones, inbox relays, deep threads) get this share of the time left.
 */
const GRACE_SHARE = 0.25;

/** Background refreshes at once in the process, at most; past it a stale event waits for a later read. */
const MAX_BACKGROUND_FILLS = 16;

/**
 * Fills a read stopped waiting for that go on in the background, at most, per subject and process:
 * past it one ends where its read's deadline cut it (each holds REQs and what it saw for up to
 * FILL_DEADLINE_FACTOR × RELAY_TIMEOUT_MS; found by review: unbounded, one client could start them).
 */
const MAX_CUT_FILLS = 16;

/**
 * Deletion requests one fill keeps, at most, beyond one per event that came back: anyone may sign a
 * deletion naming any id, so only those by the author of what they name are kept, and no more than
 * this allows (their bytes bounded as events' are).
 */
const EXTRA_DELETIONS = 64;

/** A relay's answer to a deletions query holding more than this many events per id asked is cut (it floods). */
const DELETIONS_PER_ID = 4;

/**
 * The relationship fill: the replies, reactions, reposts and quotes of an event are asked
 * of relays before its relationships are first read, and kept fresh while they are read. The same
 * engine, with another FillSubject, asks for the follow lists naming a pubkey and for what an author
 * wrote (FOLLOWERS, NOTES); what follows describes events' relationships.
 *
 * - `ensure(ids)`: an id whose relationships were not asked within RELATIONS_TTL (no mark) is
 *   filled now, and the caller waits for it within the request's relay deadline; one asked more than
 *   half the TTL ago is answered from the index at once and refreshed in the background, claimed once
 *   per half TTL across every instance sharing the store (so an event read often never waits); one
 *   asked since then is answered from the index.
 * - A fill asks RELAYS and the read (inbox) relays of the event's author (NIP-65; their relay list
 *   from the index, else asked of RELAYS and INDEXER_RELAYS; the event must be held for its author
 *   to be known) for `{"#e":[id],"kinds":[1,6,7,16,1111,9735]}` and `{"#q":[id]}` (TARGETS_PER_REQ ids
 *   in one REQ), paged with `until`, RELATIONS_PAGE_LIMIT a page, up to RELATIONS_MAX_EVENTS events
 *   per id; then the deletion requests
 *   (NIP-09) naming what came back, `{"kinds":[5],"#e":[ids]}` in chunks, of the relays that
 *   answered. Every event was verified by the pool; each page is written as it ends, so the store
 *   indexes it (store/relation-index.ts); deletions are kept only where signed by the author of an
 *   event they name.
 * - Only RELAYS decide that an id was asked, for everyone (its mark): what an author's inbox relay
 *   brings is kept, but its answer alone does not stand for them.
 * - Bounded: the request's relay deadline (RELAY_TIMEOUT_MS; a grace for slow relays once RELAYS
 *   answered every id a read waits for), RELATIONS_MAX_EVENTS per id (a relay
 *   past it, or past a page's `limit`, is cut), OUTBOX_MAX_RELAYS learned relays per request,
 *   RELAY_MAX_KEYS_PER_REQUEST and MISS_RATE_LIMIT for the ids a request fills, and
 *   MISS_CONCURRENCY_PER_CLIENT fills at once per client.
 * - Coalesced: concurrent fills of one id share one set of REQs, in the process (coalescing.ts) and
 *   across instances (instance-claims.ts: the instance that claims it asks, the others wait for its
 *   mark).
 * - Never fails its caller: a relay, or the store, that fails leaves the index's answer as it is.
 */
export class RelationFill {
  private readonly inflight: InFlightLookups;
  /** Ids being refreshed in the background by this process. */
  private readonly refreshing = new Set<string>();
  /** Background refreshes under way: the service waits for them before it closes the store. */
  private readonly background = new Set<Promise<void>>();
  /** Fills under way per client (MISS_CONCURRENCY_PER_CLIENT). */
  private readonly byClient: ClientSlots;

  private readonly pageLimit: number;
  private readonly subject: FillSubject;
  private readonly fillMs: number;

  constructor(
    private readonly deps: RelationFillDependencies,
    { pageLimit = RELATIONS_PAGE_LIMIT, subject = EVENT_RELATIONS, clientSlots = new ClientSlots(), fillMs = deps.config.timeoutMs * FILL_DEADLINE_FACTOR }: RelationFillOptions = {},
  ) {
    this.subject = subject;
    this.fillMs = fillMs;
    this.byClient = clientSlots;
    this.inflight = new InFlightLookups(deps.logger, subject.name);
    this.pageLimit = Math.max(1, pageLimit);
  }

  /**
   * Makes the index hold the relationships of `ids` as far as the relays and the request's deadline
   * allow (see the class). Resolves, never rejects.
   */
  async ensure(ids: readonly string[], request: RelayRequest): Promise<void> {
    const { config, logger, store } = this.deps;
    const targets = [...new Set(ids.map((id) => id.toLowerCase()))].filter(this.subject.isTarget);
    if (targets.length === 0 || this.subject.relays(config).length === 0) return;
    try {
      const notes = await store.marks.notes(targets.map(this.subject.markKey));
      const now = nowSeconds();
      const cold: string[] = [];
      const stale = new Map<string, number>();
      targets.forEach((id, index) => {
        const note = notes[index];
        if (note === null || note === undefined) cold.push(id);
        else if (now - askedAt(note) >= config.relations.ttlSeconds / 2) stale.set(id, askedAt(note));
      });
      if (stale.size > 0) this.refreshInBackground(this.withinShare(stale));
      if (cold.length > 0) await this.fillAndWait(cold, request);
    } catch (error) {
      warnStoreFailure(logger, error, 'relationship fill failed; answering from the index', { fill: this.subject.name });
    }
  }

  /**
   * The stale targets a read refreshes: as many as its share of RELAY_MAX_KEYS_PER_REQUEST lets a
   * cold fill take (FillSubject.keysShare), those asked longest ago first: a feed's two thousand
   * authors gone stale together are refreshed over several reads, not in one burst of REQs.
   */
  private withinShare(stale: ReadonlyMap<string, number>): Map<string, number> {
    const most = Math.floor(this.deps.config.maxKeysPerRequest * (this.subject.keysShare ?? 1));
    if (stale.size <= most) return new Map(stale);
    return new Map([...stale].sort(([, a], [, b]) => a - b).slice(0, most));
  }

  /** A fill going on in the background (a read's deadline cut it): waited for by `settled`; refused past MAX_CUT_FILLS. */
  private readonly track = (finish: Promise<void>): boolean => {
    const taken = this.goingOn < MAX_CUT_FILLS;
    if (taken) {
      this.goingOn += 1;
      void finish.finally(() => (this.goingOn -= 1)).catch(() => {});
    }
    const running = finish
      .catch((error: unknown) => warnStoreFailure(this.deps.logger, error, 'relationship fill failed in the background', { fill: this.subject.name }))
      .finally(() => this.background.delete(running));
    this.background.add(running);
    return taken;
  };
  /** Fills of this process going on after the read that started them stopped waiting. */
  private goingOn = 0;

  /** Resolves when the fills under way in the background have ended (each within FILL_DEADLINE_FACTOR × RELAY_TIMEOUT_MS). */
  async settled(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  /** The ids no mark covers, within the request's and the client's caps: filled for everyone, waited for. */
  private async fillAndWait(cold: readonly string[], request: RelayRequest): Promise<void> {
    const { config, store, logger } = this.deps;
    const room = Math.max(0, Math.floor(config.maxKeysPerRequest * (this.subject.keysShare ?? 1)) - request.keysAsked);
    let admitted = cold.slice(0, room);
    if (admitted.length === 0 || !this.byClient.enter(request.client, config.missesPerClient)) return;
    try {
      if (request.missLimit) admitted = admitted.slice(0, (await request.missLimit(request.client, admitted.length)).admitted);
      if (admitted.length === 0) return;
      request.keysAsked += admitted.length;
      await this.inflight.join(admitted, request.signal, (fresh) =>
        acrossInstances(
          fresh,
          this.subject.markKey,
          {
            marks: store.marks,
            logger,
            claimSeconds: Math.ceil(config.timeoutMs / 1000),
            // Another instance's fill is settled once its mark is written (after what it found).
            readSettled: async (pending) => (await store.marks.has(pending.map(this.subject.markKey))).map((marked) => (marked ? ABSENT : undefined)),
            unsettled: UNAVAILABLE,
            signal: request.querySignal,
          },
          (mine) => new RelationRun(this.deps, mine, request, { cold: true, pageLimit: this.pageLimit, subject: this.subject, fillMs: this.fillMs, onBackground: this.track }).run(),
        ),
      );
    } finally {
      this.byClient.leave(request.client);
    }
  }

  /**
   * Stale-while-revalidate, as profiles are: the caller answers from the index; these ids are asked
   * again in the background, once per half RELATIONS_TTL across every instance (the refresh is
   * claimed first), with a deadline of their own.
   */
  private refreshInBackground(asked: ReadonlyMap<string, number>): void {
    const { config, store, logger } = this.deps;
    const wanted = [...asked.keys()].filter((id) => !this.refreshing.has(id));
    if (wanted.length === 0 || this.background.size >= MAX_BACKGROUND_FILLS) return;
    for (const id of wanted) this.refreshing.add(id);
    const refresh = async () => {
      const claimed = await store.marks.claim(wanted.map(this.subject.refreshMarkKey), Math.max(1, Math.ceil(config.relations.ttlSeconds / 2)));
      const mine = wanted.filter((_, index) => claimed[index]);
      metrics.profileRefresh(this.subject.name, mine.length);
      if (mine.length === 0) return;
      const request = new RelayRequest(config.timeoutMs, '', config.outbox.maxRelays);
      await this.inflight.join(mine, request.signal, (fresh) =>
        new RelationRun(this.deps, fresh, request, {
          cold: false,
          pageLimit: this.pageLimit,
          subject: this.subject,
          fillMs: this.fillMs,
          onBackground: this.track,
          // A mark of 0 (asked long ago: no relay answered) asks from the newest.
          ...(this.subject.sinceLastFill ? { since: new Map(fresh.flatMap((id) => ((asked.get(id) ?? 0) > 0 ? [[id, (asked.get(id) as number) - SINCE_SLACK_SECONDS] as [string, number]] : []))) } : {}),
        }).run(),
      );
    };
    const running = refresh()
      .catch((error: unknown) => warnStoreFailure(logger, error, 'background relationship refresh failed', { fill: this.subject.name }))
      .finally(() => {
        for (const id of wanted) this.refreshing.delete(id);
        this.background.delete(running);
      });
    this.background.add(running);
  }
}

/**
 * The fill as one request's resolvers call it: the ids asked in one tick (the events of a list) go
 * to the relays together, and an id is filled at most once per request.
 */
export function relationFillFor(fill: RelationFill, request: RelayRequest): RequestRelationFill {
  const asked = new Map<string, Promise<void>>();
  let batch: string[] | undefined;
  let batchDone: Promise<void> = Promise.resolve();
  return {
    ensure(ids) {
      const waits = new Set<Promise<void>>();
      for (const raw of ids) {
        const id = raw.toLowerCase();
        let done = asked.get(id);
        if (!done) {
          if (!batch) {
            const pending: string[] = (batch = []);
            // As DataLoader schedules a batch: after the promise jobs of this tick.
            batchDone = Promise.resolve()
              .then(() => new Promise<void>((resolve) => process.nextTick(resolve)))
              .then(() => {
                batch = undefined;
                return fill.ensure(pending, request);
              });
          }
          batch.push(id);
          done = batchDone;
          asked.set(id, done);
        }
        waits.add(done);
      }
      return Promise.all(waits).then(() => undefined);
    },
  };
}

/** One paged filter of one relay for one id. */
interface Stream {
  target: string;
  filter: Filter;
  open: boolean;
  until?: number;
}

/** Ids asked together of one relay (one REQ a page), and whether they are all full. */
interface Group {
  targets: readonly string[];
  /** Aborted once every id of the group has RELATIONS_MAX_EVENTS events: its query stops. */
  full: AbortController;
}

/** The relays that answered a fill, with the ids each was asked about: asked for the deletions of what came back. */
interface Answering {
  learned: boolean;
  targets: Set<string>;
}

/**
 * One fill of some ids: paging on every relay for every id, discovery of relay lists the index
 * lacks, then deletions, then the marks. A relay is asked about up to TARGETS_PER_REQ ids per REQ
 * (two filters each), each group paging on its own, so a relay that floods or is slow is cut alone.
 */
class RelationRun {
  /** Per id: the events that came back for it (ids), at most RELATIONS_MAX_EVENTS. */
  private readonly seen = new Map<string, Set<string>>();
  /** Every event that came back, by id: its author (who alone may delete it). */
  private readonly authors = new Map<string, string>();
  /** Ids that have RELATIONS_MAX_EVENTS events. */
  private readonly full = new Set<string>();
  /** Per id, the groups that ask about it. */
  private readonly groups = new Map<string, Group[]>();
  /** Ids that a configured relay answered in full (EOSE on a first page, or they are full). */
  private readonly answered = new Set<string>();
  private readonly answering = new Map<string, Answering>();
  /** Learned relays this fill asks (OUTBOX_MAX_RELAYS per request, with the request's other searches). */
  private readonly learnedTaken = new Set<string>();
  private readonly tasks: Promise<void>[] = [];
  private readonly pageLimit: number;
  private readonly maxPages: number;
  /** Ends paging early: a cold fill whose every id a configured relay answered gives the others a grace. */
  private readonly pagingCut = new AbortController();
  private grace: NodeJS.Timeout | undefined;
  /** Ends paging and deletions early: the process has as many fills going on as it takes (goOn). */
  private readonly stopped = new AbortController();
  /** Targets whose paging the fill's own deadline (or `stopped`) cut while a relay had more: not marked as asked. */
  private readonly incomplete = new Set<string>();
  /** The marks of a fill gone on in the background (goOn), written before its final ones. */
  private provisional: Promise<unknown> = Promise.resolve();
  /** The deletions are in: the final marks follow. */
  private finished = false;

  constructor(
    private readonly deps: RelationFillDependencies,
    private readonly targets: readonly string[],
    private readonly request: RelayRequest,
    /** `cold`: a fill a read waits for (if no relay answers, it is marked briefly: see mark). */
    /** `onBackground`: takes a fill the read stopped waiting for, or refuses it (too many going on). */
    /** `since`: per target, what a refresh asks from (FillSubject.sinceLastFill). */
    private readonly options: { cold: boolean; pageLimit: number; subject: FillSubject; fillMs: number; onBackground: (finish: Promise<void>) => boolean; since?: ReadonlyMap<string, number> },
  ) {
    const maxEvents = options.subject.maxEvents(deps.config);
    this.pageLimit = Math.min(options.pageLimit, maxEvents);
    // Each page but the last brings `limit` events at or below its `until`, which moves down every
    // page; a relay repeating the events of one second takes one page more.
    this.maxPages = 2 * Math.ceil(maxEvents / this.pageLimit) + 2;
  }

  async run(): Promise<Map<string, Fetched>> {
    // Paging goes on to the fill's caps within a deadline of its own (PAGING_SHARE of it; the
    // deletions have the rest), whoever waits for it; `stopped` ends it sooner (goOn).
    const fillEnd = AbortSignal.any([this.stopped.signal, timeoutSignal(this.options.fillMs)]);
    const paging = this.page(AbortSignal.any([this.stopped.signal, timeoutSignal(Math.floor(this.options.fillMs * PAGING_SHARE))]));
    const finish = paging.then(async () => {
      clearTimeout(this.grace);
      // The deletions of what came back before the marks: a target is marked once they are in.
      await this.deletions(fillEnd);
      this.finished = true;
      await this.provisional;
      // The pool closed under it (the service stopping): what the relays had to say is not known,
      // so nothing is marked; a provisional mark expires, and the next start asks again.
      if (!this.deps.pool.isClosed) await this.mark();
    });
    // The read waits for the pages PAGING_SHARE of its time (less once RELAYS answered every id: the
    // grace), then for the deletions the rest of it; what is not done by then goes on in the background.
    const waitEnd = AbortSignal.any([this.request.querySignal, this.pagingCut.signal, timeoutSignal(Math.floor(this.request.queryMsLeft() * PAGING_SHARE))]);
    const inTime =
      (await untilAborted(paging.then(() => true), waitEnd, false)) && (await untilAborted(finish.then(() => true), this.request.querySignal, false));
    if (!inTime) await this.goOn(finish);
    return new Map(this.targets.map((target) => [target, this.answered.has(target) ? ABSENT : UNAVAILABLE]));
  }

  /** Every relay's pages for every target; discovery adds the pages of the inbox relays it finds. */
  private async page(pagingEnd: AbortSignal): Promise<void> {
    const { config } = this.deps;
    const { inboxes, undiscovered } = await this.inboxes();
    for (const url of this.options.subject.relays(config)) this.ask(url, false, this.targets, pagingEnd);
    const byInbox = new Map<string, string[]>();
    for (const [target, relays] of inboxes) for (const url of relays) byInbox.set(url, [...(byInbox.get(url) ?? []), target]);
    for (const [url, targets] of byInbox) this.ask(url, true, targets, pagingEnd);
    if (undiscovered.size > 0) this.tasks.push(this.discover(undiscovered, pagingEnd));
    while (this.tasks.length > 0) await Promise.all(this.tasks.splice(0));
  }

  /**
   * A fill the read's deadline cut: its targets are marked as being filled, so that reads meanwhile
   * answer from the index and nobody starts the same fill again, and it goes on in the background.
   */
  private async goOn(finish: Promise<void>): Promise<void> {
    const { store, logger } = this.deps;
    // Past MAX_CUT_FILLS going on in the process, this one ends here: what came stands, and its
    // targets are marked as asked long ago (mark: they are incomplete), so a later read asks again.
    if (!this.options.onBackground(finish)) this.stopped.abort();
    // A refresh's targets keep the marks they had; once the deletions are in, the final marks are
    // on their way: none to write before them.
    if (!this.options.cold || this.finished) return;
    const seconds = Math.ceil(this.options.fillMs / 1000) + 1;
    const now = String(nowSeconds());
    this.provisional = store.marks
      .set(this.targets.map(this.options.subject.markKey), seconds, this.targets.map(() => now))
      .catch((error: unknown) => warnStoreFailure(logger, error, 'could not record relationship fills in the store'));
    await this.provisional;
  }

  /**
   * The relays of each target's author this subject asks (FillSubject.authorRelays: an event's
   * author's read relays, or an author's own write relays), where the index holds the author's relay
   * list (OUTBOX=false: none); the authors whose list the index lacks, with their targets, to discover.
   */
  private async inboxes(): Promise<{ inboxes: Map<string, string[]>; undiscovered: Map<string, string[]> }> {
    const inboxes = new Map<string, string[]>();
    const undiscovered = new Map<string, string[]>();
    const { store, config, logger } = this.deps;
    const { authorRelays } = this.options.subject;
    if (!config.outbox.enabled || !authorRelays) return { inboxes, undiscovered };
    try {
      const authors = await authorRelays.authorsOf(this.targets, store);
      const byAuthor = new Map<string, string[]>();
      for (const [target, author] of authors) byAuthor.set(author, [...(byAuthor.get(author) ?? []), target]);
      if (byAuthor.size === 0) return { inboxes, undiscovered };
      const lists = await store.getReplaceableWithMarks(RELAY_LIST_KIND, [...byAuthor.keys()], relayListMarkKey);
      const listed = new Map<string, string[]>();
      [...byAuthor].forEach(([author, targets], index) => {
        const list = lists[index]?.event ?? null;
        if (list === null) undiscovered.set(author, targets);
        else if (!isDeleted(list) && !isOversized(list)) listed.set(author, authorRelays.relaysOf(list.event));
      });
      for (const [author, relays] of this.chooseRelays(listed)) for (const target of byAuthor.get(author) ?? []) inboxes.set(target, relays);
    } catch (error) {
      // Not worth failing the fill: RELAYS are asked all the same.
      warnStoreFailure(logger, error, 'could not read relay lists from the store');
    }
    return { inboxes, undiscovered };
  }

  /**
   * Per author, the relays of its list this fill asks (FillSubject.coverAuthors: a set cover of all
   * the authors' lists; else inboxRelays, each author's first few).
   */
  private chooseRelays(listed: ReadonlyMap<string, readonly string[]>): Map<string, string[]> {
    const chosen = new Map<string, string[]>();
    if (!this.options.subject.coverAuthors) {
      for (const [author, relays] of listed) chosen.set(author, this.inboxRelays(relays));
      return chosen;
    }
    const { config, pool } = this.deps;
    const candidates = new Map<string, string[]>();
    const missing = new Map<string, number>();
    for (const [author, relays] of listed) {
      // Configured relays are asked about every author already.
      candidates.set(author, relays.filter((url) => !config.urls.includes(url)));
      missing.set(author, config.outbox.relaysPerPubkey);
    }
    // A relay this fill took already costs its budget nothing more.
    const budget = this.request.outboxBudget;
    const plan = planOutbox({ candidates, missing }, { maxRelays: budget.left + this.learnedTaken.size, score: (url) => pool.health.score(url), usable: (url) => !pool.health.resting(url) });
    for (const [url, authors] of plan) {
      if (!this.learnedTaken.has(url)) {
        if (budget.left <= 0) continue;
        budget.left -= 1;
        this.learnedTaken.add(url);
      }
      for (const author of authors) chosen.set(author, [...(chosen.get(author) ?? []), url]);
    }
    return chosen;
  }

  /** Of an author's read relays, those this fill asks: not configured ones (asked as such), not resting, within the caps. */
  private inboxRelays(relays: readonly string[]): string[] {
    const { config, pool } = this.deps;
    const chosen: string[] = [];
    for (const url of relays) {
      if (chosen.length >= INBOX_RELAYS_PER_AUTHOR) break;
      if (config.urls.includes(url) || pool.health.resting(url)) continue;
      if (!this.learnedTaken.has(url)) {
        if (this.request.outboxBudget.left <= 0) continue;
        this.request.outboxBudget.left -= 1;
        this.learnedTaken.add(url);
      }
      chosen.push(url);
    }
    return chosen;
  }

  /**
   * The relay lists (kind 10002) of authors the index has none for, asked of RELAYS and
   * INDEXER_RELAYS; the newest of each is stored, and its inbox relays get their pages.
   */
  private async discover(authors: Map<string, string[]>, pagingEnd: AbortSignal): Promise<void> {
    const { pool, config } = this.deps;
    const relays = [...new Set([...config.urls, ...config.indexerUrls])];
    const cutoff = AbortSignal.any([pagingEnd, timeoutSignal(Math.floor(this.request.queryMsLeft() * DISCOVERY_SHARE))]);
    const newest = new Map<string, NostrEvent>();
    // A relay holds one list per author; a few more (older versions) are tolerated, not a flood.
    const most = 4 * authors.size + 16;
    const received = new Map<string, number>();
    await pool
      .query({
        relays,
        filters: chunks([...authors.keys()], MAX_VALUES_PER_FILTER).map((part) => ({ kinds: [RELAY_LIST_KIND], authors: part })),
        signal: cutoff,
        client: this.request.client,
        onEvent: (event, relay) => {
          const count = (received.get(relay) ?? 0) + 1;
          received.set(relay, count);
          if (count > most || event.kind !== RELAY_LIST_KIND || !authors.has(event.pubkey)) return false;
          const held = newest.get(event.pubkey);
          if (!held || supersedes(event, held)) newest.set(event.pubkey, event);
          return false;
        },
      })
      .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'relay list discovery failed'));
    if (newest.size === 0) return;
    await this.write([...newest.values()]);
    const byInbox = new Map<string, string[]>();
    const relaysOf = this.options.subject.authorRelays?.relaysOf ?? readRelaysOf;
    const chosen = this.chooseRelays(new Map([...newest].map(([author, list]) => [author, relaysOf(list)])));
    for (const [author, relays] of chosen) {
      for (const url of relays) byInbox.set(url, [...(byInbox.get(url) ?? []), ...(authors.get(author) ?? [])]);
    }
    for (const [url, targets] of byInbox) this.ask(url, true, targets, pagingEnd);
  }

  /** Pages for `targets` on one relay, TARGETS_PER_REQ ids a REQ. */
  private ask(url: string, learned: boolean, targets: readonly string[], pagingEnd: AbortSignal): void {
    for (const part of chunks(targets, this.options.subject.targetsPerReq ?? TARGETS_PER_REQ)) {
      const group: Group = { targets: part, full: new AbortController() };
      for (const target of part) this.groups.set(target, [...(this.groups.get(target) ?? []), group]);
      this.tasks.push(this.pages(url, learned, group, pagingEnd));
    }
  }

  /**
   * One relay, a few ids: pages of `{"#e":[id],"kinds":[…]}` and `{"#q":[id]}` per id, each filter
   * followed with `until` while the relay fills its pages, until its id is full, the relay has no
   * more, fails, floods (more events than the page's limits allow), or the paging time is over. Each
   * page is written as it ends.
   */
  private async pages(url: string, learned: boolean, group: Group, pagingEnd: AbortSignal): Promise<void> {
    // `since` on RELAYS only: an author's write relays asked change between fills (the set cover,
    // the budget, their health), and one not asked last time must give its newest page.
    const since = (target: string) => (learned ? undefined : this.options.since?.get(target));
    const streams: Stream[] = group.targets.flatMap((target) =>
      this.options.subject.filters(target).map((filter) => ({ target, filter: since(target) === undefined ? filter : { ...filter, since: since(target) as number }, open: true })),
    );
    for (let page = 0; page < this.maxPages && !pagingEnd.aborted && !group.full.signal.aborted; page++) {
      const open = streams.filter((stream) => stream.open && !this.full.has(stream.target));
      if (open.length === 0) return;
      const filters: Filter[] = open.map(({ filter, until }) => ({ ...filter, limit: this.pageLimit, ...(until !== undefined ? { until } : {}) }));
      const counts = open.map(() => ({ events: 0, oldest: Number.POSITIVE_INFINITY }));
      const fresh: NostrEvent[] = [];
      let received = 0;
      let flooded = false;
      const result = await this.deps.pool
        .query({
          relays: learned ? [] : [url],
          learned: learned ? [url] : [],
          filters,
          signal: pagingEnd,
          stop: group.full.signal,
          client: this.request.client,
          onEvent: (event) => {
            received += 1;
            if (received > this.pageLimit * filters.length) {
              // More than the page's limits allow: the relay ignores them. What came so far stands.
              flooded = true;
              return true;
            }
            let kept = false;
            filters.forEach((filter, index) => {
              if (!matchFilter(filter, event)) return;
              const count = counts[index] as { events: number; oldest: number };
              count.events += 1;
              count.oldest = Math.min(count.oldest, event.created_at);
              if (this.accept((open[index] as Stream).target, event)) kept = true;
            });
            // Written once, whichever ids it came for.
            if (kept && !this.authors.has(event.id)) {
              this.authors.set(event.id, event.pubkey);
              fresh.push(event);
            }
            return false;
          },
        })
        .catch((error: unknown) => {
          this.deps.logger.warn({ err: error }, 'relationship query failed');
          return undefined;
        });
      await this.write(fresh);
      if (flooded) {
        // A learned relay's URL is a stranger's: at debug, as the pool logs learned relays.
        const log = { relay: relayUrlForLog(url), limit: this.pageLimit };
        if (learned) this.deps.logger.debug(log, 'relay sent more than a page asked for; cut');
        else this.deps.logger.warn(log, 'relay sent more than a page asked for; cut');
        return;
      }
      // Stopped because every id is full: they have all a fill may take, which is an answer too.
      const outcome = result?.outcomes.get(url);
      if (outcome !== 'eose' && !(outcome === 'stopped' && group.full.signal.aborted)) {
        this.cutShort(learned, streams, pagingEnd);
        return;
      }
      if (page === 0) this.answeredBy(url, learned, group.targets);
      open.forEach((stream, index) => {
        const { events, oldest } = counts[index] as { events: number; oldest: number };
        if (events < this.pageLimit) stream.open = false;
        // `until` is inclusive: the next page starts at the oldest second seen (what it repeats is
        // known already), or below it when a whole page was one second.
        else stream.until = stream.until !== undefined && oldest >= stream.until ? oldest - 1 : oldest;
      });
    }
    this.cutShort(learned, streams, pagingEnd);
  }

  /**
   * Paging on a configured relay that the fill's own deadline cut while the relay had more: those
   * targets are not marked as asked (mark). A relay that fails or floods is another matter: it
   * answered what it could, and it rests.
   */
  private cutShort(learned: boolean, streams: readonly Stream[], pagingEnd: AbortSignal): void {
    if (learned || !pagingEnd.aborted) return;
    for (const { open, target } of streams) if (open && !this.full.has(target)) this.incomplete.add(target);
  }

  /**
   * A relay's first page answered in full: its ids are asked of it for deletions. Only configured
   * relays decide for everyone that an id was answered (an author's inbox relay answering at once
   * with nothing must not stand for RELAYS); once every id is, a waiting read gives the relays still
   * paging GRACE_SHARE of the time left.
   */
  private answeredBy(url: string, learned: boolean, targets: readonly string[]): void {
    const answering = this.answering.get(url) ?? { learned, targets: new Set<string>() };
    for (const target of targets) answering.targets.add(target);
    this.answering.set(url, answering);
    if (learned) return;
    for (const target of targets) this.answered.add(target);
    if (this.options.cold && this.grace === undefined && this.answered.size === this.targets.length) {
      this.grace = setTimeout(() => this.pagingCut.abort(), Math.floor(this.request.queryMsLeft() * GRACE_SHARE));
      this.grace.unref();
    }
  }

  /** Whether an event that came for `target` is new for it, within its cap (RELATIONS_MAX_EVENTS). */
  private accept(target: string, event: NostrEvent): boolean {
    const maxEvents = this.options.subject.maxEvents(this.deps.config);
    let seen = this.seen.get(target);
    if (!seen) this.seen.set(target, (seen = new Set()));
    if (seen.has(event.id) || seen.size >= maxEvents) return false;
    seen.add(event.id);
    if (seen.size >= maxEvents) this.filled(target);
    return true;
  }

  /** An id has all a fill may take: the groups whose every id is full stop. */
  private filled(target: string): void {
    this.full.add(target);
    for (const group of this.groups.get(target) ?? []) {
      if (group.targets.every((id) => this.full.has(id))) group.full.abort();
    }
  }

  /**
   * The deletion requests (NIP-09) naming what came back, asked of each relay that answered, for
   * what came back for the ids it was asked about: `{"kinds":[5],"#e":[…]}` in chunks of
   * MAX_VALUES_PER_FILTER, one REQ each. Those signed by the author of an event they name are
   * written (the store then removes it and what it counted); others are dropped.
   */
  private async deletions(signal: AbortSignal): Promise<void> {
    if (this.authors.size === 0 || signal.aborted) return;
    const kept = new Set<string>();
    const most = this.authors.size + EXTRA_DELETIONS;
    const queries: Promise<void>[] = [];
    for (const [url, { learned, targets }] of this.answering) {
      const ids = [...targets].flatMap((target) => [...(this.seen.get(target) ?? [])]);
      for (const chunk of chunks(ids, MAX_VALUES_PER_FILTER)) {
        queries.push(this.deletionsOf(url, learned, chunk, signal, kept, most));
      }
    }
    await Promise.all(queries);
  }

  private async deletionsOf(url: string, learned: boolean, ids: string[], signal: AbortSignal, kept: Set<string>, most: number): Promise<void> {
    const found: NostrEvent[] = [];
    let received = 0;
    await this.deps.pool
      .query({
        relays: learned ? [] : [url],
        learned: learned ? [url] : [],
        filters: [{ kinds: [DELETION_KIND], '#e': ids }],
        signal,
        client: this.request.client,
        onEvent: (event) => {
          received += 1;
          if (received > DELETIONS_PER_ID * ids.length) return true;
          if (kept.has(event.id) || kept.size >= most || !this.deletesWhatCameBack(event)) return false;
          kept.add(event.id);
          found.push(event);
          return false;
        },
      })
      .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'relationship deletions query failed'));
    await this.write(found);
  }

  /** A kind 5 naming (`e` tag) an event that came back whose author signed it. */
  private deletesWhatCameBack(request: NostrEvent): boolean {
    return request.kind === DELETION_KIND && request.tags.some((tag) => tag[0] === 'e' && tag[1] !== undefined && this.authors.get(tag[1]) === request.pubkey);
  }

  /**
   * Verified events (the pool verified them) into the index, which relates them; a store failure
   * leaves the index as it was.
   */
  private async write(events: readonly NostrEvent[]): Promise<void> {
    const storable = events.filter((event) => !isEphemeralKind(event.kind));
    if (storable.length === 0) return;
    try {
      await this.deps.store.putEvents(storable);
    } catch (error) {
      warnStoreFailure(this.deps.logger, error, 'could not store events fetched from relays');
    }
  }

  /**
   * Ids a relay answered in full are marked fresh for RELATIONS_TTL (noting when). A cold fill that
   * no relay answered, or whose paging its deadline cut while a relay had more (incomplete), is
   * marked for NEGATIVE_TTL (at most the TTL) as asked long ago: meanwhile reads answer from the
   * index at once and try again in the background, instead of each waiting for relays that cannot
   * answer. A background refresh that no relay answered in full leaves the mark it had.
   */
  private async mark(): Promise<void> {
    const { config, store, logger } = this.deps;
    // Complete: a configured relay answered, and none was cut while it had more.
    const complete = (target: string) => this.answered.has(target) && !this.incomplete.has(target);
    const answered = this.targets.filter(complete);
    const unanswered = this.options.cold ? this.targets.filter((target) => !complete(target)) : [];
    const now = String(nowSeconds());
    try {
      await Promise.all([
        answered.length > 0
          ? store.marks.set(answered.map(this.options.subject.markKey), config.relations.ttlSeconds, answered.map(() => now))
          : undefined,
        unanswered.length > 0
          ? store.marks.set(
              unanswered.map(this.options.subject.markKey),
              Math.min(config.negativeTtlSeconds, config.relations.ttlSeconds),
              unanswered.map(() => '0'),
            )
          : undefined,
      ]);
    } catch (error) {
      warnStoreFailure(logger, error, 'could not record relationship fills in the store');
    }
  }
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** When a mark says the relationships were asked (unix seconds); anything unreadable as long ago. */
function askedAt(note: string): number {
  const at = Number(note);
  return Number.isSafeInteger(at) ? at : 0;
}
