import type { LookupConfig } from '../config/env.js';
import type { RelayFill } from '../fill/relay-fill.js';
import type { EventStore } from '../store/event-store.js';
import { createLoaders, type Loaders, type RequestFill } from './loaders.js';

/** What every resolver gets. Built once per request, so loaders batch and cache within one request only. */
export interface GraphQLContext {
  loaders: Loaders;
  limits: LookupConfig;
  /** Present when relays are configured: the request's deadline and the relay hints its identifiers carried. */
  relays?: RequestFill;
}

export interface ContextDependencies {
  store: EventStore;
  limits: LookupConfig;
  /** Fetch on miss from relays; absent when RELAYS is empty (the index alone answers). */
  fill?: RelayFill;
  /** Who asks (the client's address): lookups that go to relays are capped per client. */
  client?: string;
}

export function createContext({ store, limits, fill, client = '' }: ContextDependencies): GraphQLContext {
  if (!fill) return { loaders: createLoaders(store), limits };
  // The deadline runs from the start of the request, across all of its relay queries.
  const relays = { fill, request: fill.newRequest(client) };
  return { loaders: createLoaders(store, relays), limits, relays };
}
