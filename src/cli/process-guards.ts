import { format } from 'node:util';
import type { Logger } from '../logger.js';

/**
 * For every command (issue 18 §8): a failed store write must never stop `serve`, and `import`
 * must end with its own one-line report, never a library's stack.
 * - lmdb-js rejects internal promises that no caller can await when a commit fails (a full disk);
 *   the failure also reaches the caller that awaited the write. Such stray rejections are logged
 *   (at warn, without a stack) and the process goes on.
 * - Libraries that print to the console (lmdb-js prints a failed commit's error with its stack)
 *   are sent to the log at debug, as one line.
 */
export function guardProcess(logger: Logger): void {
  process.on('unhandledRejection', (reason) => {
    logger.warn({ reason: oneLine(reason) }, 'unhandled rejection (a library promise nobody awaits); going on');
  });
  const toLog = (...args: unknown[]) => logger.debug({ console: oneLine(format(...args)) }, 'library console output');
  console.error = toLog;
  console.warn = toLog;
}

function oneLine(value: unknown): string {
  const text = value instanceof Error ? `${value.name}: ${value.message}` : String(value);
  return text.split('\n', 1)[0]?.slice(0, 500) ?? '';
}
