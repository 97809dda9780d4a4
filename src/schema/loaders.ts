import DataLoader from 'dataloader';
import { errorCodeOf } from '../errors.js';
import { guarded, type ReadAnswer, type ReadThrough } from '../fill/read-through.js';
import type { RelayRequest } from '../fill/relay-request.js';
import { metrics } from '../metrics/metrics.js';
import { PROFILE_KIND } from '../nostr/kinds.js';
import type { EventStore, Held } from '../store/event-store.js';
import { nip05VerificationMarkKey } from '../store/mark-store.js';
import { storedEventKind, storedEventPubkey } from '../store/stored-event.js';
import { isDeleted } from '../store/tombstones.js';

export interface Loaders {
  /** Events by id (DELETED where its author deleted it). */
  events: DataLoader<string, Held>;
  /** Latest kind-0 event by pubkey (DELETED where deleted): every profile read of a request becomes one store call. */
  profiles: DataLoader<string, Held>;
  /** Latest version by NIP-01 coordinate (`<kind>:<pubkey>:<d>`, an naddr; DELETED where deleted). */
  addresses: DataLoader<string, Held>;
  /** The stored NIP-05 verification note of a pubkey's profile (nip05/nip05-verification.ts), or null. */
  nip05Verifications: DataLoader<string, string | null>;
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
export function createLoaders(store: EventStore, relays?: RequestFill): Loaders {
  const profiles = new DataLoader<string, Held>(
    (pubkeys): Promise<ReadAnswer[]> => (relays ? relays.fill.profiles(pubkeys, relays.request) : counted('profile', guarded(() => store.getProfiles(pubkeys)))),
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
    const stored = await counted('event', guarded(() => store.getEvents(ids)));
    primeProfiles(stored);
    return stored;
  });
  const addresses = new DataLoader<string, Held>(
    (coordinates): Promise<ReadAnswer[]> =>
      relays ? relays.fill.addresses(coordinates, relays.request) : counted('address', guarded(() => store.getByCoordinates(coordinates))),
  );
  const nip05Verifications = new DataLoader<string, string | null>((pubkeys) =>
    guarded(() => store.marks.notes(pubkeys.map(nip05VerificationMarkKey))),
  );
  return { events, profiles, addresses, nip05Verifications };
}

/** Index-only lookups (relays off) as metrics count them; the read-through path counts its own. */
async function counted(kind: string, read: Promise<Held[]>): Promise<Held[]> {
  const held = await read;
  let hits = 0;
  for (const value of held) if (value !== null) hits += 1;
  metrics.lookups(kind, 'index_hit', hits);
  metrics.lookups(kind, 'index_miss', held.length - hits);
  return held;
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
      if (code === 'relays_unavailable' || code === 'too_many_requests' || code === 'rate_limited') return null;
      throw outcome.reason;
    });
  }
}
