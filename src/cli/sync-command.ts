import type { Config } from '../config/env.js';
import { RelaySync } from '../fill/relay-sync.js';
import { startMetricsServer } from '../http/routes/metrics.js';
import { metrics } from '../metrics/metrics.js';
import { exitAfterLogs, type Logger } from '../logger.js';
import { onFirstStopSignal } from '../stop-signals.js';
import { openCommandStore } from './open-command-store.js';

export interface SyncCommandOptions {
  /** Unix seconds where relays without a cursor start. */
  since?: number;
}

/**
 * `nostr-lookup sync`: runs until SIGTERM or SIGINT, then writes what it holds and the cursors, and
 * resolves with the exit code (0 after a clean stop, 1 if it could not start).
 */
export async function runSync(options: SyncCommandOptions, config: Config, logger: Logger): Promise<number> {
  if (config.relays.urls.length === 0) {
    process.stderr.write(`nostr-lookup sync: ${config.offline ? 'OFFLINE=true' : 'RELAYS is empty'}: there is nothing to follow\n`);
    return 1;
  }
  const store = await openCommandStore('sync', config, logger);
  if (!store) return 1;
  const sync = new RelaySync({
    relays: config.relays.urls,
    kinds: config.relays.syncKinds,
    firstSince: options.since,
    store,
    logger,
  });
  sync.start();
  metrics.followSync(sync.counts);
  // sync has no HTTP port: its metrics are served only on METRICS_PORT.
  const metricsServer =
    config.metrics.enabled && config.metrics.port !== undefined ? await startMetricsServer(config.http.host, config.metrics.port, logger) : undefined;
  const signal = await new Promise<NodeJS.Signals>((resolve) => onFirstStopSignal(resolve));
  logger.info({ signal }, 'stopping sync');
  const force = setTimeout(() => {
    logger.error('sync took too long to stop; exiting');
    exitAfterLogs(logger, 1);
  }, 10_000);
  force.unref();
  await Promise.all([sync.stop(), metricsServer?.close()]);
  await store.close();
  clearTimeout(force);
  return 0;
}
