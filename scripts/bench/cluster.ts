// `npm run bench -- --cluster`: the same service on one Redis and on a Redis Cluster of 3 masters
// (each with a replica), side by side in one run: `/event` for each K and
// `/user-profile`, with the Redis commands per request and, for one isolated `/event`, the round
// trips and socket writes per connection; then the memory per event and per profile, from which
// BENCHMARKS.md's capacity model is calculated. Both Redis setups are private processes started
// here from redis-server, so that they start equal; the section is written into BENCHMARKS.md
// between its markers.
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { Cluster, Redis } from 'ioredis';
import { connectRedis, connectRedisCluster, waitUntilReady } from '../../src/store/redis/connect.js';
import { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { startLocalCluster } from '../../test/support/redis-cluster.js';
import { freePort, startPrivateRedis } from '../../test/support/redis-server.js';
import { identity, makeNotes, makeProfiles } from './dataset.js';
import { cycle, log, measureInterleaved, type Row, startProcess, stop, type Target, totalCommands } from './harness.js';

export interface ClusterBenchOptions {
  ks: number[];
  profileCount: number;
  noteCount: number;
  duration: number;
  connections: number;
  rounds: number;
  output: URL;
}

const START = '<!-- cluster-bench:start -->';
const END = '<!-- cluster-bench:end -->';

/** used_memory summed over `nodes` (INFO memory). */
async function usedMemory(nodes: readonly Redis[]): Promise<number> {
  let total = 0;
  for (const node of nodes) total += Number(/used_memory:(\d+)/.exec(await node.info('memory'))?.[1] ?? 0);
  return total;
}

/**
 * The store calls of one `/event` without relays (the event by id, then its profiles), each issued
 * as the service issues them, with every socket write counted per connection: round trips are the
 * sequential steps, writes per step the connections they went to.
 */
async function roundTripsOfOneEvent(store: RedisEventStore, id: string): Promise<{ steps: number; writes: number; connections: number }> {
  const { client } = store;
  const connections = client instanceof Cluster ? client.nodes('master') : [client];
  const writes = new Map<Redis, number>();
  const restore: (() => void)[] = [];
  for (const connection of connections) {
    // What reaches the socket: a corked stream hands its buffered writes over in one _writev.
    const stream = connection.stream as unknown as Record<'_write' | '_writev', ((...args: unknown[]) => unknown) | undefined>;
    for (const method of ['_write', '_writev'] as const) {
      const original = stream[method];
      if (!original) continue;
      stream[method] = (...args: unknown[]) => {
        writes.set(connection, (writes.get(connection) ?? 0) + 1);
        return original.apply(stream, args);
      };
      restore.push(() => {
        stream[method] = original;
      });
    }
  }
  try {
    const [held] = await store.getEvents([id]);
    const event = held?.event;
    if (!event) throw new Error('bench event not found');
    const pubkeys = [event.pubkey, ...event.tags.filter((tag) => tag[0] === 'p').map((tag) => tag[1] as string)];
    await store.getProfiles(pubkeys);
    // Corked writes leave at the end of the turn.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    for (const undo of restore) undo();
  }
  return { steps: 2, writes: [...writes.values()].reduce((sum, count) => sum + count, 0), connections: writes.size };
}

export async function runClusterBench(options: ClusterBenchOptions): Promise<void> {
  const { ks, profileCount, noteCount } = options;
  const started = Date.now();
  const prefix = `bench:${started}:`;
  const single = await startPrivateRedis();
  const cluster = await startLocalCluster();
  const singleStore = new RedisEventStore(connectRedis({ url: single.url, timeoutMs: 10_000 }), prefix, { timeoutMs: 10_000 });
  const clusterClient = connectRedisCluster({ nodes: cluster.nodes.map(({ port }) => ({ host: '127.0.0.1', port })), tls: false, timeoutMs: 10_000 });
  const clusterStore = new RedisEventStore(clusterClient, prefix, { timeoutMs: 10_000 });
  const children: ChildProcess[] = [];
  const singleAdmin = new Redis(single.url);
  let masterAdmins: Redis[] = [];
  try {
    await waitUntilReady(singleStore.client, 5000);
    await waitUntilReady(clusterClient, 10_000);
    masterAdmins = (await cluster.masters()).map(({ port }) => new Redis(port, '127.0.0.1'));
    log(`dataset: ${profileCount} profiles, ${noteCount} notes for each K in ${ks.join(', ')}, on one Redis and on a 3-master cluster`);
    const identities = Array.from({ length: profileCount }, (_, index) => identity(index));
    const profiles = makeProfiles(identities);
    // A first write before the baseline: a master allocates its replication backlog (1 MiB) on its
    // first write to a replica, which is not memory per event (30 profiles: a write on every master).
    const warmUp = makeProfiles(Array.from({ length: 30 }, (_, index) => identity(profileCount + index)));
    await singleStore.putEvents(warmUp);
    await clusterStore.putEvents(warmUp);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const memory = { empty: { single: await usedMemory([singleAdmin]), cluster: await usedMemory(masterAdmins) } };
    for (let offset = 0; offset < profiles.length; offset += 1000) {
      await singleStore.putEvents(profiles.slice(offset, offset + 1000));
      await clusterStore.putEvents(profiles.slice(offset, offset + 1000));
    }
    const afterProfiles = { single: await usedMemory([singleAdmin]), cluster: await usedMemory(masterAdmins) };
    const notesByK = new Map<number, string[]>();
    const noteBytes = new Map<number, { single: number; cluster: number; json: number }>();
    for (const k of ks) {
      const notes = makeNotes(identities, noteCount, k, k);
      const before = { single: await usedMemory([singleAdmin]), cluster: await usedMemory(masterAdmins) };
      for (let offset = 0; offset < notes.length; offset += 1000) {
        await singleStore.putEvents(notes.slice(offset, offset + 1000));
        await clusterStore.putEvents(notes.slice(offset, offset + 1000));
      }
      const after = { single: await usedMemory([singleAdmin]), cluster: await usedMemory(masterAdmins) };
      noteBytes.set(k, {
        single: (after.single - before.single) / notes.length,
        cluster: (after.cluster - before.cluster) / notes.length,
        json: notes.reduce((sum, note) => sum + Buffer.byteLength(JSON.stringify(note)), 0) / notes.length,
      });
      notesByK.set(k, notes.map((note) => note.id));
    }
    const profileBytes = {
      single: (afterProfiles.single - memory.empty.single) / profiles.length,
      cluster: (afterProfiles.cluster - memory.empty.cluster) / profiles.length,
      json: profiles.reduce((sum, event) => sum + Buffer.byteLength(JSON.stringify(event)), 0) / profiles.length,
    };
    log(`dataset ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);

    const roundTrips = new Map<number, { single: Awaited<ReturnType<typeof roundTripsOfOneEvent>>; cluster: Awaited<ReturnType<typeof roundTripsOfOneEvent>> }>();
    for (const k of ks) {
      const id = notesByK.get(k)?.[0] as string;
      roundTrips.set(k, { single: await roundTripsOfOneEvent(singleStore, id), cluster: await roundTripsOfOneEvent(clusterStore, id) });
    }

    const common = { REDIS_KEY_PREFIX: prefix, HOST: '127.0.0.1', RELAYS: '', NODE_ENV: 'production', DATA_DIR: '' };
    const singlePort = await freePort();
    children.push(await startProcess(['dist/cli/main.js', 'serve'], { ...common, REDIS_URL: single.url, PORT: String(singlePort) }, `http://127.0.0.1:${singlePort}/readyz`));
    const clusterPort = await freePort();
    children.push(
      await startProcess(
        ['dist/cli/main.js', 'serve'],
        { ...common, REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.seeds.join(','), PORT: String(clusterPort) },
        `http://127.0.0.1:${clusterPort}/readyz`,
      ),
    );
    const settings = { connections: options.connections, duration: options.duration, rounds: options.rounds };
    const singleCommands = () => totalCommands(singleAdmin);
    const clusterCommands = async () => (await Promise.all(masterAdmins.map(totalCommands))).reduce((sum, count) => sum + count, 0);
    const pair = (route: string, path: string, next: () => string): Target[] => [
      { name: `one Redis ${route}`, url: `http://127.0.0.1:${singlePort}`, next: () => ({ path: `${path}${next()}` }), commands: singleCommands },
      { name: `Redis Cluster ${route}`, url: `http://127.0.0.1:${clusterPort}`, next: () => ({ path: `${path}${next()}` }), commands: clusterCommands },
    ];
    const rows: Row[] = [];
    for (const k of ks) {
      log(`K = ${k}`);
      rows.push(...(await measureInterleaved(pair('/event', '/event?id=', cycle(notesByK.get(k) ?? [])), String(k), settings)));
    }
    log('profiles');
    rows.push(...(await measureInterleaved(pair('/user-profile', '/user-profile?pubkey=', cycle(identities.map((who) => who.pubkey))), '-', settings)));

    const section = report(options, rows, roundTrips, { profileBytes, noteBytes });
    process.stdout.write(`${section}\n`);
    writeSection(options.output, section);
    log(`wrote the Redis Cluster section of ${options.output.pathname}`);
  } finally {
    await Promise.all(children.map(stop));
    singleAdmin.disconnect();
    for (const admin of masterAdmins) admin.disconnect();
    await singleStore.close();
    await clusterStore.close();
    await Promise.all([single.stop(), cluster.stop()]);
  }
}

interface Memory {
  profileBytes: { single: number; cluster: number; json: number };
  noteBytes: Map<number, { single: number; cluster: number; json: number }>;
}

function report(
  options: ClusterBenchOptions,
  rows: Row[],
  roundTrips: Map<number, { single: { steps: number; writes: number; connections: number }; cluster: { steps: number; writes: number; connections: number } }>,
  { profileBytes, noteBytes }: Memory,
): string {
  const cpu = cpus();
  const command = `npm run bench -- --cluster --k ${options.ks.join(',')} --profiles ${options.profileCount} --notes ${options.noteCount} --duration ${options.duration} --connections ${options.connections} --rounds ${options.rounds}`;
  const table = ['| K | route | one Redis req/s | cluster req/s | cluster ÷ one | p99 ms (one / cluster) | Redis cmds/req (one / cluster) | isolated `/event`: round trips, socket writes (one / cluster) |', '| --- | --- | --- | --- | --- | --- | --- | --- |'];
  for (const one of rows.filter((row) => row.target.startsWith('one Redis'))) {
    const route = one.target.slice('one Redis '.length);
    const other = rows.find((row) => row.k === one.k && row.target === `Redis Cluster ${route}`);
    if (!other) continue;
    const trips = roundTrips.get(Number(one.k));
    table.push(
      `| ${one.k} | ${route} | ${one.rps.toFixed(0)} | ${other.rps.toFixed(0)} | **${(other.rps / one.rps).toFixed(2)}×** | ${one.p99} / ${other.p99} | ${one.commandsPerRequest?.toFixed(2)} / ${other.commandsPerRequest?.toFixed(2)} | ${
        trips ? `${trips.single.steps}, ${trips.single.writes} / ${trips.cluster.steps}, ${trips.cluster.writes} on ${trips.cluster.connections} nodes` : ''
      } |`,
    );
  }
  const memoryRows = [
    '| what | JSON bytes | bytes in one Redis | bytes in the cluster (3 masters) |',
    '| --- | --- | --- | --- |',
    `| a profile (kind 0: slot, id marker, author index) | ${profileBytes.json.toFixed(0)} | ${profileBytes.single.toFixed(0)} | ${profileBytes.cluster.toFixed(0)} |`,
    ...[...noteBytes].map(([k, bytes]) => `| a note with ${k} relevant pubkeys (event, author index) | ${bytes.json.toFixed(0)} | ${bytes.single.toFixed(0)} | ${bytes.cluster.toFixed(0)} |`),
  ];
  const capacity = capacityModel(rows, profileBytes, noteBytes);
  return `${START}
## Redis Cluster (\`npm run bench -- --cluster\`)

Measured by \`${command}\` on ${new Date().toISOString().slice(0, 10)}: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB,
Node ${process.version}. Two \`serve\` processes (\`NODE_ENV=production\`, \`RELAYS=\` empty), one on a
private redis-server, one on a private 3-master cluster with a replica each (six redis-server
processes), the same dataset in both; autocannon with ${options.connections} connections in the harness;
everything shares the ${cpu.length} cores. Targets measured in ${options.rounds} interleaved rounds,
medians. Redis commands counted by INFO commandstats (all masters summed). The isolated \`/event\`
runs the store calls of one \`/event\` (the event, then its profiles) in the harness and counts socket
writes per connection: round trips are the sequential steps.

${table.join('\n')}

Memory, from INFO used_memory before and after loading (the cluster's summed over its masters;
replicas hold as much again):

${memoryRows.join('\n')}

${capacity}
${END}`;
}

/** Planning assumptions, stated with the model (not measured here). */
const NODE_MEMORY_GIB = 32;
/** Of a node's memory, what the dataset may use: the rest is for forks (AOF rewrite, replica sync), fragmentation and buffers. */
const DATASET_SHARE = 0.6;

/**
 * The capacity model, calculated from this run's figures: memory for 10M profiles and 1B events at
 * the measured bytes per key, the masters that takes at an assumed node size, and the throughput
 * of one service instance as measured.
 */
function capacityModel(rows: Row[], profileBytes: Memory['profileBytes'], noteBytes: Memory['noteBytes']): string {
  const gb = (bytes: number) => (bytes / 1e9).toFixed(0);
  const perMaster = NODE_MEMORY_GIB * 2 ** 30 * DATASET_SHARE;
  // The larger of the two measurements of each key: the cluster's summed figure runs higher for profiles.
  const profileSize = Math.max(profileBytes.single, profileBytes.cluster);
  const profiles = 10_000_000 * profileSize;
  const sizes = [...noteBytes].sort((a, b) => a[1].json - b[1].json);
  const lines = sizes.map(([k, bytes]) => {
    const eventSize = Math.max(bytes.single, bytes.cluster);
    const events = 1_000_000_000 * eventSize;
    const masters = Math.ceil((profiles + events) / perMaster);
    return `| events like the K = ${k} notes (${bytes.json.toFixed(0)} JSON bytes → ${eventSize.toFixed(0)} in Redis) | ${gb(profiles)} GB + ${gb(events)} GB = ${gb(profiles + events)} GB | ${masters} | ${masters * 2} nodes, ${gb(2 * (profiles + events))} GB |`;
  });
  const rate = (route: string, k: string) => rows.find((row) => row.k === k && row.target === `Redis Cluster ${route}`);
  const profileRate = rate('/user-profile', '-');
  const eventRate = rate('/event', '10');
  return `### Capacity model (calculated from the figures above)

Memory per key is the larger of the two measurements above (the cluster holds the same keys,
spread over its masters; its summed figure runs higher for profiles, by more than the per-key
cluster bookkeeping explains). A master is assumed to be a
${NODE_MEMORY_GIB} GiB node whose dataset may fill ${DATASET_SHARE * 100}% of it (${(perMaster / 2 ** 30).toFixed(1)} GiB): the rest is for the
fork of an AOF rewrite or a replica's full sync, fragmentation and client buffers. Each master has
one replica, which holds as much again.

10M profiles at ${profileSize.toFixed(0)} bytes each, and 1B events:

| events | dataset (profiles + events) | masters (dataset ÷ ${(perMaster / 2 ** 30).toFixed(1)} GiB, rounded up) | with one replica each |
| --- | --- | --- | --- |
${lines.join('\n')}

Throughput: one service instance on the cluster answered ${profileRate?.rps.toFixed(0) ?? 'n/a'} \`/user-profile\` and
${eventRate?.rps.toFixed(0) ?? 'n/a'} \`/event\` (K = 10) per second here, sharing 2 cores with six Redis processes and the load
generator: a lower bound for an instance with a core of its own. Instances are stateless, so
the service scales by adding instances; each \`/event\` costs the cluster K + 1 commands (one per
slot), spread over the masters, and each \`/user-profile\` one. How many commands per second one
master serves was not measured here; the masters needed for memory above are far more than a
read load of a few instances needs.`;
}

function writeSection(output: URL, section: string): void {
  let existing = '';
  try {
    existing = readFileSync(output, 'utf8');
  } catch {
    // a new file
  }
  const start = existing.indexOf(START);
  const end = existing.indexOf(END);
  const next =
    start >= 0 && end > start
      ? existing.slice(0, start) + section + existing.slice(end + END.length)
      : `${existing.trimEnd()}\n\n${section}\n`;
  writeFileSync(output, next);
}
