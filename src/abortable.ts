import { setTimeout as delay } from 'node:timers/promises';

/**
 * Deadlines are AbortSignals: one per request (AbortSignal.timeout, which keeps no process alive),
 * combined with AbortSignal.any where a wait may also end for another reason. Waits race them here.
 */

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
