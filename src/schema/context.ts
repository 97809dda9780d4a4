import type { LookupConfig } from '../config/env.js';
import type { ReadThrough } from '../fill/read-through.js';
import { relationFillFor } from '../fill/relation-fill.js';
import type { MissLimit } from '../fill/relay-request.js';
import type { Nip05 } from '../nip05/nip05.js';
import type { ZapProviders } from '../zaps/zap-providers.js';
import type { EventStore, Held, StoredEvent } from '../store/event-store.js';
import { isDeleted } from '../store/tombstones.js';
import { createLoaders, type Loaders, type RequestFill } from './loaders.js';
import { ObjectBudget } from './object-budget.js';
import type { ReadReceipt } from '../store/read-receipt.js';
import type { ReaderFilter } from './trust.js';
import { LEDGER_ENTRIES_PER_REQUEST } from './paging.js';
import type { LedgerScan } from '../store/relation-index.js';

/**
 * The relationship fill (fill/relation-fill.ts, when relays are configured): asks relays what they
 * know about these events (replies, reactions, reposts…, by `#e`) and stores it, so that the figures
 * and reply pages read next include it. The relationStats and replyPages loaders (loaders.ts) call
 * `ensure` with every id of their batch before they read the index. It decides what to ask and
 * when (per-target freshness, the request's deadline) and what a failure means: an error it throws
 * fails the field (a table error, as the loaders' own); one it swallows leaves the index's figures.
 */
export interface RelationFill {
  ensure(ids: readonly string[]): Promise<void>;
}

/** What every resolver gets. Built once per request, so loaders batch and cache within one request only. */
export interface GraphQLContext {
  loaders: Loaders;
  /** The store the loaders read (what a request shares with others beyond them: webs of trust, schema/trust.ts). */
  store: EventStore;
  /** Readers' filters made by this request (schema/trust.ts), by readers. */
  readerFilters: Map<string, Promise<ReaderFilter>>;
  /**
   * Events counts by trust have read and judged in this request, all such fields together
   * (schema/trust.ts countByTrust), and the index entries their reads may still go through.
   */
  countedByTrust: { events: number; scan: LedgerScan };
  limits: LookupConfig;
  /** Objects handed back so far, bounded by GRAPHQL_MAX_COST while the request runs. */
  budget: ObjectBudget;
  /** Present when relays are configured: the request's deadline and the relay hints its identifiers carried. */
  relays?: RequestFill;
  /**
   * Keys the query asked for by name (`event(id:)`, `profile(pubkey:)`…) whose answer is null because
   * their authors deleted them: a REST lookup answers them with event_deleted/profile_deleted.
   */
  deleted: Set<string>;
  /** NIP-05: names as input and verification of declared ones; absent where not wired (names then unresolvable). */
  nip05?: Nip05;
  /** Who asks (the client's address): NIP-05 resolutions are capped per client too. */
  client: string;
  /** MISS_RATE_LIMIT, when set: relay misses take from it (RequestFill) and so do NIP-05 names asked of their domain. */
  missLimit?: MissLimit;
  /** The relationship fill: with relays, the one of fill/relation-fill.ts for this request (its loaders call it). */
  relationFill?: RelationFill;
  /** Zap recipients' provider checks; absent (tests): answers held are used, none is asked for. */
  zaps?: ZapProviders;
  /**
   * Where the request's answer may be kept (a REST lookup with the hot cache on): what its reads were
   * answered from; anything a resolver learns other than by those reads (a NIP-05 name) spoils it.
   */
  reads?: ReadReceipt;
}

export interface ContextDependencies {
  store: EventStore;
  limits: LookupConfig;
  /** Fetch on miss from relays; absent when RELAYS is empty (the index alone answers). */
  fill?: ReadThrough;
  /** Who asks (the client's address): lookups that go to relays are capped per client. */
  client?: string;
  /** The most objects one request may hand back (GRAPHQL_MAX_COST). */
  maxObjects: number;
  /** MAX_RESPONSE_BYTES: also bounds the bytes of events a request reads and computes fields from (ObjectBudget). */
  maxResponseBytes?: number;
  nip05?: Nip05;
  /** MISS_RATE_LIMIT, when set (http/rate-limits.ts). */
  missLimit?: MissLimit;
  /** Relationships from relays before stats and replies are read (RelationFill); absent: the index alone. */
  relationFill?: RelationFill;
  zaps?: ZapProviders;
  /** The receipt of the request's reads, where its answer may be kept. */
  reads?: ReadReceipt;
}

export function createContext({ store, limits, fill, client = '', maxObjects, maxResponseBytes, nip05, missLimit, relationFill, zaps, reads }: ContextDependencies): GraphQLContext {
  const budget = new ObjectBudget(maxObjects, maxResponseBytes);
  const shared = {
    store,
    readerFilters: new Map<string, Promise<ReaderFilter>>(),
    countedByTrust: { events: 0, scan: { entries: LEDGER_ENTRIES_PER_REQUEST } },
    limits,
    budget,
    deleted: new Set<string>(),
    client,
    ...(nip05 ? { nip05 } : {}),
    ...(missLimit ? { missLimit } : {}),
    ...(relationFill ? { relationFill } : {}),
    ...(zaps ? { zaps } : {}),
    ...(reads ? { reads } : {}),
  };
  if (!fill) return { loaders: createLoaders(store, undefined, relationFill ? { relations: relationFill } : {}, reads), ...shared };
  // The deadline runs from the start of the request, across all of its relay queries.
  const relays = { fill, request: fill.newRequest(client, missLimit) };
  relays.request.reads = reads;
  // With relays, stats and replies ask them first (fill/relation-fill.ts), within this request's deadline.
  const relations = relationFill ?? relationFillFor(fill.relations, relays.request);
  // And followers ask for the follow lists naming the pubkey (FOLLOWERS), likewise.
  const followers = relationFillFor(fill.followers, relays.request);
  // And an author's notes, when the index holds less than a page (NOTES).
  const notes = relationFillFor(fill.notes, relays.request);
  // And a search, of SEARCH_RELAYS when there are any (SEARCH).
  const search = relationFillFor(fill.profileSearch, relays.request);
  // And a note search, of SEARCH_RELAYS likewise (NOTE_SEARCH).
  const noteSearch = relationFillFor(fill.noteSearch, relays.request);
  // And what names a pubkey, for its notifications (NOTIFICATIONS).
  const notifications = relationFillFor(fill.notifications, relays.request);
  // And what the authors a pubkey follows wrote lately, for its feed (FEED).
  const feed = relationFillFor(fill.feed, relays.request);
  return { loaders: createLoaders(store, relays, { relations, followers, notes, search, noteSearch, notifications, feed }, reads), relays, ...shared, relationFill: relations };
}

/**
 * What a resolver hands back for a key the query asked for by name: the event, or null; a deleted
 * one is null too (NIP-09, NIP-62), and noted in the context for the REST routes.
 */
export function answered(context: GraphQLContext, key: string, held: Held): StoredEvent | null {
  if (!isDeleted(held)) return held;
  context.deleted.add(key);
  return null;
}
