import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serializeEvent } from '../../src/nostr/event.js';
import { LmdbEventStore } from '../../src/store/embedded/lmdb-event-store.js';
import { type RunAs, serveCli, spawnCli } from '../support/cli.js';
import { profile, signed } from '../support/events.js';
import { startLoopbackRelay, type LoopbackRelay } from '../support/loopback-relay.js';
import { getJson } from '../support/test-server.js';

// The embedded store on a full disk: a small tmpfs, filled up. Mounting needs root,
// which CI has; without it this file fails saying so (it is never skipped).
let disk: string;
let relay: LoopbackRelay;
const held = profile('full-alice', { name: 'stored before the disk filled' });
const onRelay = signed('full-bob', { content: 'only on the relay' });

function fillUp(path: string): void {
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, block);
  } catch {
    // ENOSPC: full
  } finally {
    closeSync(fd);
  }
}

beforeAll(async () => {
  disk = mkdtempSync(join(tmpdir(), 'nostr-lookup-full-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', disk], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    throw new Error(`these tests mount a 2 MiB tmpfs and need root: ${mounted.stderr.trim()}`);
  }
  relay = await startLoopbackRelay({ events: [onRelay] });
});

afterAll(async () => {
  await relay?.stop();
  // Lazy: detached even if a killed child still holds a file open there.
  spawnSync('umount', ['-l', disk]);
  rmSync(disk, { recursive: true, force: true });
});

function serveOn(dataDir: string, as?: RunAs) {
  return serveCli({ DATA_DIR: dataDir, REDIS_URL: '', RELAYS: relay.url, INDEXER_RELAYS: '' }, as);
}

interface Line {
  level: string;
  msg: string;
  code?: string;
  refused?: number;
}

/** What the service logged, but the request lines. */
function logged(output: string): Line[] {
  // LMDB itself prints `Write error: … position …, size …` to stderr with no newline (mdb.c), so a
  // log line may follow it on the same line of the combined output: read from the line's JSON.
  return output
    .split('\n')
    .map((line) => line.slice(Math.max(0, line.indexOf('{"level"'))))
    .filter((line) => line.startsWith('{"level"'))
    .map((line) => JSON.parse(line) as Line)
    .filter((line) => line.msg !== 'request');
}

/** Lines of stack traces (escaped in JSON, or printed raw), and pino's `stack` fields, an empty one included. */
function stacksIn(output: string): number {
  return (output.match(/\\n\s+at |^\s+at |"stack":/gm) ?? []).length;
}

const hex64 = () => randomBytes(32).toString('hex');

