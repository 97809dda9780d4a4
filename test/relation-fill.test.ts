import type { Filter } from 'nostr-tools/filter';
import { afterEach, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import type { RelayConfig } from '../src/config/env.js';
import { FOLLOWERS, type FillSubject, NOTES, notesTarget, RelationFill, relationFillFor, relationsMarkKey } from '../src/fill/relation-fill.js';
import { RelayRequest } from '../src/fill/relay-request.js';
import type { NostrEvent } from '../src/nostr/event.js';
import { createRelayPool } from '../src/relays/create-relay-pool.js';
import type { RelayPool } from '../src/relays/relay-pool.js';
import type { EventStore } from '../src/store/event-store.js';
import { isDeleted } from '../src/store/tombstones.js';
import { BOTH_STORES, type OpenedStore } from './support/both-stores.js';
import { pubkeyOf, signed } from './support/events.js';
import { captureLogs } from './support/logs.js';
import { type LoopbackRelay, startLoopbackRelay } from './support/loopback-relay.js';
import { TEST_RELAY_CONFIG } from './support/test-server.js';

// The relationship fill against real WebSocket relays on loopback and both stores:
// which relays are asked, with which filters, and what the index counts afterwards.

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const KINDS = [1, 6, 7, 16, 1111, 9735];
const T0 = 1_700_000_000;

/** The first page's REQ for one id, as a relay receives it. */
const firstPage = (id: string, limit = 500) => [
  { '#e': [id], kinds: KINDS, limit },
  { '#E': [id], kinds: [1111], limit },
  { '#q': [id], limit },
];

/** Follow lists naming 'ff-busy', one second apart, made once for both stores. */
const FANS = 3000;
let fans: NostrEvent[] | undefined;
const manyFans = () =>
  (fans ??= Array.from({ length: FANS }, (_, index) =>
    signed(`ff-busy-fan-${index}`, { kind: 3, created_at: T0 + index, tags: [['p', pubkeyOf('ff-busy')]] }),
  ));

async function relay(options: Parameters<typeof startLoopbackRelay>[0] = {}): Promise<LoopbackRelay> {
  const started = await startLoopbackRelay(options);
  cleanups.push(() => started.stop());
  return started;
}

/**
 * A relay that answers every REQ with `answer(filters)` whatever the filters' limits say, then EOSE:
 * a flood of valid events, or garbage.
 */
async function rawRelay(answer: (filters: Filter[]) => unknown[]): Promise<{ url: string; requests: Filter[][] }> {
  const requests: Filter[][] = [];
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const sockets = new Set<WebSocket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('message', (data) => {
      const [type, id, ...filters] = JSON.parse(String(data)) as [string, string, ...Filter[]];
      if (type !== 'REQ') return;
      requests.push(filters);
      for (const event of answer(filters)) socket.send(JSON.stringify(['EVENT', id, event]));
      socket.send(JSON.stringify(['EOSE', id]));
    });
  });
  cleanups.push(async () => {
    for (const socket of sockets) socket.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  return { url: `ws://127.0.0.1:${address.port}/`, requests };
}

/** A NIP-65 relay list: `read` relays marked read, `write` relays marked write. */
function relayList(author: string, read: string[], write: string[] = []): NostrEvent {
  return signed(author, { kind: 10002, tags: [...read.map((url) => ['r', url, 'read']), ...write.map((url) => ['r', url, 'write'])] });
}

/** A relay list naming no relay: the author is known to have no inbox (no discovery REQ). */
const noInbox = (author: string) => relayList(author, []);

const reply = (author: string, target: NostrEvent, created_at = T0 + 10) =>
  signed(author, { kind: 1, created_at, content: 'a reply', tags: [['e', target.id, '', 'root'], ['p', target.pubkey]] });
const reaction = (author: string, target: NostrEvent, content = '+', created_at = T0 + 20) =>
  signed(author, { kind: 7, created_at, content, tags: [['e', target.id], ['p', target.pubkey]] });
const deletion = (author: string, ids: string[], created_at = T0 + 100) => signed(author, { kind: 5, created_at, tags: ids.map((id) => ['e', id]) });
/** The event with its signature broken (its id still right). */
const forged = (event: NostrEvent): NostrEvent => ({ ...event, sig: event.sig.replace(/^./, event.sig.startsWith('0') ? '1' : '0') });

interface Fill {
  fill: RelationFill;
  store: EventStore;
  config: RelayConfig;
  pool: RelayPool;
  logs: string[];
  /** A request starting now, as a GraphQL request makes one. */
  request(): RelayRequest;
}

/** A store (seeded), a pool over `relays` and a fill on both; stopped after the test. */
async function setUp(
  open: () => Promise<OpenedStore>,
  relays: Partial<RelayConfig>,
  seed: NostrEvent[] = [],
  options: { pageLimit?: number; store?: EventStore; subject?: FillSubject; fillMs?: number } = {},
): Promise<Fill> {
  let store = options.store;
  if (!store) {
    const opened = await open();
    cleanups.push(() => opened.cleanup());
    store = opened.store;
  }
  for (const event of seed) await store.putEvents([event]);
  const { lines, logger } = captureLogs('debug');
  // Inbox relays run on loopback here: learned relays at private addresses must be allowed.
  const config: RelayConfig = { ...TEST_RELAY_CONFIG, allowPrivateHints: true, ...relays };
  const pool = createRelayPool(config, logger);
  if (!pool) throw new Error('RELAYS must be set');
  const fill = new RelationFill(
    { pool, store, config, logger },
    {
      ...(options.pageLimit ? { pageLimit: options.pageLimit } : {}),
      ...(options.subject ? { subject: options.subject } : {}),
      ...(options.fillMs ? { fillMs: options.fillMs } : {}),
    },
  );
  cleanups.push(async () => {
    pool.close();
    await fill.settled();
  });
  return { fill, store, config, pool, logs: lines, request: () => new RelayRequest(config.timeoutMs, '127.0.0.1', config.outbox.maxRelays) };
}

const sorted = (values: readonly string[]) => [...values].sort();

describe.each(BOTH_STORES)('relationship fill on the $name store', ({ open }) => {
  it('asks RELAYS and the author\'s read relays (not write relays) with exactly these filters; what verifies is stored and counted, a forged event is not', async () => {
    const note = signed('rf-author', { created_at: T0, content: 'the note' });
    const replyByBob = reply('rf-bob', note);
    const likeByCarol = reaction('rf-carol', note, '+');
    const shakaByDave = reaction('rf-dave', note, '🤙', T0 + 21);
    const repost = signed('rf-erin', { kind: 6, created_at: T0 + 30, content: JSON.stringify(note), tags: [['e', note.id], ['p', note.pubkey]] });
    const quote = signed('rf-frank', { kind: 1, created_at: T0 + 40, content: 'look', tags: [['q', note.id]] });
    const badLike = forged(reaction('rf-gina', note, '+', T0 + 22));
    const comment = signed('rf-hank', { kind: 1111, created_at: T0 + 50, content: 'a comment', tags: [['E', note.id], ['e', note.id], ['K', '1'], ['k', '1']] });
    const base = await relay({ events: [replyByBob, likeByCarol, shakaByDave, repost, quote, badLike] });
    // The inbox holds a comment only it has, and a copy of the reply.
    const inbox = await relay({ events: [comment, replyByBob] });
    const outbox = await relay({ events: [reaction('rf-ivan', note)] });
    const { fill, store, request } = await setUp(open, { urls: [base.url] }, [note, relayList('rf-author', [inbox.url], [outbox.url])]);

    await fill.ensure([note.id], request());

    expect(base.requests[0]).toEqual(firstPage(note.id));
    expect(inbox.requests[0]).toEqual(firstPage(note.id));
    expect(outbox.requests).toEqual([]);
    // Then the deletions of what came back, of each relay that answered: every id that came back for the note.
    const cameBack = [replyByBob, likeByCarol, shakaByDave, repost, quote, comment].map((event) => event.id);
    expect(base.requests).toHaveLength(2);
    expect(base.requests[1]).toEqual([{ kinds: [5], '#e': expect.any(Array) as unknown }]);
    expect(sorted(base.requests[1]?.[0]?.['#e'] ?? [])).toEqual(sorted(cameBack));
    expect(sorted(inbox.requests[1]?.[0]?.['#e'] ?? [])).toEqual(sorted(cameBack));

    const [stats] = await store.relations.stats([note.id]);
    expect(stats).toEqual({
      replies: 2,
      threadReplies: 2,
      quotes: 1,
      reposts: 1,
      reactions: {
        pubkeys: 2,
        likes: 1,
        dislikes: 0,
        byContent: [
          { content: '+', pubkeys: 1 },
          { content: '🤙', pubkeys: 1 },
        ],
      },
    });
    expect((await store.relations.replies(note.id, null, 10)).map(({ id }) => id)).toEqual([replyByBob.id, comment.id]);
    expect(await store.getEvents([badLike.id])).toEqual([null]);
    expect(await store.marks.has([relationsMarkKey(note.id)])).toEqual([true]);
  });

  it('asks #E beside #e: a NIP-22 comment on a comment, naming the root only in its E tag, counts in the root\'s threadReplies', async () => {
    const note = signed('rfE-author', { created_at: T0, content: 'the note' });
    const comment = signed('rfE-bob', { kind: 1111, created_at: T0 + 5, tags: [['E', note.id], ['e', note.id], ['K', '1'], ['k', '1']] });
    const deeper = signed('rfE-carol', { kind: 1111, created_at: T0 + 6, tags: [['E', note.id], ['e', comment.id], ['K', '1'], ['k', '1111']] });
    const base = await relay({ events: [comment, deeper] });
    const { fill, store, request } = await setUp(open, { urls: [base.url] }, [note, noInbox('rfE-author')]);

    await fill.ensure([note.id], request());

    const [stats] = await store.relations.stats([note.id]);
    expect(stats?.replies).toBe(1);
    expect(stats?.threadReplies).toBe(2);
  });

  it('a deletion by a reaction\'s author, returned by the deletions query, takes the reaction out; one by someone else changes nothing', async () => {
    const note = signed('rd-author', { created_at: T0 });
    const likeByCarol = reaction('rd-carol', note, '+');
    const likeByDave = reaction('rd-dave', note, '+', T0 + 21);
    const carolDeletes = deletion('rd-carol', [likeByCarol.id]);
    const malloryDeletes = deletion('rd-mallory', [likeByDave.id]);
    const base = await relay({ events: [likeByCarol, likeByDave, carolDeletes, malloryDeletes] });
    const { fill, store, request } = await setUp(open, { urls: [base.url] }, [note, noInbox('rd-author')]);

    await fill.ensure([note.id], request());

    expect(base.requests).toHaveLength(2);
    expect(base.requests[1]).toEqual([{ kinds: [5], '#e': expect.arrayContaining([likeByCarol.id, likeByDave.id]) as unknown }]);
    const [stats] = await store.relations.stats([note.id]);
    expect(stats?.reactions).toEqual({ pubkeys: 1, likes: 1, dislikes: 0, byContent: [{ content: '+', pubkeys: 1 }] });
    const [carols, daves, mallorys] = await store.getEvents([likeByCarol.id, likeByDave.id, malloryDeletes.id]);
    expect(isDeleted(carols)).toBe(true);
    expect(daves).not.toBeNull();
    expect(isDeleted(daves)).toBe(false);
    // A stranger's deletion is not even stored.
    expect(mallorys).toBeNull();
  });

  it('asks a relay about several ids in one REQ; pages with `until` while a filter\'s pages come full, and stops at RELATIONS_MAX_EVENTS', async () => {
    const note = signed('rp-author', { created_at: T0 });
    const quiet = signed('rp-author', { created_at: T0 + 1, content: 'hardly noticed' });
    // 14 reactions to `note`, one a second, by 14 authors; one to `quiet`.
    const likes = Array.from({ length: 14 }, (_, index) => reaction(`rp-${index}`, note, '+', T0 + 100 + index));
    const quietLike = reaction('rp-quiet', quiet, '+', T0 + 50);
    const base = await relay({ events: [...likes, quietLike] });
    const { fill, store, request } = await setUp(
      open,
      { urls: [base.url], relations: { ttlSeconds: 300, maxEvents: 10 } },
      [note, quiet, noInbox('rp-author')],
      { pageLimit: 4 },
    );

    await fill.ensure([note.id, quiet.id], request());

    const at = (index: number) => T0 + 100 + index;
    expect(base.requests.slice(0, 3)).toEqual([
      [...firstPage(note.id, 4), ...firstPage(quiet.id, 4)],
      // Only the reactions to `note` came full: the next page starts at the oldest second seen.
      [{ '#e': [note.id], kinds: KINDS, limit: 4, until: at(10) }],
      [{ '#e': [note.id], kinds: KINDS, limit: 4, until: at(7) }],
    ]);
    // The tenth event made `note` full: no fourth page; then the deletions of all that came back.
    expect(base.requests).toHaveLength(4);
    expect(base.requests[3]?.[0]?.kinds).toEqual([5]);
    expect(sorted(base.requests[3]?.[0]?.['#e'] ?? [])).toEqual(sorted([...likes.slice(4), quietLike].map((like) => like.id)));
    const [noteStats, quietStats] = await store.relations.stats([note.id, quiet.id]);
    expect(noteStats?.reactions.pubkeys).toBe(10);
    expect(quietStats?.reactions.pubkeys).toBe(1);
  });

  it('a relay that ignores the page limit is cut there, one that sends garbage is cut as a flood; counts hold only what verified', async () => {
    const note = signed('rfl-author', { created_at: T0 });
    const honestReply = reply('rfl-bob', note);
    const base = await relay({ events: [honestReply] });
    const floodLikes = Array.from({ length: 30 }, (_, index) => reaction(`rfl-flood-${index}`, note, '+', T0 + 200 + index));
    const flooding = await rawRelay((filters) => (filters[0]?.kinds?.includes(5) ? [] : floodLikes));
    const garbage = await rawRelay((filters) => (filters[0]?.kinds?.includes(5) ? [] : floodLikes.map(forged)));
    const { fill, store, request, logs } = await setUp(open, { urls: [base.url, flooding.url, garbage.url] }, [note, noInbox('rfl-author')], { pageLimit: 4 });

    const started = performance.now();
    await fill.ensure([note.id], request());
    expect(performance.now() - started).toBeLessThan(1500);

    // Three filters of 4: the thirteenth event is one too many; the twelve before it stand (they
    // verified). A relay cut is not asked for more pages, nor for deletions.
    expect(flooding.requests).toEqual([firstPage(note.id, 4)]);
    expect(logs.some((line) => line.includes('relay sent more than a page asked for; cut'))).toBe(true);
    const [stats] = await store.relations.stats([note.id]);
    expect(stats?.reactions.pubkeys).toBe(12);
    expect(stats?.replies).toBe(1);
    // Nothing forged was stored; the garbage relay was closed as a flood, and only asked once.
    expect(await store.getEvents(floodLikes.slice(12).map((like) => like.id))).toEqual(floodLikes.slice(12).map(() => null));
    expect(garbage.requests).toHaveLength(1);
  });

  it('a second ensure within RELATIONS_TTL asks no relay; past half of it the index answers at once and a background refresh brings what is new', async () => {
    const note = signed('rt-author', { created_at: T0 });
    const read = signed('rt-author', { created_at: T0 + 1, content: 'read a while ago' });
    const base = await relay({ events: [reaction('rt-carol', note), reaction('rt-carol', read)] });
    const { fill, store, request } = await setUp(open, { urls: [base.url], timeoutMs: 3000 }, [note, read, noInbox('rt-author')]);

    await fill.ensure([note.id], request());
    expect(base.requests).toHaveLength(2);
    await fill.ensure([note.id], request());
    expect(base.requests).toHaveLength(2);

    // `read` was asked 200 s ago (RELATIONS_TTL 300): past half the TTL, so stale. The relay has a
    // reaction the index lacks, and answers slowly.
    await store.marks.set([relationsMarkKey(read.id)], 300, [String(Math.floor(Date.now() / 1000) - 200)]);
    base.add(reaction('rt-dave', read, '+', T0 + 50));
    base.delayMs = 700;
    const started = performance.now();
    await fill.ensure([read.id], request());
    expect(performance.now() - started).toBeLessThan(500);
    expect((await store.relations.stats([read.id]))[0]?.reactions.pubkeys).toBe(0);
    // A second stale read while the refresh runs starts no other.
    await fill.ensure([read.id], request());
    await fill.settled();
    expect(base.requests).toHaveLength(4);
    expect(base.requests[2]).toEqual(firstPage(read.id));
    expect((await store.relations.stats([read.id]))[0]?.reactions.pubkeys).toBe(2);
    // Refreshed: fresh again for the TTL, and its refresh claimed for half of it.
    const [note2] = await store.marks.notes([relationsMarkKey(read.id)]);
    expect(Math.abs(Number(note2) - Date.now() / 1000)).toBeLessThan(5);
    await fill.ensure([read.id], request());
    expect(base.requests).toHaveLength(4);
  });

  it('concurrent ensure() calls make one set of REQs, within the process and across instances sharing the store', async () => {
    const note = signed('rc-author', { created_at: T0 });
    const other = signed('rc-author', { created_at: T0 + 1, content: 'another' });
    const base = await relay({ events: [reaction('rc-carol', note), reaction('rc-dave', other)], delayMs: 150 });
    const one = await setUp(open, { urls: [base.url] }, [note, other, noInbox('rc-author')]);
    const two = await setUp(open, { urls: [base.url] }, [], { store: one.store });

    await Promise.all([one.fill.ensure([note.id], one.request()), one.fill.ensure([note.id], one.request()), two.fill.ensure([note.id], two.request())]);
    expect(base.requests).toHaveLength(2);
    expect(base.requests[0]).toEqual(firstPage(note.id));
    expect((await one.store.relations.stats([note.id]))[0]?.reactions.pubkeys).toBe(1);

    // One request's resolvers asking in the same tick: one fill for both ids, each filled once.
    const forRequest = relationFillFor(one.fill, one.request());
    base.requests.length = 0;
    await Promise.all([forRequest.ensure([other.id]), forRequest.ensure([other.id.toUpperCase()]), forRequest.ensure([note.id, other.id])]);
    // Only `other` was unmarked: one page and one deletions REQ.
    expect(base.requests).toEqual([firstPage(other.id), [{ kinds: [5], '#e': expect.any(Array) as unknown }]]);
  });

  it('a relay that never answers leaves ensure() resolved within the request\'s deadline, the index answering as it was', async () => {
    const note = signed('rs-author', { created_at: T0 });
    const silent = await relay({ silent: true, events: [reaction('rs-carol', note)] });
    const { fill, store, request } = await setUp(open, { urls: [silent.url], timeoutMs: 1500 }, [note, noInbox('rs-author')], { fillMs: 2500 });

    const started = performance.now();
    await fill.ensure([note.id], request());
    const took = performance.now() - started;
    expect(took).toBeLessThan(1700);
    expect(silent.requests).toEqual([firstPage(note.id)]);
    expect((await store.relations.stats([note.id]))[0]?.reactions.pubkeys).toBe(0);
    // The fill goes on in the background, marked as being filled: the next read answers at once.
    const [filling] = await store.marks.notes([relationsMarkKey(note.id)]);
    expect(Math.abs(Number(filling) - Date.now() / 1000)).toBeLessThan(5);
    const again = performance.now();
    await fill.ensure([note.id], request());
    expect(performance.now() - again).toBeLessThan(500);
    // At the fill's own deadline, nobody answered: remembered briefly as asked long ago (the next
    // read answers at once, and tries again in the background). One REQ all along.
    await fill.settled();
    expect(await store.marks.notes([relationsMarkKey(note.id)])).toEqual(['0']);
    expect(silent.requests).toEqual([firstPage(note.id)]);
  });

  it('once RELAYS answered, a waiting read gives a slow relay a grace, not the whole deadline', async () => {
    const note = signed('rg-author', { created_at: T0 });
    const base = await relay({ events: [reaction('rg-carol', note)] });
    const slow = await relay({ delayMs: 4000 });
    const { fill, store, request } = await setUp(open, { urls: [base.url, slow.url], timeoutMs: 3000 }, [note, noInbox('rg-author')]);

    const started = performance.now();
    await fill.ensure([note.id], request());
    // Paging alone may take 70% of the deadline (about 1.9 s); the grace is a quarter of what is left.
    expect(performance.now() - started).toBeLessThan(1400);
    expect(slow.requests).toEqual([firstPage(note.id)]);
    expect((await store.relations.stats([note.id]))[0]?.reactions.pubkeys).toBe(1);
    const [note2] = await store.marks.notes([relationsMarkKey(note.id)]);
    expect(Number(note2)).toBeGreaterThan(0);
  });

  it('what an inbox relay brings counts, but only RELAYS decide for everyone that an event was asked', async () => {
    const note = signed('ri-author', { created_at: T0 });
    const comment = signed('ri-hank', { kind: 1111, created_at: T0 + 5, tags: [['E', note.id], ['e', note.id]] });
    const inbox = await relay({ events: [comment] });
    const silent = await relay({ silent: true });
    const { fill, store, request } = await setUp(open, { urls: [silent.url], timeoutMs: 600 }, [note, relayList('ri-author', [inbox.url])], { fillMs: 1200 });

    await fill.ensure([note.id], request());
    expect(inbox.requests[0]).toEqual(firstPage(note.id));
    expect((await store.relations.stats([note.id]))[0]?.replies).toBe(1);
    // RELAYS still silent: the fill goes on in the background to its own deadline.
    await fill.settled();
    // Asked of the inbox's answer for deletions all the same.
    expect(inbox.requests[1]).toEqual([{ kinds: [5], '#e': [comment.id] }]);
    expect(await store.marks.notes([relationsMarkKey(note.id)])).toEqual(['0']);
  });

  it('an author\'s relay list the index lacks is asked of RELAYS and INDEXER_RELAYS, stored, and its read relays asked', async () => {
    const note = signed('rl-author', { created_at: T0 });
    const comment = signed('rl-hank', { kind: 1111, created_at: T0 + 5, tags: [['E', note.id], ['e', note.id]] });
    const inbox = await relay({ events: [comment] });
    const list = relayList('rl-author', [inbox.url]);
    const base = await relay();
    const indexer = await relay({ events: [list] });
    const { fill, store, request } = await setUp(open, { urls: [base.url], indexerUrls: [indexer.url] }, [note]);

    await fill.ensure([note.id], request());

    const discovery = [{ kinds: [10002], authors: [note.pubkey] }];
    expect(indexer.requests).toEqual([discovery]);
    expect(base.requests).toContainEqual(discovery);
    expect(base.requests).toContainEqual(firstPage(note.id));
    expect(inbox.requests[0]).toEqual(firstPage(note.id));
    expect((await store.getReplaceable(10002, [note.pubkey]))[0]?.event).toEqual(list);
    expect((await store.relations.stats([note.id]))[0]?.replies).toBe(1);
  });

  it('OUTBOX=false asks RELAYS only; an event not in the index is asked of RELAYS only', async () => {
    const note = signed('ro-author', { created_at: T0 });
    const unknown = signed('ro-stranger', { created_at: T0 });
    const inbox = await relay();
    const base = await relay();
    const { fill, request } = await setUp(open, { urls: [base.url], outbox: { enabled: false, relaysPerPubkey: 2, maxRelays: 20 } }, [
      note,
      relayList('ro-author', [inbox.url]),
    ]);
    await fill.ensure([note.id], request());
    expect(inbox.requests).toEqual([]);
    expect(base.requests).toEqual([firstPage(note.id)]);

    const withOutbox = await setUp(open, { urls: [base.url] }, [relayList('ro-stranger', [inbox.url])]);
    await withOutbox.fill.ensure([unknown.id], withOutbox.request());
    expect(inbox.requests).toEqual([]);
    expect(base.requests.at(-1)).toEqual(firstPage(unknown.id));
  });

  it('the request\'s caps hold: past RELAY_MAX_KEYS_PER_REQUEST no relay is asked, and malformed ids are ignored', async () => {
    const note = signed('rk-author', { created_at: T0 });
    const base = await relay();
    const { fill, request, store } = await setUp(open, { urls: [base.url], maxKeysPerRequest: 1 }, [note, noInbox('rk-author')]);
    const spent = request();
    spent.keysAsked = 1;
    await fill.ensure([note.id, 'not an id', 'ab'.repeat(40)], spent);
    expect(base.requests).toEqual([]);
    expect(await store.marks.has([relationsMarkKey(note.id)])).toEqual([false]);
    await fill.ensure([note.id.toUpperCase()], request());
    expect(base.requests).toEqual([firstPage(note.id)]);
  });
});

describe.each(BOTH_STORES)('followers fill on the $name store', ({ open }) => {
  const list = (author: string, follows: string[], created_at = T0) => signed(author, { kind: 3, created_at, content: '', tags: follows.map((pubkey) => ['p', pubkey]) });

  it('asks RELAYS and INDEXER_RELAYS for {"kinds":[3],"#p":[pubkey]}; lists that verify are stored and counted, the newest of each author only, a forged one not; once per RELATIONS_TTL', async () => {
    const star = pubkeyOf('ff-star');
    const [bob, carol, dave] = [list('ff-bob', [star]), list('ff-carol', [star, pubkeyOf('ff-bob')]), list('ff-dave', [star])];
    const carolNewer = list('ff-carol', [pubkeyOf('ff-bob')], T0 + 10);
    const base = await relay({ events: [bob, carol, forged(dave)] });
    const indexer = await relay({ events: [dave] });
    // The index holds Carol's newer list, which no longer names the star: the older one a relay still has changes nothing.
    const { fill, store, request } = await setUp(open, { urls: [base.url], indexerUrls: [indexer.url] }, [carolNewer], { subject: FOLLOWERS });

    await fill.ensure([star], request());

    expect(base.requests[0]).toEqual([{ kinds: [3], '#p': [star], limit: 500 }]);
    expect(indexer.requests[0]).toEqual([{ kinds: [3], '#p': [star], limit: 500 }]);
    // Bob's and Dave's lists follow the star (Dave's from the indexer: the base relay's copy is forged); Carol's newest does not.
    expect(await store.relations.followCounts([star])).toEqual([{ followers: 2, following: 0 }]);
    expect(await store.relations.followers(star, null, 10)).toEqual(sorted([pubkeyOf('ff-bob'), pubkeyOf('ff-dave')]));
    expect(await store.marks.has([FOLLOWERS.markKey(star)])).toEqual([true]);

    const asked = base.requests.length;
    await fill.ensure([star], request());
    expect(base.requests).toHaveLength(asked);
  });

  it('a fill the read\'s deadline cut goes on in the background to its cap; reads meanwhile answer from the index; marked once done', async () => {
    // 3,000 lists naming the star on an indexer relay, and RELAYS answering at once with nothing:
    // the read's wait ends early (the grace), the paging does not.
    const star = pubkeyOf('ff-busy');
    const base = await relay({ events: [] });
    const indexer = await relay({ events: manyFans() });
    const { fill, store, request } = await setUp(open, { urls: [base.url], indexerUrls: [indexer.url] }, [], { subject: FOLLOWERS });

    const started = performance.now();
    await fill.ensure([star], request());
    expect(performance.now() - started).toBeLessThan(TEST_RELAY_CONFIG.timeoutMs + 500);
    // Marked as being filled: the next read answers from the index without waiting for relays,
    // and asks none (no second fill: RELAYS would have had another REQ).
    const asked = base.requests.length;
    const again = performance.now();
    await fill.ensure([star], request());
    expect(performance.now() - again).toBeLessThan(1000);
    expect(base.requests).toHaveLength(asked);
    let followers = 0;
    while (followers < FANS && performance.now() - started < 8000) {
      followers = (await store.relations.followCounts([star]))[0]?.followers ?? 0;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(followers).toBe(FANS);
    await fill.settled();
    expect((await store.relations.followCounts([star]))[0]?.followers).toBe(FANS);
    // Six pages of 500 (and the empty seventh), from the one fill the first read started.
    expect(indexer.requests.filter((filters) => filters[0]?.['#p']?.[0] === star)).toHaveLength(7);
    const [mark] = await store.marks.notes([FOLLOWERS.markKey(star)]);
    expect(Number(mark)).toBeGreaterThan(0);
  }, 30_000);

  it('a cut fill that the service stops, or that its own deadline cuts while a relay has more, is not marked as asked', async () => {
    const star = pubkeyOf('ff-busy');
    const base = await relay({ events: [] });
    // 800 ms a page: seven pages take 5.6 s, well past the 2 s deadline even when a busy machine
    // fires its timer late (at 400 ms a page, 2.8 s, a loaded run once finished them all).
    const indexer = await relay({ events: manyFans(), delayMs: 800 });
    const { fill, store, request } = await setUp(open, { urls: [base.url], indexerUrls: [indexer.url] }, [], { subject: FOLLOWERS, fillMs: 2000 });
    await fill.ensure([star], request());
    // Cut by its own deadline: marked as asked long ago.
    await fill.settled();
    expect((await store.relations.followCounts([star]))[0]?.followers).toBeLessThan(FANS);
    expect(await store.marks.notes([FOLLOWERS.markKey(star)])).toEqual(['0']);

    // The service stopping (its pool closed) under a cut fill: nothing is marked; the provisional
    // mark expires with the fill's deadline, and the next start asks again.
    const other = pubkeyOf('ff-busy-2');
    indexer.reset(manyFans().slice(0, 1200).map((list, n) => signed(`ff-busy-2-fan-${n}`, { kind: 3, created_at: list.created_at, tags: [['p', other]] })));
    const stopping = await setUp(open, { urls: [base.url], indexerUrls: [indexer.url] }, [], { subject: FOLLOWERS, fillMs: 2000, store });
    await stopping.fill.ensure([other], stopping.request());
    stopping.pool.close();
    await stopping.fill.settled();
    const [provisional] = await store.marks.notes([FOLLOWERS.markKey(other)]);
    expect(Math.abs(Number(provisional) - Date.now() / 1000)).toBeLessThan(5);
    await new Promise((resolve) => setTimeout(resolve, 3200));
    expect(await store.marks.has([FOLLOWERS.markKey(other)])).toEqual([false]);
  }, 30_000);

  it('at most 16 cut fills go on at once in a process: the next ends where its read stopped waiting, and is not marked as asked', async () => {
    const slow = await relay({ events: [], delayMs: 6000 });
    const { fill, store, request } = await setUp(open, { urls: [slow.url], timeoutMs: 300 }, [], { subject: FOLLOWERS, fillMs: 8000 });
    const targets = Array.from({ length: 17 }, (_, n) => pubkeyOf(`ff-cut-${n}`));
    for (const target of targets) await fill.ensure([target], request());
    await new Promise((resolve) => setTimeout(resolve, 200));
    const notes = await store.marks.notes(targets.map(FOLLOWERS.markKey));
    // The first 16 go on, marked as being filled (now); the seventeenth ended: asked long ago.
    for (const note of notes.slice(0, 16)) expect(Math.abs(Number(note) - Date.now() / 1000)).toBeLessThan(10);
    expect(notes[16]).toBe('0');
  }, 30_000);

  it('stops at FOLLOWERS_MAX_EVENTS lists per pubkey, paging with `until`', async () => {
    const star = pubkeyOf('ff-popular');
    const lists = Array.from({ length: 9 }, (_, index) => list(`ff-fan-${index}`, [star], T0 + index));
    const base = await relay({ events: lists });
    const { fill, store, request } = await setUp(open, { urls: [base.url], followers: { maxEvents: 5 } }, [], { subject: FOLLOWERS, pageLimit: 2 });

    await fill.ensure([star], request());

    expect(base.requests[0]).toEqual([{ kinds: [3], '#p': [star], limit: 2 }]);
    expect(base.requests[1]).toEqual([{ kinds: [3], '#p': [star], limit: 2, until: T0 + 7 }]);
    expect((await store.relations.followCounts([star]))[0]?.followers).toBe(5);
  });
});

describe.each(BOTH_STORES)('notes fill on the $name store', ({ open }) => {
  it('asks RELAYS and the author\'s write relays (not read relays) for {"authors":[pubkey],"kinds":[…]}, with `until` after a cursor; what verifies is stored and listed; malformed targets are ignored', async () => {
    const author = pubkeyOf('nf-author');
    const notes = Array.from({ length: 4 }, (_, index) => signed('nf-author', { created_at: T0 + index, content: `note ${index}` }));
    const article = signed('nf-author', { kind: 30023, created_at: T0 + 10, tags: [['d', 'a']], content: 'long' });
    const base = await relay({ events: [notes[0] as NostrEvent, notes[1] as NostrEvent, forged(notes[2] as NostrEvent)] });
    const outbox = await relay({ events: [notes[2] as NostrEvent, notes[3] as NostrEvent, article] });
    const inbox = await relay({ events: [] });
    const { fill, store, request } = await setUp(open, { urls: [base.url] }, [relayList('nf-author', [inbox.url], [outbox.url])], { subject: NOTES });

    await fill.ensure([notesTarget(author, [1, 30023], undefined), 'not a target', `${author}:1,0x1:`], request());

    expect(base.requests[0]).toEqual([{ authors: [author], kinds: [1, 30023], limit: 500 }]);
    expect(outbox.requests[0]).toEqual([{ authors: [author], kinds: [1, 30023], limit: 500 }]);
    expect(inbox.requests).toEqual([]);
    const listed = (await store.relations.notes(author, [1, 30023], null, 10)).map((position) => position.id);
    expect(listed).toEqual([article, ...notes.slice().reverse()].map((event) => event.id));
    expect(await store.marks.has([NOTES.markKey(notesTarget(author, [1, 30023], undefined))])).toEqual([true]);

    await fill.ensure([notesTarget(author, [1], T0 + 2)], request());
    expect(base.requests.at(-2)).toEqual([{ authors: [author], kinds: [1], until: T0 + 2, limit: 500 }]);
  });
});

describe('relationship fill marks', () => {
  it('are named per event id, apart from lookups', () => {
    const id = pubkeyOf('any');
    expect(relationsMarkKey(id)).toBe(`relations:${id}`);
  });
});
