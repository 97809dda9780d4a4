import { pause } from '../abortable.js';
import type { Logger } from '../logger.js';
import type { MarkStore } from '../store/mark-store.js';
import { warnStoreFailure } from '../store/store-failure.js';

/** How often an instance looks in the store for a result another instance is fetching. */
const OTHER_INSTANCE_POLL_MS = 50;

export interface InstanceClaimOptions<T> {
  marks: MarkStore;
  logger: Logger;
  /** How long a claim holds (the relay deadline, rounded up to seconds). */
  claimSeconds: number;
  /** What the store says of keys now: found, absent (a miss mark), or undefined while not yet known. */
  readSettled(keys: string[]): Promise<(T | undefined)[]>;
  /** The answer for a key another instance has not settled when `signal` aborts. */
  unsettled: T;
  /** Aborts when this request's relay queries end. */
  signal: AbortSignal;
}

/**
 * Coalescing across instances that share the store: each key's mark key is claimed
 * (`fetching:<mark key>`, expiring with the deadline) before asking the relays. Keys another
 * instance has claimed are not asked again: their result is awaited in the store, where that
 * instance writes it (the event or profile, or the miss mark), polling until this request's relay
 * queries end. `markKeyOf` names the claim; results are keyed as `keys` are.
 */
export async function acrossInstances<T>(
  keys: string[],
  markKeyOf: (key: string) => string,
  options: InstanceClaimOptions<T>,
  lookup: (mine: string[]) => Promise<Map<string, T>>,
): Promise<Map<string, T>> {
  const claims = keys.map((key) => `fetching:${markKeyOf(key)}`);
  let claimed: boolean[];
  try {
    claimed = await options.marks.claim(claims, options.claimSeconds);
  } catch (error) {
    warnStoreFailure(options.logger, error, 'could not claim relay lookups in the store; asking the relays anyway');
    claimed = keys.map(() => true);
  }
  const mine = keys.filter((_, index) => claimed[index]);
  const theirs = keys.filter((_, index) => !claimed[index]);
  const release = () => options.marks.clear(claims.filter((_, index) => claimed[index])).catch(() => {});
  const [own, others] = await Promise.all([
    mine.length > 0 ? lookup(mine).finally(() => void release()) : new Map<string, T>(),
    theirs.length > 0 ? awaitOtherInstance(theirs, options) : new Map<string, T>(),
  ]);
  return new Map([...own, ...others]);
}

/**
 * Polls the store for what another instance is fetching; `unsettled` for what is not settled when
 * this request's relay queries end (as its own would, so that both are returned in time).
 */
async function awaitOtherInstance<T>(keys: string[], options: InstanceClaimOptions<T>): Promise<Map<string, T>> {
  const results = new Map<string, T>();
  let pending = keys;
  while (pending.length > 0 && (await pause(OTHER_INSTANCE_POLL_MS, options.signal))) {
    let settled: (T | undefined)[];
    try {
      settled = await options.readSettled(pending);
    } catch {
      break; // the store failed: nothing to wait for
    }
    pending = pending.filter((key, index) => {
      const outcome = settled[index];
      if (outcome) results.set(key, outcome);
      return !outcome;
    });
  }
  for (const key of pending) results.set(key, options.unsettled);
  return results;
}
