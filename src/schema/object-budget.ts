import { LookupError } from '../errors.js';
import { MAX_EVENT_BYTES } from '../nostr/work-caps.js';

/**
 * What one request may make us do while it runs (the cost model, query-cost.ts, refuses an
 * operation before it runs; this holds the bounds it cannot see):
 * - objects: every event or profile a resolver hands back is counted; past GRAPHQL_MAX_COST,
 *   query_too_costly;
 * - field bytes: a field computed from an event's tags or content charges the event's size, cached
 *   or not, so that the outcome never depends on what this process happens to have cached: `tags`
 *   and `content` each time they are asked for (each copy is in the answer), relevantPubkeys and a
 *   profile's metadata once per event per request (derived once, however many aliases ask);
 * - read bytes: events read by id, the distinct profiles relevantProfiles reads, and the events of
 *   `parent`, `root` and `replies` (schema/event-relations.ts).
 * Past either byte bound the answer is response_too_large (refused whole, data null), or, on REST
 * `/event` (`overRead` 'stop'), the profiles map simply stops (http/routes/event.ts).
 * Both byte bounds are MAX_RESPONSE_BYTES, but never less than MAX_EVENT_BYTES: one event of any
 * size we store can always be answered.
 */
export class ObjectBudget {
  private used = 0;
  private fieldBytes = 0;
  private readBytes = 0;
  /** Bytes promised to reads under way (reserveRead), not settled yet. */
  private reservedBytes = 0;
  /** Profiles (and events) already counted as read: a profile named by many events is read once. */
  private readonly counted = new WeakSet<object>();
  /** Events whose derived values (relevantPubkeys, metadata) were charged in this request. */
  private readonly derivedCharged = new WeakSet<object>();
  private readonly byteLimit: number;
  /** chargeDerived as a function, for profiles (schema/profile.ts). */
  readonly derivedCharger = (stored: { json: { bytes: Buffer } }) => this.chargeDerived(stored);

  /**
   * What relevantProfiles does past the read bound: REST `/event` stops reading (its map leaves out
   * what does not fit anyway); GraphQL refuses, rather than answer a list cut short.
   */
  overRead: 'stop' | 'refuse' = 'refuse';

  constructor(
    private readonly limit: number,
    /** MAX_RESPONSE_BYTES. */
    maxResponseBytes = Number.POSITIVE_INFINITY,
  ) {
    this.byteLimit = Math.max(maxResponseBytes, MAX_EVENT_BYTES);
  }

  /** Counts `objects` more; throws query_too_costly past the limit. */
  charge(objects: number): void {
    this.used += objects;
    if (this.used > this.limit) {
      throw new LookupError('query_too_costly', {
        message: `The query returned more than ${this.limit} objects while it ran (lists multiplied through). Ask for fewer ids or nest less.`,
      });
    }
  }

  /** Work charged under a key: once per request, however many objects or aliases ask for it. */
  private readonly chargedOnce = new Set<string>();

  /** Charges `units` for the work named `key`, the first time only (a read every asker then shares). */
  chargeOnce(key: string, units: number): void {
    if (this.chargedOnce.has(key)) return;
    this.chargedOnce.add(key);
    this.charge(units);
  }

  /**
   * Counts `bytes` of an event a field is computed from (tags, content, relevantPubkeys, metadata):
   * work that grows with content, which the object count cannot see (a hundred notes of
   * 900 KB). Fields read at fixed offsets (id, pubkey, createdAt, kind, sig, json) cost nothing here.
   */
  chargeFieldBytes(bytes: number): void {
    this.fieldBytes += bytes;
    if (this.fieldBytes > this.byteLimit) {
      throw new LookupError('response_too_large', {
        message: `The answer is computed from more than ${this.byteLimit} bytes of events (tags, content, relevantPubkeys and profile metadata count their event's size each time they are asked for; MAX_RESPONSE_BYTES). Ask for fewer ids or fewer such fields; json, id, pubkey, createdAt, kind and sig cost nothing here.`,
      });
    }
  }

  /** Charges an event's size for its derived values (relevantPubkeys, metadata), once per request. */
  chargeDerived(stored: { json: { bytes: Buffer } }): void {
    if (this.derivedCharged.has(stored)) return;
    this.derivedCharged.add(stored);
    this.chargeFieldBytes(stored.json.bytes.length);
  }

  /** Bytes that may still be read (less what reads under way were promised). */
  get readBytesLeft(): number {
    return Math.max(0, this.byteLimit - this.readBytes - this.reservedBytes);
  }

  /**
   * Promises `bytes` to a read about to start, so that reads started in the same tick (the
   * relevantProfiles of every event of a list) share what is left instead of each taking all of it.
   */
  reserveRead(bytes: number): void {
    this.reservedBytes += bytes;
  }

  /**
   * Settles a read: gives back its promise and counts what it read, each object once per request.
   * False once past the bound when `overRead` is 'stop' (read no more); response_too_large otherwise.
   */
  settleRead(reserved: number, read: Iterable<{ json: { bytes: Buffer } }>): boolean {
    this.reservedBytes -= reserved;
    for (const value of read) {
      if (this.counted.has(value)) continue;
      this.counted.add(value);
      this.readBytes += value.json.bytes.length;
    }
    if (this.readBytes <= this.byteLimit) return true;
    if (this.overRead === 'stop') return false;
    throw new LookupError('response_too_large', {
      message: `The events and profiles this answer reads are more than ${this.byteLimit} bytes (MAX_RESPONSE_BYTES). Ask for fewer ids or nest less.`,
    });
  }
}
