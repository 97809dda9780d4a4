import type { LookupConfig } from '../config/env.js';
import type { ReadThrough } from '../fill/read-through.js';
import type { EventStore } from '../store/event-store.js';
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
}

export function createContext({ store, limits, fill, client = '', maxObjects }: ContextDependencies): GraphQLContext {
  const budget = new ObjectBudget(maxObjects);
  if (!fill) return { loaders: createLoaders(store), limits, budget };
  // The deadline runs from the start of the request, across all of its relay queries.
  const relays = { fill, request: fill.newRequest(client) };
  return { loaders: createLoaders(store, relays), limits, budget, relays };
}
