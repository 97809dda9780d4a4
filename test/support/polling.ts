// Waiting in tests for something another connection or process makes true.

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `condition` holds (checked every 5 ms); throws after `limitMs`. */
export async function until(condition: () => boolean | Promise<boolean>, limitMs = 3000): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > limitMs) throw new Error('condition not met in time');
    await sleep(5);
  }
}

/** Polls `read` every millisecond until `done` holds; the time it took, or Infinity after `limitMs`. */
export async function timeUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, limitMs = 2000): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    if (done(await read())) return performance.now() - started;
    await sleep(1);
  }
  return Infinity;
}
