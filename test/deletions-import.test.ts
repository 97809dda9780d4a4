import { spawnCli } from './support/cli.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptySummary, type ImportSummary, importEvents } from '../src/import/import-events.js';
import { type NostrEvent, serializeEvent } from '../src/nostr/event.js';
import type { EventStore, Held } from '../src/store/event-store.js';
import { DELETED } from '../src/store/tombstones.js';
import { deletion, vanish } from './support/deletion-conformance.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { createTestStore, storeEnv, type TestStore } from './support/test-store.js';
import { BOTH_STORES } from './support/both-stores.js';

/**
 * Importing deletions (NIP-09) and requests to vanish (NIP-62): the summary counts `applied` (new
 * deletion requests and requests to vanish) and `deleted` (events refused because their authors
 * deleted them), exactly, in either order of arrival, on both stores and through the CLI.
 */

const T = 1_700_000_000;
const BOB = pubkeyOf('di-bob');

const n1 = signed('di-alice', { content: 'n1', created_at: T + 1 });
const n2 = signed('di-alice', { content: 'n2', created_at: T + 2 });
const n3 = signed('di-alice', { content: 'n3', created_at: T + 3 });
const deletesN1 = deletion('di-alice', { ids: [n1.id], at: T + 10 });
const deletesN2 = deletion('di-alice', { ids: [n2.id], at: T + 11 });
const forged = deletion('di-mallory', { ids: [n3.id], at: T + 12 });
const bobCard = profile('di-bob', { name: 'Bob' }, T);
const b1 = signed('di-bob', { content: 'b1', created_at: T + 1 });
const bobVanishes = vanish('di-bob', T + 50);
const b2 = signed('di-bob', { content: 'b2, older than the request, arrives after it', created_at: T + 10 });
const b3 = signed('di-bob', { content: 'b3, newer than the request', created_at: T + 60 });
const elsewhere = vanish('di-carol', T + 50, 'wss://some.other.relay');

/**
 * Notes; a deletion after its target (n1) and one before it (n2); a deletion by someone else (n3);
 * a request to vanish after some of its author's events (card, b1) and before another (b2), and a
 * newer event (b3); a deletion and a deleted note sent again; a request to vanish naming another relay.
 */
const STREAM: NostrEvent[] = [n1, deletesN1, deletesN2, n2, n3, forged, bobCard, b1, bobVanishes, b2, b3, deletesN1, n1, elsewhere];
const STREAM_TEXT = `${STREAM.map(serializeEvent).join('\n')}\n`;

/** One write per event: each outcome as it arrives. */
const ONE_BY_ONE: ImportSummary = {
  ...emptySummary(),
  read: 14,
  // n1, n3, the card, b1 (all before their deletions), b3, and the request naming another relay.
  stored: 6,
  // deletesN1, deletesN2, forged (kept, changes nothing), bobVanishes.
  applied: 4,
  // n2 (its deletion came first), b2 (older than the request to vanish), n1 sent again.
  deleted: 3,
  // deletesN1 sent again.
  duplicate: 1,
};

/** One batch: the store applies the batch's deletions to the batch's events in any order. */
const ONE_BATCH: ImportSummary = {
  ...emptySummary(),
  read: 14,
  // n3, b3, and the request naming another relay.
  stored: 3,
  applied: 4,
  // n1, n2, the card, b1, b2, and n1 again.
  deleted: 6,
  duplicate: 1,
};

function said(held: Held): string | null {
  if (held === DELETED) return 'deleted';
  return held?.event?.id ?? null;
}

/** What the index answers after the import, whatever the batches were. */
async function expectFinalAnswers(store: EventStore) {
  const ids = [n1, n2, n3, bobCard, b1, b2, b3, deletesN1, deletesN2, forged, bobVanishes, elsewhere].map((event) => event.id);
  expect((await store.getEvents(ids)).map(said)).toEqual([
    'deleted',
    'deleted',
    n3.id,
    'deleted',
    'deleted',
    'deleted',
    b3.id,
    deletesN1.id,
    deletesN2.id,
    forged.id,
    bobVanishes.id,
    elsewhere.id,
  ]);
  expect((await store.getProfiles([BOB])).map(said)).toEqual(['deleted']);
}

const STORES = BOTH_STORES;