/** `count` lookups the index misses (an event, a profile): each writes what the relay said, or tries to. */
async function misses(url: string, count: number): Promise<void> {
  for (let index = 0; index < count; index++) {
    expect((await getJson(`${url}/event?id=${hex64()}`)).status).toBe(404);
    expect((await getJson(`${url}/user-profile?pubkey=${hex64()}`)).status).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('a full disk under the embedded store', () => {
  it('import: retries, then exits 1 with one line saying why and what was written, never a stack', async () => {
    const dataDir = join(disk, 'import');
    const input = join(tmpdir(), `nostr-lookup-full-${process.pid}.jsonl`);
    // ~3 MB of valid events for a 2 MiB disk.
    const events = Array.from({ length: 1500 }, (_, index) => signed(`full-${index % 50}`, { content: `${index} ${'x'.repeat(2000)}` }));
    writeFileSync(input, events.map(serializeEvent).join('\n'));
    const run = spawnCli(['import', input, '--retries', '1', '--batch-size', '100'], { DATA_DIR: dataDir, REDIS_URL: '' });
    const code = await run.exited;
    rmSync(input, { force: true });
    rmSync(dataDir, { recursive: true, force: true });
    const output = run.output();
    expect(code).toBe(1);
    expect(output).toMatch(/nostr-lookup import: the store did not take a batch \(event store unavailable: .+\); attempt 2 in 1 s/);
    expect(output).toMatch(/nostr-lookup import: failed: event store unavailable: .+; written before it: \d+ events \(importing again is safe\)/);
    expect(output).not.toMatch(/^\s+at /m);
  }, 60_000);

  it('import: a commit that outgrows the disk is said once, as the full disk it is (ENOSPC), never a stack', async () => {
    const dataDir = join(disk, 'import-commit');
    const input = join(tmpdir(), `nostr-lookup-commit-${process.pid}.jsonl`);
    // Batches of ~2 MB, each more than the disk has: the first commit fails in LMDB, not before it.
    const events = Array.from({ length: 300 }, (_, index) => signed(`commit-${index % 50}`, { content: `${index} ${'x'.repeat(20_000)}` }));
    writeFileSync(input, events.map(serializeEvent).join('\n'));
    const run = spawnCli(['import', input, '--retries', '1', '--batch-size', '100'], { DATA_DIR: dataDir, REDIS_URL: '' });
    const code = await run.exited;
    rmSync(input, { force: true });
    rmSync(dataDir, { recursive: true, force: true });
    const output = run.output();
    // lmdb-js may abort the process as it exits after a failed commit (kriszyp/lmdb-js#48, below).
    if (run.child.signalCode !== 'SIGABRT') expect(code, output).toBe(1);
    const warnings = logged(output).filter((line) => line.level === 'warn');
    expect(warnings, output).toHaveLength(1);
    expect(warnings[0]?.msg).toMatch(/^writes failing: the disk of DATA_DIR is full \(ENOSPC: (a commit failed with E[A-Z]+, )?\d+\.\d MiB free\)$/);
    expect(output).toMatch(/nostr-lookup import: failed: event store unavailable: the disk of DATA_DIR is full \(ENOSPC/);
    expect(stacksIn(output), output).toBe(0);
    expect(output).not.toMatch(/is the disk full\?|Commit failed/);
  }, 60_000);

  it('serve: a write that fails never stops it; reads go on, misses still answer, /readyz says writes are failing', async () => {
    const dataDir = join(disk, 'serve');
    const store = new LmdbEventStore(dataDir);
    await store.putEvents([held]);
    await store.close();
    fillUp(join(disk, 'filler'));
    const served = await serveOn(dataDir);
    const { url } = served;
    try {
      // Misses: the relay answers, the index cannot take the marks or the events.
      for (let index = 0; index < 20; index++) {
        const missing = await getJson(`${url}/event?id=${index.toString(16).padStart(64, '0')}`);
        expect(missing.status).toBe(404);
      }
      const fetched = await getJson(`${url}/event?id=${onRelay.id}`);
      expect(fetched.status).toBe(200);
      expect((fetched.body as { event: unknown }).event).toEqual(onRelay);
      // What the index held is still served.
      expect((await getJson(`${url}/user-profile?pubkey=${held.pubkey}`)).body).toEqual({ profile: held });
      const ready = await getJson(`${url}/readyz`);
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ready', writes: 'failing' });
      expect(served.child.exitCode).toBeNull();
      served.child.kill('SIGTERM');
      const code = await served.exited;
      const output = served.output();
      // Shut down in order: the store closed (as far as lmdb-js lets it), then "stopped", logged last.
      // The line glibc prints as it aborts on a freed pointer.
      const glibcAbort = '(free\\(\\): invalid pointer|double free or corruption \\([^)\\n]*\\))\\n';
      expect(output, output.slice(-6000)).toMatch(new RegExp(`"msg":"stopped"}\\n(${glibcAbort})?$`));
      // Exit 0, with one exception that is lmdb-js', not ours: after a failed commit its close never
      // settles, and its native writer frees a failed transaction's memory twice as the process
      // exits (glibc aborts: "free(): invalid pointer" or "double free or corruption", SIGABRT;
      // kriszyp/lmdb-js#48). Never before "stopped"; README "Operations" says so.
      if (code === null && served.child.signalCode === 'SIGABRT' && new RegExp(`\\n${glibcAbort}$`).test(output)) return;
      expect(code, `exit ${code}, signal ${served.child.signalCode}:\n${output.slice(-6000)}`).toBe(0);
    } finally {
      served.child.kill('SIGKILL');
      rmSync(join(disk, 'filler'), { force: true });
    }
  }, 60_000);

  it('serve: a disk that fills up mid-run and is freed again is said in two lines naming ENOSPC, never a stack', async () => {
    const dataDir = join(disk, 'mid-run');
    const served = await serveOn(dataDir);
    const { url } = served;
    try {
      expect((await getJson(`${url}/event?id=${onRelay.id}`)).status).toBe(200);
      fillUp(join(disk, 'filler'));
      // 20 lookups over ~2.5 s, each of which stores (or marks) what the relay said: every write refused.
      await misses(url, 10);
      expect((await getJson(`${url}/readyz`)).body).toEqual({ status: 'ready', writes: 'failing' });
      rmSync(join(disk, 'filler'), { force: true });
      // The next write lands.
      for (let attempt = 0; !served.stdout().includes('work again'); attempt++) {
        if (attempt > 50) throw new Error(`writes did not come back:\n${served.output()}`);
        await misses(url, 1);
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      const output = served.output();
      const lines = logged(output);
      const warnings = lines.filter((line) => line.level === 'warn');
      expect(warnings, output).toHaveLength(1);
      // Whichever came first: the free-space check (read every FREE_SPACE_CHECK_MS) or a commit
      // that failed before it, with the space left then.
      expect(warnings[0]?.msg).toMatch(/^writes failing: the disk of DATA_DIR is full \(ENOSPC: (less than 1 MiB free|\d+\.\d MiB free)\)/);
      expect(warnings[0]?.code).toBe('ENOSPC');
      const back = lines.filter((line) => line.msg.startsWith('writes to DATA_DIR work again'));
      expect(back).toHaveLength(1);
      expect(back[0]?.msg).toMatch(/^writes to DATA_DIR work again after \d+(\.\d)? s \(\d+ refused meanwhile\)$/);
      expect(back[0]?.refused).toBeGreaterThanOrEqual(20);
      expect(lines.indexOf(back[0] as Line)).toBeGreaterThan(lines.indexOf(warnings[0] as Line));
      expect(stacksIn(output), output).toBe(0);
      expect(output).not.toMatch(/is the disk full\?|nearly full/);
    } finally {
      served.child.kill('SIGKILL');
      await served.exited;
      rmSync(join(disk, 'filler'), { force: true });
    }
  }, 60_000);
});

describe('a read-only disk under the embedded store', () => {
  let readOnly: string;
  beforeAll(() => {
    readOnly = mkdtempSync(join(tmpdir(), 'nostr-lookup-ro-'));
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', readOnly], { encoding: 'utf8' });
    if (mounted.status !== 0) throw new Error(`these tests mount a tmpfs and need root: ${mounted.stderr.trim()}`);
  });
  afterAll(() => {
    spawnSync('umount', ['-l', readOnly]);
    rmSync(readOnly, { recursive: true, force: true });
  });

  it('serve opens it read-only: what it holds is served, misses answered, /readyz says writes are failing; import exits 1 in one line', async () => {
    const dataDir = join(readOnly, 'data');
    const store = new LmdbEventStore(dataDir);
    await store.putEvents([held]);
    await store.close();
    expect(spawnSync('mount', ['-o', 'remount,ro', readOnly]).status).toBe(0);
    const served = await serveOn(dataDir);
    const { url } = served;
    try {
      expect((await getJson(`${url}/user-profile?pubkey=${held.pubkey}`)).body).toEqual({ profile: held });
      expect((await getJson(`${url}/event?id=${'e'.repeat(64)}`)).status).toBe(404);
      const fetched = await getJson(`${url}/event?id=${onRelay.id}`);
      expect(fetched.status).toBe(200);
      expect((await getJson(`${url}/readyz`)).body).toEqual({ status: 'ready', writes: 'failing' });
      // 20 more lookups over ~2.5 s, each of which would store what the relay said.
      await misses(url, 10);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const output = served.output();
      // Said once, at start, with its true cause; every write refused after it is counted, not logged.
      const warnings = logged(output).filter((line) => line.level === 'warn');
      expect(warnings.map((line) => line.msg), output).toEqual([
        'DATA_DIR is on a read-only file system (EROFS): opened read-only, serving what it holds, storing nothing',
      ]);
      expect(stacksIn(output), output).toBe(0);
      expect(output).not.toMatch(/is not a function|is the disk full/);
      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
    } finally {
      served.child.kill('SIGKILL');
    }
    const input = join(tmpdir(), `nostr-lookup-ro-${process.pid}.jsonl`);
    writeFileSync(input, serializeEvent(onRelay));
    const run = spawnCli(['import', input, '--retries', '0'], { DATA_DIR: dataDir, REDIS_URL: '' });
    const code = await run.exited;
    rmSync(input, { force: true });
    expect(code).toBe(1);
    expect(run.output()).toMatch(/nostr-lookup import: failed: event store unavailable/);
    expect(run.output()).not.toMatch(/^\s+at /m);
  }, 60_000);
});

describe('a read-only directory written before the followers database', () => {
  let disk: string;
  beforeAll(() => {
    disk = mkdtempSync(join(tmpdir(), 'nostr-lookup-ro-old-'));
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', disk], { encoding: 'utf8' });
    if (mounted.status !== 0) throw new Error(`these tests mount a tmpfs and need root: ${mounted.stderr.trim()}`);
  });
  afterAll(() => {
    spawnSync('umount', ['-l', disk]);
    rmSync(disk, { recursive: true, force: true });
  });

  it('opens: its followers read as none (it cannot be rebuilt), the rest as before, no error', async () => {
    const dataDir = join(disk, 'data');
    // As an earlier version left it: the relations database with a follow in it, no followers database.
    const legacy = open<string, string>({ path: dataDir, encoding: 'string', compression: false });
    const star = 'ab'.repeat(32);
    const fan = 'cd'.repeat(32);
    await legacy.openDB<string, string>({ name: 'relations', encoding: 'string' }).put(`F:${star}:${fan}`, '1');
    await legacy.openDB<string, string>({ name: 'relations', encoding: 'string' }).put(`f:${star}`, '1');
    await legacy.close();
    expect(spawnSync('mount', ['-o', 'remount,ro', disk]).status).toBe(0);
    const store = new LmdbEventStore(dataDir);
    try {
      expect(await store.relations.followers(star, null, 10)).toEqual([]);
      expect(await store.relations.followCounts([star])).toEqual([{ followers: 1, following: 0 }]);
    } finally {
      await store.close();
    }
  });
});

describe('a DATA_DIR the service may not write', () => {
  it('serve as another user opens it read-only, saying EACCES once; lookups write nothing and log nothing more', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'nostr-lookup-eacces-'));
    chmodSync(parent, 0o755);
    const dataDir = join(parent, 'data');
    const store = new LmdbEventStore(dataDir);
    await store.putEvents([held]);
    await store.close();
    // Root's directory, files 0644: another user reads them but cannot set up LMDB's lock file.
    const served = await serveOn(dataDir, { uid: 65534, gid: 65534 });
    const { url } = served;
    try {
      expect((await getJson(`${url}/user-profile?pubkey=${held.pubkey}`)).body).toEqual({ profile: held });
      expect((await getJson(`${url}/event?id=${onRelay.id}`)).status).toBe(200);
      await misses(url, 10);
      expect((await getJson(`${url}/readyz`)).body).toEqual({ status: 'ready', writes: 'failing' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const output = served.output();
      const warnings = logged(output).filter((line) => line.level === 'warn');
      expect(warnings.map((line) => line.msg), output).toEqual([
        'DATA_DIR may not be written by this user (EACCES): opened read-only, serving what it holds, storing nothing',
      ]);
      expect(stacksIn(output), output).toBe(0);
    } finally {
      served.child.kill('SIGKILL');
      await served.exited;
      rmSync(parent, { recursive: true, force: true });
    }
  }, 60_000);
});
