import DataLoader from 'dataloader';
import { LookupError } from '../errors.js';
import { PROFILE_KIND } from '../nostr/kinds.js';
import {
  CorruptDataError,
  type EventStore,
  type StoredEvent,
  StoreUnavailableError,
} from '../store/event-store.js';

export interface Loaders {
  /** Events by id. */
  events: DataLoader<string, StoredEvent | null>;
  /** Latest kind-0 event by pubkey: every profile read of a request becomes one store call. */
  profiles: DataLoader<string, StoredEvent | null>;
}

/** Store failures reach clients as table errors (500), with the cause kept for the log. */
function asLookupError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return new LookupError('store_unavailable', { cause: error });
  if (error instanceof CorruptDataError) return new LookupError('corrupt_data', { cause: error });
  return error;
}

async function guarded<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw asLookupError(error);
  }
}

export function createLoaders(store: EventStore): Loaders {
  const profiles = new DataLoader<string, StoredEvent | null>((pubkeys) =>
    guarded(() => store.getProfiles(pubkeys)),
  );
  const events = new DataLoader<string, StoredEvent | null>(async (ids) => {
    const found = await guarded(() => store.getEvents(ids));
    // A kind-0 event found by id is its author's latest profile (older versions are not kept):
    // priming saves the profile read when the response also wants the author.
    for (const stored of found) {
      if (stored?.event.kind === PROFILE_KIND) profiles.prime(stored.event.pubkey, stored);
    }
    return found;
  });
  return { events, profiles };
}

/** loadMany reports failures as Error values; a request fails as a whole if any read failed. */
export async function loadAll<V>(loader: DataLoader<string, V>, keys: readonly string[]): Promise<V[]> {
  const values = await loader.loadMany(keys);
  const failure = values.find((value): value is Error => value instanceof Error);
  if (failure) throw failure;
  return values as V[];
}
