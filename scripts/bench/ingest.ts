// `npm run bench:ingest`: import throughput of verified events against the raw verification rate of
// the same events in the same run, and Redis memory per stored event against its JSON size.
//
//   npm run bench:ingest -- --profiles 10000 --notes 20000 --k 10
//
// Uses a private redis-server (so memory figures are this import's alone) unless REDIS_URL is set.
import { readFileSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { importEvents } from '../../src/import/import-events.js';
import { serializeEvent } from '../../src/nostr/event.js';
import { verifyNostrEvent } from '../../src/nostr/verify-event.js';
import { connectRedis, RedisEventStore, waitUntilReady } from '../../src/store/redis/redis-event-store.js';
import { deleteByPrefix, type PrivateRedis, startPrivateRedis } from '../../test/support/redis-server.js';
import { identity, makeNotes, makeProfiles } from './dataset.js';

const { values: options } = parseArgs({
  options: {
    profiles: { type: 'string', default: '10000' },
    notes: { type: 'string', default: '20000' },
    k: { type: 'string', default: '10' },
    output: { type: 'string', default: 'BENCHMARKS.md' },
  },
});

async function usedMemory(admin: Redis): Promise<number> {
  const info = await admin.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1]);
}

async function main() {
  let privateRedis: PrivateRedis | undefined;
  const redisUrl = process.env.REDIS_URL ?? (privateRedis = await startPrivateRedis()).url;
  const prefix = `ingest:${Date.now()}:`;
  const client = connectRedis({ url: redisUrl, keyPrefix: prefix, timeoutMs: 30_000 });
  await waitUntilReady(client, 5000);
  const store = new RedisEventStore(client, prefix);
  const admin = new Redis(redisUrl);
  try {
    const identities = Array.from({ length: Number(options.profiles) }, (_, index) => identity(index));
    const events = [...makeProfiles(identities), ...makeNotes(identities, Number(options.notes), Number(options.k), 7)];
    const lines = events.map(serializeEvent);
    const jsonBytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
    process.stderr.write(`${events.length} signed events, ${(jsonBytes / events.length).toFixed(0)} JSON bytes each on average\n`);

    // Raw verification: parse each line and verify it, nothing else (what import cannot beat).
    let started = performance.now();
    let valid = 0;
    for (const line of lines) if (verifyNostrEvent(JSON.parse(line)).ok) valid++;
    const verifySeconds = (performance.now() - started) / 1000;
    if (valid !== events.length) throw new Error('dataset does not verify');

    // Import: the real path (read lines, parse, verify, write in batches) from a stream.
    const memoryBefore = await usedMemory(admin);
    started = performance.now();
    const summary = await importEvents(Readable.from([lines.join('\n')]), store);
    const importSeconds = (performance.now() - started) / 1000;
    const memoryAfter = await usedMemory(admin);
    const stored = summary.stored + summary.replaced;
    if (stored !== events.length) throw new Error(`stored ${stored} of ${events.length}`);

    const verifyRate = events.length / verifySeconds;
    const importRate = events.length / importSeconds;
    const memoryPerEvent = (memoryAfter - memoryBefore) / stored;
    const jsonPerEvent = jsonBytes / events.length;
    const rows = [
      `| raw verification (parse + verify) | ${verifyRate.toFixed(0)} events/s | |`,
      `| import (read + parse + verify + write) | ${importRate.toFixed(0)} events/s | ${(importRate / verifyRate).toFixed(2)}× verification |`,
      `| Redis memory per stored event | ${memoryPerEvent.toFixed(0)} bytes | ${(memoryPerEvent / jsonPerEvent).toFixed(2)}× its ${jsonPerEvent.toFixed(0)} JSON bytes |`,
    ];
    process.stderr.write(`${rows.join('\n')}\n`);

    const command = `npm run bench:ingest -- --profiles ${options.profiles} --notes ${options.notes} --k ${options.k}`;
    const section = `## Ingest

Measured by \`${command}\` on ${new Date().toISOString().slice(0, 10)}, same machine, ${events.length} signed events
(${options.profiles} profiles, ${options.notes} notes with ${options.k} relevant pubkeys), one private redis-server.

| what | figure | ratio |
| --- | --- | --- |
${rows.join('\n')}
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
