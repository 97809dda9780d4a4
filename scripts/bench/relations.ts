// `npm run bench:relations`: the relationship index, in one run, side by side:
// 1. import of a reaction-heavy set (a quarter notes, half reactions, a quarter replies) on each
//    store against signature verification alone of the same events;
// 2. what the index adds per reaction and per reply: Redis (MEMORY USAGE of the index's keys, for
//    few and for many reactions per note: small hashes are listpacks, large ones hash tables) and
//    LMDB (the `relations` database's pages);
// 3. GraphQL over HTTP on loopback (the service's app in this process, sequential requests,
//    interleaved): `stats` of 50 events in one request against one, and a page of 100 replies
//    against a page of 10;
// 4. zaps: reading a receipt (every check but the provider's: the invoice decoded, the
//    description hashed, the zap request's signature verified) against signature verification of
//    the same receipts, their import into each store, and what the index adds per receipt.
//
//   npm run bench:relations -- --events 40000 --targets 2000 --rounds 5
//
// Uses a private redis-server (memory figures are this run's alone) unless REDIS_URL is set.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import { finalizeEvent } from 'nostr-tools/wasm';
import { importEvents } from '../../src/import/import-events.js';
import { type NostrEvent, serializeEvent } from '../../src/nostr/event.js';
import { verifyNostrEvent } from '../../src/nostr/verify-event.js';
import { LmdbEventStore } from '../../src/store/embedded/lmdb-event-store.js';
import type { EventStore } from '../../src/store/event-store.js';
import { readZapReceipt } from '../../src/nostr/zaps.js';
import { checkRelations } from '../../src/store/relation-check.js';
import { AUTHOR_LIST_KEY_TYPE, RELATION_KEY_TYPES } from '../../src/store/redis/keys.js';
import { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { deleteByPrefix } from '../../test/support/redis-server.js';
import { zapReceipt } from '../../test/support/zaps.js';
import { type Identity, identity } from './dataset.js';
import { totalUsage } from './redis-memory.js';
import { fixed, lmdbBytes, medianGraphqlTimes, openStorePair, printTable, rate } from './store-pair.js';

const { values: options } = parseArgs({
  options: {
    events: { type: 'string', default: '40000' },
    targets: { type: 'string', default: '2000' },
    identities: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '5' },
    zaps: { type: 'string', default: '2000' },
  },
});

const EMOJI = ['+', '+', '+', '+', '🤙', '❤️', '-', '🔥', ':soapbox:', ''];

function sign(who: Identity, kind: number, created_at: number, tags: string[][], content: string): NostrEvent {
  return JSON.parse(serializeEvent(finalizeEvent({ kind, created_at, tags, content }, who.secretKey))) as NostrEvent;
}

/** Notes (the targets), then reactions and replies to random targets by random authors, deterministic. */
function makeWorld(total: number, targetCount: number, people: Identity[]) {
  let state = 26;
  const random = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const pick = <T>(from: readonly T[]) => from[Math.floor(random() * from.length)] as T;
  const notes = Array.from({ length: Math.max(targetCount, Math.floor(total / 4)) }, (_, n) =>
    sign(pick(people), 1, 1_700_000_000 + n, [], `note ${n}: what do you think? 🌅`),
  );
  const targets = notes.slice(0, targetCount);
  const reactions = Array.from({ length: Math.floor(total / 2) }, (_, n) => {
    const target = pick(targets);
    return sign(pick(people), 7, 1_700_100_000 + n, [['e', target.id], ['p', target.pubkey]], pick(EMOJI));
  });
  const replies = Array.from({ length: Math.floor(total / 4) }, (_, n) => {
    const target = pick(targets);
    return sign(pick(people), 1, 1_700_200_000 + Math.floor(n / 4), [['e', target.id, '', 'root'], ['p', target.pubkey]], `reply ${n}`);
  });
  return { notes, targets, reactions, replies };
}

async function importAll(store: EventStore, events: readonly NostrEvent[]): Promise<number> {
  const started = performance.now();
  const summary = await importEvents(Readable.from([events.map(serializeEvent).join('\n')]), store);
  if (summary.stored + summary.replaced !== events.length) throw new Error(`stored ${summary.stored} of ${events.length}`);
  return (performance.now() - started) / 1000;
}


/**
 * The relationship index's bytes, without the authors' lists (`n:`), which are also the author index
 * every stored event had before there was a relationship index (author-list.ts): reported apart,
 * per event.
 */
async function relationIndexBytes(admin: Redis, prefix: string): Promise<{ index: number; authorLists: number }> {
  let index = 0;
  for (const type of RELATION_KEY_TYPES) if (type !== AUTHOR_LIST_KEY_TYPE) index += (await totalUsage(admin, `${prefix}${type}:*`)).bytes;
  return { index, authorLists: (await totalUsage(admin, `${prefix}n:*`)).bytes };
}


