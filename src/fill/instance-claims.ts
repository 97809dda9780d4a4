import { pause } from '../abortable.js';
import type { Logger } from '../logger.js';
import type { MarkStore } from '../store/mark-store.js';
import { type Fetched, UNAVAILABLE } from './fetched.js';

/** How often an instance looks in the store for a result another instance is fetching. */
const OTHER_INSTANCE_POLL_MS = 50;

export interface InstanceClaimOptions {
  marks: MarkStore;
  logger: Logger;
  /** How long a claim holds (the relay deadline, rounded up to seconds). */
  claimSeconds: number;
  /** What the store says of keys now: found, absent (a miss mark), or undefined while not yet known. */
  readSettled(keys: string[]): Promise<(Fetched | undefined)[]>;
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
export async function acrossInstances(
  keys: string[],
  markKeyOf: (key: string) => string,
  options: InstanceClaimOptions,
  lookup: (mine: string[]) => Promise<Map<string, Fetched>>,
): Promise<Map<string, Fetched>> {
  const claims = keys.map((key) => `fetching:${markKeyOf(key)}`);
  let claimed: boolean[];
  try {
    claimed = await options.marks.claim(claims, options.claimSeconds);
  } catch (error) {
    options.logger.warn({ err: error }, 'could not claim relay lookups in the store; asking the relays anyway');
    claimed = keys.map(() => true);
  }
  const mine = keys.filter((_, index) => claimed[index]);
  const theirs = keys.filter((_, index) => !claimed[index]);
  const release = () => options.marks.clear(claims.filter((_, index) => claimed[index])).catch(() => {});
  const [own, others] = await Promise.all([
    mine.length > 0 ? lookup(mine).finally(() => void release()) : new Map<string, Fetched>(),
    theirs.length > 0 ? awaitOtherInstance(theirs, options) : new Map<string, Fetched>(),
  ]);
  return new Map([...own, ...others]);
}

/**
 * Polls the store for what another instance is fetching; `unavailable` for what is not settled when
 * this request's relay queries end (as its own would, so that both are returned in time).
 */
async function awaitOtherInstance(keys: string[], options: InstanceClaimOptions): Promise<Map<string, Fetched>> {
  const results = new Map<string, Fetched>();
  let pending = keys;
  while (pending.length > 0 && (await pause(OTHER_INSTANCE_POLL_MS, options.signal))) {
    let settled: (Fetched | undefined)[];
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
  for (const key of pending) results.set(key, UNAVAILABLE);
  return results;
}
