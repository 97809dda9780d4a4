// `npm run bench:follows-cluster`: what popular pubkeys do to a Redis Cluster. A
// popular pubkey's followers are in one hash slot (keys.ts `fl:{…}`, or its bucket logs), so every list
// naming it writes to one master and its counts and pages are read there. This imports follow
// lists drawn with popularity ~ 1/rank into a local 3-master cluster (private redis-server
// processes, stopped at the end) and prints, per master: the share of the follow writes and of the
// follow index's memory, where the most followed pubkey's key lives and its size, and the read time
// of its followersCount against a pubkey with a few followers.
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { importEvents } from '../../src/import/import-events.js';
import { serializeEvent } from '../../src/nostr/event.js';
import { connectRedisCluster, waitUntilReady } from '../../src/store/redis/connect.js';
import { redisKeys } from '../../src/store/redis/keys.js';
import { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { startLocalCluster } from '../../test/support/redis-cluster.js';
import { followedPool, makeFollowLists } from './dataset.js';
import { fixed, rate } from './store-pair.js';

const { values: options } = parseArgs({
  options: {
    lists: { type: 'string', default: '2000' },
    follows: { type: 'string', default: '1000' },
    pool: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '200' },
  },
});

/** Microseconds a node has spent running scripts (EVALSHA and EVAL: the follow writes), from INFO commandstats. */
async function scriptCalls(node: Redis): Promise<number> {
  const info = await node.info('commandstats');
  let usec = 0;
  for (const [, , spent] of info.matchAll(/^cmdstat_(evalsha|eval):calls=\d+,usec=(\d+)/gm)) usec += Number(spent);
  return usec;
}

async function usedMemory(node: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await node.info('memory'))?.[1] ?? 0);
}

/** Median of `rounds` timings of `run`, in milliseconds. */
async function median(rounds: number, run: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

async function main() {
  const lists = Number(options.lists);
  const follows = Number(options.follows);
  const rounds = Number(options.rounds);
  const pool = followedPool(Number(options.pool));
  process.stderr.write(`signing ${lists} follow lists of ${follows} follows\n`);
  const events = makeFollowLists(lists, follows, pool);
  const cluster = await startLocalCluster();
  const prefix = 'folc:';
  const client = connectRedisCluster({ nodes: cluster.nodes.map(({ port }) => ({ host: '127.0.0.1', port })), tls: false, timeoutMs: 30_000 });
  const store = new RedisEventStore(client, prefix, { timeoutMs: 30_000 });
  let masters: { port: number; admin: Redis }[] = [];
  try {
    await waitUntilReady(client, 10_000);
    masters = (await cluster.masters()).map(({ port }) => ({ port, admin: new Redis(port, '127.0.0.1') }));
    const calls = await Promise.all(masters.map(({ admin }) => scriptCalls(admin)));
    const memory = await Promise.all(masters.map(({ admin }) => usedMemory(admin)));
    const started = performance.now();
    const summary = await importEvents(Readable.from(events.map((event) => `${serializeEvent(event)}\n`)), store);
    if (summary.stored !== lists) throw new Error(`stored ${summary.stored} of ${lists}`);
    const importRate = rate(lists, (performance.now() - started) / 1000);
    const callsAfter = await Promise.all(masters.map(({ admin }) => scriptCalls(admin)));
    const memoryAfter = await Promise.all(masters.map(({ admin }) => usedMemory(admin)));

    // The most followed pubkey (rank 1) and one followed by a few.
    const counts = await store.relations.followCounts(pool.slice(0, 5000));
    const hot = pool[0] as string;
    const fewIndex = counts.findIndex((count) => count.followers > 0 && count.followers <= 10);
    const few = pool[fewIndex] as string;
    // Its followers: one log while few, else bucket logs beside a depth key, all in its slot.
    const hotKeys = redisKeys(prefix).follows(hot);
    const slot = Number(await client.cluster('KEYSLOT', hotKeys.followers));
    let holder = -1;
    let hotBytes = 0;
    for (const [index, { admin }] of masters.entries()) {
      const named = [hotKeys.followers, hotKeys.depth];
      const depth = await admin.get(hotKeys.depth).catch(() => null);
      if (depth) for (let bucket = 0; bucket < 16 ** Number(depth.split(' ')[0]); bucket++) named.push(`${hotKeys.buckets}${bucket.toString(16).padStart(Number(depth.split(' ')[0]), '0')}`);
      for (const key of named) {
        const usage = await admin.memory('USAGE', key, 'SAMPLES', 0).catch(() => null);
        if (typeof usage === 'number') {
          holder = index;
          hotBytes += usage;
        }
      }
    }
    const hotRead = await median(rounds, () => store.relations.followCounts([hot]));
    const fewRead = await median(rounds, () => store.relations.followCounts([few]));
    const hotPage = await median(rounds, () => store.relations.followers(hot, null, 100));

    const totalCalls = callsAfter.reduce((sum, value, index) => sum + value - (calls[index] ?? 0), 0);
    const totalMemory = memoryAfter.reduce((sum, value, index) => sum + value - (memory[index] ?? 0), 0);
    const rows = [
      '| what | figure |',
      '| --- | --- |',
      `| lists imported into the cluster (${lists} of ${follows} follows, popularity ~ 1/rank over ${pool.length} pubkeys) | ${fixed(importRate)} lists/s |`,
      ...masters.map(
        ({ port }, index) =>
          `| master ${index + 1} (:${port}): share of the time spent in scripts, of used_memory grown | ${((((callsAfter[index] ?? 0) - (calls[index] ?? 0)) / totalCalls) * 100).toFixed(1)}% of ${(totalCalls / 1e6).toFixed(1)} s, ${((((memoryAfter[index] ?? 0) - (memory[index] ?? 0)) / totalMemory) * 100).toFixed(1)}% of ${(totalMemory / 2 ** 20).toFixed(1)} MiB |`,
      ),
      `| the most followed pubkey: followers (share of all follows), its keys' slot and master, MEMORY USAGE of them | ${counts[0]?.followers} followers (${(((counts[0]?.followers ?? 0) / (lists * follows)) * 100).toFixed(2)}%), slot ${slot}, master ${holder + 1}, ${(hotBytes / 2 ** 20).toFixed(2)} MiB |`,
      `| followersCount of it against one with ${counts[fewIndex]?.followers} followers (median of ${rounds}) | ${hotRead.toFixed(3)} ms vs ${fewRead.toFixed(3)} ms |`,
      `| a page of 100 of its followers (median of ${rounds}) | ${hotPage.toFixed(3)} ms |`,
    ];
    process.stdout.write(`${rows.join('\n')}\n`);
  } finally {
    for (const { admin } of masters) admin.disconnect();
    client.disconnect();
    await cluster.stop();
  }
}

await main();
