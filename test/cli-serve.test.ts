import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { DEFAULT_RELAYS, DEFAULT_SYNC_KINDS } from '../src/config/env.js';
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
      const served = await serve({ RELAYS: relay.url, SEARCH_RELAYS: 'wss://search.example', LOG_LEVEL: 'info' });
      await untilHealthy(served.url, served);
      expect(await getJson(`${served.url}/event?id=${note.id}`)).toMatchObject({ status: 200, body: { event: note, profiles: {} } });
      expect((await testStore.store.getEvents([note.id]))[0]?.event).toEqual(note);
      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
      // Logs are written in batches (at least every 250 ms); everything is out by the exit.
      expect(served.output()).toContain('fetching misses from relays');
      // The search relays are named where they are used.
      expect(served.output()).toContain('"search":["wss://search.example/"]');
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

  it('OFFLINE=true: no relay and no NIP-05 domain is asked, whatever RELAYS says, and serve says so', async () => {
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

  it('`npm start` stopped by Ctrl-C in a terminal survives the second SIGINT npm forwards (and a second Ctrl-C), closes the store and exits 0', async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'nostr-lookup-ctrl-c-'));
    // `npm start` runs dist/ (built by npm ci's prepare; npm run build after changing src/).
    // script(1) runs npm in a pseudo-terminal of its own, in the terminal's foreground process group;
    // ^C written to the terminal makes its line discipline send SIGINT to that whole group, as a
    // keyboard does. Detached: cleanup can kill the group.
    // script(1) runs its command with `$SHELL -c`. `exec` puts npm itself in the terminal, as an
    // interactive shell does (it runs npm in a process group of its own): left waiting in that group,
    // dash (/bin/sh here, and CI's $SHELL) takes the ^C too and, once npm has exited 0, kills itself
    // with SIGINT all the same ("wait and unconditional exit"): exit 130 whatever the service does.
    // SHELL is pinned so that a local run with SHELL=/bin/bash (which execs a lone command itself)
    // tests what CI tests.
    const terminal = spawn('script', ['-qec', 'exec npm start', '/dev/null'], {
      env: { ...process.env, SHELL: '/bin/sh', HOST: '127.0.0.1', PORT: String(port), REDIS_URL: '', REDIS_CLUSTER_NODES: '', DATA_DIR: dataDir, OFFLINE: 'true' },
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    terminal.stdout.on('data', (chunk) => (output += chunk));
    terminal.stderr.on('data', (chunk) => (output += chunk));
    // Pretty lines (stdout is a terminal), colours removed.
    const text = () => stripVTControlCharacters(output);
    const exited = new Promise<number | null>((resolve) => terminal.on('close', (code) => resolve(code)));
    const socket = new Socket();
    try {
      const url = `http://127.0.0.1:${port}`;
      for (let attempt = 0; ; attempt++) {
        if (await fetch(`${url}/healthz`).then((response) => response.ok, () => false)) break;
        if (attempt > 150) throw new Error(`npm start did not serve:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // Its request line is still in the request log's buffer (written every 250 ms) at the ^C.
      expect((await fetch(`${url}/readyz?last-before-ctrl-c`)).status).toBe(200);
      // A request in flight (half its body sent) holds the shutdown open, so that the signals that
      // follow the first all arrive during it, whatever the timing of npm's forwarding. It goes
      // pipelined behind a GET in one write: the server parses both from one read, so once the GET's
      // answer is back the POST is in flight.
      const body = '{"query":"{ __typename }"}';
      await new Promise<void>((resolve) => socket.connect(port, '127.0.0.1', resolve));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk));
      socket.write(
        'GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n' +
          `POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      );
      for (let attempt = 0; !/^HTTP\/1\.1 200 [^]*\r\n\r\n\{"status":"ok"\}/.test(answer); attempt++) {
        if (attempt > 100) throw new Error(`no answer to the pipelined GET: ${JSON.stringify(answer)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const healthAnswer = answer;
      terminal.stdin.write('\x03');
      for (let attempt = 0; !text().includes('shutting down'); attempt++) {
        if (attempt > 100) throw new Error(`no "shutting down" after Ctrl-C:\n${text()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      terminal.stdin.write('\x03');
      await new Promise((resolve) => setTimeout(resolve, 300));
      socket.write(body.slice(5));
      expect(await exited).toBe(0);
      expect(answer.slice(healthAnswer.length)).toMatch(/^HTTP\/1\.1 200 [^]*\r\n\r\n\{"data":\{"__typename":"Query"\}\}$/);
      expect(text()).toContain('/readyz?last-before-ctrl-c');
      // Logged once the store has closed.
      expect(text()).toMatch(/INFO: stopped/);
    } finally {
      socket.destroy();
      try {
        process.kill(-(terminal.pid as number), 'SIGKILL');
      } catch {
        // the group is gone already
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('serve --help lists every configuration variable with its default, read from the models, and a word on what it does', async () => {
    const help = spawnCli(['serve', '--help'], {});
    expect(await help.exited).toBe(0);
    // `  NAME (default: …)`, then what it does on lines of their own, indented further.
    const entries = [...help.stdout().matchAll(/^ {2}([A-Z][A-Z0-9_]+) \(default: (.*)\)\n((?: {6}\S.*\n?)+)/gm)];
    for (const [, name, , does] of entries) expect(does?.trim().length, name).toBeGreaterThan(5);
    const listed = new Map(entries.map((match) => [match[1], match[2]] as const));
    // Every variable of the models, as the README test finds them in the source.
    const source = readFileSync('src/config/env.ts', 'utf8');
    const variables = [...source.matchAll(/^\s{2}([A-Z][A-Z0-9_]+):/gm)].map((match) => match[1]);
    expect([...listed.keys()].sort()).toEqual([...new Set(variables)].sort());
    expect(Object.fromEntries(['PORT', 'HOST', 'DATA_DIR', 'REDIS_URL', 'RELAYS', 'OUTBOX', 'RATE_LIMIT_BURST', 'SYNC_KINDS'].map((name) => [name, listed.get(name)]))).toEqual({
      PORT: '8080',
      HOST: '127.0.0.1',
      DATA_DIR: './data',
      REDIS_URL: 'unset',
      RELAYS: DEFAULT_RELAYS.join(','),
      OUTBOX: 'true',
      RATE_LIMIT_BURST: 'RATE_LIMIT rounded up',
      SYNC_KINDS: DEFAULT_SYNC_KINDS.join(','),
    });
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
        // Nothing holds the process once it has said it stopped (~1.5 s were reported
        // once; 15–25 ms measured since).
        let stoppedAt = Number.NaN;
        served.child.stdout?.on('data', () => {
          if (Number.isNaN(stoppedAt) && served.stdout().includes('"msg":"stopped"')) stoppedAt = performance.now();
        });
        const exitedAt = new Promise<number>((resolve) => served.child.once('exit', () => resolve(performance.now())));
        served.child.kill('SIGTERM');
        expect(await served.exited).toBe(0);
        expect((await exitedAt) - stoppedAt).toBeLessThan(1000);
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
