import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serializeEvent } from '../src/nostr/event.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCli, spawnCli } from './support/cli.js';
import { profile, signed } from './support/events.js';
import { startLoopbackRelay } from './support/loopback-relay.js';
import { startNip05Server, TEST_CA_FILE } from './support/nip05-server.js';
import { freePort } from './support/redis-server.js';
import { getJson } from './support/test-server.js';
import { createTestStore, storeEnv, type TestStore, testClusterNodes } from './support/test-store.js';

const storeKindName = () => (testClusterNodes() ? 'redis-cluster' : 'redis');

// `nostr-lookup serve` as a user runs it: configured by the environment, stopped by a signal.
let testStore: TestStore;
const alice = profile('alice', { name: 'alice' });

beforeAll(async () => {
  testStore = await createTestStore();
  await testStore.store.putEvents([alice]);
});
// Every process `serve` started: a test that fails before stopping its own must not leave it running.
const spawned: RunningCli['child'][] = [];

afterAll(async () => {
  for (const child of spawned) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await testStore.cleanup();
});

interface Served extends RunningCli {
  url: string;
}

async function serve(env: Record<string, string | undefined>, command = ['serve']): Promise<Served> {
  const port = await freePort();
  const running = spawnCli(command, {
    // RELAYS empty unless a test sets it: no test may reach for the public relays.
    HOST: '127.0.0.1', PORT: String(port), ...storeEnv(testStore.prefix), RELAYS: '', ...env,
  });
  spawned.push(running.child);
  return { ...running, url: `http://127.0.0.1:${port}` };
}

