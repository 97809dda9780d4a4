import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nip19 } from 'nostr-tools';
import type { NostrEvent } from '../src/nostr/event.js';
import { mutesOf } from '../src/nostr/mutes.js';
import { MEMBER_BYTES, TrustWeb } from '../src/nostr/web-of-trust.js';
import type { EventStore } from '../src/store/event-store.js';
import { BOTH_STORES } from './support/both-stores.js';
import { MAX_WAITING_BUILDS, TrustWebs } from '../src/store/trust-webs.js';
import { LookupError } from '../src/errors.js';
import { pubkeyOf, secretKey, signed } from './support/events.js';
import { postGraphql, startTestServer, type TestServer } from './support/test-server.js';
import { startLoopbackRelay } from './support/loopback-relay.js';
import { sha256 as sha, zapReceipt } from './support/zaps.js';
import { zapProviderMarkKey } from '../src/zaps/zap-providers.js';

/**
 * The reader's web of trust (DESIGN "Screens": web of trust of V, mutes of V, with `viewer: V`):
 * the rule against an independent reading of it, the log of list changes on both stores, and the
 * filtered fields over GraphQL on the real app (replies, searchProfiles, trusts, notifications),
 * kept true as lists change, with TRUST_SEEDS, and refusing hostile viewers.
 */

const T = 1_700_000_000;
const pk = pubkeyOf;
const followList = (author: string, follows: string[], at = T) => signed(author, { kind: 3, created_at: at, content: '', tags: follows.map((name) => ['p', pk(name)]) });
const muteList = (author: string, tags: string[][], at = T) => signed(author, { kind: 10_000, created_at: at, content: 'encrypted private entries, ignored', tags });

describe('the rule (nostr/web-of-trust.ts) against an independent reading', () => {
  const universe = Array.from({ length: 24 }, (_, index) => pk(`wot-universe-${index}`));
  const name = fc.integer({ min: 0, max: universe.length - 1 });

  it('holds V, hop 1 and hop 2, minus what the readers muted, for any lists; 8 bytes a member', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(name, { minLength: 1, maxLength: 3 }),
        fc.array(fc.array(name, { maxLength: 8 }), { minLength: 24, maxLength: 24 }),
        fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
        fc.array(name, { maxLength: 4 }),
        (readerIndexes, follows, hasList, mutedIndexes) => {
          const readers = readerIndexes.map((index) => universe[index] as string);
          const listOf = (index: number) =>
            hasList[index] ? { kind: 3, tags: (follows[index] as number[]).map((other) => ['p', index % 5 === 0 ? (universe[other] as string).toUpperCase() : (universe[other] as string)]) } : null;
          // Mutes of the first reader only: the others mute nothing.
          const mutes = mutesOf({ kind: 10_000, tags: mutedIndexes.map((index) => ['p', universe[index] as string]) });
          const hopOne = new Set(readers);
          for (const reader of readerIndexes) for (const other of hasList[reader] ? (follows[reader] as number[]) : []) hopOne.add(universe[other] as string);
          const expected = new Set(hopOne);
          for (const member of hopOne) {
            const index = universe.indexOf(member);
            for (const other of hasList[index] ? (follows[index] as number[]) : []) expected.add(universe[other] as string);
          }
          for (const index of mutedIndexes) expected.delete(universe[index] as string);
          const web = TrustWeb.of({
            readers,
            followLists: readerIndexes.map((index) => listOf(index) as NostrEvent | null),
            muteLists: readers.map((_, index) => (index === 0 ? mutes : null)),
            hopLists: [...hopOne].filter((member) => !readers.includes(member)).map((member) => listOf(universe.indexOf(member)) as NostrEvent | null),
          });
          for (const pubkey of universe) expect(web.has(pubkey)).toBe(expected.has(pubkey));
          expect(web.size).toBe(expected.size);
          expect(web.bytes).toBe(MEMBER_BYTES * expected.size);
        },
      ),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 200) },
    );
  });

  it('a key sharing a member\'s first 8 bytes (or last 8) is not a member: the windows are not a fixed prefix', () => {
    const member = universe[0] as string;
    const web = TrustWeb.of({ readers: [member], followLists: [null], muteLists: [null], hopLists: [] });
    for (let n = 0; n < 50; n++) {
      const other = universe[1 + (n % 20)] as string;
      expect(web.has(member.slice(0, 16) + other.slice(16))).toBe(false);
      expect(web.has(other.slice(0, 48) + member.slice(48))).toBe(false);
    }
  });

  it('answers false for anything that is not a pubkey, and reads hex in any case', () => {
    const member = universe[0] as string;
    const web = TrustWeb.of({ readers: [member], followLists: [null], muteLists: [null], hopLists: [] });
    expect(web.has(member)).toBe(true);
    expect(web.has(member.toUpperCase())).toBe(true);
    for (const hostile of ['', member.slice(0, 16), `${member.slice(0, 63)}g`, `${member.slice(0, 63)}\u0130`, `${member}00`, 'z'.repeat(64)]) expect(web.has(hostile)).toBe(false);
  });
});