describe.each(STORES)('importEvents with deletions and a request to vanish, $name store', ({ open }) => {
  it.each([
    ['one event per batch', 1, ONE_BY_ONE],
    ['one batch for everything', 500, ONE_BATCH],
  ])('%s: the summary counts applied and deleted exactly', async (_label, batchSize, expected) => {
    const { store, cleanup } = await open();
    try {
      const progress: number[] = [];
      const summary = await importEvents(Readable.from([STREAM_TEXT]), store, {
        batchSize,
        onProgress: (running) => progress.push(running.applied + running.deleted),
      });
      expect(summary).toEqual<ImportSummary>(expected);
      expect(progress.at(-1)).toBe(expected.applied + expected.deleted);
      await expectFinalAnswers(store);
    } finally {
      await cleanup();
    }
  });

  it('imported again: the deletions are duplicates, and every deleted event is refused again', async () => {
    const { store, cleanup } = await open();
    try {
      await importEvents(Readable.from([STREAM_TEXT]), store, { batchSize: 1 });
      const again = await importEvents(Readable.from([STREAM_TEXT]), store, { batchSize: 1 });
      expect(again).toEqual<ImportSummary>({
        ...emptySummary(),
        read: 14,
        // n1 twice, n2, the card, b1, b2.
        deleted: 6,
        // The four requests (deletesN1 twice), n3, b3, and the request naming another relay.
        duplicate: 8,
      });
      await expectFinalAnswers(store);
    } finally {
      await cleanup();
    }
  });
});

describe('nostr-lookup import (the command) with deletions and a request to vanish', () => {
  let dir: string;
  let file: string;
  const opened: Array<() => Promise<void>> = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-deletions-cli-'));
    file = join(dir, 'events.jsonl');
    writeFileSync(file, STREAM_TEXT);
  });
  afterAll(async () => {
    for (const cleanup of opened) await cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(args: string[], env: Record<string, string | undefined>) {
    const cli = spawnCli(['import', ...args], env, '');
    const code = await cli.exited;
    return { code, stdout: cli.stdout(), stderr: cli.stderr() };
  }

  async function redisEnv(): Promise<Record<string, string | undefined>> {
    const testStore: TestStore = await createTestStore();
    opened.push(testStore.cleanup);
    return { ...storeEnv(testStore.prefix) };
  }

  it('prints the applied: and deleted: lines in its readable summary (one event per batch)', async () => {
    const { code, stdout, stderr } = await run([file, '--batch-size', '1'], await redisEnv());
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toBe(
      [
        'read:        14 events',
        'stored:      6',
        'replaced:    0 (newer version of a replaceable event)',
        'superseded:  0 (older than the version held; not stored)',
        'duplicate:   1',
        'rejected:    0',
        'ephemeral:   0 (kinds 20000-29999; not stored)',
        'applied:     4 deletion requests and requests to vanish (NIP-09, NIP-62)',
        'deleted:     3 (deleted by their authors; not stored)',
        'invalid:     0',
        'unreadable:  0 lines',
        'ignored:     0 relay messages without an event',
        '',
      ].join('\n'),
    );
  });

  it('the default batch: applied and deleted in the readable summary and in --json', async () => {
    const readable = await run([file], await redisEnv());
    expect(readable.code).toBe(0);
    expect(readable.stdout).toContain('\napplied:     4 deletion requests and requests to vanish (NIP-09, NIP-62)\n');
    expect(readable.stdout).toContain('\ndeleted:     6 (deleted by their authors; not stored)\n');
    expect(readable.stdout).toContain('\nstored:      3\n');

    const json = await run([file, '--json'], await redisEnv());
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(ONE_BATCH);
  });

  it('the embedded store (no REDIS_URL) counts the same; imported twice, the second run is duplicates and deleted', async () => {
    const env = { REDIS_URL: undefined, REDIS_CLUSTER_NODES: undefined, DATA_DIR: join(dir, 'data') };
    const first = await run([file, '--json', '--batch-size', '1'], env);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual(ONE_BY_ONE);
    const second = await run([file], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('\nstored:      0\n');
    expect(second.stdout).toContain('\napplied:     0 deletion requests and requests to vanish (NIP-09, NIP-62)\n');
    expect(second.stdout).toContain('\ndeleted:     6 (deleted by their authors; not stored)\n');
    expect(second.stdout).toContain('\nduplicate:   8\n');
  });
});
