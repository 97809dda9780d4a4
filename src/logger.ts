import { type Logger, pino } from 'pino';
import type { LogConfig } from './config/env.js';

export type { Logger };

/** Structured JSON logs on stdout (pino): one line per event, fit for any log shipper. */
export function createLogger(
  config: LogConfig,
  destination: pino.DestinationStream = pino.destination(1),
): Logger {
  return pino(
    {
      level: config.level,
      base: { service: 'nostr-lookup' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
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
