import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbEventStore } from '/work/main/src/store/embedded/lmdb-event-store.js';
import { startLoopbackRelay } from '/work/main/test/support/loopback-relay.js';
import { profile, signed } from '/work/main/test/support/events.js';
import { deletion } from '/work/main/test/support/deletion-conformance.js';
import { startTestServer, getJson } from '/work/main/test/support/test-server.js';

const T = 1_700_000_000;
for (let i = 0; i < 20; i++) {
  const author = profile(`r-${i}`, { name: 'x' }, T);
  const note = signed(`r-${i}`, { content: 'n', created_at: T + 1 });
  const del = deletion(`r-${i}`, { ids: [note.id], at: T + 10 });
  const relay = await startLoopbackRelay({ events: [author, note, del] });
  const dir = mkdtempSync(join(tmpdir(), 'repro-'));
  const store = new LmdbEventStore(dir);
  const server = await startTestServer(store, { relays: { urls: [relay.url] } });
  const r = await getJson(`${server.url}/event?id=${note.id}`);
  console.log(i, r.status);
  await server.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  await relay.stop();
}
console.log('done');
