import { type Logger, pino } from 'pino';
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
  return pino.destination({ dest: 1, sync: false });
}

/** Where each logger made by createLogger writes, for the request log (which writes there in pieces). */
const destinations = new WeakMap<Logger, pino.DestinationStream>();

/**
 * Structured JSON logs on stdout (pino): one line per event, fit for any log shipper. Every line,
 * whatever logged it (our code, Fastify, yoga, an error's message or stack), passes through the one
 * secret-key redaction (nostr/secret-keys.ts) on its way out; so do the request log's pieces.
 */
export function createLogger(config: LogConfig, destination: pino.DestinationStream = asyncStdout()): Logger {
  const logger = pino(
    {
      level: config.level,
      base: { service: SERVICE },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      hooks: { streamWrite: redactSecretKeys },
    },
    destination,
  );
  destinations.set(logger, destination);
  return logger;
}

export interface RequestLogEntry {
  reqId: string;
  method: string;
  /** As received: the request log redacts secret keys like every other line. */
  url: string;
  status: number;
  ms: number;
}

/** Writes the request lines of one request-log (see createRequestLog). */
export interface RequestLog {
  (entry: RequestLogEntry): void;
  /** Hands the lines not yet written to the logger's destination now (at close). */
  flush(): void;
}

/** Request lines are handed to the destination in pieces of this size, */
const REQUEST_LOG_BATCH_BYTES = 16 * 1024;
/** or this long after the first line of a piece, whichever comes first. */
export const REQUEST_LOG_MAX_DELAY_MS = 250;

/** `new Date().toISOString()`, made once per millisecond: at load, several requests share one. */
let isoMillisecond = Number.NaN;
let isoText = '';
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMillisecond) {
    isoMillisecond = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
}

/**
 * The one line logged per request, at info: exactly what
 * `logger.child({ reqId }).info({ method, url, status, ms }, 'request')` writes (a test holds the
 * two equal), built as one template. Lines go to the logger's destination in pieces of 16 KiB, or
 * 250 ms after the first line of a piece: every write to the destination has a cost of its own
 * (pino's asynchronous destination ~3 µs per call and more as its buffer grows, a thread-pool round
 * trip ~30 µs per file write), and generic pino serialisation of this line was ~6% of the CPU of an
 * `/event` (BENCHMARKS.md). So a line can appear up to 250 ms late, and a crash can lose the last
 * 250 ms. `flush()` hands over what is pending (the service calls it at close).
 */
export function createRequestLog(logger: Logger): RequestLog {
  const destination = destinations.get(logger);
  if (!destination) throw new Error('the request log needs a logger made by createLogger');
  let pending: string[] = [];
  let pendingBytes = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0) return;
    const lines = pending.join('');
    pending = [];
    pendingBytes = 0;
    destination.write(redactSecretKeys(lines));
  };
  const write = ({ reqId, method, url, status, ms }: RequestLogEntry) => {
    if (!logger.isLevelEnabled('info')) return;
    const line =
      `{"level":"info","time":"${isoNow()}","service":"${SERVICE}","reqId":${JSON.stringify(reqId)},` +
      `"method":${JSON.stringify(method)},"url":${JSON.stringify(url)},"status":${status},"ms":${ms},"msg":"request"}\n`;
    pending.push(line);
    pendingBytes += line.length;
    if (pendingBytes >= REQUEST_LOG_BATCH_BYTES) flush();
    // Unref'd: pending lines never keep a process alive; a service that stops flushes them first.
    else timer ??= setTimeout(flush, REQUEST_LOG_MAX_DELAY_MS).unref();
  };
  return Object.assign(write, { flush });
}
