import type { StoreConfig } from '../config/env.js';
import type { Logger } from '../logger.js';
import { LmdbEventStore } from './embedded/lmdb-event-store.js';
import type { EventStore } from './event-store.js';
import { connectRedis, RedisEventStore, waitUntilReady } from './redis/redis-event-store.js';

export interface OpenedStore {
  store: EventStore;
  /** Where the index lives, fit for logs and messages (no password). */
  description: string;
  /** Resolves when the store answers, rejects after `timeoutMs`. */
  ready(timeoutMs: number): Promise<void>;
}

/** The configured store cannot be opened at all (as opposed to being briefly unreachable). */
export class StoreOpenError extends Error {
  override name = 'StoreOpenError';
}

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

/** Opens the store the configuration names, and says at start which one and where. */
export function openStore(config: StoreConfig, logger: Logger): OpenedStore {
  if (config.kind === 'embedded') {
    let store: LmdbEventStore;
    try {
      store = new LmdbEventStore(config.dataDir, { publicUrl: config.publicUrl });
    } catch (error) {
      throw new StoreOpenError(`cannot open the embedded store in ${config.dataDir}: ${(error as Error).message}`);
    }
    logger.info({ store: 'embedded', engine: 'lmdb', dataDir: config.dataDir }, 'event store: embedded');
    if (store.readOnly) logger.warn({ dataDir: config.dataDir }, 'DATA_DIR is on a read-only disk: serving what it holds, storing nothing');
    return { store, description: `the embedded store in ${config.dataDir}`, ready: () => store.ping() };
  }
  const client = connectRedis(config);
  const where = { store: 'redis', redis: redactedRedisUrl(config.url), keyPrefix: config.keyPrefix };
  let lastError = '';
  client.on('error', (error: Error) => {
    // ioredis reports every reconnect attempt: log each distinct error once until it changes.
    if (error.message !== lastError) logger.warn({ err: { message: error.message } }, 'redis connection error');
    lastError = error.message;
  });
  client.on('ready', () => {
    lastError = '';
    logger.info(where, 'redis ready');
  });
  logger.info(where, 'event store: redis');
  return {
    store: new RedisEventStore(client, config.keyPrefix, config.publicUrl),
    description: `Redis at ${where.redis} (key prefix "${config.keyPrefix}")`,
    ready: (timeoutMs) => waitUntilReady(client, timeoutMs),
  };
}
