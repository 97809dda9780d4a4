import { Writable } from 'node:stream';
import type { LogConfig } from '../../src/config/env.js';
import { createLogger, type Logger } from '../../src/logger.js';

/** A logger as the service makes it, writing into `chunks` (what each write carried) instead of stdout. */
export function captureLogs(level: LogConfig['level'] = 'info'): { chunks: string[]; logger: Logger } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { chunks, logger: createLogger({ level }, sink) };
}
