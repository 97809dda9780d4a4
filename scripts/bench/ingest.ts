// `npm run bench:ingest`: import throughput of verified events against the raw verification rate of
// the same events in the same run, Redis memory per stored event against its JSON size, and what
// deletions (NIP-09) and requests to vanish (NIP-62) leave behind (store/tombstones.ts).
//
//   npm run bench:ingest -- --profiles 10000 --notes 20000 --k 10 --vanish-events 20000
//
// Uses a private redis-server (so memory figures are this import's alone) unless REDIS_URL is set.
// Memory is `used_memory` (INFO memory) before and after each step, read once the server is idle
// (no lazy frees pending, two equal readings), so it counts keys, values, the author index and the
// main hash table's growth; per-key figures are MEMORY USAGE of sample keys. One key prefix, cleared
// between the steps:
// 1. the dataset: profiles and notes (memory per stored event; the author index's share of it);
// 2. tombstones: the same notes alone, then one deletion request per note (kind 5, one `e` tag, by
//    its author): the net change per deletion, and what stays of a deleted note;
// 3. a request to vanish by one author with --vanish-events notes and a profile: before and after;
// 4. pending tombstones: one deletion request per id that was never stored.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { type ImportSummary, importEvents } from '../../src/import/import-events.js';
import { type NostrEvent, serializeEvent } from '../../src/nostr/event.js';
import { verifyNostrEvent } from '../../src/nostr/verify-event.js';
import { AUTHOR_LIST_KEY_TYPE, NOTIFICATION_KEY_TYPES, RELATION_KEY_TYPES, redisKeys } from '../../src/store/redis/keys.js';
import { connectRedis, waitUntilReady } from '../../src/store/redis/connect.js';
import { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { deleteByPrefix, type PrivateRedis, startPrivateRedis } from '../../test/support/redis-server.js';
import { type Identity, identity, makeDeletions, makeNotes, makeProfiles, makeVanish, unseenIds } from './dataset.js';
import { totalUsage } from './redis-memory.js';

const { values: options } = parseArgs({
  options: {
    profiles: { type: 'string', default: '10000' },
    notes: { type: 'string', default: '20000' },
    k: { type: 'string', default: '10' },
    'vanish-events': { type: 'string', default: '20000' },
    output: { type: 'string', default: 'docs/benchmarks/last-run.md' },
  },
});

/** Keys whose MEMORY USAGE is averaged for a per-key figure. */
const SAMPLE_KEYS = 1000;

function infoField(info: string, name: string): number {
  return Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1]);
}

/** `used_memory` once Redis is idle: no lazy frees (UNLINK) pending, and two readings 200 ms apart agree. */
async function usedMemory(admin: Redis): Promise<number> {
  let last = Number.NaN;
  for (let reading = 0; reading < 50; reading++) {
    const info = await admin.info('memory');
    const used = infoField(info, 'used_memory');
    if (used === last && infoField(info, 'lazyfree_pending_objects') === 0) return used;
    last = used;
    await sleep(200);
  }
  return last;
}

/** Mean MEMORY USAGE (key name, value and their overhead, as Redis counts them) of up to SAMPLE_KEYS of `keys`. */
async function meanUsage(admin: Redis, keys: readonly string[]): Promise<number> {
  const step = Math.max(1, Math.floor(keys.length / SAMPLE_KEYS));
  const sample = keys.filter((_, index) => index % step === 0).slice(0, SAMPLE_KEYS);
  const pipeline = admin.pipeline();
  for (const key of sample) pipeline.memory('USAGE', key, 'SAMPLES', 0);
  const usages = ((await pipeline.exec()) ?? []).map(([error, usage]) => {
    if (error || typeof usage !== 'number') throw new Error(`MEMORY USAGE: ${String(error ?? usage)}`);
    return usage;
  });
  return usages.reduce((sum, usage) => sum + usage, 0) / usages.length;
}


/** How many notifications the recipients' page orders hold (ZCARD of every `nz:` key). */
async function countNotifications(admin: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let count = 0;
  do {
    const [next, found] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    const pipeline = admin.pipeline();
    for (const key of found) pipeline.zcard(key);
    for (const [, size] of (await pipeline.exec()) ?? []) count += Number(size);
  } while (cursor !== '0');
  return count;
}

const jsonBytesOf = (events: readonly NostrEvent[]) => events.reduce((sum, event) => sum + Buffer.byteLength(serializeEvent(event)), 0);
const bytes = (value: number) => `${value < 0 ? '−' : ''}${Math.abs(value).toFixed(0)} bytes`;
const signedBytes = (value: number) => (value < 0 ? bytes(value) : `+${bytes(value)}`);
const mib = (value: number) => `${(value / 2 ** 20).toFixed(1)} MiB`;

