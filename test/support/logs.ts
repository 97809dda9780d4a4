import { Writable } from 'node:stream';
import type { LogConfig } from '../../src/config/env.js';
import { createLogger, type Logger } from '../../src/logger.js';

/**
 * A logger as the service makes it, writing instead of stdout into `chunks` (what each write
 * carried) and `lines` (one entry per line, with its newline): the request log writes lines in
 * batches, so one write may carry several (a test that parsed each write as one line failed now and then).
 */
export function captureLogs(level: LogConfig['level'] = 'info'): { chunks: string[]; lines: string[]; logger: Logger } {
  const chunks: string[] = [];
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(`${line}\n`);
      done();
    },
  });
  return { chunks, lines, logger: createLogger({ level }, sink) };
}
