import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRequestLog, type RequestLogEntry } from '../src/logger.js';
import { captureLogs } from './support/logs.js';

function capture(level: 'info' | 'warn' = 'info') {
  const { chunks, logger } = captureLogs(level);
  return { lines: () => chunks.join('').split('\n').filter(Boolean), logger };
}

/** The line as generic pino writes it, and ours, parsed, without their timestamps. */
function bothLines(entry: RequestLogEntry) {
  const { lines, logger } = capture();
  const { reqId, ...fields } = entry;
  logger.child({ reqId }).info(fields, 'request');
  createRequestLog(logger)(entry);
  const raw = lines();
  const [pinoLine, ours] = raw.map((line) => {
    const { time, ...rest } = JSON.parse(line) as { time: string };
    expect(new Date(time).toISOString()).toBe(time);
    return rest;
  });
  return { pinoLine, ours, raw };
}

describe('the request log line', () => {
  it('is what pino writes for the same fields', () => {
    const { pinoLine, ours, raw } = bothLines({ reqId: 'abc-1', method: 'GET', url: '/event?id=x', status: 200, ms: 1.25 });
    expect(ours).toEqual(pinoLine);
    expect(ours).toEqual({ level: 'info', service: 'nostr-lookup', reqId: 'abc-1', method: 'GET', url: '/event?id=x', status: 200, ms: 1.25, msg: 'request' });
    // Same key order too, so log pipelines see one shape.
    expect(Object.keys(JSON.parse(raw[1] as string))).toEqual(Object.keys(JSON.parse(raw[0] as string)));
  });

  it('escapes whatever a client can put in it, as pino does (property)', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.string(),
        fc.integer({ min: 100, max: 599 }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        (reqId, method, url, status, ms) => {
          const { pinoLine, ours } = bothLines({ reqId, method, url, status, ms });
          expect(ours).toEqual(pinoLine);
        },
      ),
      { numRuns: 200 },
    );
    const hostile = bothLines({ reqId: '"}\n{"level":"fatal', method: 'G\u0000T', url: '/x?"\\\u2028', status: 400, ms: 0 });
    expect(hostile.ours).toEqual(hostile.pinoLine);
    expect(hostile.raw).toHaveLength(2); // no line injection
  });

  it('is not written below the info level', () => {
    const { lines, logger } = capture('warn');
    createRequestLog(logger)({ reqId: 'a', method: 'GET', url: '/', status: 200, ms: 1 });
    expect(lines()).toEqual([]);
  });
});
