/**
 * Resolves once this turn of the event loop has run its I/O callbacks (setImmediate), one promise
 * for every caller of the turn.
 *
 * The hot cache (store/redis/hot-cache.ts) answers through it, so that the answers of one turn
 * leave together. Answers read from Redis do anyway (they come back in one reply), but an answer
 * the process held already was written as soon as its request was read, and on loopback each such
 * write woke the client's process alone: measured, /user-profile from the hot cache went from
 * 14,500 to 20,600 req/s when its answers waited for the end of the turn (BENCHMARKS.md, session
 * 17). The wait is at most the rest of the current turn.
 */
let turn: Promise<void> | undefined;

export function endOfTurn(): Promise<void> {
  turn ??= new Promise((resolve) =>
    setImmediate(() => {
      turn = undefined;
      resolve();
    }),
  );
  return turn;
}
