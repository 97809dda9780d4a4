import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../src/config/env.js';
import { freePort } from './support/redis-server.js';
import { useTestServer } from './support/test-server.js';

// No Docker engine runs here: the compose file and Dockerfile are checked by reading them, and the
// commands the image runs are run outside Docker.
const root = new URL('../', import.meta.url);
// merge: YAML merge keys (<<), which Compose resolves, as the file uses them.
const compose = parse(readFileSync(new URL('docker-compose.yml', root), 'utf8'), { merge: true }) as {
  services: Record<string, Record<string, unknown>>;
  volumes: Record<string, unknown>;
};
const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8');

describe('docker-compose.yml', () => {
  const { redis, lookup } = compose.services as {
    redis: Record<string, unknown>;
    lookup: Record<string, unknown>;
  };

  it('has Redis with persistence on, in a named volume, with a healthcheck', () => {
    expect(redis.image).toMatch(/^redis:7/);
    expect((redis.command as string[]).join(' ')).toContain('--appendonly yes');
    expect(redis.volumes).toEqual(['redis-data:/data']);
    expect(Object.keys(compose.volumes)).toContain('redis-data');
    expect((redis.healthcheck as { test: string[] }).test).toEqual(['CMD', 'redis-cli', 'ping']);
  });

  it('builds the service from the Dockerfile and points REDIS_URL at the Redis service', () => {
    expect(lookup.build).toBe('.');
    expect(existsSync(new URL('Dockerfile', root))).toBe(true);
    const env = lookup.environment as Record<string, string>;
    expect(new URL(env.REDIS_URL as string).hostname).toBe('redis');
    expect(new URL(env.REDIS_URL as string).port).toBe('6379');
    expect(env.HOST).toBe('0.0.0.0');
    expect(lookup.ports).toEqual([`${env.PORT}:${env.PORT}`]);
    expect(lookup.depends_on).toEqual({ redis: { condition: 'service_healthy' } });
  });

  it('runs the relay ingester on request, on the same index and relays as the service', () => {
    const sync = compose.services.sync as Record<string, unknown>;
    expect(sync.command).toEqual(['sync']);
    expect(sync.profiles).toEqual(['sync']);
    const syncEnv = sync.environment as Record<string, string>;
    const lookupEnv = lookup.environment as Record<string, string>;
    for (const name of ['REDIS_URL', 'REDIS_KEY_PREFIX', 'RELAY_TIMEOUT_MS', 'NEGATIVE_TTL', 'PROFILE_TTL']) {
      expect(syncEnv[name]).toBe(lookupEnv[name]);
    }
    expect(syncEnv.SYNC_KINDS).toBe('0,1,5,6,7,16,62,1111,9735');
    expect(sync.depends_on).toEqual({ redis: { condition: 'service_healthy' } });
  });

  it('the cluster profile: six cluster nodes with persistence, formed once, and the service pointed at all of them', () => {
    const nodes = ['redis-c1', 'redis-c2', 'redis-c3', 'redis-c4', 'redis-c5', 'redis-c6'].map((name) => compose.services[name] as Record<string, unknown>);
    for (const [index, node] of nodes.entries()) {
      expect(node.profiles).toEqual(['cluster']);
      expect(node.image).toMatch(/^redis:7/);
      const command = (node.command as string[]).join(' ');
      expect(command).toContain('--cluster-enabled yes');
      expect(command).toContain('--port 7000');
      expect(command).toContain('--appendonly yes');
      expect(node.volumes).toEqual([`redis-c${index + 1}-data:/data`]);
      expect(Object.keys(compose.volumes)).toContain(`redis-c${index + 1}-data`);
    }
    const init = compose.services['redis-cluster-init'] as { profiles: string[]; command: string[]; depends_on: Record<string, unknown>; restart: string };
    expect(init.profiles).toEqual(['cluster']);
    expect(Object.keys(init.depends_on).sort()).toEqual(['redis-c1', 'redis-c2', 'redis-c3', 'redis-c4', 'redis-c5', 'redis-c6']);
    const script = init.command.join('\n');
    expect(script).toContain('--cluster-replicas 1');
    expect(script).toContain('cluster_known_nodes:1');
    expect(init.restart).toBe('no');

    const service = compose.services['lookup-cluster'] as { profiles: string[]; environment: Record<string, string>; depends_on: unknown; ports: string[] };
    expect(service.profiles).toEqual(['cluster']);
    expect(service.depends_on).toEqual({ 'redis-cluster-init': { condition: 'service_completed_successfully' } });
    expect(service.ports).toEqual(['8081:8080']);
    // What the service would read from this environment: a cluster of the six, never REDIS_URL.
    const config = loadConfig(service.environment);
    expect(config.store).toMatchObject({ kind: 'redis-cluster', waitReplicas: 1, nodes: nodes.map((_, index) => ({ host: `redis-c${index + 1}`, port: 7000 })) });
  });

  it('the Dockerfile runs what `npm run build` produces', () => {
    expect(dockerfile).toContain('ENTRYPOINT ["node", "dist/cli/main.js"]');
    expect(dockerfile).toContain('CMD ["serve"]');
    const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
      bin: Record<string, string>;
    };
    expect(pkg.bin['nostr-lookup']).toBe('dist/cli/main.js');
    const build = JSON.parse(readFileSync(new URL('tsconfig.build.json', root), 'utf8')) as {
      compilerOptions: { outDir: string; rootDir: string };
    };
    expect(build.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
    expect(existsSync(new URL('src/cli/main.ts', root))).toBe(true);
  });

  describe('the service healthcheck command, run outside Docker', () => {
    const context = useTestServer();

    const [, ...command] = (lookup.healthcheck as { test: string[] }).test;
    // Asynchronously: the server under test answers from this very process.
    const runHealthcheck = (port: string) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(command[0] as string, command.slice(1), {
          env: { ...process.env, PORT: port },
          stdio: 'ignore',
        });
        child.on('close', resolve);
      });

    it('is the same in the compose file and the Dockerfile', () => {
      const healthcheck = /HEALTHCHECK[^\n]*\\\n\s*CMD (\[.*\])$/m.exec(dockerfile)?.[1];
      expect(JSON.parse(healthcheck ?? '[]')).toEqual(command);
    });

    it('passes against a ready service and fails where nothing serves', async () => {
      expect(await runHealthcheck(new URL(context.server.url).port)).toBe(0);
      expect(await runHealthcheck(String(await freePort()))).toBe(1);
    });
  });

  it('the README\'s Docker paragraph says what a user would not expect of it: every interface, GraphiQL off', () => {
    const readme = readFileSync(new URL('README.md', root), 'utf8');
    const docker = readme.slice(readme.indexOf('With Docker instead:')).split('\n\n')[0] ?? '';
    const published = [...(lookup.ports as string[]), ...((compose.services['lookup-cluster'] as { ports: string[] }).ports)];
    // "8080:8080" (no host address) publishes on every interface of the host.
    if (published.some((port) => port.split(':').length === 2)) expect(docker).toContain('every interface');
    const env = lookup.environment as Record<string, string>;
    if (!loadConfig(env).graphql.graphiql) {
      expect(docker).toContain('`NODE_ENV=production`');
      expect(docker).toContain('GraphiQL');
    }
  });
});
