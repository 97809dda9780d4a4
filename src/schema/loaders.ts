import DataLoader from 'dataloader';
import { errorCodeOf, LookupError } from '../errors.js';
import type { Fetched, RelayFill } from '../fill/relay-fill.js';
import type { RelayRequest } from '../fill/relay-request.js';
import { PROFILE_KIND } from '../nostr/kinds.js';
import {
  CorruptDataError,
  type EventStore,
  type StoredEvent,
  StoreUnavailableError,
} from '../store/event-store.js';
import { eventMarkKey } from '../store/mark-store.js';

export interface Loaders {
  /** Events by id. */
  events: DataLoader<string, StoredEvent | null>;
  /** Latest kind-0 event by pubkey: every profile read of a request becomes one store call. */
  profiles: DataLoader<string, StoredEvent | null>;
}

/** Relay fill for one request: the shared fetcher and this request's deadline and hints. */
export interface RequestFill {
  fill: RelayFill;
  request: RelayRequest;
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

/** A relay answer as a loader value: found → the event, absent → null, unavailable → an error (500). */
function fromRelays(fetched: Fetched): StoredEvent | null | LookupError {
  if (fetched.kind === 'found') return fetched.stored;
  if (fetched.kind === 'absent') return null;
  if (fetched.kind === 'throttled') return new LookupError('too_many_requests');
  return new LookupError('relays_unavailable');
}

/** Fills the `null` slots of `found` whose keys are in `asked`, in order, with the relays' answers. */
function merge(
  keys: readonly string[],
  found: (StoredEvent | null)[],
  asked: readonly string[],
  fetched: readonly Fetched[],
): (StoredEvent | null | LookupError)[] {
  const answers = new Map(asked.map((key, index) => [key, fetched[index] as Fetched]));
  return keys.map((key, index) => {
    const answer = answers.get(key);
    return answer ? fromRelays(answer) : (found[index] ?? null);
  });
}

/**
 * Per-request DataLoaders. Without relays, a batch is one store read. With relays (fill), what the
 * index lacks and no mark covers is fetched from the relays in one query per batch, stale profiles
 * are served and refreshed in the background, and marked misses are answered without asking.
 */
export function createLoaders(store: EventStore, relays?: RequestFill): Loaders {
  const profiles = new DataLoader<string, StoredEvent | null>(async (pubkeys) => {
    if (!relays) return guarded(() => store.getProfiles(pubkeys));
    // One store command: the profiles and their freshness marks.
    const read = await guarded(() => store.getProfilesWithMarks(pubkeys));
    const stale = pubkeys.filter((_, index) => read[index]?.profile && !read[index].marked);
    if (stale.length > 0) relays.fill.refreshProfiles(stale);
    const found = read.map(({ profile }) => profile);
    // Marked misses are asked again only of this request's own relay hints, if it has any.
    const hinted = relays.request.hints.length > 0;
    const missing = pubkeys.filter((_, index) => !read[index]?.profile && (hinted || !read[index]?.marked));
    if (missing.length === 0) return found;
    const knownMisses = new Set(pubkeys.filter((_, index) => !read[index]?.profile && read[index]?.marked));
    return merge(pubkeys, found, missing, await relays.fill.fetchProfiles(missing, relays.request, knownMisses));
  });
  const events = new DataLoader<string, StoredEvent | null>(async (ids) => {
    const stored = await guarded(() => store.getEvents(ids));
    let found: (StoredEvent | null | LookupError)[] = stored;
    const missing = ids.filter((_, index) => stored[index] === null);
    if (relays && missing.length > 0) {
      // Only on a miss: a second store call for the negative cache.
      const known = await guarded(() => store.marks.has(missing.map(eventMarkKey)));
      const knownMisses = new Set(missing.filter((_, index) => known[index]));
      // Marked misses are asked again only of this request's own relay hints, if it has any.
      const ask = relays.request.hints.length > 0 ? missing : missing.filter((id) => !knownMisses.has(id));
      if (ask.length > 0) found = merge(ids, stored, ask, await relays.fill.fetchEvents(ask, relays.request, knownMisses));
    }
    // A kind-0 event the index holds is its author's latest profile (older versions are not kept):
    // priming saves the profile read when the response also wants the author. Not so for one a
    // relay returned by id, which may be an old version.
    for (const value of stored) {
      if (value?.event.kind === PROFILE_KIND) profiles.prime(value.event.pubkey, value);
    }
    return found;
  });
  return { events, profiles };
}

/** A request fails as a whole if any read failed. */
export function loadAll<V>(loader: DataLoader<string, V>, keys: readonly string[]): Promise<V[]> {
  return Promise.all(keys.map((key) => loader.load(key)));
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
      if (code === 'relays_unavailable' || code === 'too_many_requests') return null;
      throw outcome.reason;
    });
  }
}
