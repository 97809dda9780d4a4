import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoreConfig } from '../src/config/env.js';
import { importEvents } from '../src/import/import-events.js';
import { serializeEvent } from '../src/nostr/event.js';
import { StoreUnavailableError } from '../src/store/event-store.js';
import { openStore } from '../src/store/open-store.js';
import { connectRedis, waitUntilReady } from '../src/store/redis/connect.js';
import { checkRelations } from '../src/store/relation-check.js';
import { spawnCli } from './support/cli.js';
import { pubkeyOf, signed } from './support/events.js';
import { captureLogs } from './support/logs.js';
import { type PrivateRedis, startPrivateRedis } from './support/redis-server.js';

const T = 1_700_000_000;
/** REDIS_TIMEOUT_MS of these stores: far shorter than the stall below. */
const TIMEOUT_MS = 200;
const STALL_MS = 900;
/** A pause that outlasts the CLI's start (about a second here). */
const CLI_STALL_MS = 3500;

// `import` and `relations` pipeline a batch's commands: the last waits in Redis for all before it,
// and a command given up on still runs there, leaving figures a retry cannot mend. Their stores
// (bulk) give each command at least BULK_COMMAND_TIMEOUT_MS (open-store.ts); `serve` and `sync` keep
// REDIS_TIMEOUT_MS.
// (A private Redis: CLIENT PAUSE would hold up every other suite's writes.)
describe('a bulk writer waits for its pipelined batch; serve and sync keep REDIS_TIMEOUT_MS', () => {
  let redis: PrivateRedis | undefined;
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
    await redis?.stop();
    redis = undefined;
  });

  async function setUp() {
    redis = await startPrivateRedis();
    const config: StoreConfig = { kind: 'redis', url: redis.url, keyPrefix: 'deadline:', timeoutMs: TIMEOUT_MS, waitReplicas: 0 };
    const admin = connectRedis({ url: redis.url, timeoutMs: 5000 });
    await waitUntilReady(admin, 5000);
    closing.push(async () => void admin.disconnect());
    const open = (options: { writer?: boolean; bulk?: boolean }) => {
      const opened = openStore(config, captureLogs('silent').logger, options);
      closing.push(() => opened.store.close());
      return opened;
    };
    return { admin, open };
  }

  it('an import held up in Redis past REDIS_TIMEOUT_MS writes each batch once, without a retry, and every figure is exact', async () => {
    const { admin, open } = await setUp();
    const writer = open({ writer: true, bulk: true });
    await writer.ready(5000);
    // Follow lists over a shared pool, as people's are: followers, counts and search ranks to keep.
    const pool = Array.from({ length: 60 }, (_, n) => pubkeyOf(`deadline followed ${n}`));
    const lists = Array.from({ length: 30 }, (_, n) =>
      signed(`deadline follower ${n}`, { kind: 3, created_at: T + n, content: '', tags: pool.filter((_, p) => (p + n) % 3 !== 0).map((pubkey) => ['p', pubkey]) }),
    );
    const retries: number[] = [];
    await admin.call('CLIENT', 'PAUSE', String(STALL_MS), 'WRITE');
    const started = Date.now();
    const summary = await importEvents(Readable.from(lists.map((event) => `${serializeEvent(event)}\n`)), writer.store, {
      batchSize: 10,
      onRetry: (attempt) => retries.push(attempt),
    });
    // It waited out the stall rather than giving up on its commands at 200 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(STALL_MS - 100);
    expect(retries).toEqual([]);
    expect(summary.stored).toBe(lists.length);
    // Every kind of figure: followers and search ranks are what timed-out follow writes left wrong.
    const check = await checkRelations(writer.store);
    expect(check.followDifferences).toEqual([]);
    expect(check.searchDifferences).toEqual([]);
    expect(check.noteSearchDifferences).toEqual([]);
    expect([...check.differences, ...check.zapDifferences, ...check.noteDifferences]).toEqual([]);
  });

  it('nostr-lookup import (the CLI) is a bulk writer: held up past REDIS_TIMEOUT_MS, it retries nothing', async () => {
    const { admin } = await setUp();
    const dir = mkdtempSync(join(tmpdir(), 'writer-deadline-'));
    closing.push(async () => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'lists.jsonl');
    const pool = Array.from({ length: 40 }, (_, n) => pubkeyOf(`deadline cli followed ${n}`));
    const lists = Array.from({ length: 20 }, (_, n) => signed(`deadline cli follower ${n}`, { kind: 3, created_at: T + n, content: '', tags: pool.map((pubkey) => ['p', pubkey]) }));
    writeFileSync(file, lists.map((event) => `${serializeEvent(event)}\n`).join(''));
    const env = { REDIS_URL: redis?.url, REDIS_KEY_PREFIX: 'deadline-cli:', REDIS_TIMEOUT_MS: String(TIMEOUT_MS), DATA_DIR: undefined };
    // Longer than the CLI takes to start, so that its writes meet the pause.
    await admin.call('CLIENT', 'PAUSE', String(CLI_STALL_MS), 'WRITE');
    const started = Date.now();
    const imported = spawnCli(['import', file, '--json', '--batch-size', '5'], env);
    expect(await imported.exited).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(CLI_STALL_MS - 100);
    expect(imported.stderr()).not.toContain('did not take a batch');
    expect(JSON.parse(imported.stdout().trim().split('\n').at(-1) ?? '{}')).toMatchObject({ read: 20, stored: 20 });
  });

  it('serve and sync: a write held up past REDIS_TIMEOUT_MS fails as store_unavailable within it', async () => {
    const { admin, open } = await setUp();
    for (const options of [{}, { writer: true }]) {
      const opened = open(options);
      await opened.ready(5000);
      await admin.call('CLIENT', 'PAUSE', String(STALL_MS), 'WRITE');
      const started = Date.now();
      await expect(opened.store.putEvents([signed('deadline served', { created_at: T, content: 'held up' })])).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(Date.now() - started).toBeLessThan(STALL_MS - 200);
      await new Promise((resolve) => setTimeout(resolve, STALL_MS));
    }
  });
});
