import { randomUUID } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreConfig } from '../../src/config/env.js';
import { openStore } from '../../src/store/open-store.js';
import { HEALTH_CHECK_MS, type HotCache } from '../../src/store/redis/hot-cache.js';
import type { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { deletion, vanish } from '../support/deletion-conformance.js';
import { profile, pubkeyOf, signed } from '../support/events.js';
import { captureLogs } from '../support/logs.js';
import { type LocalCluster, startLocalCluster } from '../support/redis-cluster.js';
import { timeUntil, until } from '../support/polling.js';
import { getJson, startTestServer, type TestServer } from '../support/test-server.js';

// The hot cache on a Redis Cluster: one tracked reader and subscriber per master.
// This file starts a cluster of its own: it moves a slot and fails a master over.
const T = 1_700_000_000;

let cluster: LocalCluster;
const prefix = `hot-cluster:${randomUUID()}:`;
const cleanups: (() => Promise<void>)[] = [];

function clusterConfig(hotCacheMb: number): StoreConfig {
  return {
    kind: 'redis-cluster',
    nodes: cluster.nodes.map(({ port }) => ({ host: '127.0.0.1', port })),
    tls: false,
    keyPrefix: prefix,
    timeoutMs: 2000,
    waitReplicas: 0,
    hotCacheMb,
  };
}

interface Instance {
  store: RedisEventStore;
  cache: HotCache;
  server: TestServer;
  logs: string[];
}

/** An instance of the service as `serve` opens the store (hot cache on), served over HTTP. */
async function instance(): Promise<Instance> {
  const { chunks, logger } = captureLogs();
  const handle = openStore(clusterConfig(4), logger);
  await handle.ready(10_000);
  const store = handle.store as RedisEventStore;
  const cache = (store as unknown as { hotCache: HotCache }).hotCache;
  const server = await startTestServer(store);
  cleanups.push(async () => {
    await server.close();
    await store.close();
  });
  await untilOnCluster(() => cache.active, 10_000);
  return { store, cache, server, logs: chunks };
}

/** A writer as `import` opens the store (no cache). */
async function writer(): Promise<RedisEventStore> {
  const handle = openStore(clusterConfig(4), captureLogs().logger, { writer: true });
  await handle.ready(10_000);
  cleanups.push(() => handle.store.close());
  return handle.store as RedisEventStore;
}

/** The cluster's waits are longer: failovers and slot-table refreshes take seconds. */
const untilOnCluster = (condition: () => boolean | Promise<boolean>, limitMs = 5000) => until(condition, limitMs);
const timeUntilOnCluster = <T>(read: () => Promise<T>, done: (value: T) => boolean, limitMs = 3000) => timeUntil(read, done, limitMs);

const contentOf = (answer: { body: unknown }) => (answer.body as { profile?: { content: string } }).profile?.content;

/** A connection to each node, by port. */
function admins(): Map<number, Redis> {
  const connections = new Map(cluster.nodes.map((node) => [node.port, new Redis(node.port, '127.0.0.1', { lazyConnect: false })]));
  cleanups.push(async () => {
    for (const connection of connections.values()) connection.disconnect();
  });
  return connections;
}

/** The port of the master serving `key`'s slot. */
async function ownerOf(admin: Redis, key: string): Promise<number> {
  const slot = calculateSlot(key);
  const ranges = (await admin.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
  return Number(ranges.find(([from, to]) => from <= slot && slot <= to)?.[2][1]);
}

/** MGET calls so far on every master. */
async function mgets(connections: Map<number, Redis>): Promise<number> {
  let total = 0;
  for (const connection of connections.values()) total += Number(/\r\ncmdstat_mget:calls=(\d+)/.exec(await connection.info('commandstats'))?.[1] ?? 0);
  return total;
}

beforeAll(async () => {
  cluster = await startLocalCluster({ nodeTimeoutMs: 1000 });
}, 60_000);
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  await cluster?.stop();
});

