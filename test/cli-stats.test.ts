import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli } from './support/cli.js';

// `nostr-lookup stats` on the sample, as a process: what the index holds, from its kept counters.

let dataDir: string;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'nostr-lookup-stats-'));
  const imported = spawnCli(['import', 'sample/events.jsonl'], { DATA_DIR: dataDir, REDIS_URL: '', REDIS_CLUSTER_NODES: '' });
  expect(await imported.exited).toBe(0);
}, 60_000);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('nostr-lookup stats', () => {
  it('--json: the servable events by kind (358 of the sample: 4 profiles were replaced), profiles, follow lists, the store\'s bytes', async () => {
    const stats = spawnCli(['stats', '--json'], { DATA_DIR: dataDir, REDIS_URL: '', REDIS_CLUSTER_NODES: '' });
    expect(await stats.exited).toBe(0);
    const summary = JSON.parse(stats.stdout()) as { storedBytes: number };
    expect(summary).toEqual({ events: 358, kinds: { 0: 58, 1: 283, 6: 17 }, profiles: 58, followLists: 0, follows: 0, notifications: 535, storedBytes: summary.storedBytes });
    expect(summary.storedBytes).toBeGreaterThan(100_000);
  });

  it('prints a line per figure and per kind, named', async () => {
    const stats = spawnCli(['stats'], { DATA_DIR: dataDir, REDIS_URL: '', REDIS_CLUSTER_NODES: '' });
    expect(await stats.exited).toBe(0);
    expect(stats.stdout().split('\n').slice(0, 8)).toEqual([
      'events        358',
      '  kind 0            58  profiles',
      '  kind 1           283  notes',
      '  kind 6            17  reposts',
      'profiles      58',
      'follow lists  0',
      'follows       0',
      'notifications 535',
    ]);
    expect(stats.stdout()).toMatch(/^store {9}\d+\.\d MB$/m);
  });

  it('exits 1 without making a store where DATA_DIR names none (a mistyped path is not an empty index)', async () => {
    const missing = join(dataDir, 'no-such-store');
    const stats = spawnCli(['stats'], { DATA_DIR: missing, REDIS_URL: '', REDIS_CLUSTER_NODES: '' });
    expect(await stats.exited).toBe(1);
    expect(stats.stderr()).toContain(`nostr-lookup stats: no store in ${missing} (DATA_DIR)`);
    expect(existsSync(missing)).toBe(false);
  });

  it('exits 1 with one line when the store cannot be reached', async () => {
    const stats = spawnCli(['stats'], { REDIS_URL: 'redis://127.0.0.1:1', REDIS_CLUSTER_NODES: '' });
    expect(await stats.exited).toBe(1);
    expect(stats.stderr()).toContain('nostr-lookup stats: cannot reach');
  }, 20_000);
});
