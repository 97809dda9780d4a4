import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { zapProviderMarkKey } from '../src/zaps/zap-providers.js';
import { pubkeyOf, signed } from './support/events.js';
import { type Nip05Server, startNip05Server } from './support/nip05-server.js';
import { createTestStore, type TestStore } from './support/test-store.js';
import { getJson, startTestServer, type TestServer } from './support/test-server.js';
import { lnurlPayResponse, zapReceipt } from './support/zaps.js';

/**
 * Zaps end to end: receipts in the index, the recipient's LNURL pay endpoint on a real
 * HTTPS server on loopback (the test CA), `stats.zaps` and `Profile.zapsReceived` over /graphql on a
 * real port, and a second instance on the same store using the answer the first one got.
 */

const ZAPS = '{ count msats senders pending }';
const QUERY = `query ($id: String!, $pubkey: String!) { event(id: $id) { stats { zaps ${ZAPS} } } profile(pubkey: $pubkey) { zapsReceived ${ZAPS} } }`;

interface Zaps {
  count: number;
  msats: number;
  senders: number;
  pending: number;
}

async function zapsOf(server: TestServer, id: string, pubkey: string): Promise<{ event: Zaps; profile: Zaps }> {
  const response = await getJson(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query: QUERY, variables: { id, pubkey } }),
  });
  expect(response.status, response.text).toBe(200);
  const { data } = response.body as { data: { event: { stats: { zaps: Zaps } }; profile: { zapsReceived: Zaps } } };
  return { event: data.event.stats.zaps, profile: data.profile.zapsReceived };
}

