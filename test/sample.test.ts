import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importEvents } from '../src/import/import-events.js';
import { LmdbEventStore } from '../src/store/embedded/lmdb-event-store.js';
import { getJson, startTestServer, type TestServer } from './support/test-server.js';

// The README walkthrough: sample/events.jsonl imported into the embedded store.
const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-sample-'));
const store = new LmdbEventStore(dir);
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(store);
});
afterAll(async () => {
  await server.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('sample/events.jsonl', () => {
  it('imports whole: every event is real and verifies', async () => {
    const summary = await importEvents(createReadStream(new URL('../sample/events.jsonl', import.meta.url)), store);
    expect(summary).toMatchObject({ read: 362, stored: 358, replaced: 4, invalid: {}, unreadableLines: 0 });
  });

  it('answers the README example: the note with its author and the mentioned profile', async () => {
    const { status, body } = await getJson(`${server.url}/event?id=nostr:note16lptvzfanhar73ftsuw63vefpfppt8dke5yylutme4kxuf0u9grqly6uq3`);
    expect(status).toBe(200);
    const { profiles } = body as { profiles: Record<string, { content: string }> };
    expect(Object.keys(profiles)).toEqual([
      '460c25e682fda7832b52d1f22d3d22b3176d972f60dcdc3212ed8c92ef85065c',
      '1739d937dc8c0c7370aa27585938c119e25c41f6c441a5d34c6d38503e3136ef',
    ]);
    expect(JSON.parse(profiles['1739d937dc8c0c7370aa27585938c119e25c41f6c441a5d34c6d38503e3136ef']?.content ?? '{}').name).toBe('JeffG');
  });
});