describe('hot cache on a Redis Cluster: a tracked reader and subscriber per master', () => {
  it('cached lookups cost no command; a profile replaced, an event deleted or vanished through a writer: every instance sees it within 50 ms', async () => {
    const write = await writer();
    const [one, two] = [await instance(), await instance()];
    expect(one.logs.join('\n')).toContain('hot cache on');
    expect(one.cache.invalidationClientIds.size).toBe(3);
    // Spread over the masters: profiles of several authors, notes of two.
    const names = ['c-ann', 'c-bo', 'c-cy', 'c-di', 'c-ed', 'c-fay'];
    await write.putEvents(names.map((name) => profile(name, { name: `${name} one` }, T)));
    const note = signed('c-bo', { created_at: T, content: 'soon deleted' });
    const other = signed('c-cy', { created_at: T, content: 'soon vanished' });
    await write.putEvents([note, other]);
    const nodes = admins();
    for (const { server } of [one, two]) {
      for (const name of names) expect(contentOf(await getJson(`${server.url}/user-profile?pubkey=${pubkeyOf(name)}`))).toBe(`{"name":"${name} one"}`);
      for (const event of [note, other]) expect((await getJson(`${server.url}/event?id=${event.id}`)).status).toBe(200);
    }
    const before = await mgets(nodes);
    for (const { server } of [one, two]) {
      for (const name of names) await getJson(`${server.url}/user-profile?pubkey=${pubkeyOf(name)}`);
      for (const event of [note, other]) await getJson(`${server.url}/event?id=${event.id}`);
    }
    expect(await mgets(nodes)).toBe(before);

    await write.putEvents(names.map((name) => profile(name, { name: `${name} two` }, T + 1)));
    for (const { server } of [one, two]) {
      for (const name of names) {
        const url = `${server.url}/user-profile?pubkey=${pubkeyOf(name)}`;
        expect(await timeUntilOnCluster(() => getJson(url), (answer) => contentOf(answer) === `{"name":"${name} two"}`)).toBeLessThan(50);
      }
    }
    await write.putEvents([deletion('c-bo', { ids: [note.id] }), vanish('c-cy', T + 10)]);
    for (const { server } of [one, two]) {
      for (const event of [note, other]) {
        expect(await timeUntilOnCluster(() => getJson(`${server.url}/event?id=${event.id}`), (answer) => answer.status === 404)).toBeLessThan(50);
      }
    }
  });

  it("one master's invalidation connection killed: the cache empties and is not used until it is back; nothing written meanwhile is missed", async () => {
    const write = await writer();
    const { store, cache } = await instance();
    const pubkey = pubkeyOf('c-gus');
    await write.putEvents([profile('c-gus', { name: 'one' }, T)]);
    const read = async () => ((await store.getProfiles([pubkey]))[0] as { json: { toString(): string } } | null)?.json.toString() ?? '';
    expect(await read()).toContain('one');
    expect(cache.size).toBeGreaterThan(0);
    const nodes = admins();
    const owner = await ownerOf(nodes.values().next().value as Redis, `${prefix}r:0:${pubkey}`);
    const id = cache.invalidationClientIds.get(`127.0.0.1:${owner}`);
    expect(id).toBeTypeOf('number');
    await (nodes.get(owner) as Redis).client('KILL', 'ID', String(id));
    await untilOnCluster(() => !cache.active);
    expect(cache.size).toBe(0);
    await write.putEvents([profile('c-gus', { name: 'two' }, T + 1)]);
    const hits = cache.stats.hits;
    expect(await read()).toContain('two');
    expect(cache.stats.hits).toBe(hits);
    await untilOnCluster(() => cache.active);
    expect(await read()).toContain('two');
    expect(await read()).toContain('two');
    expect(cache.stats.hits).toBeGreaterThan(hits);
    await write.putEvents([profile('c-gus', { name: 'three' }, T + 2)]);
    expect(await timeUntilOnCluster(read, (text) => text.includes('three'))).toBeLessThan(50);
  });

  it('a slot moved to another master (ASK, then MOVED): answers stay true, and are cached again on the new owner', async () => {
    const write = await writer();
    const { store, cache } = await instance();
    const moved = profile('c-hal', { name: 'before the move' }, T);
    await write.putEvents([moved]);
    const read = async () => ((await store.getProfiles([moved.pubkey]))[0] as { json: { toString(): string } } | null)?.json.toString() ?? '';
    expect(await read()).toContain('before the move');
    expect(await read()).toContain('before the move');
    const key = `${prefix}r:0:${moved.pubkey}`;
    const slot = calculateSlot(key);
    const nodes = admins();
    const sourcePort = await ownerOf(nodes.values().next().value as Redis, key);
    const masters = await cluster.masters();
    const targetPort = masters.map((node) => node.port).find((port) => port !== sourcePort) as number;
    const source = nodes.get(sourcePort) as Redis;
    const target = nodes.get(targetPort) as Redis;
    const targetId = String(await target.cluster('MYID'));
    await target.cluster('SETSLOT', slot, 'IMPORTING', String(await source.cluster('MYID')));
    await source.cluster('SETSLOT', slot, 'MIGRATING', targetId);
    const keys = (await source.cluster('GETKEYSINSLOT', slot, 1000)) as string[];
    await source.migrate('127.0.0.1', targetPort, '', 0, 5000, 'KEYS', ...keys);
    expect(await read()).toContain('before the move');
    for (const master of masters) await (nodes.get(master.port) as Redis).cluster('SETSLOT', slot, 'NODE', targetId);
    expect(await read()).toContain('before the move');
    await write.putEvents([profile('c-hal', { name: 'after the move' }, T + 1)]);
    expect(await timeUntilOnCluster(read, (text) => text.includes('after the move'))).toBeLessThan(50);
    // Cached again, on the new owner: a read costs no command there, and a write there invalidates it.
    await untilOnCluster(async () => {
      const hits = cache.stats.hits;
      await read();
      return cache.stats.hits > hits;
    });
    await write.putEvents([profile('c-hal', { name: 'written on the new owner' }, T + 2)]);
    expect(await timeUntilOnCluster(read, (text) => text.includes('written on the new owner'))).toBeLessThan(50);
  });

  it('a master failed over (CLUSTER FAILOVER): writes on the new one are seen at once (the old one, now its replica, still invalidates), and the cache comes back on the new one', async () => {
    const write = await writer();
    const { store, cache, logs } = await instance();
    const pubkey = pubkeyOf('c-ivy');
    await write.putEvents([profile('c-ivy', { name: 'one' }, T)]);
    const read = async () => ((await store.getProfiles([pubkey]))[0] as { json: { toString(): string } } | null)?.json.toString() ?? '';
    expect(await read()).toContain('one');
    expect(await read()).toContain('one');
    const nodes = admins();
    const key = `${prefix}r:0:${pubkey}`;
    const oldMaster = await ownerOf(nodes.values().next().value as Redis, key);
    let replica: number | undefined;
    for (const [port, connection] of nodes) {
      const role = (await connection.call('ROLE')) as unknown[];
      if (role[0] === 'slave' && Number(role[2]) === oldMaster) replica = port;
    }
    expect(replica).toBeTypeOf('number');
    await (nodes.get(replica as number) as Redis).cluster('FAILOVER');
    await untilOnCluster(async () => ((await (nodes.get(replica as number) as Redis).call('ROLE')) as unknown[])[0] === 'master', 10_000);
    await write.putEvents([profile('c-ivy', { name: 'two' }, T + 1)]);
    expect(await timeUntilOnCluster(read, (text) => text.includes('two'))).toBeLessThan(50);
    // Back on, with the new master tracked in place of the old one.
    await untilOnCluster(() => cache.active && cache.invalidationClientIds.has(`127.0.0.1:${replica}`), 15_000);
    expect(cache.invalidationClientIds.has(`127.0.0.1:${oldMaster}`)).toBe(false);
    expect(await read()).toContain('two');
    await write.putEvents([profile('c-ivy', { name: 'three' }, T + 2)]);
    expect(await timeUntilOnCluster(read, (text) => text.includes('three'))).toBeLessThan(50);
    expect(logs.join('\n')).toContain('hot cache off');
  });

  it('a master that hangs (SIGSTOP: nothing closes, nothing answers) and is failed over: the cache is off within two checks, the write on the new master is seen, and the cache comes back without it', async () => {
    const write = await writer();
    const { store, cache } = await instance();
    const pubkey = pubkeyOf('c-jo');
    await write.putEvents([profile('c-jo', { name: 'one' }, T)]);
    // Errors while the slot has no master are not answers: read again.
    const read = async () => {
      try {
        return ((await store.getProfiles([pubkey]))[0] as { json: { toString(): string } } | null)?.json.toString() ?? '';
      } catch {
        return '';
      }
    };
    expect(await read()).toContain('one');
    expect(await read()).toContain('one');
    const nodes = admins();
    const port = await ownerOf(nodes.values().next().value as Redis, `${prefix}r:0:${pubkey}`);
    const hung = cluster.nodes.find((node) => node.port === port);
    hung?.process.kill('SIGSTOP');
    try {
      const stoppedAt = performance.now();
      await untilOnCluster(() => !cache.active, 2 * HEALTH_CHECK_MS + 500);
      expect(performance.now() - stoppedAt).toBeLessThan(2 * HEALTH_CHECK_MS + 500);
      expect(cache.size).toBe(0);
      // The replica takes over after cluster-node-timeout; the writer follows it.
      await untilOnCluster(async () => (await write.putEvents([profile('c-jo', { name: 'two' }, T + 1)]).catch(() => [])).length === 1, 20_000);
      // Never the version the hung master held: errors (no master yet), then the new version.
      const answers: string[] = [];
      expect(await timeUntilOnCluster(read, (text) => answers.push(text) > 0 && text.includes('two'), 10_000)).toBeLessThan(10_000);
      expect(answers.filter((text) => text.includes('one'))).toEqual([]);
      await untilOnCluster(() => cache.active && !cache.invalidationClientIds.has(`127.0.0.1:${port}`), 15_000);
      expect(await read()).toContain('two');
      await write.putEvents([profile('c-jo', { name: 'three' }, T + 2)]);
      expect(await timeUntilOnCluster(read, (text) => text.includes('three'))).toBeLessThan(50);
    } finally {
      hung?.process.kill('SIGCONT');
    }
    await cluster.waitUntilHealthy(20_000);
  }, 60_000);
});
