import { randomUUID } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreConfig } from '../../src/config/env.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { EventStore } from '../../src/store/event-store.js';
import { openStore } from '../../src/store/open-store.js';
import type { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { profile, signed } from '../support/events.js';
import { captureLogs } from '../support/logs.js';
import { freeClusterPorts, type LocalCluster, startLocalCluster } from '../support/redis-cluster.js';
import { freePort } from '../support/redis-server.js';
import { getJson, startTestServer, type TestServer } from '../support/test-server.js';

// This file starts, and kills masters of, a Redis Cluster of its own.
const NODE_TIMEOUT_MS = 1000;
const REDIS_TIMEOUT_MS = 1000;
/** Recovery allowed after a master is killed: cluster-node-timeout + 5 s (the target the cluster was built to). */
const RECOVERY_BUDGET_MS = NODE_TIMEOUT_MS + 5000;

let cluster: LocalCluster;
const prefix = `failover:${randomUUID()}:`;
const opened: { store: EventStore }[] = [];

function clusterConfig(overrides: Partial<Extract<StoreConfig, { kind: 'redis-cluster' }>> = {}): StoreConfig {
  return {
    kind: 'redis-cluster',
    nodes: cluster.nodes.map(({ port }) => ({ host: '127.0.0.1', port })),
    tls: false,
    keyPrefix: prefix,
    timeoutMs: REDIS_TIMEOUT_MS,
    waitReplicas: 1,
    ...overrides,
  };
}

/** A store as `serve` (writer: false) or `import` / `sync` (writer: true) opens it, and its log. */
async function open(writer: boolean, overrides?: Parameters<typeof clusterConfig>[0]) {
  const { chunks, logger } = captureLogs();
  const handle = openStore(clusterConfig(overrides), logger, { writer });
  await handle.ready(10_000);
  opened.push(handle);
  return { ...handle, logs: chunks };
}

beforeAll(async () => {
  cluster = await startLocalCluster({ nodeTimeoutMs: NODE_TIMEOUT_MS });
}, 60_000);
afterAll(async () => {
  await Promise.all(opened.map(({ store }) => store.close().catch(() => {})));
  await cluster?.stop();
});

describe('Redis Cluster: configuration and start', () => {
  it('says at start that the store is redis-cluster, with its seed nodes and never a password', async () => {
    // The local cluster has no password: AUTH fails, and that failure is logged too.
    const { chunks, logger } = captureLogs();
    const handle = openStore(clusterConfig({ password: 'hunter2' }), logger);
    const first = JSON.parse(chunks[0] ?? '{}') as Record<string, unknown>;
    expect(first).toMatchObject({ msg: 'event store: redis-cluster', store: 'redis-cluster', keyPrefix: prefix });
    expect(first.seedNodes).toBe(cluster.seeds.map((seed) => `redis://${seed}`).join(','));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await handle.store.close();
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join('\n')).not.toContain('hunter2');
  });

  it('starts with the first seed node down: the others name the cluster', async () => {
    const dead = await freePort();
    const { store } = await open(false, { nodes: [{ host: '127.0.0.1', port: dead }, ...cluster.nodes.slice(1).map(({ port }) => ({ host: '127.0.0.1', port }))] });
    const note = signed('seed-down', { content: 'found through the second seed' });
    const { store: writer } = await open(true);
    expect(await writer.putEvents([note])).toEqual(['stored']);
    expect((await store.getEvents([note.id]))[0]).toMatchObject({ event: note });
  });

  it('REDIS_WAIT_REPLICAS: a batch is confirmed on a replica; asking for more replicas than exist fails the batch', async () => {
    const { store } = await open(true);
    const note = signed('waiter', { content: 'on two nodes' });
    expect(await store.putEvents([note])).toEqual(['stored']);
    const { store: greedy } = await open(true, { waitReplicas: 2, timeoutMs: 300 });
    await expect(greedy.putEvents([signed('waiter', { content: 'needs two replicas', created_at: 2 })])).rejects.toThrow('event store unavailable');
  });
});

describe('Redis Cluster: the service started before its cluster', () => {
  it('answers 500 at once and /readyz 503 while no seed answers, then serves by itself once the cluster is up', async () => {
    const ports = await freeClusterPorts(6);
    const { chunks, logger } = captureLogs();
    const handle = openStore(clusterConfig({ nodes: ports.map((port) => ({ host: '127.0.0.1', port })), keyPrefix: `${prefix}late:` }), logger);
    opened.push(handle);
    const server = await startTestServer(handle.store);
    let late: LocalCluster | undefined;
    try {
      const note = signed('late-cluster', { content: 'written once the cluster is up' });
      const started = performance.now();
      const early = await getJson(`${server.url}/event?id=${note.id}`);
      expect(early.status).toBe(500);
      expect(early.body).toEqual({ error: { status: 500, code: 'store_unavailable', message: 'The event index is unavailable. Try again shortly.' } });
      expect(performance.now() - started).toBeLessThan(REDIS_TIMEOUT_MS + 500);
      expect((await getJson(`${server.url}/readyz`)).status).toBe(503);

      late = await startLocalCluster({ nodeTimeoutMs: NODE_TIMEOUT_MS, ports });
      const upAt = performance.now();
      await expect.poll(async () => (await getJson(`${server.url}/readyz`)).status, { timeout: 15_000, interval: 200 }).toBe(200);
      console.log(`late cluster: /readyz 200 ${Math.round(performance.now() - upAt)} ms after the cluster was formed`);
      expect(await handle.store.putEvents([note])).toEqual(['stored']);
      expect((await getJson(`${server.url}/event?id=${note.id}`)).status).toBe(200);
      expect(chunks.join('\n')).toContain('redis-cluster ready');
    } finally {
      await server.close();
      await late?.stop();
    }
  }, 60_000);
});

