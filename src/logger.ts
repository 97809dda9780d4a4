import { type Logger, pino } from 'pino';
import pretty from 'pino-pretty';
import type { LogConfig } from './config/env.js';
import { redactSecretKeys } from './nostr/secret-keys.js';

export type { Logger };

const SERVICE = 'nostr-lookup';

/**
 * Stdout, written asynchronously, each piece as it comes. The request lines, nearly all of what is
 * logged, arrive already gathered into large pieces (createRequestLog). sonic-boom's own gathering
 * (`minLength`) measures its whole pending buffer on every write, which cost ~5 µs per request at
 * 6,000 requests/s (BENCHMARKS.md).
 */
function asyncStdout(): pino.DestinationStream {
  const stream = pino.destination({ dest: 1, sync: false });
  writtenAsynchronously.add(stream);
  return stream;
}

/** Destinations whose writes may still be under way when a line has been logged (exitAfterLogs). */
const writtenAsynchronously = new WeakSet<pino.DestinationStream>();

/**
 * Where logs go by default: JSON lines for log shippers and files; readable lines (pino-pretty)
 * when stdout is a terminal, where a person reads them. The redaction runs before either (pino's
 * streamWrite hook), so a pretty line is redacted too.
 */
export function stdoutDestination(isTerminal: boolean = process.stdout.isTTY === true): pino.DestinationStream {
  if (!isTerminal) return asyncStdout();
  return pretty({ destination: 1, sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' });
}

/** Where each logger made by createLogger writes, for the request log (which writes there in pieces). */
const destinations = new WeakMap<Logger, pino.DestinationStream>();

/** `new Date().toISOString()`, made once per millisecond: at load, many lines share one. */
let isoMillisecond = Number.NaN;
let isoTimestamp = '';
function isoTime(): string {
  const now = Date.now();
  if (now !== isoMillisecond) {
    isoMillisecond = now;
    isoTimestamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return isoTimestamp;
}

/** The options of every logger of the service, request log included: one line shape, one redaction. */
function loggerOptions(level: LogConfig['level']): pino.LoggerOptions {
  return {
    level,
    base: { service: SERVICE },
    // pino.stdTimeFunctions.isoTime, made once per millisecond (~0.2 µs a line saved).
    timestamp: isoTime,
    formatters: { level: (label) => ({ level: label }) },
    hooks: { streamWrite: redactSecretKeys },
  };
}

/**
 * Structured JSON logs on stdout (pino): one line per event, fit for any log shipper (readable
 * lines instead when stdout is a terminal: stdoutDestination). Every line,
 * whatever logged it (our code, Fastify, yoga, an error's message or stack, the request log),
 * passes through the one secret-key redaction (nostr/secret-keys.ts) on its way out: pino's
 * `streamWrite` hook.
 */
export function createLogger(config: LogConfig, destination: pino.DestinationStream = stdoutDestination()): Logger {
  const logger = pino(loggerOptions(config.level), destination);
  destinations.set(logger, destination);
  return logger;
}

/** How long an exit waits for the log to be written (a reader of stdout that stopped reading). */
const EXIT_LOG_WAIT_MS = 2000;

/**
 * Exits with `code` once every line logged so far is written, in order. `logger.flush(cb)` does not
 * do that with sonic-boom's asynchronous stdout: gathering nothing (minLength 0), it calls back at
 * once, even while a write is still under way in the thread pool; process.exit then runs pino's
 * exit hook, which writes the later lines synchronously, ahead of it ("sync stopped" came out
 * before "stopping sync"), and the line under way can be lost. Ending the destination waits for
 * the write under way and the lines behind it; `close` follows the last of them.
 */
export function exitAfterLogs(logger: Logger, code: number): void {
  process.exitCode = code;
  const exit = () => process.exit(code);
  const destination = destinations.get(logger);
  if (!destination || !writtenAsynchronously.has(destination)) {
    logger.flush(exit);
    return;
  }
  const stream = destination as pino.DestinationStream & NodeJS.EventEmitter & { end(): void };
  stream.once('close', exit);
  stream.once('error', exit);
  setTimeout(exit, EXIT_LOG_WAIT_MS).unref();
  stream.end();
}

export interface RequestLogEntry {
  reqId: string;
  method: string;
  /** As received: redacted like every other line. */
  url: string;
  status: number;
  ms: number;
}

/** Writes the request lines of one request log (see createRequestLog). */
export interface RequestLog {
  (entry: RequestLogEntry): void;
  /** Hands the lines not yet written to the destination now (at close). */
  flush(): void;
}

/** Request lines are handed to the destination in pieces of this size, */
const REQUEST_LOG_PIECE_BYTES = 16 * 1024;
/** or this long after the first line of a piece, whichever comes first. */
export const REQUEST_LOG_MAX_DELAY_MS = 250;

/**
 * A destination that hands lines on in pieces: every write to stdout has a cost of its own (a
 * thread-pool round trip, ~30 µs of CPU), and line by line they took about a tenth of a loaded
 * service's CPU (BENCHMARKS.md). A line can be 250 ms late; flush() hands everything on at once.
 */
class PieceWriter {
  private pending: string[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly destination: pino.DestinationStream) {}

  write(line: string): void {
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (this.pendingBytes >= REQUEST_LOG_PIECE_BYTES) this.flush();
    // Unref'd: pending lines never keep a process alive; a service that stops flushes them first.
    else this.timer ??= setTimeout(() => this.flush(), REQUEST_LOG_MAX_DELAY_MS).unref();
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const piece = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    // Redacted here, a piece at a time, where other loggers redact each line (loggerOptions): the
    // same text comes out, as no run that spells a key crosses a line's end (secret-keys.ts), for
    // one scan of the piece instead of one call per line.
    this.destination.write(redactSecretKeys(piece));
  }
}

/**
 * The one line logged per request, at info, on pino's public API: a logger of the same options
 * (same shape, same redaction) whose destination gathers lines into pieces (PieceWriter), while the
 * service's other lines (errors) are written at once. Costs ~1 µs more per request than the
 * hand-built template it replaced (scripts/bench/request-log.ts, BENCHMARKS.md).
 */
export function createRequestLog(logger: Logger): RequestLog {
  const destination = destinations.get(logger);
  if (!destination) throw new Error('the request log needs a logger made by createLogger');
  const pieces = new PieceWriter(destination);
  // Its lines are redacted a piece at a time (PieceWriter.flush), not each by the hook.
  const requestLogger = pino({ ...loggerOptions('info'), hooks: {} }, pieces);
  const write = (entry: RequestLogEntry) => {
    if (logger.isLevelEnabled('info')) requestLogger.info(entry, 'request');
  };
  return Object.assign(write, { flush: () => pieces.flush() });
}
