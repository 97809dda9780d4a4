import { rootCause } from '../errors.js';
import { StoreUnavailableError, WritesRefusedError } from './event-store.js';

/**
 * A store client's message for a state the store is known to be in (Redis down or unreachable, a
 * command past its deadline, the store closed, a disk that refuses writes), in words: a stack would
 * only show the client's code, and its messages ("Stream isn't writeable and enableOfflineQueue
 * options is false") read like a bug. Anything else is logged with its stack.
 */
const STORE_STATES: [RegExp, string][] = [
  [/isn't writeable|Connection is closed|ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|max retries|connect ETIMEDOUT/i, 'not connected'],
  [/timed out|DeadlineExceeded/i, 'timed out'],
  [/the store is closed/, 'closed'],
];

/** The known state of the store an error says, in words (see STORE_STATES), or undefined. */
export function knownStoreState(error: unknown): string | undefined {
  if (!unavailableStore(error)) return undefined;
  const cause = rootCause(error);
  // A StoreUnavailableError with no cause: a connection not made in time.
  if (cause instanceof StoreUnavailableError) return 'not connected';
  const refused = refusedWrites(error);
  if (refused) return `writes refused: ${refused.message}`;
  const text = cause instanceof Error ? `${cause.name} ${cause.message}` : String(cause);
  return STORE_STATES.find(([pattern]) => pattern.test(text))?.[1];
}

/**
 * A store failure that a path gives up on and goes on without (storing what relays sent, a mark, a
 * claim): logged at warn with its stack; a known state of the store in words, without one; writes
 * the store refuses for a reason of its disk not at all, for the store says that state itself,
 * once as it begins and once as it ends (embedded/lmdb-disk-state.ts), where each refused write
 * would be a line (a lookup makes several).
 */
export function warnStoreFailure(logger: { warn(fields: object, message: string): void }, error: unknown, message: string, fields: object = {}): void {
  if (refusedWrites(error)) return;
  const state = knownStoreState(error);
  if (state === undefined) logger.warn({ err: error, ...fields }, message);
  else logger.warn({ store: state, ...fields }, message);
}

/** The first error of class `kind` among `error` and its causes (a GraphQL error's original included). */
function inChain<T extends Error>(error: unknown, kind: abstract new (...args: never[]) => T): T | undefined {
  let current = error;
  for (let depth = 0; depth < 10 && current instanceof Error; depth++) {
    if (current instanceof kind) return current;
    current = (current as { originalError?: unknown }).originalError ?? current.cause;
  }
  return undefined;
}

const refusedWrites = (error: unknown) => inChain(error, WritesRefusedError);
const unavailableStore = (error: unknown) => inChain(error, StoreUnavailableError) !== undefined;
