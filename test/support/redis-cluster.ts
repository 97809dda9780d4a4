import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { HOW_TO_GET_REDIS, hasRedisServerBinary, redisAnswers } from './redis-server.js';

/** One redis-server of a local cluster. */
export interface ClusterNode {
  port: number;
  /** `127.0.0.1:<port>` */
  address: string;
  process: ChildProcess;
  /** Kills the process (SIGKILL: as a crashed machine would go). */
  kill(): Promise<void>;
}

export interface LocalCluster {
  nodes: ClusterNode[];
  /** `127.0.0.1:<port>` of every node, as REDIS_CLUSTER_NODES takes them. */
  seeds: string[];
  nodeTimeoutMs: number;
  /** The nodes currently serving slots as masters. */
  masters(): Promise<ClusterNode[]>;
  /**
   * Resolves when every slot is served, every live node says the cluster is ok and all agree on the
   * slot table (with a replica per master unless `withReplicas` is false: after a failover, none).
   */
  waitUntilHealthy(timeoutMs?: number, withReplicas?: boolean): Promise<void>;
  stop(): Promise<void>;
}

/** True if `port` can be bound on loopback now. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** `count` free ports whose cluster-bus ports (port + 10000) are free too. */
export async function freeClusterPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  // A random start in 20000–49999, so that parallel runs rarely meet; each port checked with its bus.
  let candidate = 20000 + Math.floor(Math.random() * 30000);
  while (ports.length < count) {
    if ((await portIsFree(candidate)) && (await portIsFree(candidate + 10000))) ports.push(candidate);
    candidate += 1;
    if (candidate > 54000) candidate = 20000;
  }
  return ports;
}

/**
 * Starts a local Redis Cluster from `redis-server` on PATH: `masters` masters with one replica each,
 * on free loopback ports (or `ports`), keeping nothing on disk, with a short `cluster-node-timeout` so that a
 * failover takes seconds. The whole cluster is stopped by `stop()`.
 */
export async function startLocalCluster(options: { masters?: number; nodeTimeoutMs?: number; ports?: number[] } = {}): Promise<LocalCluster> {
  if (!hasRedisServerBinary()) throw new Error(HOW_TO_GET_REDIS);
  const masters = options.masters ?? 3;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1000;
  const ports = options.ports ?? (await freeClusterPorts(masters * 2));
  const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-cluster-'));
  const nodes: ClusterNode[] = ports.map((port) => {
    const child = spawn(
      'redis-server',
      [
        '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
        '--dir', dir, '--dbfilename', `dump-${port}.rdb`,
        '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
        '--cluster-node-timeout', String(nodeTimeoutMs),
        // A replica takes over however long it was cut off from its master (the test kills masters).
        '--cluster-replica-validity-factor', '0',
      ],
      { stdio: 'ignore' },
    );
    const kill = async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    };
    return { port, address: `127.0.0.1:${port}`, process: child, kill };
  });
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.kill()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 10_000;
    for (const node of nodes) {
      while (!(await redisAnswers(`redis://${node.address}`))) {
        if (Date.now() > deadline || node.process.exitCode !== null) throw new Error(`redis-server did not start on ${node.port}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const created = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...nodes.map((node) => node.address), '--cluster-replicas', '1', '--cluster-yes'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    const cluster: LocalCluster = {
      nodes,
      seeds: nodes.map((node) => node.address),
      nodeTimeoutMs,
      masters: async () => {
        const serving = await slotOwners(nodes);
        return nodes.filter((node) => serving.has(node.port));
      },
      waitUntilHealthy: (timeoutMs = 30_000, withReplicas = true) => waitUntilHealthy(nodes, timeoutMs, withReplicas),
      stop,
    };
    await cluster.waitUntilHealthy();
    return cluster;
  } catch (error) {
    await stop();
    throw error;
  }
}

const isRunning = (node: ClusterNode) => node.process.exitCode === null && node.process.signalCode === null;

/** Runs `ask` on a connection of its own to `node`, closed afterwards. */
async function askNode<T>(node: ClusterNode, ask: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(node.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    return await ask(client);
  } finally {
    client.disconnect();
  }
}

/** Asks one live node: the ports of the masters serving slots. */
async function slotOwners(nodes: readonly ClusterNode[]): Promise<Set<number>> {
  for (const node of nodes.filter(isRunning)) {
    try {
      const slots = await askNode(node, (client) => client.cluster('SLOTS'));
      return new Set(slots.map((range) => Number(range[2]?.[1])));
    } catch {
      // Try the next node.
    }
  }
  throw new Error('no cluster node answers');
}

/**
 * Healthy: every live node says the cluster is ok with every slot served, and all of them give the
 * same slot table, each range with its master and, when `withReplicas`, a replica. A cluster just
 * created takes a moment to agree (until then a client can be sent MOVED for a slot it mapped
 * right); a test that starts earlier measures the cluster's settling, not the service.
 */
async function waitUntilHealthy(nodes: readonly ClusterNode[], timeoutMs: number, withReplicas: boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastProblem: string;
  for (;;) {
    const tables = new Set<string>();
    lastProblem = '';
    for (const node of nodes.filter(isRunning)) {
      try {
        const [info, slots] = await askNode(node, async (client) => [String(await client.cluster('INFO')), await client.cluster('SLOTS')] as const);
        if (!info.includes('cluster_state:ok') || !info.includes('cluster_slots_ok:16384')) lastProblem = `${node.address}: ${info.split('\r\n')[0]}`;
        if (withReplicas && slots.some((range) => range.length < 4)) lastProblem = `${node.address}: a slot range without its replica`;
        tables.add(JSON.stringify(slots.map((range) => [range[0], range[1], ...range.slice(2).map((served) => (served as unknown as [string, number])[1])]).sort((a, b) => Number(a[0]) - Number(b[0]))));
      } catch (error) {
        lastProblem = `${node.address}: ${(error as Error).message}`;
      }
    }
    if (lastProblem === '' && tables.size > 1) lastProblem = 'the nodes disagree on the slot table';
    if (lastProblem === '') return;
    if (Date.now() > deadline) throw new Error(`the local Redis Cluster did not become healthy: ${lastProblem}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
