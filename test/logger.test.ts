import fc from 'fast-check';
import { spawn } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { createRequestLog, REQUEST_LOG_MAX_DELAY_MS, type RequestLogEntry } from '../src/logger.js';
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
  const log = createRequestLog(logger);
  log(entry);
  log.flush();
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

  it('is not written below the info level', async () => {
    const { lines, logger } = capture('warn');
    const log = createRequestLog(logger);
    log({ reqId: 'a', method: 'GET', url: '/', status: 200, ms: 1 });
    log.flush();
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines()).toEqual([]);
  });

  it('lines reach the destination together, in order, 250 ms after the first of them', () => {
    vi.useFakeTimers();
    try {
      const { chunks, logger } = captureLogs();
      const log = createRequestLog(logger);
      log({ reqId: 'r1', method: 'GET', url: '/', status: 200, ms: 1 });
      vi.advanceTimersByTime(REQUEST_LOG_MAX_DELAY_MS - 1);
      for (const reqId of ['r2', 'r3']) log({ reqId, method: 'GET', url: '/', status: 200, ms: 1 });
      expect(chunks).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(chunks).toHaveLength(1);
      expect(chunks[0]?.split('\n').filter(Boolean).map((line) => JSON.parse(line).reqId)).toEqual(['r1', 'r2', 'r3']);
      // The next line starts a new piece, with its own 250 ms.
      log({ reqId: 'r4', method: 'GET', url: '/', status: 200, ms: 1 });
      vi.advanceTimersByTime(REQUEST_LOG_MAX_DELAY_MS - 1);
      expect(chunks).toHaveLength(1);
      vi.advanceTimersByTime(1);
      expect(chunks).toHaveLength(2);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a busy service writes in pieces of about 16 KiB, without waiting, and flush() writes what is pending at once', () => {
    const { chunks, logger } = captureLogs();
    const log = createRequestLog(logger);
    const url = `/event?id=${'a'.repeat(64)}`;
    for (let n = 0; n < 200; n++) log({ reqId: `r${n}`, method: 'GET', url, status: 200, ms: 1 });
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks) expect(chunk.length).toBeLessThan(16 * 1024 + 300);
    log.flush();
    const lines = chunks.join('').split('\n').filter(Boolean);
    expect(lines.map((line) => JSON.parse(line).reqId)).toEqual(Array.from({ length: 200 }, (_, n) => `r${n}`));
  });
});

describe('where logs go', () => {
  const run = (isTerminal: boolean) =>
    new Promise<string>((resolve, reject) => {
      // A child whose stdout says it is a terminal (or not), logging one line with a secret key in it.
      const script = `process.stdout.isTTY = ${isTerminal};
        const { createLogger } = await import('./src/logger.ts');
        const logger = createLogger({ level: 'info' });
        logger.info({ key: 'nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5' }, 'hello there');
        logger.flush(() => process.exit(0));`;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.on('error', reject);
      child.on('close', () => resolve(output));
    });

  it('JSON lines when stdout is not a terminal (log shippers, files)', async () => {
    const output = await run(false);
    expect(JSON.parse(output.trim())).toMatchObject({ level: 'info', msg: 'hello there', key: '[redacted]' });
  });

  it('readable lines when it is a terminal, redacted all the same', async () => {
    const output = await run(true);
    expect(output).toContain('INFO');
    expect(output).toContain('hello there');
    expect(output).toContain('[redacted]');
    expect(output).not.toContain('nsec1');
    expect(() => JSON.parse(output.trim())).toThrow();
  });
});

describe('exitAfterLogs', () => {
  // A child with one thread-pool thread, kept busy (pbkdf2) while it logs two lines and exits: the
  // first line's write waits in the pool when the second is logged and the exit begins.
  const exitWhileWriting = (exit: string) =>
    new Promise<string[]>((resolve, reject) => {
      const script = `const { createLogger, exitAfterLogs } = await import('./src/logger.ts');
        const { pbkdf2 } = await import('node:crypto');
        const logger = createLogger({ level: 'info' });
        pbkdf2('x', 'y', 400000, 32, 'sha256', () => {});
        logger.info('first');
        logger.info('second');
        ${exit};`;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        env: { ...process.env, UV_THREADPOOL_SIZE: '1' },
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(output.trim().split('\n').map((line) => JSON.parse(line).msg)) : reject(new Error(`exit ${code}`))));
    });

  it('writes every line, in order, before the process exits, while a write is still under way', async () => {
    expect(await exitWhileWriting('exitAfterLogs(logger, 0)')).toEqual(['first', 'second']);
  });

  it("is needed: pino's flush(cb) calls back with that write still under way, and the lines come out of order or not at all", async () => {
    expect(await exitWhileWriting('logger.flush(() => process.exit(0))')).not.toEqual(['first', 'second']);
  });
});
