import type { LookupConfig } from '../config/env.js';
import type { EventStore } from '../store/event-store.js';
import { createLoaders, type Loaders } from './loaders.js';

/** What every resolver gets. Built once per request, so loaders batch and cache within one request only. */
export interface GraphQLContext {
  loaders: Loaders;
  limits: LookupConfig;
}

export interface ContextDependencies {
  store: EventStore;
  limits: LookupConfig;
}

export function createContext({ store, limits }: ContextDependencies): GraphQLContext {
  return { loaders: createLoaders(store), limits };
}