describe('webs held (store/trust-webs.ts)', () => {
  it('builds two at once, queues 16 more, and refuses the next reader with webs_busy; a refused build is not held', async () => {
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let reads = 0;
    const store = {
      relations: { listChanges: async () => ({ cursor: '0', pubkeys: [] }) },
      getReplaceable: async (_kind: number, pubkeys: readonly string[]) => {
        reads++;
        await blocked;
        return pubkeys.map(() => null);
      },
    } as unknown as EventStore;
    const webs = new TrustWebs(store);
    const readerOf = (n: number) => {
      const reader = pk(`busy-reader-${n}`);
      // Each follows one pubkey: a build reads one list.
      return { readers: [reader], followLists: [followList(`busy-reader-${n}`, [`busy-followed-${n}`])], muteLists: [null], mutes: [null] };
    };
    const pending = Array.from({ length: 2 + MAX_WAITING_BUILDS }, (_, n) => webs.web(readerOf(n)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reads).toBe(2);
    await expect(webs.web(readerOf(99))).rejects.toSatisfy((error) => error instanceof LookupError && error.code === 'webs_busy');
    release();
    const built = await Promise.all(pending);
    expect(built.map((web) => web.size)).toEqual(Array.from({ length: 2 + MAX_WAITING_BUILDS }, () => 2));
    // Two members each (the reader and whom it follows), and the bookkeeping counted beside them.
    expect(webs.stats).toMatchObject({ webs: 2 + MAX_WAITING_BUILDS, memberBytes: (2 + MAX_WAITING_BUILDS) * 2 * MEMBER_BYTES });
    expect(webs.stats.bytes).toBeGreaterThan((2 + MAX_WAITING_BUILDS) * 512);
  });
});

describe('webs held: the bound', () => {
  it('counts each web\'s bookkeeping, not only its members: readers who follow nobody cannot fill the process', async () => {
    const store = { relations: { listChanges: async () => ({ cursor: '0', pubkeys: [] }) }, getReplaceable: async (_kind: number, pubkeys: readonly string[]) => pubkeys.map(() => null) } as unknown as EventStore;
    const webs = new TrustWebs(store, { maxBytes: 10_000 });
    for (let n = 0; n < 200; n++) await webs.web({ readers: [pk(`lonely-${n}`)], followLists: [null], muteLists: [null], mutes: [null] });
    expect(webs.stats.bytes).toBeLessThanOrEqual(10_000);
    // 8 bytes of members each, but far fewer than 10,000 / 8 held.
    expect(webs.stats.webs).toBeLessThan(20);
  });
});

describe('webs held: turns', () => {
  it('never builds more than two at once, even when a reader arrives as a build hands its turn on', async () => {
    const gates: (() => void)[] = [];
    let running = 0;
    let most = 0;
    const store = {
      relations: { listChanges: async () => ({ cursor: '0', pubkeys: [] }) },
      getReplaceable: async (_kind: number, pubkeys: readonly string[]) => {
        running++;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => gates.push(resolve));
        running--;
        return pubkeys.map(() => null);
      },
    } as unknown as EventStore;
    const webs = new TrustWebs(store);
    const readerOf = (n: number) => ({ readers: [pk(`turn-reader-${n}`)], followLists: [followList(`turn-reader-${n}`, [`turn-followed-${n}`])], muteLists: [null], mutes: [null] });
    const all = [0, 1, 2, 3].map((n) => webs.web(readerOf(n)));
    for (let n = 4; n < 24; n++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      // One build ends, and a new reader arrives a few microtasks later: at one of these depths,
      // between the ending build giving its turn up and the waiting one taking it.
      gates.shift()?.();
      let later: Promise<unknown> = Promise.resolve();
      for (let depth = 0; depth < n - 4; depth++) later = later.then(() => undefined);
      all.push(later.then(() => webs.web(readerOf(n))));
    }
    while (gates.length > 0 || running > 0) {
      gates.shift()?.();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(all);
    expect(most).toBe(2);
  });
});

describe.each(BOTH_STORES)('the log of list changes on the $name store', ({ open }) => {
  let store: EventStore;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ store, cleanup } = await open());
  });
  afterAll(() => cleanup());

  it('names the author of every follow or mute list stored, replaced or deleted after the cursor, and nothing else', async () => {
    const start = await store.relations.listChanges(null);
    expect(start).toEqual({ cursor: expect.any(String), pubkeys: [] });
    await store.putEvents([followList('log-a', ['log-b']), signed('log-b', { content: 'a note' }), muteList('log-c', [['p', pk('log-a')]])]);
    const first = await store.relations.listChanges(start.cursor);
    expect('pubkeys' in first && [...new Set(first.pubkeys)].sort()).toEqual([pk('log-a'), pk('log-c')].sort());
    // Nothing since: nothing named, the cursor where it was.
    expect(await store.relations.listChanges(first.cursor)).toEqual({ cursor: first.cursor, pubkeys: [] });
    const replacement = followList('log-a', ['log-c'], T + 1);
    await store.putEvents([replacement]);
    const second = await store.relations.listChanges(first.cursor);
    expect('pubkeys' in second && [...new Set(second.pubkeys)]).toEqual([pk('log-a')]);
    await store.putEvents([signed('log-a', { kind: 5, created_at: T + 2, tags: [['e', replacement.id]] })]);
    const third = await store.relations.listChanges(second.cursor);
    expect('pubkeys' in third && [...new Set(third.pubkeys)]).toEqual([pk('log-a')]);
  });

  it('names a list again when a replay finds it stored (its first write may have lost its log entry)', async () => {
    const list = followList('log-replayed', ['log-b'], T + 3);
    await store.putEvents([list]);
    const { cursor } = await store.relations.listChanges(null);
    await store.putEvents([list]);
    const again = await store.relations.listChanges(cursor);
    // LMDB logs in the list's own transaction (nothing to heal), and a duplicate changes nothing there.
    expect('pubkeys' in again && again.pubkeys).toEqual(store.constructor.name.startsWith('Redis') ? [pk('log-replayed')] : []);
  });

  it('outlives a rebuild\'s clear (no list changes by it), and answers `all` to a cursor not its own', async () => {
    const before = await store.relations.listChanges(null);
    await store.relations.clear();
    await store.putEvents([followList('log-after-clear', ['log-b'], T + 5)]);
    const after = await store.relations.listChanges(before.cursor);
    expect('pubkeys' in after && after.pubkeys).toEqual([pk('log-after-clear')]);
    for (const hostile of ['', 'x', '9999999999999-0', '99999999999999', 'zz:1', '-1', '1e400', '0-0-0', `${'9'.repeat(30)}-0`]) {
      expect(await store.relations.listChanges(hostile), hostile).toMatchObject({ all: true });
    }
  });
});

