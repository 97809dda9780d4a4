import { format } from 'node:util';
import type { Logger } from '../logger.js';
import { relayUrlsForLog } from '../relays/relay-url.js';

/**
 * For every command: a failed store write must never stop `serve`, and `import`
 * must end with its own one-line report, never a library's stack.
 * - lmdb-js rejects internal promises that no caller can await when a commit fails (a full disk);
 *   the failure also reaches the caller that awaited the write, and the store says it (one line as
 *   writes start failing: lmdb-disk-state.ts). Such stray rejections are logged at debug in one
 *   line; any other unhandled rejection at error with its stack; the process goes on.
 * - Libraries that print to the console (lmdb-js prints a failed commit's error with its stack)
 *   are sent to the log at debug, as one line.
 */
export function guardProcess(logger: Logger): void {
  process.on('unhandledRejection', (reason) => {
    if (fromLmdb(reason)) {
      logger.debug({ reason: oneLine(reason) }, 'unhandled rejection left by lmdb-js after a failed commit; going on');
    } else {
      // Anything else is a bug of ours or of a library: logged in full, at error; the process goes on.
      logger.error({ err: reason }, 'unhandled rejection');
    }
  });
  const toLog = (...args: unknown[]) => logger.debug({ console: relayUrlsForLog(oneLine(format(...args))) }, 'library console output');
  console.error = toLog;
  console.warn = toLog;
}

/** A failed commit's rejection: lmdb-js' own errors (their stack is in lmdb's code, or they carry commitError). */
function fromLmdb(reason: unknown): boolean {
  return reason instanceof Error && ('commitError' in reason || /[\\/]lmdb[\\/]/.test(reason.stack ?? ''));
}

function oneLine(value: unknown): string {
  const text = value instanceof Error ? `${value.name}: ${value.message}` : String(value);
  return text.split('\n', 1)[0]?.slice(0, 500) ?? '';
}
