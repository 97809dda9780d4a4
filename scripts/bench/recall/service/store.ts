// A clean store for each run: a key prefix of its own on the bench's private redis-server, or a new
// embedded-store directory; removed after the run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { deleteByPrefix } from '../../../../test/support/redis-server.js';

export type StoreKind = 'redis' | 'embedded';

export interface RunStore {
  /** The service's store variables (undefined: removed from the inherited environment). */
  env: Record<string, string | undefined>;
  cleanup(): Promise<void>;
}

export function freshStore(kind: StoreKind, redis: { url: string; admin: Redis } | undefined, tag: string): RunStore {
  if (kind === 'redis') {
    if (!redis) throw new Error('the Redis store needs the private redis-server');
    const prefix = `recall:${process.pid}:${tag}:`;
    return { env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix, DATA_DIR: undefined }, cleanup: () => deleteByPrefix(redis.admin, prefix) };
  }
  const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-recall-'));
  return { env: { REDIS_URL: undefined, DATA_DIR: dir }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Redis commands executed while `run` ran (CONFIG RESETSTAT, then INFO commandstats). Statistics are
 * server-wide: this is exact only on a redis-server nobody else uses, the bench's private one.
 */
export async function commandsDuring(admin: Redis, run: () => Promise<unknown>): Promise<number> {
  await admin.config('RESETSTAT');
  await run();
  const info = await admin.info('commandstats');
  let total = 0;
  for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (name !== 'info' && !name?.startsWith('config')) total += Number(calls);
  }
  return total;
}