/**
 * The world: V follows A, B and M, and mutes M, the word "spam" and the hashtag #muted; A follows
 * C, B follows D, M follows E (hop 2 through a muted pubkey is still hop 2: the rule removes only
 * muted pubkeys). X and Y are a ring following each other and V. N is A's note; everyone replies.
 */
const V = 'wot-v';
const [A, B, C, D, E, M, X, Y] = ['wot-a', 'wot-b', 'wot-c', 'wot-d', 'wot-e', 'wot-m', 'wot-x', 'wot-y'];
const note = signed(A, { created_at: T, content: 'the note' });
const vNote = signed(V, { created_at: T, content: 'V wrote this' });
const reply = (author: string, at: number, content = `reply by ${author}`, tags: string[][] = []) =>
  signed(author, { created_at: at, content, tags: [['e', note.id, '', 'root'], ['p', pk(A)], ...tags] });
const replies = {
  a: reply(A, T + 1),
  c: reply(C, T + 2),
  cSpam: reply(C, T + 3, 'buy SPAM now'),
  d: reply(D, T + 4),
  dTagged: reply(D, T + 5, 'tagged', [['t', 'MUTED']]),
  e: reply(E, T + 6),
  m: reply(M, T + 7),
  x: reply(X, T + 8),
  y: reply(Y, T + 9),
};
const profile = (author: string) => signed(author, { kind: 0, created_at: T, content: JSON.stringify({ name: `wotname ${author}` }) });

function world(): NostrEvent[] {
  return [
    followList(V, [A, B, M]),
    muteList(V, [['p', pk(M)], ['word', 'Spam'], ['t', 'muted']]),
    followList(A, [C]),
    followList(B, [D]),
    followList(M, [E]),
    followList(X, [Y, V]),
    followList(Y, [X, V]),
    note,
    vNote,
    ...Object.values(replies),
    ...[A, C, D, E, M, X, Y].map(profile),
    // Replies to V's note: notifications.
    signed(C, { created_at: T + 10, content: 'to V from C', tags: [['e', vNote.id, '', 'root'], ['p', pk(V)]] }),
    signed(X, { created_at: T + 11, content: 'to V from X', tags: [['e', vNote.id, '', 'root'], ['p', pk(V)]] }),
  ];
}

const REPLIES = `query ($id: String!, $viewer: String) { event(id: $id) { replies(first: 20, viewer: $viewer) { edges { node { id } } pageInfo { hasNextPage } } } }`;

async function replyIds(server: TestServer, viewer?: string): Promise<string[]> {
  const { status, body } = await postGraphql(server, REPLIES, { id: note.id, ...(viewer === undefined ? {} : { viewer }) });
  expect(status).toBe(200);
  expect(body.errors).toBeUndefined();
  return (body.data?.event as { replies: { edges: { node: { id: string } }[] } }).replies.edges.map((edge) => edge.node.id);
}

