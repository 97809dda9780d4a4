import { type ErrorCode, errorCodeOf, LookupError, rootCause } from '../errors.js';
import { knownStoreState } from '../store/store-failure.js';

/** Failures of one code are logged at most once per this window (the rest are counted). */
const WINDOW_MS = 1000;

/** Logs a server-side failure (a 5xx) with its cause: `(logger, error, message)`. */
export type FailureLog = (logger: Pick<Logger, 'error'>, error: unknown, message: string) => void;

/** Any pino-like logger (a request's child logger included). */
interface Logger {
  error(fields: object, message: string): void;
}

/**
 * Server failures are logged with their cause, since the client sees only the table message; but
 * while Redis is down every lookup fails the same way, and a line with a stack per request (~1 KB,
 * thousands a second) would flood the log. So each code is logged at most once a second, the line
 * saying how many of that code were left out since the last one.
 */
export function createFailureLog(windowMs: number = WINDOW_MS, outage?: { failed(): void }): FailureLog {
  const windows = new Map<string, { until: number; suppressed: number }>();
  return (logger, error, message) => {
    const code: ErrorCode | 'unexpected' = errorCodeOf(error) ?? 'unexpected';
    if (code === 'store_unavailable') outage?.failed();
    const now = Date.now();
    const window = windows.get(code);
    if (window && now < window.until) {
      window.suppressed += 1;
      return;
    }
    windows.set(code, { until: now + windowMs, suppressed: 0 });
    const suppressed = window?.suppressed ?? 0;
    const cause = rootCause(error);
    const counted = suppressed > 0 ? { suppressed } : {};
    // A table error with nothing behind it (no relay answered, say) is said in words: its stack
    // would only show our own code path, and read like a crash.
    const store = knownStoreState(error);
    if (cause instanceof LookupError) logger.error({ code, ...counted }, `${message}: ${cause.message}`);
    else if (store) logger.error({ code, store, ...counted }, message);
    else logger.error({ err: cause, code, ...counted }, message);
  };
}
