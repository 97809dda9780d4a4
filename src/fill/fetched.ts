import type { StoredEvent } from '../store/event-store.js';

/**
 * What the relays said about one key:
 * - `found`: a verified event, already written to the index;
 * - `absent`: at least one relay asked about it answered in full (EOSE) and none had it;
 * - `unavailable`: no relay could be reached or answered before the deadline;
 * - `throttled`: not asked: the client already has MISS_CONCURRENCY_PER_CLIENT lookups at the relays,
 *   or the request has asked RELAY_MAX_KEYS_PER_REQUEST keys;
 * - `rate_limited`: not asked: the client is past MISS_RATE_LIMIT (lookups that go to relays per
 *   second); it may try again after `retryAfterSeconds`;
 * - `deleted`: found, but its author deleted it (a deletion request that came with it, or one the
 *   index held): the store refused it and keeps its tombstone.
 */
export type Fetched =
  | Found
  | { kind: 'absent' }
  | { kind: 'unavailable' }
  | { kind: 'throttled' }
  | { kind: 'rate_limited'; retryAfterSeconds: number }
  | { kind: 'deleted' };
export type Found = { kind: 'found'; stored: StoredEvent };

export const ABSENT: Fetched = { kind: 'absent' };
export const UNAVAILABLE: Fetched = { kind: 'unavailable' };
export const THROTTLED: Fetched = { kind: 'throttled' };
export const GONE: Fetched = { kind: 'deleted' };
