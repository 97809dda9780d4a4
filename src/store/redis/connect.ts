import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { timeoutSignal, untilAborted } from '../../abortable.js';
import type { ClusterSeeds } from '../../config/redis-cluster-nodes.js';
import { StoreUnavailableError } from '../event-store.js';
import type { TrackedPair } from './hot-cache.js';
import type { RedisClient } from './mget-by-slot.js';

/** A reconnect every 200 ms more, up to every 2 s: the service recovers by itself, without a storm. */
const reconnectDelay = (attempt: number) => Math.min(attempt * 200, 2000);

/**
 * Connects to Redis for the event index. While Redis is unreachable, commands fail at once instead of
 * queueing (no request hangs), each command has a deadline, and the client keeps reconnecting in the
 * background so the service recovers by itself. `timeoutMs` (REDIS_TIMEOUT_MS) bounds connecting and
 * each command; `commandTimeoutMs`, where given, each command instead (a CLI writer's: open-store.ts).
 * A command in flight when the connection drops fails instead of being sent again on the next: Redis
 * may have run it (its reply was lost), and a write sent twice would apply twice (the caller retries
 * what failed; the relationship scripts count each event once whatever comes again).
 */
export function connectRedis(config: { url: string; timeoutMs: number; commandTimeoutMs?: number }, extra: RedisOptions = {}): Redis {
  return new Redis(config.url, {
    ...extra,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 1,
    commandTimeout: config.commandTimeoutMs ?? config.timeoutMs,
    connectTimeout: Math.max(config.timeoutMs, 2000),
    retryStrategy: reconnectDelay,
    // Off: auto-pipelining allocates a Pipeline per tick and cost /event ~30% of its CPU
    // (BENCHMARKS.md); commands issued together are still pipelined on the one connection.
    enableAutoPipelining: false,
  });
}

/**
 * The hot cache's two connections (hot-cache.ts): `reader`, tracked, as connectRedis; `subscriber`,
 * RESP2, whose invalidations arrive as Pub/Sub messages (ioredis drops RESP3's invalidate pushes),
 * subscribed by the cache itself after it has asked its id, so never resubscribed by ioredis. Neither
 * resends a command in flight on a new connection: the cache starts again from the connection's
 * 'ready', and a SUBSCRIBE or TRACKING sent again there would apply to the wrong connection.
 * Of a single Redis (`url`), or of one master of a cluster (`node`: its host and port, the
 * cluster's credentials and TLS).
 */
export function connectHotCache(config: ({ url: string } | { node: RedisOptions }) & { timeoutMs: number }): TrackedPair {
  const open = (options: RedisOptions) => ('url' in config ? new Redis(config.url, options) : new Redis({ ...config.node, ...options }));
  const shared: RedisOptions = {
    autoResendUnfulfilledCommands: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: Math.max(config.timeoutMs, 2000),
    retryStrategy: reconnectDelay,
  };
  // As connectRedis' client (auto-pipelining off, a deadline per command).
  const reader = open({ ...shared, commandTimeout: config.timeoutMs, enableAutoPipelining: false });
  const subscriber = open({ ...shared, protocol: 2, autoResubscribe: false });
  return { reader, subscriber };
}

/**
 * Connects to a Redis Cluster from its seed nodes, with the behaviour of connectRedis: no queueing
 * while the cluster is unreachable (commands fail at once), a deadline per command, reconnection in
 * the background. MOVED and ASK are followed by the client (and MOVED refreshes its slot table); a
 * master that fails is retried briefly (the slot table is refreshed meanwhile), so that a failover
 * costs the requests of its window, not more. Reads and writes go to masters only: a replica may lag
 * behind what a client just wrote.
 */
export function connectRedisCluster(config: ClusterSeeds & { timeoutMs: number; commandTimeoutMs?: number }): Cluster {
  const cluster = new Cluster(
    config.nodes.map(({ host, port }) => ({ host, port })),
    {
      enableOfflineQueue: false,
      scaleReads: 'master',
      // A command follows at most this many redirections or failover retries; for reads, the
      // store's own deadline (RedisCommands.read) bounds the time they take together.
      maxRedirections: 5,
      retryDelayOnFailover: 50,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      slotsRefreshTimeout: Math.max(config.timeoutMs, 1000),
      // The slot table is also read every 5 s: a failover is noticed even by a client sending
      // nothing to the failed master.
      slotsRefreshInterval: 5000,
      clusterRetryStrategy: reconnectDelay,
      enableAutoPipelining: false,
      // TLS certificates name hosts, not the addresses a lookup returns: keep the names.
      ...(config.tls ? { dnsLookup: (address: string, callback: (error: null, address: string) => void) => callback(null, address) } : {}),
      redisOptions: {
        // As connectRedis: a command in flight when its connection drops fails, never sent twice.
        autoResendUnfulfilledCommands: false,
        maxRetriesPerRequest: 1,
        commandTimeout: config.commandTimeoutMs ?? config.timeoutMs,
        connectTimeout: Math.max(config.timeoutMs, 2000),
        ...(config.username ? { username: config.username } : {}),
        ...(config.password ? { password: config.password } : {}),
        ...(config.tls ? { tls: {} } : {}),
      },
    },
  );
  // Without an offline queue, ioredis refuses a command for a node whose connection is still being
  // opened ("Connection is closed"), then retries it a moment later on another node, which answers
  // MOVED: the first commands to each master would pay that, and could overtake later ones. So every
  // master's connection is opened as soon as it is known, not by its first command.
  const connectMasters = () => {
    if (cluster.status !== 'ready') return;
    for (const node of cluster.nodes('master')) if (node.status === 'wait') node.connect().catch(() => {});
  };
  cluster.on('ready', connectMasters);
  cluster.on('refresh', connectMasters);
  return cluster;
}

/** Resolves when the client is ready, or rejects after `timeoutMs`. */
export async function waitUntilReady(client: RedisClient, timeoutMs: number): Promise<void> {
  if (client.status === 'ready' && client instanceof Redis) return;
  let onReady!: () => void;
  const ready = new Promise<boolean>((resolve) => {
    onReady = () => resolve(true);
    if (client.status === 'ready') resolve(true);
    else client.once('ready', onReady);
  });
  const deadline = timeoutSignal(timeoutMs);
  const inTime = await untilAborted(ready, deadline, false);
  client.off('ready', onReady);
  if (!inTime) throw new StoreUnavailableError();
  // A cluster is ready once it has its slot table: ready to serve once each master's connection is.
  if (client instanceof Cluster) {
    const connected = Promise.all(client.nodes('master').map((node) => node.ping())).then(() => true, () => false);
    if (!(await untilAborted(connected, deadline, false))) throw new StoreUnavailableError();
  }
}
