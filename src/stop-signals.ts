/**
 * Calls `stop` on the first SIGTERM or SIGINT and ignores any later one. Ctrl-C on `npm start` in a
 * terminal signals the whole process group, npm included, and npm forwards the signal once more:
 * with `process.once` that second SIGINT found no listener and killed the process mid-shutdown
 *. The listeners stay, so no repeated signal can; a stuck stop has its own deadline.
 */
export function onFirstStopSignal(stop: (signal: NodeJS.Signals) => void): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    stop(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
