import type { FastifyInstance } from 'fastify';
import type { Config } from './config/env.js';
import { buildApp } from './http/app.js';
import type { Logger } from './logger.js';
import { connectRedis, RedisEventStore, waitUntilReady } from './store/redis/redis-event-store.js';

/** A Redis URL fit for logs: no password. */
export function redactedRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'redis://(unparseable)';
  }
}

/** Opens the event store described by the configuration; logs connection trouble without flooding. */
export function openStore(config: Config, logger: Logger) {
  const client = connectRedis(config.redis);
  let lastError = '';
  client.on('error', (error: Error) => {
    // ioredis reports every reconnect attempt: log each distinct error once until it changes.
    if (error.message !== lastError)
      logger.warn({ err: { message: error.message } }, 'redis connection error');
    lastError = error.message;
  });
  client.on('ready', () => {
    lastError = '';
    logger.info(
      { redis: redactedRedisUrl(config.redis.url), keyPrefix: config.redis.keyPrefix },
      'redis ready',
    );
  });
  return { client, store: new RedisEventStore(client, config.redis.keyPrefix) };
}

export interface RunningService {
  app: FastifyInstance;
  close(): Promise<void>;
}

/**
 * `nostr-lookup serve`: wires the store, the HTTP app and shutdown. The service starts even while
 * Redis is down (lookups answer 500, /readyz 503) and recovers by itself when Redis returns.
 */
export async function startService(config: Config, logger: Logger): Promise<RunningService> {
  const { client, store } = openStore(config, logger);
  try {
    await waitUntilReady(client, 5000);
  } catch {
    logger.warn('event store not reachable yet: serving anyway; /readyz answers 503 until it is');
  }
  const app = buildApp({ store, config, logger });
  await app.listen({ port: config.http.port, host: config.http.host });
  let closing: Promise<void> | undefined;
  const close = () => {
    // In-flight requests finish, new connections are refused, then the store connection closes.
    closing ??= app.close().then(() => store.close());
    return closing;
  };
  return { app, close };
}

/** Stops the service cleanly on SIGTERM/SIGINT, or forcibly if that takes more than 10 seconds. */
export function closeOnSignals(service: RunningService, logger: Logger): void {
  const onSignal = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    // Buffered log lines are written out before the process exits.
    const exit = (code: number) => logger.flush(() => process.exit(code));
    service.close().then(
      () => {
        logger.info('stopped');
        exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'error while shutting down');
        exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}