/** Reads until `done` holds (the background check has ended), at most 5 s. */
async function until(read: () => Promise<{ event: Zaps; profile: Zaps }>, done: (zaps: { event: Zaps; profile: Zaps }) => boolean) {
  for (let attempt = 0; ; attempt++) {
    const zaps = await read();
    if (done(zaps) || attempt > 100) return zaps;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const payResponse = lnurlPayResponse;

const profileOf = (name: string, fields: Record<string, string>, at = 1_700_000_000) =>
  signed(name, { kind: 0, created_at: at, content: JSON.stringify({ name, ...fields }) });

const none: Zaps = { count: 0, msats: 0, senders: 0, pending: 0 };

describe('zaps over GraphQL, with the provider checked on a real HTTPS endpoint', () => {
  let lnurl: Nip05Server;
  let testStore: TestStore;
  const servers: TestServer[] = [];
  const serve = async () => {
    const server = await startTestServer(testStore.store, { nip05: { allowPrivate: true }, zaps: { timeoutMs: 500 } });
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    lnurl = await startNip05Server();
  });
  afterAll(async () => {
    await lnurl.close();
  });
  beforeEach(async () => {
    testStore = await createTestStore();
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
    await testStore.cleanup();
  });

  it('receipts that cannot count say so, and why: an author without a profile, a profile without an LNURL, a provider that does not allow Nostr', async () => {
    lnurl.routePath('/.well-known/lnurlp/carol', { json: { ...payResponse(pubkeyOf('zapper')), allowsNostr: false } });
    const note = signed('nobody', { content: 'no profile here', tags: [['zap', pubkeyOf('bare'), '', '1'], ['zap', pubkeyOf('carol'), '', '1']] });
    await testStore.store.putEvents([
      note,
      profileOf('bare', {}),
      profileOf('carol', { lud16: `carol@${lnurl.domain}` }),
      zapReceipt({ sender: 'bob', recipient: 'nobody', provider: 'zapper', target: note.id, msats: 1_000 }),
      zapReceipt({ sender: 'bob', recipient: 'bare', provider: 'zapper', target: note.id, msats: 2_000 }),
      zapReceipt({ sender: 'dave', recipient: 'carol', provider: 'zapper', target: note.id, msats: 3_000 }),
    ]);
    const server = await serve();
    const query = `{ event(id: "${note.id}") { stats { zaps { count pending unverifiable unverifiableBecause } } } }`;
    const read = async () => {
      const response = await getJson(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
      return (response.body as { data: { event: { stats: { zaps: { count: number; pending: number; unverifiable: number; unverifiableBecause: string[] } } } } }).data.event.stats.zaps;
    };
    // Carol's provider is asked in the background: pending first, then refused.
    expect(await read()).toEqual({ count: 0, pending: 1, unverifiable: 2, unverifiableBecause: ['no profile', 'no lud16 or lud06'] });
    let zaps = await read();
    for (let attempt = 0; zaps.pending > 0 && attempt < 100; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      zaps = await read();
    }
    expect(zaps).toEqual({ count: 0, pending: 0, unverifiable: 3, unverifiableBecause: ['no profile', 'no lud16 or lud06', 'allowsNostr is not true'] });
  });

  it('pending until the provider answers, then counted: forged receipts never; a second instance uses the answer without asking', async () => {
    const path = '/.well-known/lnurlp/alice';
    lnurl.routePath(path, { json: payResponse(pubkeyOf('zapper')) });
    const note = signed('alice', { content: 'zap me' });
    const receipts = [
      zapReceipt({ sender: 'bob', recipient: 'alice', provider: 'zapper', target: note.id, msats: 21_000 }),
      zapReceipt({ sender: 'bob', recipient: 'alice', provider: 'zapper', target: note.id, msats: 1_000, at: 1_700_000_200 }),
      zapReceipt({ sender: 'carol', recipient: 'alice', provider: 'zapper', target: note.id, msats: 500 }),
      // Anyone can sign a receipt for any amount: 21 million BTC, by mallory.
      zapReceipt({ sender: 'mallory', recipient: 'alice', provider: 'mallory', target: note.id, msats: 2_100_000_000_000_000 }),
      zapReceipt({ sender: 'dave', recipient: 'alice', provider: 'zapper', msats: 7_000 }),
    ];
    await testStore.store.putEvents([profileOf('alice', { lud16: `alice@${lnurl.domain}` }), note, ...receipts]);
    const first = await serve();
    const read = () => zapsOf(first, note.id, pubkeyOf('alice'));
    // The first read: every receipt waits for the provider (asked in the background).
    expect(await read()).toEqual({ event: { ...none, pending: 4 }, profile: { ...none, pending: 5 } });
    const answered = await until(read, (zaps) => zaps.event.pending === 0);
    expect(answered).toEqual({
      event: { count: 3, msats: 22_500, senders: 2, pending: 0 },
      profile: { count: 4, msats: 29_500, senders: 3, pending: 0 },
    });
    expect(lnurl.paths.filter((asked) => asked === path)).toHaveLength(1);
    // The answer is in the store, for every instance.
    expect((await testStore.store.marks.notes([zapProviderMarkKey(pubkeyOf('alice'))]))[0]).toMatch(new RegExp(`^[0-9a-f]{16} \\d+ k ${pubkeyOf('zapper')}$`));
    const second = await serve();
    expect(await zapsOf(second, note.id, pubkeyOf('alice'))).toEqual(answered);
    expect(lnurl.paths.filter((asked) => asked === path)).toHaveLength(1);
    // A receipt deleted by its signer stops counting at once.
    await testStore.store.putEvents([signed('zapper', { kind: 5, tags: [['e', (receipts[0] as NostrEvent).id]], content: '' })]);
    expect((await zapsOf(second, note.id, pubkeyOf('alice'))).event).toEqual({ count: 2, msats: 1_500, senders: 2, pending: 0 });
  });

  it("receipts naming another recipient than the note's author (or its `zap` tags) never count for the note, even signed by that recipient's own provider", async () => {
    lnurl.routePath('/.well-known/lnurlp/kim', { json: payResponse(pubkeyOf('zapper')) });
    lnurl.routePath('/.well-known/lnurlp/mallory', { json: payResponse(pubkeyOf('mallory wallet')) });
    const note = signed('kim', { content: 'zap me' });
    // Mallory runs her own endpoint and signs receipts for huge zaps of kim's note to herself.
    const forged = Array.from({ length: 12 }, (_, index) =>
      zapReceipt({ sender: `sock ${index}`, recipient: 'mallory', provider: 'mallory wallet', target: note.id, msats: 2_000_000_000_000, at: 1_700_000_300 + index }),
    );
    await testStore.store.putEvents([
      profileOf('kim', { lud16: `kim@${lnurl.domain}` }),
      profileOf('mallory', { lud16: `mallory@${lnurl.domain}` }),
      note,
      zapReceipt({ sender: 'bob', recipient: 'kim', provider: 'zapper', target: note.id, msats: 3_000 }),
      ...forged,
    ]);
    const server = await serve();
    const read = () => zapsOf(server, note.id, pubkeyOf('kim'));
    expect(await until(read, (zaps) => zaps.event.pending === 0)).toEqual({
      event: { count: 1, msats: 3_000, senders: 1, pending: 0 },
      profile: { count: 1, msats: 3_000, senders: 1, pending: 0 },
    });
    // Mallory's endpoint was never asked: her receipts were never read for the note.
    expect(lnurl.paths).not.toContain('/.well-known/lnurlp/mallory');
  });

  it('a profile whose lud16 changes is checked again: pending meanwhile, then what the new endpoint says (another key: nothing counts)', async () => {
    lnurl.routePath('/.well-known/lnurlp/erin', { json: payResponse(pubkeyOf('zapper')) });
    lnurl.routePath('/.well-known/lnurlp/erin-new', { json: payResponse(pubkeyOf('another wallet')) });
    const note = signed('erin', { content: 'zap me' });
    const receipt = zapReceipt({ sender: 'bob', recipient: 'erin', provider: 'zapper', target: note.id, msats: 9_000 });
    await testStore.store.putEvents([profileOf('erin', { lud16: `erin@${lnurl.domain}` }), note, receipt]);
    const server = await serve();
    const read = () => zapsOf(server, note.id, pubkeyOf('erin'));
    expect((await until(read, (zaps) => zaps.event.count === 1)).event).toEqual({ count: 1, msats: 9_000, senders: 1, pending: 0 });
    await testStore.store.putEvents([profileOf('erin', { lud16: `erin-new@${lnurl.domain}` }, 1_700_000_500)]);
    expect((await read()).event).toEqual({ ...none, pending: 1 });
    expect(await until(read, (zaps) => zaps.event.pending === 0)).toEqual({ event: none, profile: none });
    expect(lnurl.paths).toContain('/.well-known/lnurlp/erin-new');
  });

  it.each([
    ['allowsNostr false', { json: payResponse(pubkeyOf('zapper'), { allowsNostr: false }) }],
    ['a LUD-06 error', { json: { status: 'ERROR', reason: 'no such user' } }],
    ['a redirect', (_request: unknown, response: import('node:http').ServerResponse) => void response.writeHead(302, { location: 'https://127.0.0.1/' }).end()],
    ['a 404', { json: {}, status: 404 }],
  ] as const)('an endpoint that answers %s refuses: nothing counts, nothing is pending', async (_what, route) => {
    const name = `frank${Math.random().toString(36).slice(2, 8)}`;
    lnurl.routePath(`/.well-known/lnurlp/${name}`, route as Parameters<Nip05Server['routePath']>[1]);
    const note = signed('frank', { content: 'zap me' });
    await testStore.store.putEvents([profileOf('frank', { lud16: `${name}@${lnurl.domain}` }), note, zapReceipt({ sender: 'bob', recipient: 'frank', provider: 'zapper', target: note.id })]);
    const server = await serve();
    const read = () => zapsOf(server, note.id, pubkeyOf('frank'));
    expect(await until(read, (zaps) => zaps.event.pending === 0)).toEqual({ event: none, profile: none });
  });

  it('an endpoint too slow to answer leaves the receipts pending (asked again after the claim expires), never counted', async () => {
    lnurl.routePath('/.well-known/lnurlp/grace', { json: payResponse(pubkeyOf('zapper')), delayMs: 1500 });
    const note = signed('grace', { content: 'zap me' });
    await testStore.store.putEvents([profileOf('grace', { lud16: `grace@${lnurl.domain}` }), note, zapReceipt({ sender: 'bob', recipient: 'grace', provider: 'zapper', target: note.id })]);
    const server = await serve();
    const read = () => zapsOf(server, note.id, pubkeyOf('grace'));
    expect((await read()).event).toEqual({ ...none, pending: 1 });
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect((await read()).event).toEqual({ ...none, pending: 1 });
    expect(lnurl.paths.filter((asked) => asked === '/.well-known/lnurlp/grace')).toHaveLength(1);
  });

  it('a recipient without a profile, or without lud16/lud06, has no provider: its receipts never count and are not pending', async () => {
    const note = signed('heidi', { content: 'zap me' });
    const nobody = zapReceipt({ sender: 'bob', recipient: 'nobody', provider: 'zapper', target: note.id });
    await testStore.store.putEvents([profileOf('heidi', {}), note, zapReceipt({ sender: 'bob', recipient: 'heidi', provider: 'zapper', target: note.id }), nobody]);
    const server = await serve();
    expect(await zapsOf(server, note.id, pubkeyOf('heidi'))).toEqual({ event: none, profile: none });
    expect(lnurl.paths).not.toContain('/.well-known/lnurlp/heidi');
  });

  it('a zap split: the note counts the receipts of every recipient whose provider signed them, and each sender once', async () => {
    lnurl.routePath('/.well-known/lnurlp/ivan', { json: payResponse(pubkeyOf('zapper')) });
    lnurl.routePath('/.well-known/lnurlp/judy', { json: payResponse(pubkeyOf('other zapper')) });
    const note = signed('ivan', { content: 'split', tags: [['zap', pubkeyOf('ivan'), '', '1'], ['zap', pubkeyOf('judy'), '', '1']] });
    await testStore.store.putEvents([
      profileOf('ivan', { lud16: `ivan@${lnurl.domain}` }),
      profileOf('judy', { lud16: `judy@${lnurl.domain}` }),
      note,
      zapReceipt({ sender: 'bob', recipient: 'ivan', provider: 'zapper', target: note.id, msats: 1_000 }),
      zapReceipt({ sender: 'bob', recipient: 'judy', provider: 'other zapper', target: note.id, msats: 1_000 }),
      zapReceipt({ sender: 'carol', recipient: 'judy', provider: 'other zapper', target: note.id, msats: 3_000 }),
    ]);
    const server = await serve();
    const read = () => zapsOf(server, note.id, pubkeyOf('judy'));
    expect(await until(read, (zaps) => zaps.event.pending === 0)).toEqual({
      event: { count: 3, msats: 5_000, senders: 2, pending: 0 },
      profile: { count: 2, msats: 4_000, senders: 2, pending: 0 },
    });
  });

  it('a zap split read by many objects and aliases reads its senders once per request, charged by their number (found by review: 1,500 reads of 2,000 senders, 13 s of CPU)', async () => {
    lnurl.routePath('/.well-known/lnurlp/kim', { json: payResponse(pubkeyOf('kim zapper')) });
    lnurl.routePath('/.well-known/lnurlp/lee', { json: payResponse(pubkeyOf('lee zapper')) });
    const note = signed('kim', { content: 'split', tags: [['zap', pubkeyOf('kim'), '', '1'], ['zap', pubkeyOf('lee'), '', '1']] });
    const receipts = Array.from({ length: 60 }, (_, n) =>
      zapReceipt({ sender: `fan ${n}`, recipient: n % 2 === 0 ? 'kim' : 'lee', provider: n % 2 === 0 ? 'kim zapper' : 'lee zapper', target: note.id, msats: 1_000 }),
    );
    const replies = Array.from({ length: 20 }, (_, n) => signed(`replier ${n}`, { content: `re ${n}`, tags: [['e', note.id, '', 'root']] }));
    await testStore.store.putEvents([profileOf('kim', { lud16: `kim@${lnurl.domain}` }), profileOf('lee', { lud16: `lee@${lnurl.domain}` }), note, ...receipts, ...replies]);
    const server = await serve();
    expect(await until(() => zapsOf(server, note.id, pubkeyOf('kim')), (zaps) => zaps.event.pending === 0)).toMatchObject({ event: { count: 60, senders: 60, pending: 0 } });
    const reads: number[] = [];
    const relations = testStore.store.relations;
    const original = relations.zapSenders.bind(relations);
    relations.zapSenders = (subject, groups) => {
      reads.push(groups.length);
      return original(subject, groups);
    };
    try {
      const aliases = Array.from({ length: 15 }, (_, n) => `a${n}: root { stats { zaps { senders } } }`).join(' ');
      const response = await getJson(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `query ($ids: [String!]!) { events(ids: $ids) { ${aliases} } }`, variables: { ids: replies.map((reply) => reply.id) } }),
      });
      expect(response.status).toBe(200);
      const events = (response.body as { data: { events: Record<string, { stats: { zaps: { senders: number } } }>[] } }).data.events;
      expect(events.flatMap((event) => Object.values(event).map((root) => root.stats.zaps.senders))).toEqual(Array(300).fill(60));
      // 300 objects asked; one read of both groups.
      expect(reads).toEqual([2]);
      // Its senders are charged as they are read: under a GRAPHQL_MAX_COST that the query's model
      // cost (11) passes but 60 senders (90 units) do not, it is refused as it runs.
      const ask = async (maxCost: number) => {
        const limited = await startTestServer(testStore.store, { nip05: { allowPrivate: true }, zaps: { timeoutMs: 500 }, graphql: { maxCost } });
        servers.push(limited);
        return getJson(`${limited.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: `{ event(id: "${note.id}") { stats { zaps { senders } } } }` }),
        });
      };
      const refused = await ask(50);
      expect((refused.body as { errors?: { extensions?: { code?: string } }[] }).errors?.map((error) => error.extensions?.code)).toEqual(['query_too_costly']);
      expect((await ask(200)).body).toEqual({ data: { event: { stats: { zaps: { senders: 60 } } } } });
    } finally {
      relations.zapSenders = original;
    }
  });
});
