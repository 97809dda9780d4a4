/**
 * The one backoff of the service: 1 s after the first failure, doubling, at most `longestMs`. Used
 * by the relay pool (a relay that failed rests), `sync` (reconnecting) and `import` (retrying a
 * store write).
 */
export const FIRST_BACKOFF_MS = 1000;

/** How long to wait after `failures` failures in a row (1 → 1 s, 2 → 2 s, 3 → 4 s …). */
export function backoffMs(failures: number, longestMs: number): number {
  return Math.min(FIRST_BACKOFF_MS * 2 ** Math.max(0, failures - 1), longestMs);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