async function untilHealthy(url: string, served: Served): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`service did not start:\n${served.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('nostr-lookup serve', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('serves with the configured prefix and stops cleanly on %s', async (signal) => {
    const served = await serve({ LOG_LEVEL: 'info' });
    await untilHealthy(served.url, served);
    const response = await getJson(`${served.url}/user-profile?pubkey=${alice.pubkey}`);
    expect(response).toMatchObject({ status: 200, body: { profile: alice } });
    expect((await getJson(`${served.url}/readyz`)).status).toBe(200);
    served.child.kill(signal);
    expect(await served.exited).toBe(0);
    const lines = served
      .output()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; level: string; reqId?: string });
    expect(lines.map((line) => line.msg)).toEqual(
      // On a cluster run: 'event store: redis-cluster', 'redis-cluster ready'.
      expect.arrayContaining([`event store: ${storeKindName()}`, `${storeKindName()} ready`, 'request', 'shutting down', 'stopped']),
    );
    expect(lines.find((line) => line.msg === 'request')?.reqId).toBeTruthy();
  });

  it('with RELAYS, fetches a miss from the relay, stores it, and still stops cleanly', async () => {
    const note = signed('cli-relay', { content: 'only on the relay' });
    const relay = await startLoopbackRelay({ events: [note] });
    try {
      const served = await serve({ RELAYS: relay.url, LOG_LEVEL: 'info' });
      await untilHealthy(served.url, served);
      expect(await getJson(`${served.url}/event?id=${note.id}`)).toMatchObject({ status: 200, body: { event: note, profiles: {} } });
      expect((await testStore.store.getEvents([note.id]))[0]?.event).toEqual(note);
      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
      // Logs are written in batches (at least every 250 ms); everything is out by the exit.
      expect(served.output()).toContain('fetching misses from relays');
    } finally {
      await relay.stop();
    }
  });

  it('resolves name@host:port (NIP-05) with RELAY_ALLOW_PRIVATE and a CA from NODE_EXTRA_CA_CERTS, and verifies in the background', async () => {
    const domain = await startNip05Server();
    const carol = profile('cli-nip05 carol', { name: 'carol', nip05: `carol@${domain.domain}` });
    await testStore.store.putEvents([carol]);
    domain.route('alice', { json: { names: { alice: alice.pubkey } } });
    domain.route('carol', { json: { names: { carol: carol.pubkey } } });
    try {
      const served = await serve({ RELAY_ALLOW_PRIVATE: 'true', NODE_EXTRA_CA_CERTS: TEST_CA_FILE, LOG_LEVEL: 'info' });
      await untilHealthy(served.url, served);
      expect(await getJson(`${served.url}/user-profile?pubkey=alice@${domain.domain}`)).toMatchObject({ status: 200, body: { profile: alice } });
      const query = JSON.stringify({ query: `{ profile(pubkey: "${carol.pubkey}") { nip05Verification { status } } }` });
      const statuses: string[] = [];
      for (let attempt = 0; attempt < 50 && statuses.at(-1) !== 'VERIFIED'; attempt++) {
        const response = await getJson(`${served.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: query });
        statuses.push((response.body as { data: { profile: { nip05Verification: { status: string } } } }).data.profile.nip05Verification.status);
        await new Promise((done) => setTimeout(done, 50));
      }
      expect(statuses[0]).toBe('NOT_CHECKED');
      expect(statuses.at(-1)).toBe('VERIFIED');
      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
    } finally {
      await domain.close();
    }
  });

  it('OFFLINE=true (issue 31): no relay and no NIP-05 domain is asked, whatever RELAYS says, and serve says so', async () => {
    const note = signed('cli-offline', { content: 'only on the relay' });
    const relay = await startLoopbackRelay({ events: [note] });
    const domain = await startNip05Server();
    const dana = profile('cli-offline dana', { name: 'dana', nip05: `dana@${domain.domain}` });
    await testStore.store.putEvents([dana]);
    domain.route('alice', { json: { names: { alice: alice.pubkey } } });
    domain.route('dana', { json: { names: { dana: dana.pubkey } } });
    try {
      const served = await serve({ OFFLINE: 'true', RELAYS: relay.url, RELAY_ALLOW_PRIVATE: 'true', NODE_EXTRA_CA_CERTS: TEST_CA_FILE, LOG_LEVEL: 'info' });
      await untilHealthy(served.url, served);
      expect(await getJson(`${served.url}/event?id=${note.id}`)).toMatchObject({ status: 404, body: { error: { code: 'event_not_found' } } });
      expect(await getJson(`${served.url}/user-profile?pubkey=alice@${domain.domain}`)).toMatchObject({ status: 404, body: { error: { code: 'nip05_unresolvable' } } });
      const query = JSON.stringify({ query: `{ profile(pubkey: "${dana.pubkey}") { nip05Verification { status } } }` });
      for (let round = 0; round < 3; round++) {
        const response = await getJson(`${served.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: query });
        expect(response.body).toEqual({ data: { profile: { nip05Verification: { status: 'NOT_CHECKED' } } } });
        await new Promise((done) => setTimeout(done, 50));
      }
      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
      expect(relay.requests).toEqual([]);
      expect(domain.hits.size).toBe(0);
      expect(domain.connections.accepted).toBe(0);
      expect(served.output()).toContain('OFFLINE=true: no outside traffic');
      expect(served.output()).not.toContain('fetching misses from relays');
    } finally {
      await Promise.all([relay.stop(), domain.close()]);
    }
  });

  it('`npm start` stopped with SIGTERM (to npm only, as a process manager sends it) stops the server too', async () => {
    const port = await freePort();
    // Detached: its own process group, so that cleanup can reach whatever it leaves behind.
    const npm = spawn('npm', ['start'], {
      env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), ...storeEnv(testStore.prefix), RELAYS: '' },
      detached: true,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    try {
      const url = `http://127.0.0.1:${port}/healthz`;
      for (let attempt = 0; ; attempt++) {
        if (await fetch(url).then((response) => response.ok, () => false)) break;
        if (attempt > 150) throw new Error('npm start did not serve');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      npm.kill('SIGTERM');
      await exited;
      // The server itself stopped: nothing answers on its port any more.
      let answering = true;
      for (let attempt = 0; attempt < 50 && answering; attempt++) {
        answering = await fetch(url).then(() => true, () => false);
        if (answering) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(answering).toBe(false);
    } finally {
      try {
        process.kill(-(npm.pid as number), 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }
  });

  it('--version prints the version of package.json', async () => {
    const version = spawnCli(['--version'], {});
    expect(await version.exited).toBe(0);
    expect(version.stdout().trim()).toBe((JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version);
  });

  it('exits 1 listing every configuration problem', async () => {
    const served = await serve({ PORT: 'eighty', LOG_LEVEL: 'chatty' });
    expect(await served.exited).toBe(1);
    expect(served.output()).toContain('PORT must be a whole number');
    expect(served.output()).toContain('LOG_LEVEL must be one of');
  });
});

describe('nostr-lookup without REDIS_URL: the embedded store', () => {
  it('serve and import exit 1 with a clear message when DATA_DIR cannot be used', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'nostr-lookup-notdir-')), 'a-file');
    writeFileSync(file, 'not a directory');
    for (const command of [['serve'], ['import', '-']]) {
      const run = await serve({ REDIS_URL: undefined, REDIS_CLUSTER_NODES: undefined, DATA_DIR: file }, command);
      expect(await run.exited).toBe(1);
      expect(run.output()).toContain(`cannot open the embedded store in ${file}`);
      expect(run.output()).not.toMatch(/\n\s+at /); // no stack trace
    }
    rmSync(file, { force: true });
  });

  it('imports, serves, says which store it uses, and keeps the data across a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'nostr-lookup-data-'));
    const env = { REDIS_URL: undefined, REDIS_CLUSTER_NODES: undefined, DATA_DIR: dataDir };
    try {
      const file = `${dataDir}-events.jsonl`;
      writeFileSync(file, `${serializeEvent(alice)}\n`);
      const imported = await serve(env, ['import', file, '--json']);
      expect(await imported.exited).toBe(0);
      expect(imported.output()).toContain('"stored":1');

      for (let run = 0; run < 2; run++) {
        const served = await serve(env);
        await untilHealthy(served.url, served);
        expect(await getJson(`${served.url}/user-profile?pubkey=${alice.pubkey}`)).toMatchObject({ status: 200, body: { profile: alice } });
        expect((await getJson(`${served.url}/readyz`)).status).toBe(200);
        served.child.kill('SIGTERM');
        expect(await served.exited).toBe(0);
        const start = served
          .output()
          .split('\n')
          .find((line) => line.includes('event store: embedded'));
        expect(JSON.parse(start ?? '{}')).toMatchObject({ store: 'embedded', engine: 'lmdb', dataDir });
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(`${dataDir}-events.jsonl`, { force: true });
    }
  });
});
