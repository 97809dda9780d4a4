import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serializeEvent } from '../src/nostr/event.js';
import { serveCli, spawnCli } from './support/cli.js';
import { profile } from './support/events.js';
import { freePort } from './support/redis-server.js';

// A run without network: relays that refuse every connection, as the default ones
// do offline. Lookups the index answers still refresh profiles in the background, where nobody waits.
describe('offline, a lookup the index answers', () => {
  it('logs no warning, and each relay resting once at info, however often the background refresh fails', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'nostr-lookup-offline-log-'));
    const alice = profile('offline-log alice', { name: 'alice' });
    const file = join(dataDir, 'alice.jsonl');
    writeFileSync(file, `${serializeEvent(alice)}\n`);
    const env = { REDIS_URL: '', REDIS_CLUSTER_NODES: '', DATA_DIR: dataDir };
    const imported = spawnCli(['import', file], env);
    expect(await imported.exited).toBe(0);
    // Seven relays, as by default (three RELAYS, four INDEXER_RELAYS), at ports nothing listens on.
    const dead = await Promise.all(Array.from({ length: 7 }, async () => `ws://127.0.0.1:${await freePort()}/`));
    // PROFILE_TTL=1: the profile is refreshed again each second, and each refresh fails.
    const served = await serveCli({ ...env, RELAYS: dead.slice(0, 3).join(','), INDEXER_RELAYS: dead.slice(3).join(','), PROFILE_TTL: '1' });
    try {
      for (let round = 0; round < 8; round++) {
        const response = await fetch(`${served.url}/user-profile?pubkey=${alice.pubkey}`);
        expect(response.status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
      const lines = served
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: string; msg: string; relay?: string });
      expect(lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
      const resting = lines.filter((line) => line.msg === 'relay resting');
      expect(resting.map((line) => line.relay).sort()).toEqual([...dead].sort());
    } finally {
      served.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
