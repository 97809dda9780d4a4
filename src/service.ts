import type { FastifyInstance } from 'fastify';
import type { Config } from './config/env.js';
import { ReadThrough } from './fill/read-through.js';
import { buildApp } from './http/app.js';
import { startMetricsServer } from './http/routes/metrics.js';
import { exitAfterLogs, type Logger } from './logger.js';
import { createGuardedFetcher } from './net/guarded-fetch.js';
import { createNip05 } from './nip05/nip05.js';
import { ZapProviders } from './zaps/zap-providers.js';
import { createRelayPool } from './relays/create-relay-pool.js';
import { openStore } from './store/open-store.js';
import { onFirstStopSignal } from './stop-signals.js';

export interface RunningService {
  app: FastifyInstance;
  close(): Promise<void>;
}

/**
 * `nostr-lookup serve`: wires the store, the HTTP app and shutdown. The service starts even while
 * Redis is down (lookups answer 500, /readyz 503) and recovers by itself when Redis returns.
 */
export async function startService(config: Config, logger: Logger): Promise<RunningService> {
  const { store, ready } = openStore(config.store, logger);
  try {
    await ready(5000);
  } catch {
    logger.warn('event store not reachable yet: serving anyway; /readyz answers 503 until it is');
  }
  // OFFLINE: no relay pool and no NIP-05 (names answer nip05_unresolvable): nothing leaves but store traffic.
  if (config.offline) logger.info('OFFLINE=true: no outside traffic (no relays whatever RELAYS says, no NIP-05 resolution or verification, no zap provider checks)');
  const pool = config.offline ? undefined : createRelayPool(config.relays, logger);
  const fill = pool && new ReadThrough({ pool, store, config: config.relays, logger });
  // One guarded fetcher for NIP-05 domains and LNURL pay endpoints: one policy, one set of slots.
  const fetcher = config.offline ? undefined : createGuardedFetcher(config.nip05);
  const nip05 = fetcher && createNip05({ marks: store.marks, logger, config: config.nip05, fetcher });
  if (nip05) logger.info({ maxConcurrent: config.nip05.maxConcurrent, maxPerAddress: config.nip05.maxPerDomain }, 'resolving NIP-05 names and verifying declared ones');
  // Zap recipients' LNURL pay endpoints, checked in the background after reads (zaps/zap-providers.ts).
  const zaps = fetcher && new ZapProviders({ marks: store.marks, logger, config: config.zaps, fetcher });
  const app = buildApp({ store, fill, config, logger, ...(nip05 ? { nip05 } : {}), ...(zaps ? { zaps } : {}) });
  await app.listen({ port: config.http.port, host: config.http.host });
  const metricsServer =
    config.metrics.enabled && config.metrics.port !== undefined ? await startMetricsServer(config.http.host, config.metrics.port, logger) : undefined;
  let closing: Promise<void> | undefined;
  const close = () => {
    // In-flight requests finish, new connections are refused, the relay pool closes (background
    // profile refreshes end), NIP-05 exchanges end, then the store connection closes.
    closing ??= Promise.all([app.close(), metricsServer?.close()]).then(async () => {
      if (pool) {
        logger.info({ peakConnections: pool.peakConnections }, 'relay pool closed');
        pool.close();
      }
      await Promise.all([fill?.settled(), nip05?.close(), zaps?.close()]);
      fetcher?.close();
      return store.close();
    });
    return closing;
  };
  return { app, close };
}


/** Stops the service cleanly on SIGTERM/SIGINT (the first; repeats are ignored), or forcibly if that takes more than 10 seconds. */
export function closeOnSignals(service: RunningService, logger: Logger): void {
  const onSignal = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    // Buffered log lines are written out, in order, before the process exits.
    const exit = (code: number) => exitAfterLogs(logger, code);
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
  onFirstStopSignal(onSignal);
}
