import { LookupError } from '../errors.js';

/**
 * The cost model (query-cost.ts) refuses an operation before it runs; this holds the same bound
 * while it runs, whatever the model could not see: every event or profile a resolver hands back
 * is counted, and past `limit` the request fails with query_too_costly instead of going on.
 */
export class ObjectBudget {
  private used = 0;

  constructor(private readonly limit: number) {}

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
