import { configuredRelays, type RelayConfig } from '../config/env.js';
import type { Logger } from '../logger.js';
import { RelayPool } from './relay-pool.js';
import { relayUrlForLog } from './relay-url.js';

/** The relay pool for `serve`, or undefined when RELAYS is empty (no relay traffic at all). */
export function createRelayPool(config: RelayConfig, logger: Logger): RelayPool | undefined {
  if (config.urls.length === 0) {
    const search = config.searchUrls.length > 0 ? '; SEARCH_RELAYS are not asked either' : '';
    logger.info(`RELAYS is empty: relay fetching is off (NIP-05 domains are still asked; OFFLINE=true stops them too)${search}`);
    return undefined;
  }
  logger.info(
    {
      relays: config.urls.map(relayUrlForLog),
      indexers: config.indexerUrls.map(relayUrlForLog),
      ...(config.searchUrls.length > 0 ? { search: config.searchUrls.map(relayUrlForLog) } : {}),
      outbox: config.outbox.enabled ? config.outbox : false,
      maxConnections: config.maxConnections,
      timeoutMs: config.timeoutMs,
    },
    'fetching misses from relays',
  );
  return new RelayPool({
    logger,
    allowPrivateHints: config.allowPrivateHints,
    maxConnections: config.maxConnections,
    configured: configuredRelays(config),
    connectTimeoutMs: config.timeoutMs,
  });
}