async function main() {
  let privateRedis: PrivateRedis | undefined;
  const redisUrl = process.env.REDIS_URL ?? (privateRedis = await startPrivateRedis()).url;
  const prefix = `ingest:${Date.now()}:`;
  const keys = redisKeys(prefix);
  const client = connectRedis({ url: redisUrl, timeoutMs: 30_000 });
  await waitUntilReady(client, 5000);
  const store = new RedisEventStore(client, prefix);
  const admin = new Redis(redisUrl);

  /** Imports `events` by the real path (a stream of lines: parse, verify, write in batches). */
  const importAll = async (events: readonly NostrEvent[]): Promise<{ summary: ImportSummary; seconds: number }> => {
    const started = performance.now();
    const summary = await importEvents(Readable.from([events.map(serializeEvent).join('\n')]), store);
    return { summary, seconds: (performance.now() - started) / 1000 };
  };
  const expect = (step: string, summary: ImportSummary, counts: Partial<Record<keyof ImportSummary, number>>) => {
    for (const [field, count] of Object.entries(counts))
      if (summary[field as keyof ImportSummary] !== count)
        throw new Error(`${step}: ${field} ${JSON.stringify(summary[field as keyof ImportSummary])}, expected ${count}`);
  };
  const clear = async () => {
    await deleteByPrefix(admin, prefix);
    return usedMemory(admin);
  };

  try {
    const noteCount = Number(options.notes);
    const vanishCount = Number(options['vanish-events']);
    const identities = Array.from({ length: Number(options.profiles) }, (_, index) => identity(index));
    const byPubkey = new Map(identities.map((who) => [who.pubkey, who]));
    const notes = makeNotes(identities, noteCount, Number(options.k), 7);
    const events = [...makeProfiles(identities), ...notes];
    const lines = events.map(serializeEvent);
    const jsonBytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
    process.stderr.write(`${events.length} signed events, ${(jsonBytes / events.length).toFixed(0)} JSON bytes each on average\n`);

    // Raw verification: parse each line and verify it, nothing else (what import cannot beat).
    let started = performance.now();
    let valid = 0;
    for (const line of lines) if (verifyNostrEvent(JSON.parse(line)).ok) valid++;
    const verifySeconds = (performance.now() - started) / 1000;
    if (valid !== events.length) throw new Error('dataset does not verify');

    // 1. The dataset.
    const memoryBefore = await usedMemory(admin);
    started = performance.now();
    const summary = await importEvents(Readable.from([lines.join('\n')]), store);
    const importSeconds = (performance.now() - started) / 1000;
    const memoryAfter = await usedMemory(admin);
    const stored = summary.stored + summary.replaced;
    if (stored !== events.length) throw new Error(`stored ${stored} of ${events.length}`);
    // The author's list (`n:`: the author index and the notes in one key per author, author-list.ts)
    // is part of storing an event; the rest of the relationship index is reported apart.
    const authorIndex = await totalUsage(admin, `${prefix}n:{*`);
    let relationBytes = 0;
    for (const type of RELATION_KEY_TYPES) if (type !== AUTHOR_LIST_KEY_TYPE) relationBytes += (await totalUsage(admin, `${prefix}${type}:{*`)).bytes;
    // The notification index's part (store/notification-index.ts): its keys, per notification kept.
    let notificationBytes = 0;
    for (const type of NOTIFICATION_KEY_TYPES) notificationBytes += (await totalUsage(admin, `${prefix}${type}:{*`)).bytes;
    const notifications = await countNotifications(admin, `${prefix}nz:{*`);

    const verifyRate = events.length / verifySeconds;
    const importRate = events.length / importSeconds;
    const memoryPerEvent = (memoryAfter - memoryBefore) / stored;
    const jsonPerEvent = jsonBytes / events.length;
    const rows = [
      `| raw verification (parse + verify) | ${verifyRate.toFixed(0)} events/s | |`,
      `| import (read + parse + verify + write) | ${importRate.toFixed(0)} events/s | ${(importRate / verifyRate).toFixed(2)}× verification |`,
      `| Redis memory per stored event | ${memoryPerEvent.toFixed(0)} bytes | ${(memoryPerEvent / jsonPerEvent).toFixed(2)}× its ${jsonPerEvent.toFixed(0)} JSON bytes |`,
      `| of which the author's list (\`n:{<pubkey>}\`: author index and notes, MEMORY USAGE summed) | ${(authorIndex.bytes / stored).toFixed(0)} bytes | ${authorIndex.keys} sorted sets, ${(stored / authorIndex.keys).toFixed(1)} members each |`,
      `| of which the relationship index (every other key type of it, MEMORY USAGE summed) | ${(relationBytes / stored).toFixed(0)} bytes | |`,
      `| of which notifications (\`ni\`, \`nr\`, \`nz\` keys, MEMORY USAGE summed) | ${(notificationBytes / stored).toFixed(0)} bytes | ${notifications} notifications (mentions), ${(notificationBytes / Math.max(1, notifications)).toFixed(0)} bytes each |`,
      `| Redis memory per stored event without the relationship index | ${(memoryPerEvent - relationBytes / stored).toFixed(0)} bytes | ${((memoryPerEvent - relationBytes / stored) / jsonPerEvent).toFixed(2)}× its ${jsonPerEvent.toFixed(0)} JSON bytes |`,
    ];
    process.stderr.write(`${rows.join('\n')}\n`);

    // 2. Tombstones: the notes alone, then a deletion request for each, by its author.
    const notesEmpty = await clear();
    const noteKeys = notes.map((note) => keys.event(note.id));
    await importAll(notes);
    const notesStored = await usedMemory(admin);
    const noteUsage = await meanUsage(admin, noteKeys);
    const deletions = makeDeletions(
      notes.map((note) => ({ author: byPubkey.get(note.pubkey) as Identity, id: note.id })),
      1_700_200_000,
    );
    const deleting = await importAll(deletions);
    expect('deletions', deleting.summary, { applied: noteCount });
    const notesDeleted = await usedMemory(admin);
    const tombstoneValue = await admin.get(noteKeys[0] as string);
    if (tombstoneValue !== `x${notes[0]?.pubkey}`) throw new Error(`not a tombstone: ${tombstoneValue?.slice(0, 80)}`);
    const tombstoneUsage = await meanUsage(admin, noteKeys);
    const deletionUsage = await meanUsage(admin, deletions.map((request) => keys.event(request.id)));
    const perNote = (notesStored - notesEmpty) / noteCount;
    const perDeletion = (notesDeleted - notesStored) / noteCount;
    const noteJson = jsonBytesOf(notes) / noteCount;
    const deletionJson = jsonBytesOf(deletions) / noteCount;
    const tombstoneRows: string[] = [];
    tombstoneRows.push(
      `| **Tombstones**: ${noteCount} notes stored, then one deletion request each (kind 5, one \`e\` tag, by its author) | | |`,
      `| note stored (notes alone, \`used_memory\` ${mib(notesEmpty)} → ${mib(notesStored)}) | ${bytes(perNote)} per note | ${(perNote / noteJson).toFixed(2)}× its ${noteJson.toFixed(0)} JSON bytes |`,
      `| deletion request applied, net (→ ${mib(notesDeleted)}) | ${signedBytes(perDeletion)} per deletion | the note's bytes freed, its tombstone and the ${deletionJson.toFixed(0)}-byte request stored |`,
      `| what stays of a deleted note (tombstone + deletion request) | ${bytes(perNote + perDeletion)} per deleted note | ${((perNote + perDeletion) / perNote).toFixed(2)}× the note it replaces |`,
      `| MEMORY USAGE of a note's key \`e:<id>\`, then of its tombstone \`x<pubkey>\` (${tombstoneValue.length}-byte value) | ${bytes(noteUsage)} → ${bytes(tombstoneUsage)} | mean of ${Math.min(SAMPLE_KEYS, noteCount)} keys |`,
      `| MEMORY USAGE of the deletion request's key | ${bytes(deletionUsage)} | ${(deletionUsage / deletionJson).toFixed(2)}× its ${deletionJson.toFixed(0)} JSON bytes |`,
      `| import of the deletion requests | ${(noteCount / deleting.seconds).toFixed(0)} events/s | ${((noteCount / deleting.seconds) / verifyRate).toFixed(2)}× verification |`,
    );
    process.stderr.write(`${tombstoneRows.slice(-7).join('\n')}\n`);

    // 3. A request to vanish by one author with many events.
    const vanishEmpty = await clear();
    const vanisher = identity(identities.length);
    const vanisherEvents = [...makeProfiles([vanisher]), ...makeNotes(identities, vanishCount, Number(options.k), 11, [vanisher])];
    await importAll(vanisherEvents);
    const vanisherStored = await usedMemory(admin);
    const vanisherIndex = await totalUsage(admin, keys.author(vanisher.pubkey).list);
    const request = makeVanish(vanisher, 1_700_300_000);
    const vanishing = await importAll([request]);
    expect('vanish', vanishing.summary, { applied: 1 });
    const vanished = await usedMemory(admin);
    const vanishedNotes = vanisherEvents.slice(1).map((note) => keys.event(note.id));
    if ((await admin.get(vanishedNotes[0] as string)) !== `x${vanisher.pubkey}`) throw new Error('vanish left no tombstone');
    const vanishedUsage = await meanUsage(admin, vanishedNotes);
    const vanishJson = jsonBytesOf(vanisherEvents) / vanisherEvents.length;
    const perVanisherEvent = (vanisherStored - vanishEmpty) / vanisherEvents.length;
    const perVanishedEvent = (vanished - vanishEmpty) / vanisherEvents.length;
    tombstoneRows.push(
      `| **Request to vanish** by one author with ${vanishCount} notes and a profile | | |`,
      `| before (\`used_memory\` ${mib(vanishEmpty)} → ${mib(vanisherStored)}) | ${bytes(perVanisherEvent)} per event | ${(perVanisherEvent / vanishJson).toFixed(2)}× its ${vanishJson.toFixed(0)} JSON bytes; the author index ${bytes(vanisherIndex.bytes / vanisherEvents.length)} per event (one sorted set) |`,
      `| after (→ ${mib(vanished)}), the request included | ${bytes(perVanishedEvent)} per event | ${(perVanishedEvent / perVanisherEvent).toFixed(2)}× before; MEMORY USAGE of a tombstone's key ${bytes(vanishedUsage)} |`,
      `| time to apply the request | ${(vanishing.seconds * 1000).toFixed(0)} ms | ${((vanisherEvents.length / vanishing.seconds) / 1000).toFixed(0)} k events removed per second |`,
    );
    process.stderr.write(`${tombstoneRows.slice(-4).join('\n')}\n`);

    // 4. Pending tombstones: deletion requests naming ids never stored.
    const pendingEmpty = await clear();
    const unseen = unseenIds(noteCount, 13);
    const pendingRequests = makeDeletions(
      unseen.map((id) => ({ author: identities[createHash('sha256').update(id).digest().readUInt32BE(0) % identities.length] as Identity, id })),
      1_700_400_000,
    );
    const pending = await importAll(pendingRequests);
    expect('pending', pending.summary, { applied: noteCount });
    const pendingStored = await usedMemory(admin);
    const pendingValue = await admin.get(keys.event(unseen[0] as string));
    if (!pendingValue?.startsWith('p')) throw new Error(`not a pending tombstone: ${pendingValue?.slice(0, 80)}`);
    const pendingUsage = await meanUsage(admin, unseen.map(keys.event));
    const pendingRequestUsage = await meanUsage(admin, pendingRequests.map((request) => keys.event(request.id)));
    const perPending = (pendingStored - pendingEmpty) / noteCount;
    tombstoneRows.push(
      `| **Pending tombstones**: ${noteCount} deletion requests naming ids never stored | | |`,
      `| deletion request stored, net (\`used_memory\` ${mib(pendingEmpty)} → ${mib(pendingStored)}) | ${signedBytes(perPending)} per deletion | the request (MEMORY USAGE ${bytes(pendingRequestUsage)}), its pending tombstone, the author index |`,
      `| MEMORY USAGE of a pending tombstone's key \`p<pubkey>\` (${pendingValue.length}-byte value) | ${bytes(pendingUsage)} | mean of ${Math.min(SAMPLE_KEYS, noteCount)} keys |`,
    );
    process.stderr.write(`${tombstoneRows.slice(-3).join('\n')}\n`);

    const command = `npm run bench:ingest -- --profiles ${options.profiles} --notes ${options.notes} --k ${options.k} --vanish-events ${options['vanish-events']}`;
    const table = (lines: string[]) => `| what | figure | ratio |\n| --- | --- | --- |\n${lines.join('\n')}\n`;
    process.stderr.write(`\n${command}\n\n${table([...rows, ...tombstoneRows])}`);
    const section = `## Ingest

Measured by \`${command}\` on ${new Date().toISOString().slice(0, 10)}, same machine, ${events.length} signed events
(${options.profiles} profiles, ${options.notes} notes with ${options.k} relevant pubkeys), one private redis-server.

${table(rows)}
How this compares with the code before deletions: see *Ingest before and after deletions* below.

### Tombstones

The same run. What deletions (NIP-09) and requests to vanish (NIP-62) leave in Redis
(\`src/store/tombstones.ts\`). Memory is \`used_memory\` before and after each step, read when Redis
is idle; the steps share one key prefix (\`ingest:<ms>:\`, ${prefix.length} characters, in every key name),
cleared between them. MEMORY USAGE counts a key's name, value and overhead.

${table(tombstoneRows)}
`;
    const path = new URL(options.output, new URL('../../', import.meta.url));
    let report = '';
    try {
      report = readFileSync(path, 'utf8');
    } catch {
      report = '# Benchmarks\n';
    }
    const start = report.indexOf('## Ingest');
    if (start >= 0) {
      const next = report.indexOf('\n## ', start + 1);
      report = report.slice(0, start) + section + (next >= 0 ? report.slice(next + 1) : '');
    } else {
      report = `${report.trimEnd()}\n\n${section}`;
    }
    writeFileSync(path, report);
  } finally {
    await deleteByPrefix(admin, prefix);
    admin.disconnect();
    await store.close();
    await privateRedis?.stop();
  }
}

await main();
