import { existsSync } from 'node:fs';
import type { Config } from '../config/env.js';
import type { Logger } from '../logger.js';
import { type IndexSummary, summarizeIndex } from '../store/index-summary.js';
import { openCommandStore } from './open-command-store.js';

/** Well-known kinds by name, for the human-readable summary (NIP-01, 02, 09, 18, 22, 25, 57, 62, 65). */
const KIND_NAMES: Readonly<Record<string, string>> = {
  0: 'profiles',
  1: 'notes',
  3: 'follow lists',
  5: 'deletion requests',
  6: 'reposts',
  7: 'reactions',
  16: 'generic reposts',
  62: 'requests to vanish',
  1111: 'comments',
  9735: 'zap receipts',
  10002: 'relay lists',
};

/** The summary as `stats` prints it: one line per figure, one per kind held. */
export function summaryLines(summary: IndexSummary): string[] {
  const megabytes = summary.storedBytes === null ? 'unknown' : `${(summary.storedBytes / 1_000_000).toFixed(1)}`;
  const line = (label: string, value: string | number) => `${label.padEnd(14)}${value}`;
  return [
    line('events', summary.events),
    ...Object.entries(summary.kinds).map(([kind, count]) => `  kind ${kind.padEnd(6)} ${String(count).padStart(8)}${KIND_NAMES[kind] ? `  ${KIND_NAMES[kind]}` : ''}`),
    line('profiles', summary.profiles),
    line('follow lists', summary.followLists),
    line('follows', summary.follows),
    line('notifications', summary.notifications),
    line('store', `${megabytes}${summary.storedBytes === null ? '' : ' MB'}`),
  ];
}

/**
 * `nostr-lookup stats`: how full the index is (servable events by kind, profiles, follow lists,
 * follows, notifications, the store's bytes), from counters the index keeps: as cheap on a full index as on an empty one, and
 * safe beside a running service. Exit 0, or 1 when the store cannot be read.
 */
export async function runStats(options: { json: boolean }, config: Config, logger: Logger): Promise<number> {
  // Opening the embedded store makes its directory: a mistyped DATA_DIR would read as an empty index.
  if (config.store.kind === 'embedded' && !existsSync(config.store.dataDir)) {
    process.stderr.write(`nostr-lookup stats: no store in ${config.store.dataDir} (DATA_DIR)\n`);
    return 1;
  }
  const store = await openCommandStore('stats', config, logger);
  if (!store) return 1;
  try {
    const summary = await summarizeIndex(store);
    process.stdout.write(options.json ? `${JSON.stringify(summary)}\n` : `${summaryLines(summary).join('\n')}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`nostr-lookup stats: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await store.close();
  }
}
