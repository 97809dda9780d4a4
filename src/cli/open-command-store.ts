import type { Config } from '../config/env.js';
import type { Logger } from '../logger.js';
import type { EventStore } from '../store/event-store.js';
import { openStore } from '../store/open-store.js';

/**
 * The store for a one-shot or long-running CLI command (`import`, `sync`): opened and reachable, or
 * undefined after one line on stderr saying why (`nostr-lookup <command>: …`), for exit code 1.
 * `bulk`: a command that writes or reads in large batches (`import`, `relations`): long deadlines.
 */
export async function openCommandStore(command: string, config: Config, logger: Logger, { bulk = false }: { bulk?: boolean } = {}): Promise<EventStore | undefined> {
  let opened: ReturnType<typeof openStore>;
  try {
    opened = openStore(config.store, logger, { writer: true, bulk });
  } catch (error) {
    process.stderr.write(`nostr-lookup ${command}: ${(error as Error).message}\n`);
    return undefined;
  }
  const { store, ready, description } = opened;
  try {
    await ready(5000);
  } catch {
    process.stderr.write(`nostr-lookup ${command}: cannot reach ${description}\n`);
    await store.close();
    return undefined;
  }
  return store;
}
