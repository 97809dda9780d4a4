import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export function hasRedisServerBinary(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

export const HOW_TO_GET_REDIS =
  'These tests need Redis. Set REDIS_URL, run one on 127.0.0.1:6379, or install redis-server ' +
  '(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) so the tests can start their own.';

/** Resolves true if a Redis answers PING at `url` within a second. */
export async function redisAnswers(url: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export interface PrivateRedis {
  url: string;
  port: number;
  process: ChildProcess;
  /** SIGSTOP pauses it, SIGCONT resumes it (a hung Redis); stop() ends it either way. */
  signal(signal: NodeJS.Signals): void;
  stop(): Promise<void>;
}

/** Starts a throwaway redis-server on a free loopback port, keeping nothing on disk. */
export async function startPrivateRedis(options: { port?: number } = {}): Promise<PrivateRedis> {
  if (!hasRedisServerBinary()) throw new Error(HOW_TO_GET_REDIS);
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  while (!(await redisAnswers(url))) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`redis-server did not start on ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return { url, port, process: child, signal: (signal) => void child.kill(signal), stop };
}

/**
 * Deletes every key under `prefix` (SCAN, then UNLINK pipelined one key each: a cluster node refuses
 * a multi-key UNLINK across hash slots).
 */
export async function deleteByPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await keys.reduce((pipeline, key) => pipeline.unlink(key), redis.pipeline()).exec();
    cursor = next;
  } while (cursor !== '0');
}
