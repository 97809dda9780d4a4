import { type Logger, pino } from 'pino';
import type { LogConfig } from './config/env.js';

export type { Logger };

const SERVICE = 'nostr-lookup';

/** Structured JSON logs on stdout (pino): one line per event, fit for any log shipper. */
export function createLogger(
  config: LogConfig,
  destination: pino.DestinationStream = pino.destination(1),
): Logger {
  return pino(
    {
      level: config.level,
      base: { service: SERVICE },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

export interface RequestLogEntry {
  reqId: string;
  method: string;
  /** Already made safe to log (loggableUrl). */
  url: string;
  status: number;
  ms: number;
}

/**
 * The one line logged per request, at info: exactly what
 * `logger.child({ reqId }).info({ method, url, status, ms }, 'request')` writes (a test holds the
 * two equal), built as one template and written to the logger's destination. Generic pino
 * serialisation of this line was ~6% of the CPU of an `/event` (BENCHMARKS.md).
 */
export function createRequestLog(logger: Logger): (entry: RequestLogEntry) => void {
  const destination = (logger as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym];
  if (!destination) throw new Error('logger has no destination');
  return ({ reqId, method, url, status, ms }) => {
    if (!logger.isLevelEnabled('info')) return;
    destination.write(
      `{"level":"info","time":"${new Date().toISOString()}","service":"${SERVICE}","reqId":${JSON.stringify(reqId)},` +
        `"method":${JSON.stringify(method)},"url":${JSON.stringify(url)},"status":${status},"ms":${ms},"msg":"request"}\n`,
    );
  };
}

/**
 * A URL safe to log. A secret key pasted into a query must never reach the logs (DESIGN §1), in
 * any encoding, so a query that decodes to anything containing `nsec1` is dropped whole.
 */
export function loggableUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  let decoded: string;
  try {
    decoded = decodeURIComponent(url.replace(/\+/g, ' '));
  } catch {
    decoded = url;
  }
  return /nsec1/i.test(decoded) ? `${url.slice(0, queryStart)}?[redacted]` : url;
}
