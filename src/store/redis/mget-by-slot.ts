import calculateSlot from 'cluster-key-slot';
import { Cluster, type Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

/**
 * MGET that also works on Redis Cluster: a cluster refuses multi-key commands across hash slots, so
 * keys are grouped by slot, one MGET per slot, all sent at once. Each goes straight to the
 * connection of the master serving its slot (the writes of one event-loop turn leave in one socket
 * write per node: coalesced-writes.ts), so a batch costs one round trip per node. Going through
 * the Cluster object instead costs each command a redirection handler of its own, about a third of
 * the service's time on a cluster; it is kept for what needs it: a slot whose master has no ready
 * connection, and any command refused (MOVED, ASK, a closed connection), which is sent again
 * through the Cluster object, which follows redirections and refreshes its slot table.
 * On a single Redis it is one MGET. Values come as the bytes Redis holds (events are written into
 * responses as they are, never decoded).
 */
export async function mgetBySlot(client: RedisClient, keys: readonly string[]): Promise<(Buffer | null)[]> {
  if (keys.length === 0) return [];
  if (!(client instanceof Cluster)) return client.mgetBuffer(...keys);
  const groups = groupBySlot(keys);
  const values: (Buffer | null)[] = new Array(keys.length).fill(null);
  await Promise.all(
    [...groups].map(async ([slot, positions]) => {
      const slotKeys = positions.map((position) => keys[position] as string);
      const owner = masterOf(client, slot);
      const replies = owner ? await owner.mgetBuffer(...slotKeys).catch(() => client.mgetBuffer(...slotKeys)) : await client.mgetBuffer(...slotKeys);
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

/** Each cluster's master connections by node key (`host:port`, as its slot table names them). */
const connectionsOf = new WeakMap<Cluster, Map<string, Redis>>();

/** The ready connection of the master the cluster's slot table names for `slot`, if any. */
function masterOf(cluster: Cluster, slot: number): Redis | undefined {
  const key = cluster.slots[slot]?.[0];
  if (key === undefined) return undefined;
  let connections = connectionsOf.get(cluster);
  if (!connections) {
    connections = new Map();
    connectionsOf.set(cluster, connections);
    // Rebuilt when the cluster adds or drops a connection (a failover, a resharding).
    const forget = () => connectionsOf.get(cluster)?.clear();
    cluster.on('+node', forget);
    cluster.on('-node', forget);
  }
  // Also rebuilt when the slot table names a master it does not hold: a replica promoted by a
  // failover keeps its connection, which changes role without the cluster announcing it.
  if (!connections.has(key)) {
    connections.clear();
    for (const [nodeKey, node] of mastersByKey(cluster)) connections.set(nodeKey, node);
  }
  const owner = connections.get(key);
  return owner?.status === 'ready' ? owner : undefined;
}

/** The cluster's master connections by node key (`host:port`, as its slot table names them). */
export function mastersByKey(cluster: Cluster): Map<string, Redis> {
  return new Map(cluster.nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]));
}
