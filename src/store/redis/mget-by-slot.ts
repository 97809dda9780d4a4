import calculateSlot from 'cluster-key-slot';
import { Cluster, type Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

/**
 * MGET that also works on Redis Cluster: a cluster refuses multi-key commands across hash slots, so
 * keys are grouped by slot and the groups sent in parallel. On a single Redis it is one MGET. Values
 * come as the bytes Redis holds (events are written into responses as they are, never decoded).
 */
export async function mgetBySlot(client: RedisClient, keys: readonly string[]): Promise<(Buffer | null)[]> {
  if (keys.length === 0) return [];
  if (!(client instanceof Cluster)) return client.mgetBuffer(...keys);
  const groups = groupBySlot(keys);
  const values: (Buffer | null)[] = new Array(keys.length).fill(null);
  await Promise.all(
    [...groups.values()].map(async (positions) => {
      const replies = await client.mgetBuffer(...positions.map((position) => keys[position] as string));
      positions.forEach((position, index) => {
        values[position] = replies[index] ?? null;
      });
    }),
  );
  return values;
}

/** Positions of the keys, grouped by hash slot. */
export function groupBySlot(keys: readonly string[]): Map<number, number[]> {
  const groups = new Map<number, number[]>();
  keys.forEach((key, position) => {
    const slot = calculateSlot(key);
    const group = groups.get(slot);
    if (group) group.push(position);
    else groups.set(slot, [position]);
  });
  return groups;
}