async function main() {
  const total = Number(options.events);
  const people = Array.from({ length: Number(options.identities) }, (_, index) => identity(index));
  const world = makeWorld(total, Number(options.targets), people);
  const all = [...world.notes, ...world.reactions, ...world.replies];
  process.stderr.write(`${all.length} events: ${world.notes.length} notes, ${world.reactions.length} reactions to ${world.targets.length} of them, ${world.replies.length} replies\n`);

  const started = performance.now();
  for (const line of all.map(serializeEvent)) if (!verifyNostrEvent(JSON.parse(line)).ok) throw new Error('does not verify');
  const verifyRate = rate(all.length, (performance.now() - started) / 1000);
  const rows: string[] = [`| signature verification alone (parse + verify) | ${fixed(verifyRate)} events/s | |`];

  const prefix = `rel:${Date.now()}:`;
  const stores = await openStorePair(prefix, 'bench-relations-');
  const { redis, lmdb, admin, client, dir } = stores;
  try {
    // 1. Import, notes first (so every reaction and reply meets its target, as the recount would).
    for (const [name, store] of [['Redis', redis], ['LMDB', lmdb]] as const) {
      const seconds = (await importAll(store, world.notes)) + (await importAll(store, [...world.reactions, ...world.replies]));
      const importRate = rate(all.length, seconds);
      rows.push(`| import into ${name}, relationship index included | ${fixed(importRate)} events/s | ${fixed(importRate / verifyRate, 2)}× verification |`);
      const check = await checkRelations(store);
      if (check.differences.length > 0) throw new Error(`${name}: ${check.differences.length} differences`);
    }

    // 2. Bytes per reaction and per reply in the index.
    const redisIndex = await relationIndexBytes(admin, prefix);
    rows.push(
      `| Redis: the relationship index but the authors' lists (MEMORY USAGE of its keys) | ${fixed(redisIndex.index / (world.reactions.length + world.replies.length))} bytes per reaction or reply | ${world.targets.length} targets |`,
      `| Redis: the authors' lists (\`n:\`, author index and notes in one key per author) | ${fixed(redisIndex.authorLists / all.length)} bytes per event | ${people.length} authors |`,
      `| LMDB: the \`relations\` database | ${fixed(lmdbBytes(lmdb, 'relations') / (world.reactions.length + world.replies.length))} bytes per reaction or reply | file ${fixed(statSync(join(dir, 'data.mdb')).size / 2 ** 20, 1)} MiB in all |`,
    );
    // Key names as long as production's (`nostr:` is 6 characters): a key's name is part of its cost.
    let measured = 0;
    for (const perTarget of [1, 2, 10, 100, 1000]) {
      // Reactions only, then replies only, on a fresh prefix: the index's bytes for each.
      for (const what of ['reactions', 'replies'] as const) {
        const subPrefix = `b${String(measured++).padStart(4, '0')}:`;
        const sub = new RedisEventStore(client, subPrefix);
        const count = Math.min(world[what].length, 20_000);
        // Target ids only: the index does not need its targets stored.
        const targets = Array.from({ length: Math.max(1, Math.floor(count / perTarget)) }, (_, n) => ({ id: createHash('sha256').update(`target ${n}`).digest('hex') }));
        const events = Array.from({ length: count }, (_, n) => {
          const target = targets[n % targets.length] as { id: string };
          // Distinct authors within a note (up to --identities): each reaction adds a reactor.
          const author = people[Math.floor(n / targets.length) % people.length] as Identity;
          return what === 'reactions'
            ? sign(author, 7, 1_700_300_000 + n, [['e', target.id]], EMOJI[n % EMOJI.length] as string)
            : sign(author, 1, 1_700_300_000 + Math.floor(n / 3), [['e', target.id, '', 'root']], `r${n}`);
        });
        await importAll(sub, events);
        const bytes = await relationIndexBytes(admin, subPrefix);
        rows.push(`| Redis index, ${what} only, ${perTarget} per note (${count} ${what}, a 6-character key prefix) | ${fixed(bytes.index / count)} bytes per ${what === 'reactions' ? 'reaction' : 'reply'} | authors' lists ${fixed(bytes.authorLists / count)} bytes per event |`);
        await deleteByPrefix(admin, subPrefix);
      }
    }
    // 4. Zaps: 10 receipts per note, each from a sender of its own, all through one provider.
    const zapCount = Number(options.zaps);
    process.stderr.write(`making ${zapCount} zap receipts\n`);
    const receipts = Array.from({ length: zapCount }, (_, n) =>
      zapReceipt({ sender: `sender ${n}`, recipient: `recipient ${Math.floor(n / 10)}`, provider: 'provider', target: createHash('sha256').update(`zapped ${Math.floor(n / 10)}`).digest('hex'), msats: 1000 * (n + 1), at: 1_700_500_000 + n }),
    );
    const lines = receipts.map(serializeEvent);
    const verifyStarted = performance.now();
    for (const line of lines) if (!verifyNostrEvent(JSON.parse(line)).ok) throw new Error('a receipt does not verify');
    const receiptVerifyRate = rate(zapCount, (performance.now() - verifyStarted) / 1000);
    const readStarted = performance.now();
    for (const line of lines) if ('invalid' in readZapReceipt(JSON.parse(line) as NostrEvent)) throw new Error('a receipt is not a zap');
    const readRate = rate(zapCount, (performance.now() - readStarted) / 1000);
    rows.push(
      `| zap receipts: signature verification alone (parse + verify) | ${fixed(receiptVerifyRate)} receipts/s | |`,
      `| zap receipts: read by the zap rule (parse, invoice, description hash, the request's signature) | ${fixed(readRate)} receipts/s | ${fixed(readRate / receiptVerifyRate, 2)}× verification |`,
    );
    const zapPrefix = 'zap0:';
    const zapRedis = new RedisEventStore(client, zapPrefix);
    const zapDir = mkdtempSync(join(tmpdir(), 'bench-zaps-'));
    const zapLmdb = new LmdbEventStore(zapDir);
    try {
      for (const [name, store] of [['Redis', zapRedis], ['LMDB', zapLmdb]] as const) {
        const importRate = rate(zapCount, await importAll(store, receipts));
        rows.push(`| zap receipts: import into ${name}, verification and the index included | ${fixed(importRate)} receipts/s | ${fixed(importRate / receiptVerifyRate, 2)}× verification |`);
        const check = await checkRelations(store);
        if (check.zapDifferences.length > 0 || check.zapSubjects !== zapCount / 10 + zapCount / 10) throw new Error(`${name}: zaps differ`);
      }
      rows.push(
        `| Redis: the zap index (MEMORY USAGE of its keys; 10 receipts per note and per recipient, distinct senders, a 5-character key prefix) | ${fixed((await relationIndexBytes(admin, zapPrefix)).index / zapCount)} bytes per receipt | target and recipient both |`,
        `| LMDB: the \`relations\` database, the same receipts | ${fixed(lmdbBytes(zapLmdb, 'relations') / zapCount)} bytes per receipt | |`,
      );
    } finally {
      await deleteByPrefix(admin, zapPrefix);
      await zapLmdb.close();
      rmSync(zapDir, { recursive: true, force: true });
    }

    // 3. GraphQL: one request's time, median of interleaved rounds, on each store.
    const rounds = Number(options.rounds) * 40;
    const popular = world.notes[0] as NostrEvent;
    const fifty = world.targets.slice(0, 50).map((note) => note.id);
    const extraReplies = Array.from({ length: 120 }, (_, n) => sign(people[n % people.length] as Identity, 1, 1_700_400_000 + Math.floor(n / 7), [['e', popular.id, '', 'root']], `reply to the popular note ${n}`));
    const statsQuery = (ids: string[]) =>
      `{ events(ids: ${JSON.stringify(ids)}) { id stats { replies threadReplies quotes reposts reactions { pubkeys likes dislikes byContent { content pubkeys } } } } }`;
    const repliesQuery = (first: number) => `{ event(id: "${popular.id}") { replies(first: ${first}) { edges { cursor node { id pubkey createdAt content } } pageInfo { hasNextPage endCursor } } } }`;
    const queries: [string, string][] = [
      ['stats of 1 event', statsQuery(fifty.slice(0, 1))],
      ['stats of 50 events', statsQuery(fifty)],
      ['a page of 10 replies', repliesQuery(10)],
      ['a page of 100 replies', repliesQuery(100)],
    ];
    for (const [name, store] of [['Redis', redis], ['LMDB', lmdb]] as const) {
      await importAll(store, extraReplies);
      const median = await medianGraphqlTimes(store, queries, rounds);
      const ratio = (a: string, b: string) => `${fixed(median.get(a) ?? 0, 2)} ms vs ${fixed(median.get(b) ?? 0, 2)} ms | ${fixed((median.get(a) ?? 0) / (median.get(b) ?? 1), 2)}×`;
      rows.push(
        `| GraphQL on ${name}: stats of 50 events in one request, against stats of 1 (median of ${rounds}) | ${ratio('stats of 50 events', 'stats of 1 event')} |`,
        `| GraphQL on ${name}: a page of 100 replies, against a page of 10 | ${ratio('a page of 100 replies', 'a page of 10 replies')} |`,
      );
    }
    printTable(`npm run bench:relations -- --events ${options.events} --targets ${options.targets} --identities ${options.identities} --rounds ${options.rounds} --zaps ${options.zaps}`, rows);
  } finally {
    await stores.close();
  }
}

await main();
