import type { TestProject } from 'vitest/node';
import { type LocalCluster, startLocalCluster } from './redis-cluster.js';
import { HOW_TO_GET_REDIS, type PrivateRedis, redisAnswers, startPrivateRedis } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    /**
     * Set by `npm run test:cluster` (vitest.cluster.config.ts): the seed nodes of the Redis Cluster
     * every test store is opened on. Empty: stores open on `redisUrl`.
     */
    redisClusterNodes: string[];
  }
}

/**
 * Finds the Redis the suites use: REDIS_URL if given, else one on the default port, else a private
 * redis-server started from PATH. With none of these the run fails, saying how to get one: Redis
 * suites are never skipped silently. In a cluster run (TEST_REDIS_CLUSTER=1), also a Redis Cluster:
 * REDIS_CLUSTER_NODES if given, else a local 3-master, 3-replica cluster started from redis-server.
 */
export default async function setup(project: TestProject) {
  let started: PrivateRedis | undefined;
  let cluster: LocalCluster | undefined;
  let url = process.env.REDIS_URL;
  if (url) {
    if (!(await redisAnswers(url))) throw new Error(`REDIS_URL=${url} does not answer. ${HOW_TO_GET_REDIS}`);
  } else if (await redisAnswers('redis://127.0.0.1:6379')) {
    url = 'redis://127.0.0.1:6379';
  } else {
    started = await startPrivateRedis();
    url = started.url;
  }
  project.provide('redisUrl', url);
  let clusterNodes: string[] = [];
  if (process.env.TEST_REDIS_CLUSTER === '1') {
    if (process.env.REDIS_CLUSTER_NODES) {
      clusterNodes = process.env.REDIS_CLUSTER_NODES.split(',').map((node) => node.trim());
    } else {
      try {
        cluster = await startLocalCluster();
      } catch (error) {
        await started?.stop();
        throw error;
      }
      clusterNodes = cluster.seeds;
    }
  }
  project.provide('redisClusterNodes', clusterNodes);
  return async () => {
    await Promise.all([started?.stop(), cluster?.stop()]);
  };
}
