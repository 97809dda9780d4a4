import { setTimeout as delay } from 'node:timers/promises';

/**
 * Deadlines are AbortSignals: one per request (timeoutSignal, which keeps no process alive),
 * combined with AbortSignal.any where a wait may also end for another reason. Waits race them here.
 */

/**
 * A signal that aborts with a TimeoutError after `ms`, as AbortSignal.timeout does, but held by its
 * own timer until then. Node 20 holds an AbortSignal.timeout only weakly, and AbortSignal.any holds
 * its sources weakly too: a garbage collection between the two drops the timeout, and the combined
 * signal never aborts (nodejs/node#57736; a CI run paged a fill to its end past its deadline). The
 * timer is unref'd (it keeps no process alive) and holds the signal for `ms` at most.
 */
export function timeoutSignal(ms: number): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), Math.max(0, ms));
  timer.unref();
  return controller.signal;
}

/**
 * The value of `pending`, or `onAbort` once `signal` aborts, whichever comes first. A signal found
 * aborted still lets `pending` settle within the current turn, as a zero timeout would. The listener
 * is removed either way.
 */
export async function untilAborted<T, A>(pending: Promise<T>, signal: AbortSignal, onAbort: A): Promise<T | A> {
  let stop!: () => void;
  const aborted = new Promise<A>((resolve) => {
    stop = () => resolve(onAbort);
    if (signal.aborted) setImmediate(stop);
    else signal.addEventListener('abort', stop, { once: true });
  });
  try {
    return await Promise.race([pending, aborted]);
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

/** Waits `ms`: true, or false as soon as `signal` aborts (the timer is cleared then). */
export function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return delay(ms, true, { signal }).catch(() => false);
}
