import type { Redis } from 'ioredis';

/** MEMORY USAGE summed over every key matching `pattern`. */
export async function totalUsage(admin: Redis, pattern: string): Promise<{ keys: number; bytes: number }> {
  let cursor = '0';
  let keys = 0;
  let bytes = 0;
  do {
    const [next, found] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    const pipeline = admin.pipeline();
    for (const key of found) pipeline.memory('USAGE', key, 'SAMPLES', 0);
    for (const [, usage] of (await pipeline.exec()) ?? []) bytes += Number(usage);
    keys += found.length;
  } while (cursor !== '0');
  return { keys, bytes };
}
