import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './mget-by-slot.js';
import type { RedisCommands } from './redis-commands.js';

/** Keys per SCAN step. */
const SCAN_COUNT = 1000;

/** SCAN over every master (a cluster's keys are spread over them), in batches, for maintenance commands. */
export async function* scanKeys(client: RedisClient, commands: RedisCommands, pattern: string): AsyncIterable<string[]> {
  const nodes: Redis[] = client instanceof Cluster ? client.nodes('master') : [client];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await commands.run(() => node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT));
      cursor = next;
      if (keys.length > 0) yield keys;
    } while (cursor !== '0');
  }
}

/** A key prefix as a literal in a SCAN pattern. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
