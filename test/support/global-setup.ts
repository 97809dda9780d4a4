import type { TestProject } from 'vitest/node';
import { HOW_TO_GET_REDIS, type PrivateRedis, redisAnswers, startPrivateRedis } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

/**
 * Finds the Redis the suites use: REDIS_URL if given, else one on the default port, else a private
 * redis-server started from PATH. With none of these the run fails, saying how to get one: Redis
 * suites are never skipped silently.
 */
export default async function setup(project: TestProject) {
  let started: PrivateRedis | undefined;
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
  return async () => {
    await started?.stop();
  };
}
