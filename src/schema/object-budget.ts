import { LookupError } from '../errors.js';

/**
 * The cost model (query-cost.ts) refuses an operation before it runs; this holds the same bound
 * while it runs, whatever the model could not see: every event or profile a resolver hands back
 * is counted, and past `limit` the request fails with query_too_costly instead of going on.
 */
export class ObjectBudget {
  private used = 0;
  private parsedBytes = 0;
  private readBytes = 0;
  /** chargeParse as a function, for derived values (store/derived-values.ts). */
  readonly parseCharger = (bytes: number) => this.chargeParse(bytes);

  constructor(
    private readonly limit: number,
    /** Bytes of stored events a request may parse, and read for relevantProfiles (MAX_RESPONSE_BYTES). */
    private readonly parseLimit = Number.POSITIVE_INFINITY,
  ) {}

  /** Bytes relevantProfiles may still read before the answer is surely over MAX_RESPONSE_BYTES. */
  get readBytesLeft(): number {
    return Math.max(0, this.parseLimit - this.readBytes);
  }

  /**
   * What relevantProfiles does once it has read more than MAX_RESPONSE_BYTES of profiles: a REST
   * `/event` stops reading (its map leaves out what does not fit anyway: http/routes/event.ts);
   * GraphQL refuses the query, which would otherwise be answered with a list cut short.
   */
  overRead: 'stop' | 'refuse' = 'refuse';

  /**
   * Counts `bytes` of profiles read for relevantProfiles; false once past MAX_RESPONSE_BYTES (the
   * caller reads no more), or response_too_large when `overRead` is 'refuse' (the whole answer is
   * then refused, as when its data is over the cap: http/graphql/use-query-limits.ts).
   */
  chargeRead(bytes: number): boolean {
    this.readBytes += bytes;
    if (this.readBytes <= this.parseLimit) return true;
    if (this.overRead === 'stop') return false;
    throw new LookupError('response_too_large', {
      message: `The relevant profiles of this answer are more than ${this.parseLimit} bytes (MAX_RESPONSE_BYTES). Ask for fewer ids or nest less.`,
    });
  }

  /**
   * Counts `bytes` of stored event JSON about to be parsed (for tags, content, metadata, mentions):
   * work that grows with content, which the object count cannot see (issue 31: a hundred notes of
   * 900 KB). Past MAX_RESPONSE_BYTES the request fails with response_too_large before parsing more.
   * Fields read at fixed offsets (id, pubkey, createdAt, kind, sig, json) cost nothing here.
   */
  chargeParse(bytes: number): void {
    this.parsedBytes += bytes;
    if (this.parsedBytes > this.parseLimit) {
      // The same refusal as an answer over the cap (the answer is refused whole, data null).
      throw new LookupError('response_too_large', {
        message: `The answer needs more than ${this.parseLimit} bytes of events read field by field (tags, content, profile metadata, mentions; MAX_RESPONSE_BYTES). Ask for fewer ids or fewer such fields; json, id, pubkey, createdAt, kind and sig cost nothing here.`,
      });
    }
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
}
