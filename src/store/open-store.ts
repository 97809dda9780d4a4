import { Cluster } from 'ioredis';
import type { StoreConfig } from '../config/env.js';
import { metrics } from '../metrics/metrics.js';
import type { Logger } from '../logger.js';
import { LmdbEventStore } from './embedded/lmdb-event-store.js';
import type { EventStore } from './event-store.js';
import { describeSeeds } from '../config/redis-cluster-nodes.js';
import { connectHotCache, connectRedis, connectRedisCluster, waitUntilReady } from './redis/connect.js';
import { HotCache, type HotCacheSource } from './redis/hot-cache.js';
import type { RedisClient } from './redis/mget-by-slot.js';
import { RedisEventStore } from './redis/redis-event-store.js';

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

/**
 * The shortest deadline of a command sent by a bulk CLI command (`import`, `relations`), whatever
 * REDIS_TIMEOUT_MS says. A batch's commands are pipelined: the last waits in Redis for all before it
 * (a batch of 500 follow lists is seconds of Redis work), and a command given up on still runs
 * there, leaving figures the batch's retry cannot mend (docs/relationships.md, "A write interrupted"). At 1 s,
 * importing 600 follow lists of 1,000 follows timed out and left 2,537 figures wrong. The price: a
 * Redis that hangs with its connection open is noticed after this long, not after
 * REDIS_TIMEOUT_MS. `sync` keeps REDIS_TIMEOUT_MS: it has no backpressure (what relays send while
 * a write waits is queued behind it), so a long wait on a hung Redis would grow its memory.
 */
export const BULK_COMMAND_TIMEOUT_MS = 60_000;

/**
 * Opens the store the configuration names, and says at start which one and where. `writer`: the
 * store is opened by a CLI command (`import`, `sync`, `relations`), whose batches
 * REDIS_WAIT_REPLICAS confirms on replicas; `bulk`: one whose commands wait at least
 * BULK_COMMAND_TIMEOUT_MS (`import`, `relations`), reads on a cluster included.
 */
export function openStore(config: StoreConfig, logger: Logger, { writer = false, bulk = false }: { writer?: boolean; bulk?: boolean } = {}): OpenedStore {
  if (config.kind === 'embedded') {
    let store: LmdbEventStore;
    try {
      store = new LmdbEventStore(config.dataDir, { publicUrl: config.publicUrl, log: logger, noteSearch: config.noteSearch ?? false });
    } catch (error) {
      throw new StoreOpenError(`cannot open the embedded store in ${config.dataDir}: ${(error as Error).message}`);
    }
    logger.info({ store: 'embedded', engine: 'lmdb', dataDir: config.dataDir }, 'event store: embedded');
    return { store, description: `the embedded store in ${config.dataDir}`, ready: () => store.ping() };
  }
  let client: RedisClient;
  let where: Record<string, string | number>;
  let description: string;
  const commandTimeoutMs = bulk ? Math.max(config.timeoutMs, BULK_COMMAND_TIMEOUT_MS) : config.timeoutMs;
  if (config.kind === 'redis-cluster') {
    client = connectRedisCluster({ ...config, commandTimeoutMs });
    where = { store: 'redis-cluster', seedNodes: describeSeeds(config), keyPrefix: config.keyPrefix };
    description = `the Redis Cluster at ${where.seedNodes} (key prefix "${config.keyPrefix}")`;
  } else {
    client = connectRedis({ ...config, commandTimeoutMs });
    where = { store: 'redis', redis: redactedRedisUrl(config.url), keyPrefix: config.keyPrefix };
    description = `Redis at ${where.redis} (key prefix "${config.keyPrefix}")`;
  }
  const waitReplicas = writer ? config.waitReplicas : 0;
  if (waitReplicas > 0) where.waitReplicas = waitReplicas;
  let lastError = '';
  client.on('error', (error: Error) => {
    // ioredis reports every reconnect attempt: log each distinct error once until it changes.
    // The message alone, as words: a stack (or pino's empty one for a bare message) says nothing here.
    if (error.message !== lastError) logger.warn({ error: error.message }, `${where.store} connection error`);
    lastError = error.message;
  });
  client.on('ready', () => {
    lastError = '';
    logger.info(where, `${where.store} ready`);
  });
  // A cluster's nodes are connections of their own: a failed master is reported by them, each
  // node's errors logged once until they change (several nodes down must not alternate into a flood).
  if (client instanceof Cluster) {
    const lastNodeError = new Map<string, string>();
    client.on('node error', (error: Error, node: string) => {
      if (lastNodeError.get(node) !== error.message) logger.warn({ error: error.message, node }, 'redis-cluster node error');
      lastNodeError.set(node, error.message);
    });
    client.on('ready', () => lastNodeError.clear());
  }
  logger.info(where, `event store: ${where.store}`);
  // The hot cache serves lookups: `serve` only. On a cluster, a tracked reader and subscriber per master.
  let hotCache: HotCache | undefined;
  if (!writer && (config.hotCacheMb ?? 0) > 0) {
    const megabytes = config.hotCacheMb as number;
    const { timeoutMs } = config;
    const source: HotCacheSource =
      client instanceof Cluster && config.kind === 'redis-cluster'
        ? {
            cluster: client,
            connect: ({ host, port }) =>
              connectHotCache({
                node: {
                  host,
                  port,
                  ...(config.username ? { username: config.username } : {}),
                  ...(config.password ? { password: config.password } : {}),
                  ...(config.tls ? { tls: {} } : {}),
                },
                timeoutMs,
              }),
          }
        : connectHotCache({ url: (config as { url: string }).url, timeoutMs });
    let lastProblem = '';
    hotCache = new HotCache(source, megabytes * 2 ** 20, (on, problem) => {
      if (on) logger.info({ hotCacheMb: megabytes }, 'hot cache on: lookups answered in process, invalidated by Redis');
      else if (problem === undefined) logger.warn({ hotCacheMb: megabytes }, 'hot cache off until its Redis connections are back: lookups read Redis');
      // Each distinct problem once until it changes (an ACL refusing CLIENT would repeat every check).
      else if (problem !== lastProblem) logger.warn({ hotCacheMb: megabytes, problem }, 'hot cache off: lookups read Redis');
      lastProblem = problem ?? '';
    });
    metrics.followHotCache(hotCache);
  }
  return {
    store: new RedisEventStore(client, config.keyPrefix, { publicUrl: config.publicUrl, timeoutMs: config.timeoutMs, readTimeoutMs: commandTimeoutMs, waitReplicas, hotCache, packEvents: config.packEvents ?? true, noteSearch: config.noteSearch ?? false }),
    description,
    ready: (timeoutMs) => waitUntilReady(client, timeoutMs),
  };
}
