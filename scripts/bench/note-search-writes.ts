// What the LMDB note search index writes as it grows: the bench's notes (note-texts.ts, created_at
// spread over a year, out of order) written in batches of 2,000 into a store with the index, and
// per step of --every notes the rate and what each batch wrote into the `note-search` database
// (values put, their bytes, the time of the index's part as the batch ends). The rate without the
// index is note-search.ts's import row.
//
//   npx tsx scripts/bench/note-search-writes.ts --notes 300000 --every 50000
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Database } from 'lmdb';
import type { NostrEvent } from '../../src/nostr/event.js';
import { LmdbEventStore } from '../../src/store/embedded/lmdb-event-store.js';
import { note, textsOf } from './note-texts.js';

const { values: options } = parseArgs({ options: { notes: { type: 'string', default: '300000' }, every: { type: 'string', default: '50000' } } });
const notes = Number(options.notes);
const every = Number(options.every);
const BATCH = 2000;
if (!(notes > 0 && every >= BATCH && every % BATCH === 0)) throw new Error('--notes > 0, --every a multiple of 2000');

const dir = mkdtempSync(join(tmpdir(), 'bench-note-search-writes-'));
const store = new LmdbEventStore(dir, { noteSearch: true });
// The index's database and its batch hook (private: counted from outside, as a test does).
const index = (store.relations as unknown as { noteSearch: { db: Database<Buffer, Buffer>; batch: <T>(write: (pending: unknown) => T) => T } }).noteSearch;
let puts = 0;
let bytes = 0;
let indexMs = 0;
const put = index.db.put.bind(index.db);
index.db.put = ((key: Buffer, value: Buffer) => {
  puts++;
  bytes += value.length;
  return put(key, value);
}) as typeof index.db.put;
const batch = index.batch.bind(index);
index.batch = <T>(write: (pending: unknown) => T): T => {
  let ended = 0;
  const result = batch((pending) => {
    const written = write(pending);
    ended = performance.now();
    return written;
  });
  if (ended > 0) indexMs += performance.now() - ended;
  return result;
};

console.log('| notes written | events/s over the step | values put a batch | KB put a batch | the index\'s part a batch (ms) |');
console.log('| --- | --- | --- | --- | --- |');
try {
  const texts = textsOf(notes, 5);
  let stepStarted = performance.now();
  for (let start = 0; start < notes; start += BATCH) {
    const events: NostrEvent[] = [];
    for (let n = start; n < Math.min(notes, start + BATCH); n++) events.push(note(n, 1, texts.next().value as string));
    await store.putEvents(events);
    const written = start + events.length;
    if (written % every === 0 || written === notes) {
      const stepNotes = ((written - 1) % every) + 1;
      const batches = Math.ceil(stepNotes / BATCH);
      const seconds = (performance.now() - stepStarted) / 1000;
      console.log(`| ${written} | ${Math.round(stepNotes / seconds)} | ${Math.round(puts / batches)} | ${Math.round(bytes / batches / 1024)} | ${Math.round(indexMs / batches)} |`);
      puts = bytes = indexMs = 0;
      stepStarted = performance.now();
    }
  }
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