describe('Redis Cluster: a slot moved under the service (MOVED and ASK)', () => {
  it('reads a key whose slot is being migrated (ASK), then after it moved (MOVED), and writes to it', async () => {
    const { store } = await open(false);
    const { store: writer } = await open(true);
    const moved = profile('moving-slot', { name: 'before the move' });
    expect(await writer.putEvents([moved])).toEqual(['stored']);
    const key = `${prefix}r:0:${moved.pubkey}`;
    const slot = calculateSlot(key);
    const masters = await cluster.masters();
    const admins = new Map(masters.map((node) => [node.port, new Redis(node.port, '127.0.0.1')]));
    try {
      const owners = await (admins.values().next().value as Redis).cluster('SLOTS');
      const sourcePort = Number(owners.find((range) => range[0] <= slot && slot <= range[1])?.[2]?.[1]);
      const targetPort = masters.map((node) => node.port).find((port) => port !== sourcePort) as number;
      const source = admins.get(sourcePort) as Redis;
      const target = admins.get(targetPort) as Redis;
      const sourceId = String(await source.cluster('MYID'));
      const targetId = String(await target.cluster('MYID'));
      await target.cluster('SETSLOT', slot, 'IMPORTING', sourceId);
      await source.cluster('SETSLOT', slot, 'MIGRATING', targetId);
      const keys = (await source.cluster('GETKEYSINSLOT', slot, 1000)) as string[];
      await source.migrate('127.0.0.1', targetPort, '', 0, 5000, 'KEYS', ...keys);
      // Migrating: the source answers ASK for the keys it no longer holds.
      expect((await store.getProfiles([moved.pubkey]))[0]).toMatchObject({ event: moved });
      for (const admin of admins.values()) await admin.cluster('SETSLOT', slot, 'NODE', targetId);
      // Moved: the source answers MOVED; the client follows it and learns the new owner.
      expect((await store.getProfiles([moved.pubkey]))[0]).toMatchObject({ event: moved });
      const newer = profile('moving-slot', { name: 'after the move' }, 1_700_000_100);
      expect(await writer.putEvents([newer])).toEqual(['replaced']);
      expect((await store.getProfiles([moved.pubkey]))[0]).toMatchObject({ event: newer });
      expect(await target.exists(key)).toBe(1);
      await expect(source.exists(key)).rejects.toThrow(`MOVED ${slot} 127.0.0.1:${targetPort}`);
    } finally {
      for (const admin of admins.values()) admin.disconnect();
    }
  });
});

describe('Redis Cluster: REDIS_WAIT_REPLICAS refuses what it cannot confirm', () => {
  it('a batch is refused while a replica is stopped, and accepted once it runs again', async () => {
    const { store } = await open(true);
    const masters = new Set((await cluster.masters()).map((node) => node.port));
    const replica = cluster.nodes.find((node) => !masters.has(node.port) && node.process.exitCode === null && node.process.signalCode === null);
    if (!replica) throw new Error('no replica');
    const batch = (n: number) => Array.from({ length: 30 }, (_, index) => signed(`wait-${index}`, { content: `round ${n}` }));
    replica.process.kill('SIGSTOP');
    try {
      await expect(store.putEvents(batch(1))).rejects.toThrow('event store unavailable');
    } finally {
      replica.process.kill('SIGCONT');
    }
    await expect.poll(async () => store.putEvents(batch(2)).then(() => 'accepted', () => 'refused'), { timeout: 10_000 }).toBe('accepted');
  });

  it('a batch is refused when a connection it wrote on was replaced meanwhile (WAIT would ask the new one)', async () => {
    const { store } = await open(true);
    const client = (store as RedisEventStore).client;
    const writing = store.putEvents([signed('wait-replaced', { content: 'written, then its connection replaced' })]);
    // As ioredis announces a node connection dropped from its pool.
    client.emit('-node', client instanceof Cluster ? client.nodes('master')[0] : client, 'gone');
    await expect(writing).rejects.toThrow('event store unavailable');
    await expect(writing.catch((error: Error) => String(error.cause))).resolves.toContain('a connection changed during the batch');
  });
});

interface Answer {
  at: number;
  status: number;
  ms: number;
}

