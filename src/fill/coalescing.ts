import { untilAborted } from '../abortable.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics/metrics.js';
import { type Fetched, UNAVAILABLE } from './fetched.js';

/** How long a settled lookup stays joinable: a request that read the index just before the results were written would otherwise ask the relays again. */
const JOINABLE_AFTER_SETTLED_MS = 1000;

/**
 * Coalescing within the process: concurrent requests for the same key share one relay lookup. A
 * key nobody is fetching starts a lookup (with the other fresh keys of the batch); a key in flight
 * joins it. Each caller stops waiting at its own deadline, whatever the lookup it joined does.
 */
export class InFlightLookups {
  private readonly inflight = new Map<string, Promise<Fetched>>();

  constructor(
    private readonly logger: Logger,
    /** The lookup kind, for the coalescing metric. */
    private readonly kind: string,
  ) {}

  /** Whether a lookup of `key` is under way (or settled within the last second): a request for it joins, asking nothing. */
  has(key: string): boolean {
    return this.inflight.has(key);
  }

  async join(
    keys: readonly string[],
    signal: AbortSignal,
    lookup: (fresh: string[]) => Promise<Map<string, Fetched>>,
  ): Promise<Fetched[]> {
    const fresh = [...new Set(keys.filter((key) => !this.inflight.has(key)))];
    metrics.coalesced(this.kind, keys.length - fresh.length);
    if (fresh.length > 0) {
      const running = lookup(fresh).catch((error: unknown) => {
        this.logger.error({ err: error }, 'relay fetch failed');
        return new Map<string, Fetched>();
      });
      for (const key of fresh) {
        const settled = running.then((results) => results.get(key) ?? UNAVAILABLE);
        this.inflight.set(key, settled);
        void settled.then((fetched) => {
          const forget = () => {
            if (this.inflight.get(key) === settled) this.inflight.delete(key);
          };
          // "The relays could not say" is no answer to join: the next request asks again.
          if (fetched.kind === 'unavailable') forget();
          else setTimeout(forget, JOINABLE_AFTER_SETTLED_MS).unref();
        });
      }
    }
    // One listener on the request's signal for all keys: what has settled by then is the answer.
    const answers: Fetched[] = keys.map(() => UNAVAILABLE);
    const all = Promise.all(
      keys.map((key, index) => (this.inflight.get(key) ?? Promise.resolve(UNAVAILABLE)).then((fetched) => (answers[index] = fetched))),
    );
    return (await untilAborted(all, signal, null)) ?? [...answers];
  }
}
