import type { LookupConfig } from '../config/env.js';
import type { ReadThrough } from '../fill/read-through.js';
import type { MissLimit } from '../fill/relay-request.js';
import type { Nip05 } from '../nip05/nip05.js';
import type { EventStore, Held, StoredEvent } from '../store/event-store.js';
import { isDeleted } from '../store/tombstones.js';
import { createLoaders, type Loaders, type RequestFill } from './loaders.js';
import { ObjectBudget } from './object-budget.js';

/** What every resolver gets. Built once per request, so loaders batch and cache within one request only. */
export interface GraphQLContext {
  loaders: Loaders;
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
}

export function createContext({ store, limits, fill, client = '', maxObjects, maxResponseBytes, nip05, missLimit }: ContextDependencies): GraphQLContext {
  const budget = new ObjectBudget(maxObjects, maxResponseBytes);
  const shared = { limits, budget, deleted: new Set<string>(), client, ...(nip05 ? { nip05 } : {}), ...(missLimit ? { missLimit } : {}) };
  if (!fill) return { loaders: createLoaders(store), ...shared };
  // The deadline runs from the start of the request, across all of its relay queries.
  const relays = { fill, request: fill.newRequest(client, missLimit) };
  return { loaders: createLoaders(store, relays), relays, ...shared };
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