/** Requests in a loop from `concurrency` clients until stopped: every answer, timed. */
function load(server: TestServer, paths: readonly string[], concurrency: number) {
  const answers: Answer[] = [];
  let running = true;
  const clients = Array.from({ length: concurrency }, async (_, client) => {
    for (let n = client; running; n += concurrency) {
      const started = performance.now();
      const response = await fetch(`${server.url}${paths[n % paths.length]}`, { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
      await response?.arrayBuffer();
      answers.push({ at: started, status: response?.status ?? 0, ms: performance.now() - started });
    }
  });
  return {
    answers,
    stop: async () => {
      running = false;
      await Promise.all(clients);
    },
  };
}

describe('Redis Cluster: a master killed under load', () => {
  it('errors fast while its slots are unreachable, recovers by itself within cluster-node-timeout + 5 s, and loses no acknowledged import with REDIS_WAIT_REPLICAS=1', async () => {
    const { store: serving } = await open(false);
    const { store: importing } = await open(true);
    const profiles: NostrEvent[] = Array.from({ length: 60 }, (_, n) => profile(`failover-${n}`, { name: `failover ${n}` }));
    expect(await importing.putEvents(profiles)).toEqual(profiles.map(() => 'stored'));
    const server = await startTestServer(serving);
    try {
      const paths = profiles.map((event) => `/user-profile?pubkey=${event.pubkey}`);
      expect((await getJson(`${server.url}${paths[0]}`)).status).toBe(200);

      // An import keeps writing through the failover: batches of 20, each retried until acknowledged.
      let failedBatches = 0;
      const acknowledged: NostrEvent[] = [];
      let importing_ = true;
      const writer = (async () => {
        for (let batch = 0; importing_; batch++) {
          const events = Array.from({ length: 20 }, (_, n) => signed(`failover-writer-${n % 7}`, { content: `batch ${batch} #${n}`, created_at: 1_700_000_000 + batch }));
          // After the failover one master has no replica left: WAIT cannot confirm, batches fail
          // until a replica is back (README), and the loop ends with the test's traffic.
          while (importing_) {
            try {
              await importing.putEvents(events);
              acknowledged.push(...events);
              break;
            } catch {
              failedBatches++;
              await new Promise((resolve) => setTimeout(resolve, 100));
            }
          }
        }
      })();

      const traffic = load(server, paths, 8);
      const readiness = load(server, ['/readyz'], 1);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const victim = (await cluster.masters())[0];
      if (!victim) throw new Error('no master');
      const killedAt = performance.now();
      await victim.kill();
      // Long enough for the failover and some steady load after it.
      await new Promise((resolve) => setTimeout(resolve, RECOVERY_BUDGET_MS + 2000));
      await Promise.all([traffic.stop(), readiness.stop()]);
      importing_ = false;
      await writer;

      // Before: answered before the kill; after: answered after it (in flight at the kill included).
      const before = traffic.answers.filter((answer) => answer.at + answer.ms < killedAt);
      const after = traffic.answers.filter((answer) => answer.at + answer.ms >= killedAt);
      const failed = after.filter((answer) => answer.status !== 200);
      expect(before.length).toBeGreaterThan(20);
      expect(before.every((answer) => answer.status === 200)).toBe(true);
      // Some requests failed (the master did go), each as a 500, within the store's deadline.
      expect(failed.length).toBeGreaterThan(0);
      expect(new Set(failed.map((answer) => answer.status))).toEqual(new Set([500]));
      expect(Math.max(...failed.map((answer) => answer.ms))).toBeLessThan(REDIS_TIMEOUT_MS + 500);
      // Recovery: after the last failure, every answer is 200, and the last failure came within the budget.
      const lastFailure = Math.max(...failed.map((answer) => answer.at + answer.ms));
      const recoveryMs = lastFailure - killedAt;
      console.log(
        `failover: ${failed.length} of ${after.length} requests failed after the kill; last failure ${Math.round(recoveryMs)} ms after it; slowest failure ${Math.round(Math.max(...failed.map((a) => a.ms)))} ms; ${acknowledged.length} events acknowledged by the import, ${failedBatches} batch attempts refused`,
      );
      expect(recoveryMs).toBeLessThan(RECOVERY_BUDGET_MS);
      expect(after.filter((answer) => answer.at > lastFailure).length).toBeGreaterThan(20);

      // /readyz said 503 while a slot had no master, and 200 before and after.
      const readyAfter = readiness.answers.filter((answer) => answer.at + answer.ms >= killedAt).map((answer) => answer.status);
      expect(readiness.answers.filter((answer) => answer.at + answer.ms < killedAt).every((answer) => answer.status === 200)).toBe(true);
      expect(readyAfter).toContain(503);
      expect(readyAfter.at(-1)).toBe(200);
      // /readyz is 200 again, and nothing acknowledged is lost: every profile and every batch the
      // import counted as written reads back.
      expect((await getJson(`${server.url}/readyz`)).status).toBe(200);
      const read = await serving.getProfiles(profiles.map((event) => event.pubkey));
      expect(read.filter((held) => held === null).length).toBe(0);
      expect(acknowledged.length).toBeGreaterThan(0);
      const back = await serving.getEvents(acknowledged.map((event) => event.id));
      expect(back.filter((held) => held === null).length).toBe(0);
    } finally {
      await server.close();
    }
  }, 60_000);
});