describe.each(BOTH_STORES)('a viewer\'s web over GraphQL on the $name store', ({ open }) => {
  let store: EventStore;
  let server: TestServer;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ store, cleanup } = await open());
    for (const event of world()) await store.putEvents([event]);
    server = await startTestServer(store);
  });
  afterAll(async () => {
    await server.close();
    await cleanup();
  });

  it('replies(viewer:) lists only authors in the web, none muted (author, word, hashtag); without a viewer, all', async () => {
    expect(await replyIds(server, pk(V))).toEqual([replies.a.id, replies.c.id, replies.d.id, replies.e.id]);
    // Any pubkey form.
    expect(await replyIds(server, nip19.npubEncode(pk(V)))).toEqual([replies.a.id, replies.c.id, replies.d.id, replies.e.id]);
    expect(await replyIds(server)).toEqual(Object.values(replies).map((event) => event.id));
    // A reader without a follow list trusts only itself.
    expect(await replyIds(server, pk('wot-nobody'))).toEqual([]);
    expect(await replyIds(server, pk(C))).toEqual([replies.c.id, replies.cSpam.id]);
  });

  it('a page of few shown examines 5 × first and says more follow', async () => {
    const { body } = await postGraphql(server, `query ($id: String!, $viewer: String) { event(id: $id) { replies(first: 1, viewer: $viewer) { edges { node { id } } pageInfo { hasNextPage endCursor } } } }`, {
      id: note.id,
      viewer: pk(X),
    });
    // X trusts X, Y, V and what V and Y follow: its first shown reply is A's, the first of all.
    const page = (body.data?.event as { replies: { edges: { node: { id: string } }[]; pageInfo: { hasNextPage: boolean } } }).replies;
    expect(page.edges.map((edge) => edge.node.id)).toEqual([replies.a.id]);
    expect(page.pageInfo.hasNextPage).toBe(true);
  });

  it('trusts(pubkey:) and searchProfiles(viewer:) answer by the same web', async () => {
    const { body } = await postGraphql(
      server,
      `query ($v: String!) { pubkey(pubkey: $v) { c: trusts(pubkey: "${pk(C)}") e: trusts(pubkey: "${nip19.npubEncode(pk(E))}") m: trusts(pubkey: "${pk(M)}") x: trusts(pubkey: "${pk(X)}") self: trusts(pubkey: $v) } }`,
      { v: pk(V) },
    );
    expect(body).toEqual({ data: { pubkey: { c: true, e: true, m: false, x: false, self: true } } });
    const search = await postGraphql(server, `query ($viewer: String) { searchProfiles(query: "wotname", first: 20, viewer: $viewer) { pubkey } }`, { viewer: pk(V) });
    expect(search.status).toBe(200);
    expect((search.body.data?.searchProfiles as { pubkey: string }[]).map((found) => found.pubkey).sort()).toEqual([A, C, D, E].map(pk).sort());
  });

  it('notifications(trusted: true) are those by authors in the pubkey\'s own web', async () => {
    const query = `query ($v: String!, $trusted: Boolean) { pubkey(pubkey: $v) { notifications(trusted: $trusted) { edges { node { type event { content } } } } } }`;
    const all = await postGraphql(server, query, { v: pk(V), trusted: false });
    const trusted = await postGraphql(server, query, { v: pk(V), trusted: true });
    const contents = (body: typeof all.body) => (body.data?.pubkey as { notifications: { edges: { node: { event: { content: string } } }[] } }).notifications.edges.map((edge) => edge.node.event.content);
    expect(contents(all.body)).toContain('to V from X');
    expect(contents(trusted.body)).toContain('to V from C');
    expect(contents(trusted.body)).not.toContain('to V from X');
  });

  it('notificationCounts(trusted: true) counts what the trusted list shows, by type; without it, the index counts everyone', async () => {
    const list = `query ($v: String!) { pubkey(pubkey: $v) { notifications(first: 100, trusted: true) { edges { node { type } } } } }`;
    const counts = `query ($v: String!, $trusted: Boolean) { pubkey(pubkey: $v) { notificationCounts(trusted: $trusted) { total reply follow mention zap quote repost reaction } } }`;
    const shown = await postGraphql(server, list, { v: pk(V) });
    const byType: Record<string, number> = { total: 0, reply: 0, follow: 0, mention: 0, zap: 0, quote: 0, repost: 0, reaction: 0 };
    for (const { node } of (shown.body.data?.pubkey as { notifications: { edges: { node: { type: string } }[] } }).notifications.edges) {
      byType[node.type.toLowerCase()] = (byType[node.type.toLowerCase()] ?? 0) + 1;
      byType.total = (byType.total ?? 0) + 1;
    }
    const trusted = await postGraphql(server, counts, { v: pk(V), trusted: true });
    expect(trusted.status).toBe(200);
    expect(trusted.body).toEqual({ data: { pubkey: { notificationCounts: byType } } });
    expect(byType.reply).toBe(1);
    const everyone = await postGraphql(server, counts, { v: pk(V), trusted: false });
    const all = (everyone.body.data?.pubkey as { notificationCounts: Record<string, number> }).notificationCounts;
    // X's reply and X's and Y's follow lists, outside V's web, count here only.
    expect(all.reply).toBe(2);
    expect(all.total).toBeGreaterThan(byType.total as number);
  });

  it("notificationCounts(trusted: true) past 2,000 notifications since `since` is refused with invalid_argument (the index's counts say so first)", async () => {
    const many = signed('wot-many-recipient', { created_at: T, content: 'many' });
    const mentions = Array.from({ length: 2001 }, (_, n) => signed(Y, { created_at: T + 1 + n, content: `mention ${n}`, tags: [['p', many.pubkey]] }));
    for (let start = 0; start < mentions.length; start += 500) await store.putEvents(mentions.slice(start, start + 500));
    const counts = `query ($v: String!, $since: Timestamp) { pubkey(pubkey: $v) { notificationCounts(trusted: true, since: $since) { total } } }`;
    const refused = await postGraphql(server, counts, { v: many.pubkey });
    // A field's error beside data (GraphQL over HTTP: 200), the pubkey's object null.
    expect(refused.status).toBe(200);
    expect(refused.body.data).toEqual({ pubkey: null });
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('invalid_argument');
    expect(refused.body.errors?.[0]?.message).toContain('this request would read 2001');
    // Since a later time, few enough: counted (Y follows nobody the recipient trusts: none).
    const later = await postGraphql(server, counts, { v: many.pubkey, since: T + 1002 });
    expect(later.body).toEqual({ data: { pubkey: { notificationCounts: { total: 0 } } } });
  });

  it('a new follow list of the viewer or of its hop 1, or a new mute list, is seen within 1 s', async () => {
    expect(await replyIds(server, pk(V))).not.toContain(replies.x.id);
    // B now follows X: X's reply is in V's web by the next read within a second.
    await store.putEvents([followList(B, [D, X], T + 100)]);
    const seen = async (id: string, wanted: boolean) => {
      const started = Date.now();
      while ((await replyIds(server, pk(V))).includes(id) !== wanted) {
        expect(Date.now() - started).toBeLessThan(1000);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await seen(replies.x.id, true);
    // V unmutes M (a new mute list) and follows Y (a new follow list): the next read sees both.
    await store.putEvents([muteList(V, [['word', 'spam']], T + 100), followList(V, [A, B, M, Y], T + 101)]);
    expect(await replyIds(server, pk(V))).toEqual([replies.a.id, replies.c.id, replies.d.id, replies.dTagged.id, replies.e.id, replies.m.id, replies.x.id, replies.y.id]);
    // B's list deleted: D leaves the web (X stays: Y follows it).
    const bList = followList(B, [D, X], T + 100);
    await store.putEvents([signed(B, { kind: 5, created_at: T + 102, tags: [['e', bList.id]] })]);
    await seen(replies.d.id, false);
  });

  it('GET /thread?viewer= shows the same replies, and refuses a viewer that is not a pubkey with 400', async () => {
    const response = await fetch(`${server.url}/thread?id=${note.id}&viewer=${nip19.npubEncode(pk(V))}`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { replies: { id: string }[] };
    // As replies(viewer:) reads them now (the lists changed above): fewer than all.
    const shown = body.replies.map((reply) => reply.id);
    expect(shown).toEqual(await replyIds(server, pk(V)));
    expect(shown).not.toContain(replies.cSpam.id);
    expect(shown.length).toBeLessThan(Object.keys(replies).length);
    const refused = await fetch(`${server.url}/thread?id=${note.id}&viewer=nope`);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('invalid_pubkey');
  });

  it('refuses hostile viewers with the error `pubkey(...)` gives, and a second web in one request', async () => {
    const cases: [unknown, string][] = [
      ['nope', 'invalid_pubkey'],
      ['', 'invalid_pubkey'],
      [nip19.nsecEncode(secretKey(V)), 'secret_key_refused'],
      ['x'.repeat(10_000), 'invalid_pubkey'],
      ['bob@unresolvable.invalid', 'nip05_unresolvable'],
    ];
    const STATS_OF = `query ($id: String!, $viewer: String) { event(id: $id) { stats(viewer: $viewer) { replies } } }`;
    for (const [viewer, code] of cases) {
      for (const query of [REPLIES, STATS_OF]) {
        const { status, body } = await postGraphql(server, query, { id: note.id, viewer });
        expect(status, String(viewer).slice(0, 40)).toBe(200);
        expect(body.errors?.[0]?.extensions?.code, String(viewer).slice(0, 40)).toBe(code);
      }
    }
    const two = await postGraphql(server, `query { event(id: "${note.id}") { a: replies(viewer: "${pk(V)}") { edges { cursor } } b: replies(viewer: "${pk(X)}") { edges { cursor } } } }`);
    expect(two.body.errors?.map((error) => error.extensions?.code)).toEqual(['invalid_argument']);
    // One viewer named twice is one web.
    const same = await postGraphql(server, `query { event(id: "${note.id}") { a: replies(viewer: "${pk(V)}") { edges { cursor } } b: replies(viewer: "${nip19.npubEncode(pk(V))}") { edges { cursor } } } }`);
    expect(same.body.errors).toBeUndefined();
  });
});

describe('TRUST_SEEDS', () => {
  let server: TestServer;
  let cleanup: () => Promise<void>;
  let store: EventStore;
  beforeAll(async () => {
    const opened = await (BOTH_STORES[0] as (typeof BOTH_STORES)[number]).open();
    cleanup = opened.cleanup;
    store = opened.store;
    for (const event of world()) await opened.store.putEvents([event]);
    server = await startTestServer(opened.store, { lookup: { trustSeeds: [pk(V)] } });
  });
  afterAll(async () => {
    await server.close();
    await cleanup();
  });

  it('a read without a viewer reads as the seeds would; a viewer still names its own web', async () => {
    expect(await replyIds(server)).toEqual([replies.a.id, replies.c.id, replies.d.id, replies.e.id]);
    expect(await replyIds(server, pk(C))).toEqual([replies.c.id, replies.cSpam.id]);
    // Notifications without `trusted` read as the seeds' too.
    const { body } = await postGraphql(server, `query ($v: String!) { pubkey(pubkey: $v) { notifications { edges { node { event { content } } } } } }`, { v: pk(V) });
    const contents = (body.data?.pubkey as { notifications: { edges: { node: { event: { content: string } } }[] } }).notifications.edges.map((edge) => edge.node.event.content);
    expect(contents).toContain('to V from C');
    expect(contents).not.toContain('to V from X');
  });

  it("stats read as the seeds': by their web; a note with more than 2,000 relating events has the index's figures (trusted false), and GET /thread answers", async () => {
    const stats = async (id: string) => {
      const { status, body } = await postGraphql(server, `query ($id: String!) { event(id: $id) { stats { replies reactions { pubkeys } trusted } } }`, { id });
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
      return (body.data?.event as { stats: unknown }).stats;
    };
    // V's web shows A, C, D and E's replies (not C's spam, M's, X's or Y's).
    expect(await stats(note.id)).toEqual({ replies: 4, reactions: { pubkeys: 0 }, trusted: true });
    const popular = signed(A, { created_at: T + 70_000, content: 'popular under the seeds' });
    const likes = Array.from({ length: 2001 }, (_, n) => signed(`seeds-liker-${n % 40}`, { kind: 7, created_at: T + 70_001 + n, content: '+', tags: [['e', popular.id]] }));
    await store.putEvents([popular]);
    for (let start = 0; start < likes.length; start += 500) await store.putEvents(likes.slice(start, start + 500));
    expect(await stats(popular.id)).toEqual({ replies: 0, reactions: { pubkeys: 40 }, trusted: false });
    const thread = await fetch(`${server.url}/thread?id=${popular.id}`);
    expect(thread.status).toBe(200);
    expect(((await thread.json()) as { stats: { trusted: boolean; reactions: { pubkeys: number } } }).stats).toMatchObject({ trusted: false, reactions: { pubkeys: 40 } });
  });
});

describe.each(BOTH_STORES)('hop-1 lists from the relays on the $name store', ({ open }) => {
  it('a hop-1 follow list the index lacks is asked of the relays in the background; once stored, the web holds its follows', async () => {
    const opened = await open();
    // V follows A (in the index); A's list, naming C, is only on the relay; C replied to the note.
    const aList = followList(A, [C], T + 50);
    const relay = await startLoopbackRelay({ events: [aList] });
    for (const event of [followList(V, [A]), note, replies.a, replies.c]) await opened.store.putEvents([event]);
    const server = await startTestServer(opened.store, { relays: { urls: [relay.url] } });
    try {
      expect(await replyIds(server, pk(V))).toEqual([replies.a.id]);
      const started = Date.now();
      let shown = [replies.a.id];
      while (shown.length < 2 && Date.now() - started < 5000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        shown = await replyIds(server, pk(V));
      }
      expect(shown).toEqual([replies.a.id, replies.c.id]);
      // Asked once: {"kinds":[3],"authors":[A]} among what the relay was asked.
      expect(relay.requests.flat().filter((filter) => filter.kinds?.includes(3) && filter.authors?.includes(pk(A)))).toHaveLength(1);
    } finally {
      await server.close();
      await relay.stop();
      await opened.cleanup();
    }
  }, 20_000);
});

/**
 * `stats(viewer:)` over a generated world: a note N by W, and events relating to it by people in V's
 * web (hop 1, hop 2, V itself), a muted but followed pubkey, a bot ring and strangers, of every kind
 * of relation (direct reply, thread reply, quote, repost, reaction with several contents, zap), some
 * carrying a muted word, a muted hashtag, or replying to a muted reply. The expected figures are read
 * from how each event was made (its role, its author, what it carries), not by the service's rules.
 */
describe.each(BOTH_STORES)('stats(viewer:) on the $name store', ({ open }) => {
  const at = T + 50_000;
  const [SV, F1, F2, G1, SM, B1, B2, S1, W] = ['st-v', 'st-f1', 'st-f2', 'st-g1', 'st-m', 'st-b1', 'st-b2', 'st-s1', 'st-w'];
  // V follows F1 and SM (muted); F1 follows F2 (hop 2); F2 follows G1 (hop 3: outside).
  const web = new Set([SV, F1, F2]);
  const authors = [SV, F1, F2, G1, SM, B1, B2, S1];
  const target = signed(W, { created_at: at, content: 'the note everyone answers' });
  const mutedReply = signed(F1, { created_at: at + 1, content: 'a reply V muted', tags: [['e', target.id, '', 'root']] });
  type Role = 'reply' | 'thread' | 'underMuted' | 'quote' | 'repost' | 'reaction' | 'zap';
  interface Made {
    event: NostrEvent;
    role: Role;
    author: string;
    /** Carries the muted word (in its content). */
    spam: boolean;
    /** Carries the muted hashtag. */
    hashtag: boolean;
    content?: string;
    msats?: number;
  }

  /** A deterministic world from a seed: `count` relating events. */
  function generate(seed: number, count: number): Made[] {
    let state = seed;
    const next = (n: number) => {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      return state % n;
    };
    const made: Made[] = [{ event: mutedReply, role: 'reply', author: F1, spam: false, hashtag: false }];
    const roles: Role[] = ['reply', 'thread', 'underMuted', 'quote', 'repost', 'reaction', 'zap'];
    for (let index = 0; index < count; index++) {
      const author = authors[next(authors.length)] as string;
      const role = roles[next(roles.length)] as Role;
      const spam = role !== 'zap' && role !== 'repost' && next(6) === 0;
      const hashtag = role !== 'zap' && next(7) === 0;
      const when = at + 10 + index;
      const tags = hashtag ? [['t', 'Muted']] : [];
      let event: NostrEvent;
      let content: string | undefined;
      let msats: number | undefined;
      // The muted word in any case, and full-width (NFKC folds it).
      if (role === 'reply') event = signed(author, { created_at: when, content: spam ? (index % 2 === 0 ? 'Buy SPAM' : 'ｂｕｙ ＳＰＡＭ') : `reply ${index}`, tags: [['e', target.id, '', 'root'], ...tags] });
      else if (role === 'thread') event = signed(author, { created_at: when, content: spam ? 'more spam' : `deeper ${index}`, tags: [['e', target.id, '', 'root'], ['e', sha(`parent ${index}`), '', 'reply'], ...tags] });
      else if (role === 'underMuted') event = signed(author, { created_at: when, content: `under the muted ${index}`, tags: [['e', target.id, '', 'root'], ['e', mutedReply.id, '', 'reply'], ...tags] });
      else if (role === 'quote') event = signed(author, { created_at: when, content: spam ? 'spam quote' : `quoting ${index}`, tags: [['q', target.id], ...tags] });
      else if (role === 'repost') event = signed(author, { kind: 6, created_at: when, content: '', tags: [['e', target.id], ['p', pk(W)], ...tags] });
      else if (role === 'reaction') {
        content = spam ? 'spam' : (['+', '-', '🤙', '', '+'][next(5)] as string);
        event = signed(author, { kind: 7, created_at: when, content, tags: [['e', target.id], ['p', pk(W)], ...tags] });
      } else {
        msats = 1000 * (1 + next(50));
        event = zapReceipt({ sender: author, recipient: W, provider: 'st-wallet', target: target.id, msats, at: when });
      }
      made.push({ event, role, author, spam, hashtag, ...(content === undefined ? {} : { content }), ...(msats === undefined ? {} : { msats }) });
    }
    return made;
  }

  /**
   * The figures of what is shown, as each event was made: by an author in `trusted`, not carrying
   * the muted hashtag, nor the muted word while `word` is muted, not the muted reply nor under it.
   * Without `trusted`, everything.
   */
  function expected(made: readonly Made[], trusted?: { web: Set<string>; word: boolean }) {
    const hidden = (item: Made) =>
      trusted !== undefined && (!trusted.web.has(item.author) || item.hashtag || (trusted.word && item.spam) || item.role === 'underMuted' || item.event.id === mutedReply.id);
    const shown = made.filter((item) => !hidden(item));
    const of = (...roles: Role[]) => shown.filter((item) => roles.includes(item.role));
    const distinct = (items: Made[]) => new Set(items.map((item) => item.author)).size;
    const reactions = of('reaction');
    const byContent = new Map<string, Set<string>>();
    for (const item of reactions) byContent.set(item.content as string, (byContent.get(item.content as string) ?? new Set()).add(item.author));
    const zaps = of('zap');
    return {
      replies: of('reply').length,
      threadReplies: of('reply', 'thread', 'underMuted').length,
      quotes: of('quote').length,
      reposts: distinct(of('repost')),
      reactions: {
        pubkeys: distinct(reactions),
        likes: distinct(reactions.filter((item) => item.content === '+' || item.content === '')),
        dislikes: distinct(reactions.filter((item) => item.content === '-')),
        byContent: [...byContent]
          .map(([content, set]) => ({ content, pubkeys: set.size }))
          .sort((a, b) => b.pubkeys - a.pubkeys || Buffer.compare(Buffer.from(JSON.stringify(a.content)), Buffer.from(JSON.stringify(b.content)))),
      },
      zaps: { count: zaps.length, msats: zaps.reduce((sum, item) => sum + (item.msats as number), 0), senders: distinct(zaps) },
      trusted: trusted !== undefined,
    };
  }

  const STATS = `query ($id: String!, $viewer: String) { event(id: $id) { stats(viewer: $viewer) { replies threadReplies quotes reposts reactions { pubkeys likes dislikes byContent { content pubkeys } } zaps { count msats senders } trusted } } }`;
  let store: EventStore;
  let server: TestServer;
  let cleanup: () => Promise<void>;
  const made = generate(20_261_202, 160);
  beforeAll(async () => {
    ({ store, cleanup } = await open());
    const wProfile = signed(W, { kind: 0, created_at: at, content: JSON.stringify({ name: 'w', lud16: 'w@wallet.example' }) });
    await store.putEvents([
      followList(SV, [F1, SM]),
      followList(F1, [F2]),
      followList(F2, [G1]),
      followList(B1, [B2, SV]),
      followList(B2, [B1, SV]),
      muteList(SV, [['p', pk(SM)], ['word', 'SPAM'], ['t', 'muted'], ['e', mutedReply.id]]),
      wProfile,
      target,
    ]);
    const providerNote = `${sha('lud16:w@wallet.example').slice(0, 16)} ${Math.floor(Date.now() / 1000)} k ${pk('st-wallet')}`;
    await store.marks.set([zapProviderMarkKey(pk(W))], 3600, [providerNote]);
    // In an order of their own: the figures do not depend on it.
    const events = made.map((item) => item.event);
    for (let start = 0; start < events.length; start += 40) await store.putEvents(events.slice(start, start + 40).reverse());
    server = await startTestServer(store);
  });
  afterAll(async () => {
    await server.close();
    await cleanup();
  });

  const statsOf = async (viewer?: string) => {
    const { status, body } = await postGraphql(server, STATS, { id: target.id, ...(viewer === undefined ? {} : { viewer }) });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    return (body.data?.event as { stats: unknown }).stats;
  };

  it('counts only what the web shows and V did not mute, exactly; without a viewer, everyone', async () => {
    const trusted = expected(made, { web, word: true });
    expect(trusted.replies).toBeGreaterThan(0);
    expect(trusted.zaps.count).toBeGreaterThan(0);
    expect(trusted).not.toEqual(expected(made));
    expect(await statsOf(pk(SV))).toEqual(trusted);
    expect(await statsOf(nip19.npubEncode(pk(SV)))).toEqual(trusted);
    expect(await statsOf()).toEqual(expected(made));
  });

  it('a deleted reaction, a new follow list and a new mute list are seen by the next read (within 1 s)', async () => {
    const reaction = made.find((item) => item.role === 'reaction' && web.has(item.author) && !item.spam && !item.hashtag);
    expect(reaction).toBeDefined();
    const deletion = signed(reaction?.author as string, { kind: 5, created_at: at + 5000, content: '', tags: [['e', reaction?.event.id as string]] });
    await store.putEvents([deletion]);
    const left = made.filter((item) => item !== reaction);
    expect(await statsOf(pk(SV))).toEqual(expected(left, { web, word: true }));
    // V now follows G1 too, and no longer mutes the word.
    await store.putEvents([followList(SV, [F1, SM, G1], T + 1), muteList(SV, [['p', pk(SM)], ['t', 'muted'], ['e', mutedReply.id]], T + 1)]);
    const now = expected(left, { web: new Set([...web, G1]), word: false });
    expect(now).not.toEqual(expected(left, { web, word: true }));
    await expect.poll(() => statsOf(pk(SV)), { timeout: 1000, interval: 100 }).toEqual(now);
  });

  it("past 2,000 related events in a request, the index's figures for everyone (trusted false); twenty notes' stats share the 2,000", async () => {
    const popular = signed(W, { created_at: at + 9000, content: 'popular' });
    const likes = Array.from({ length: 2001 }, (_, n) => signed(`st-liker-${n % 50}`, { kind: 7, created_at: at + 9001 + n, content: '+', tags: [['e', popular.id]] }));
    await store.putEvents([popular]);
    for (let start = 0; start < likes.length; start += 500) await store.putEvents(likes.slice(start, start + 500));
    const { status, body } = await postGraphql(server, STATS, { id: popular.id, viewer: pk(SV) });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    const plain = await postGraphql(server, STATS, { id: popular.id });
    expect((plain.body.data?.event as { stats: { reactions: { pubkeys: number } } }).stats.reactions.pubkeys).toBe(50);
    expect(body.data).toEqual(plain.body.data);
    // 1,999 likes of a second note fit alone; beside the first's 2,001 in one request, still; beside
    // the target's (161 relating events), one of them is counted by trust and the other is not.
    const second = signed(W, { created_at: at + 19_000, content: 'second' });
    await store.putEvents([second, ...likes.slice(0, 1999).map((like, n) => signed(`st-liker-${n % 50}`, { kind: 7, created_at: at + 19_001 + n, content: '+', tags: [['e', second.id]] }))]);
    const both = await postGraphql(server, `query ($a: String!, $b: String!, $v: String!) { a: event(id: $a) { stats(viewer: $v) { trusted } } b: event(id: $b) { stats(viewer: $v) { trusted } } }`, { a: target.id, b: second.id, v: pk(SV) });
    expect(both.body.errors).toBeUndefined();
    const flags = [(both.body.data?.a as { stats: { trusted: boolean } }).stats.trusted, (both.body.data?.b as { stats: { trusted: boolean } }).stats.trusted];
    expect(flags.filter(Boolean)).toHaveLength(1);
  });

  it('a page of twenty replies, each with stats(viewer:), counts every one of them by trust (they share the request\'s bounds, each taking what it reads)', async () => {
    const { status, body } = await postGraphql(server, `query ($id: String!, $v: String) { event(id: $id) { replies(first: 20) { edges { node { stats(viewer: $v) { trusted } } } } } }`, { id: target.id, v: pk(SV) });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    const flags = (body.data?.event as { replies: { edges: { node: { stats: { trusted: boolean } } }[] } }).replies.edges.map((edge) => edge.node.stats.trusted);
    expect(flags).toEqual(Array.from({ length: 20 }, () => true));
  });

  it("relating events past what the request may read (MAX_RESPONSE_BYTES) are not read: the index's figures, trusted false", async () => {
    const long = signed(W, { created_at: at + 30_000, content: 'quoted at length' });
    const quotes = Array.from({ length: 30 }, (_, n) => signed(F1, { created_at: at + 30_001 + n, content: `${n} ${'x'.repeat(10_000)}`, tags: [['q', long.id]] }));
    await store.putEvents([long, ...quotes]);
    const narrow = await startTestServer(store, { graphql: { maxResponseBytes: 262_144 } });
    try {
      const query = `query ($id: String!, $v: String) { event(id: $id) { stats(viewer: $v) { quotes trusted } } }`;
      expect((await postGraphql(narrow, query, { id: long.id, v: pk(SV) })).body).toEqual({ data: { event: { stats: { quotes: 30, trusted: false } } } });
      // The same with room to read them: F1 is in V's web, every quote counts, by trust.
      expect((await postGraphql(server, query, { id: long.id, v: pk(SV) })).body).toEqual({ data: { event: { stats: { quotes: 30, trusted: true } } } });
    } finally {
      await narrow.close();
    }
  });

  it('GET /thread?viewer= shows the stats stats(viewer:) gives', async () => {
    const response = await fetch(`${server.url}/thread?id=${target.id}&viewer=${pk(SV)}`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { stats: Record<string, unknown> };
    const graphql = (await statsOf(pk(SV))) as Record<string, unknown>;
    expect(body.stats).toMatchObject({ replies: graphql.replies, threadReplies: graphql.threadReplies, quotes: graphql.quotes, reposts: graphql.reposts, reactions: graphql.reactions });
    expect((body.stats.zaps as { count: number }).count).toBe((graphql.zaps as { count: number }).count);
  });
});
