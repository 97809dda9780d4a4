import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { hasContentEntry } from '../src/nostr/relationships.js';
import { MAX_TAGS_READ } from '../src/nostr/work-caps.js';
import type { EventStore } from '../src/store/event-store.js';
import { matchesQuery, queryWords } from '../src/nostr/profile-search.js';
import { rebuildRelations } from '../src/store/relation-check.js';
import { recountRelations } from '../src/store/relation-recount.js';
import type { RelationStats } from '../src/store/relation-index.js';
import { BOTH_STORES, type OpenedStore } from './support/both-stores.js';
import { deletion, vanish } from './support/deletion-conformance.js';
import { expectExact as expectFiguresExact } from './support/relation-conformance.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { shuffled } from './support/shuffle.js';
import { getJson, startTestServer, type TestServer } from './support/test-server.js';
import { createTestStore } from './support/test-store.js';

/**
 * Adversarial review of the relationship index (DESIGN "Relationships"): worlds richer
 * than the conformance suite's (replaceable and addressable versions that quote, replaced and
 * deleted by id and by `a` address, requests to vanish, deletions of deletions, hostile reaction
 * contents), two Redis writers on one prefix at once, and the GraphQL serving of the figures.
 * Everything here holds; what does not is in relation-attack-failing.test.ts.
 */

const T = 1_700_000_000;
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const SEED = Number(process.env.FUZZ_SEED ?? 2626);

/** Reaction contents that stress every encoding of a content (JSON keys, Lua lines, GraphQL output). */
const HOSTILE_CONTENTS = [
  '+',
  '',
  '-',
  '🤙',
  '\ud800', // a lone surrogate: UTF-8 cannot carry it
  '\udfff\ud800', // reversed pair
  '"+"', // JSON-looking: not a like
  '*', // the long-content key's own spelling
  'a\tb', // the record separators of the encoded records
  'c\nd',
  '1\t"x"\n', // a forged record line
  '\u0000',
  'x'.repeat(254), // at the cap (256 bytes of JSON): an entry
  'y'.repeat(255), // over it: no entry
  '\u0001'.repeat(50), // 50 characters, 302 bytes of JSON: no entry
  ' +', // not a like
  '+\u200b', // nor this
];


/**
 * One world: two notes, and around them every kind of relation, from every store path. The
 * addressable and replaceable versions quote (so their replacement, deletion by id, by `a` and by
 * vanish all move `quotes`), two versions share a created_at (the lower id wins), a reaction and a
 * repost target a version's id, deletions name events of their own author and of others, a
 * deletion is itself deleted, and requests to vanish carry relations of their own.
 */
function buildWorld(): NostrEvent[] {
  const n1 = signed('alice', { content: 'n1', created_at: T });
  const n2 = signed('bob', { content: 'n2', created_at: T + 1 });
  const pool: NostrEvent[] = [n1, n2];
  const authors = ['alice', 'bob', 'carol', 'dave'];
  const versions = new Map<string, NostrEvent[]>();
  for (const author of authors) {
    const own = [
      signed(author, { kind: 30023, created_at: T + 10, tags: [['d', 'art'], ['q', n2.id]], content: 'v0' }),
      signed(author, { kind: 30023, created_at: T + 11, tags: [['d', 'art'], ['q', n1.id], ['q', n2.id]], content: 'v1' }),
      signed(author, { kind: 30023, created_at: T + 12, tags: [['d', 'art'], ['q', n1.id.toUpperCase()]], content: 'v2a' }),
      signed(author, { kind: 30023, created_at: T + 12, tags: [['d', 'art'], ['q', n2.id]], content: 'v2b' }),
      signed(author, { kind: 10001, created_at: T + 10, tags: [['q', n1.id]], content: 'list0' }),
      signed(author, { kind: 10001, created_at: T + 13, tags: [['q', n2.id]], content: 'list1' }),
      signed(author, { kind: 0, created_at: T + 5, tags: [['q', n2.id]], content: '{}' }),
      // Profiles for the search index: one of the same second as the one above (the lower id
      // wins), a newer one with words in several scripts, and one of hostile fields.
      profile(author, { name: `${author} five`, nip05: `${author}@five.example` }, T + 5),
      profile(author, { name: `${author} Ｓｅｖｅｎ`, display_name: 'ΑΣ İstanbul 中本聪 ⚡️', nip05: 42 }, T + 7),
      profile(author, { name: '\ud800'.repeat(3) + 'x'.repeat(300), display_name: Array.from({ length: 40 }, (_, word) => `w${word}`).join(' ') }, T + 8),
      signed(author, { kind: 3, created_at: T + 6, tags: [['p', pubkeyOf('alice')], ['q', n1.id]], content: '' }),
    ];
    versions.set(author, own);
    pool.push(...own);
  }
  for (const [index, author] of authors.entries()) {
    const own = versions.get(author) as NostrEvent[];
    const marked = signed(author, { created_at: T + 20, tags: [['e', n1.id, '', 'root']], content: 'marked' });
    pool.push(
      marked,
      signed(author, { created_at: T + 20, tags: [['e', n1.id, '', 'root'], ['e', n1.id, '', 'reply']], content: 'root and reply the same' }),
      signed(author, { created_at: T + 21, tags: [['e', n1.id], ['e', n2.id]], content: 'positional, several' }),
      signed(author, { created_at: T + 22, tags: [['e', n1.id, '', 'root'], ['e', marked.id, '', 'reply'], ['q', n2.id]], content: 'nested, quoting' }),
      signed(author, { kind: 1111, created_at: T + 23, tags: [['E', n1.id.toUpperCase()], ['e', n2.id]], content: 'comment' }),
      signed(author, { kind: 6, created_at: T + 24, tags: [['e', n1.id]], content: '' }),
      signed(author, { kind: 16, created_at: T + 25, tags: [['e', (own[0] as NostrEvent).id], ['a', `30023:${pubkeyOf(author)}:art`]], content: '' }),
      signed(author, { kind: 7, created_at: T + 26, tags: [['e', (own[1] as NostrEvent).id]], content: '+' }),
      signed(author, { kind: 7, created_at: T + 27, tags: [['e', n2.id], ['e', n1.id]], content: '🤙' }),
      signed(author, { kind: 7, created_at: T + 28, tags: [['e', n1.id], ['e', 'not an id']], content: '+' }), // last `e` is no id: no target
    );
    HOSTILE_CONTENTS.forEach((content, at) => {
      if ((at + index) % 2 === 0) pool.push(signed(author, { kind: 7, created_at: T + 30 + at, tags: [['e', n1.id]], content }));
    });
  }
  const deletions: NostrEvent[] = [];
  for (const author of authors) {
    const own = pool.filter((event) => event.pubkey === pubkeyOf(author) && event !== n1 && event !== n2);
    own.forEach((event, at) => {
      if (at % 3 === 0) deletions.push(deletion(author, { ids: [event.id], at: T + 60 + at }));
    });
    deletions.push(deletion(author, { addresses: [`30023:${pubkeyOf(author)}:art`], at: T + 11 }));
    deletions.push(deletion(author, { addresses: [`10001:${pubkeyOf(author)}:`], at: T + 10 }));
  }
  // A stranger's deletions change nothing; a deletion of a deletion changes nothing (NIP-09).
  deletions.push(deletion('mallory', { ids: pool.slice(2, 12).map((event) => event.id) }));
  const quotingDeletion = signed('bob', { kind: 5, created_at: T + 90, tags: [['e', (pool[5] as NostrEvent).id], ['q', n1.id]], content: '' });
  deletions.push(quotingDeletion, deletion('bob', { ids: [quotingDeletion.id], at: T + 91 }));
  const quotingVanish = signed('dave', { kind: 62, created_at: T + 24, tags: [['relay', 'ALL_RELAYS'], ['q', n1.id]], content: 'bye' });
  return [...pool, ...deletions, vanish('carol', T + 22), quotingVanish];
}

const WORLD = buildWorld();

async function expectExact(store: EventStore): Promise<void> {
  await expectFiguresExact(store);
  await expectSearchAnswers(store);
}

/** searchProfiles on both of the index's paths against a brute force over the servable profiles. */
async function expectSearchAnswers(store: EventStore): Promise<void> {
  const servable: NostrEvent[] = [];
  for await (const batch of store.servableEvents()) servable.push(...batch);
  const recount = recountRelations(servable);
  for (const query of ['alice', 'bob five', 'five', 'seven', 'ΑΣ', 'ist', '中本', 'w1', 'x', 'a', 'e', 'example']) {
    const asked = queryWords(query);
    const expected = [...recount.profileWords]
      .filter(([, words]) => matchesQuery(words, asked))
      .map(([pubkey]) => ({ pubkey, followers: recount.followers.get(pubkey)?.length ?? 0 }))
      .sort((a, b) => b.followers - a.followers || (a.pubkey < b.pubkey ? -1 : 1))
      .slice(0, 3)
      .map(({ pubkey }) => pubkey);
    expect(await store.relations.searchProfiles(asked, 3), query).toEqual(expected);
    expect(await store.relations.searchProfiles(asked, 3, { lexRange: 0, rankWalk: 2000 }), `${query}, walked`).toEqual(expected);
  }
}

async function writeInBatches(store: EventStore, events: readonly NostrEvent[], size: number): Promise<void> {
  for (let start = 0; start < events.length; start += size) await store.putEvents(events.slice(start, start + size));
}

describe.each(BOTH_STORES)('relationship index under attack, $name store', ({ open }) => {
  it(
    'rich worlds (versions that quote, deletions by id and by `a`, vanish, hostile contents) in any order and batching, then written again: maintained == recounted (property)',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.subarray(WORLD, { minLength: 1 }), fc.integer({ min: 1, max: 7 }), fc.integer(), async (chosen, batchSize, seed) => {
          const subject = await open();
          try {
            await writeInBatches(subject.store, shuffled([...chosen], seed), batchSize);
            await expectExact(subject.store);
            // Every event again, in another order: duplicates, late deletions and old versions change nothing.
            await writeInBatches(subject.store, shuffled([...chosen], seed + 1), batchSize + 1);
            await expectExact(subject.store);
          } finally {
            await subject.cleanup();
          }
        }),
        { numRuns: RUNS, seed: SEED },
      );
    },
    300_000,
  );

  it('hostile reaction contents: each is its own entry, as signed; only `+` and empty are likes, only `-` a dislike; a content over 256 bytes of JSON no entry', async () => {
    const subject = await open();
    try {
      const target = signed('alice', { content: 'target', created_at: T });
      const reactions = HOSTILE_CONTENTS.map((content, index) => signed(`reactor${index}`, { kind: 7, tags: [['e', target.id]], content, created_at: T + 1 }));
      await subject.store.putEvents([target, ...reactions]);
      const [stats] = (await subject.store.relations.stats([target.id])) as [RelationStats];
      expect(stats.reactions.pubkeys).toBe(HOSTILE_CONTENTS.length);
      expect(stats.reactions.likes).toBe(2);
      expect(stats.reactions.dislikes).toBe(1);
      const entries = HOSTILE_CONTENTS.filter(hasContentEntry);
      expect(stats.reactions.byContent.map((entry) => entry.content).sort()).toEqual([...entries].sort());
      expect(stats.reactions.byContent.every((entry) => entry.pubkeys === 1)).toBe(true);
      // Each one removed by its author takes exactly its own entry away.
      await subject.store.putEvents(reactions.map((reaction, index) => deletion(`reactor${index}`, { ids: [reaction.id] })));
      expect((await subject.store.relations.stats([target.id]))[0]).toEqual({ replies: 0, threadReplies: 0, quotes: 0, reposts: 0, reactions: { pubkeys: 0, likes: 0, dislikes: 0, byContent: [] } });
      await expectExact(subject.store);
    } finally {
      await subject.cleanup();
    }
  });

  it('one author reacting `+`, then `-`, then deleting the `+`: one reactor, no like, one dislike, in any order of the three', async () => {
    const target = signed('alice', { content: 'target', created_at: T });
    const like = signed('bob', { kind: 7, tags: [['e', target.id]], content: '+', created_at: T + 1 });
    const dislike = signed('bob', { kind: 7, tags: [['e', target.id]], content: '-', created_at: T + 2 });
    const undo = deletion('bob', { ids: [like.id] });
    for (const order of [
      [like, dislike, undo],
      [undo, like, dislike],
      [dislike, undo, like],
    ]) {
      const subject = await open();
      try {
        for (const event of order) await subject.store.putEvents([event]);
        const [stats] = (await subject.store.relations.stats([target.id])) as [RelationStats];
        expect(stats.reactions).toEqual({ pubkeys: 1, likes: 0, dislikes: 1, byContent: [{ content: '-', pubkeys: 1 }] });
        await expectExact(subject.store);
      } finally {
        await subject.cleanup();
      }
    }
  });

  it('a kind 1 whose marked root and reply are the same id is one reply and one thread reply of it', async () => {
    const subject = await open();
    try {
      const target = signed('alice', { content: 'target', created_at: T });
      const both = signed('bob', { tags: [['e', target.id, '', 'root'], ['e', target.id, '', 'reply'], ['q', target.id]], content: 'same', created_at: T + 1 });
      await subject.store.putEvents([target, both, both]);
      const [stats] = (await subject.store.relations.stats([target.id])) as [RelationStats];
      expect(stats).toMatchObject({ replies: 1, threadReplies: 1, quotes: 1 });
      expect((await subject.store.relations.allReplies(target.id)).map((position) => position.id)).toEqual([both.id]);
      await expectExact(subject.store);
    } finally {
      await subject.cleanup();
    }
  });

  it('an event of 2,000 tags quoting 2,000 targets relates to each once, and its deletion takes every one away', async () => {
    const subject = await open();
    try {
      const targets = Array.from({ length: MAX_TAGS_READ }, (_, index) => index.toString(16).padStart(64, '0'));
      const heavy = signed('mallory', { tags: targets.map((id) => ['q', id]), content: 'quotes everything', created_at: T });
      await subject.store.putEvents([heavy]);
      const stats = await subject.store.relations.stats([targets[0] as string, targets[MAX_TAGS_READ - 1] as string]);
      expect(stats.map((figures) => figures.quotes)).toEqual([1, 1]);
      await expectExact(subject.store);
      await subject.store.putEvents([deletion('mallory', { ids: [heavy.id] })]);
      // Every target quoted no more (Redis keeps a tombstone in each: lua-scripts.ts RELATE).
      expect((await subject.store.relations.stats(targets)).every((figures) => figures.quotes === 0)).toBe(true);
      await expectExact(subject.store);
    } finally {
      await subject.cleanup();
    }
  });

  it('a quoting addressable event: replaced, the old version stops quoting; deleted by `a`, nothing quotes; a version older than the bar never counts', async () => {
    const subject = await open();
    try {
      const target = signed('alice', { content: 'target', created_at: T });
      const address = `30023:${pubkeyOf('bob')}:essay`;
      const v1 = signed('bob', { kind: 30023, tags: [['d', 'essay'], ['q', target.id]], content: 'v1', created_at: T + 1 });
      const v2 = signed('bob', { kind: 30023, tags: [['d', 'essay'], ['q', target.id], ['q', target.id]], content: 'v2', created_at: T + 2 });
      const quotes = async () => ((await subject.store.relations.stats([target.id]))[0] as RelationStats).quotes;
      await subject.store.putEvents([v1]);
      expect(await quotes()).toBe(1);
      await subject.store.putEvents([v2, v1]);
      expect(await quotes()).toBe(1);
      await subject.store.putEvents([deletion('bob', { addresses: [address], at: T + 3 })]);
      expect(await quotes()).toBe(0);
      await subject.store.putEvents([v1, v2, signed('bob', { kind: 30023, tags: [['d', 'essay'], ['q', target.id]], content: 'v3 at the bar', created_at: T + 3 })]);
      expect(await quotes()).toBe(0);
      await subject.store.putEvents([signed('bob', { kind: 30023, tags: [['d', 'essay'], ['q', target.id]], content: 'v4', created_at: T + 4 })]);
      expect(await quotes()).toBe(1);
      await expectExact(subject.store);
    } finally {
      await subject.cleanup();
    }
  });

  it('replies at created_at 0 and 2^53 - 1 (the widest a position holds) list and page in order on either side', async () => {
    const subject = await open();
    try {
      const target = signed('alice', { content: 'target', created_at: T });
      const times = [Number.MAX_SAFE_INTEGER, 0, 2 ** 32, 2 ** 24 - 1, 2 ** 24, Number.MAX_SAFE_INTEGER - 1, 0];
      const answers = times.map((at, index) => signed(`edge${index}`, { tags: [['e', target.id]], content: `at ${at}`, created_at: at }));
      await subject.store.putEvents([target, ...answers]);
      const expected = [...answers].sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1)).map((event) => event.id);
      expect((await subject.store.relations.allReplies(target.id)).map((position) => position.id)).toEqual(expected);
      const paged: string[] = [];
      let after = null;
      for (;;) {
        const page = await subject.store.relations.replies(target.id, after, 2);
        paged.push(...page.map((position) => position.id));
        if (page.length < 2) break;
        after = page[page.length - 1] ?? null;
      }
      expect(paged).toEqual(expected);
      await expectExact(subject.store);
    } finally {
      await subject.cleanup();
    }
  });

  it('rebuild mends an index that drifted (the README remedy), and is idempotent', async () => {
    const subject = await open();
    try {
      await writeInBatches(subject.store, WORLD, 50);
      await expectExact(subject.store);
      await rebuildRelations(subject.store);
      await expectExact(subject.store);
      await rebuildRelations(subject.store);
      await expectExact(subject.store);
    } finally {
      await subject.cleanup();
    }
  }, 60_000);
});

describe('two Redis writers on one prefix at once', () => {
  it(
    'the same world written by two instances concurrently, each in its own order and batching: maintained == recounted (property)',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.subarray(WORLD, { minLength: 2 }),
          fc.integer({ min: 1, max: 7 }),
          fc.integer({ min: 1, max: 7 }),
          fc.integer(),
          fc.integer(),
          async (chosen, sizeA, sizeB, seedA, seedB) => {
            const subject = await createTestStore();
            const other = await subject.reopen();
            try {
              await Promise.all([
                writeInBatches(subject.store, shuffled([...chosen], seedA), sizeA),
                writeInBatches(other, shuffled([...chosen], seedB), sizeB),
              ]);
              await expectExact(subject.store);
            } finally {
              await other.close();
              await subject.cleanup();
            }
          },
        ),
        { numRuns: RUNS * 4, seed: SEED },
      );
    },
    300_000,
  );

  it('one writer stores a version while another replaces it and a third deletes it by `a`: quotes end exact', async () => {
    for (let round = 0; round < 20; round++) {
      const subject = await createTestStore();
      const [second, third] = await Promise.all([subject.reopen(), subject.reopen()]);
      try {
        const target = signed('alice', { content: `target ${round}`, created_at: T });
        const versions = Array.from({ length: 6 }, (_, index) =>
          signed('bob', { kind: 30023, tags: [['d', 'x'], ['q', target.id]], content: `v${index} ${round}`, created_at: T + index }),
        );
        await Promise.all([
          subject.store.putEvents(versions.slice(0, 3)),
          second.putEvents([...versions].reverse()),
          third.putEvents([deletion('bob', { addresses: [`30023:${pubkeyOf('bob')}:x`], at: T + 2 + (round % 5) })]),
        ]);
        await expectExact(subject.store);
      } finally {
        await Promise.all([second.close(), third.close()]);
        await subject.cleanup();
      }
    }
  }, 60_000);
});

interface GraphQLBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

interface Page {
  edges: { cursor: string; node: { id: string } }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

describe.each(BOTH_STORES)('GraphQL serving of relationships under attack, $name store', ({ open }) => {
  const context = {} as { opened: OpenedStore; server: TestServer };
  const target = signed('alice', { content: 'thread', created_at: T });
  const replies = Array.from({ length: 12 }, (_, index) => signed(`replier${index}`, { tags: [['e', target.id, '', 'root']], content: `reply ${index}`, created_at: T + 10 + (index % 3) }));
  const reactions = HOSTILE_CONTENTS.map((content, index) => signed(`reactor${index}`, { kind: 7, tags: [['e', target.id]], content, created_at: T + 1 }));

  beforeAll(async () => {
    context.opened = await open();
    await context.opened.store.putEvents([target, ...replies, ...reactions]);
    context.server = await startTestServer(context.opened.store);
  }, 60_000);

  afterAll(async () => {
    await context.server?.close();
    await context.opened?.cleanup();
  });

  async function graphql(query: string, variables?: Record<string, unknown>): Promise<GraphQLBody> {
    const response = await getJson(`${context.server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    return response.body as GraphQLBody;
  }

  const PAGE = 'query ($id: String!, $first: Int, $after: String) { event(id: $id) { replies(first: $first, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } } }';

  async function page(first: number, after: string | null): Promise<Page> {
    const body = await graphql(PAGE, { id: target.id, first, after });
    expect(body.errors).toBeUndefined();
    return (body.data?.event as { replies: Page }).replies;
  }

  it('hostile contents come back through GraphQL exactly as signed (lone surrogates, tabs, newlines, NUL, JSON-looking)', async () => {
    const body = await graphql(`{ event(id: "${target.id}") { stats { reactions { pubkeys likes dislikes byContent { content pubkeys } } } } }`);
    expect(body.errors).toBeUndefined();
    const stats = (body.data?.event as { stats: RelationStats }).stats;
    expect(stats.reactions.pubkeys).toBe(HOSTILE_CONTENTS.length);
    expect(stats.reactions.byContent.map((entry) => entry.content).sort()).toEqual(HOSTILE_CONTENTS.filter(hasContentEntry).sort());
  });

  it('paging while deleting: the cursor of a reply deleted after its page still continues after it, nothing repeated or skipped', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    const deleted: string[] = [];
    for (let round = 0; ; round++) {
      const read: Page = await page(4, after);
      seen.push(...read.edges.map((edge) => edge.node.id));
      if (!read.pageInfo.hasNextPage) break;
      // The last reply of this page, and the first not yet read, are deleted before the next page.
      const last = read.edges[read.edges.length - 1]?.node.id as string;
      const ordered = [...replies].sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1));
      const next = ordered.find((reply) => !seen.includes(reply.id) && !deleted.includes(reply.id));
      const doomed = [last, ...(next ? [next.id] : [])];
      deleted.push(...doomed);
      await context.opened.store.putEvents(doomed.map((id) => deletion(`replier${replies.findIndex((reply) => reply.id === id)}`, { ids: [id] })));
      after = read.pageInfo.endCursor;
      expect(round).toBeLessThan(20);
    }
    expect(new Set(seen).size).toBe(seen.length);
    const expected = [...replies]
      .sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1))
      .map((reply) => reply.id)
      .filter((id) => seen.includes(id) || !deleted.includes(id));
    expect(seen).toEqual(expected);
    const stats = await graphql(`{ event(id: "${target.id}") { stats { replies threadReplies } } }`);
    const left = replies.length - deleted.length;
    expect((stats.data?.event as { stats: unknown }).stats).toEqual({ replies: left, threadReplies: left });
    await expectExact(context.opened.store);
  });

  it('nested replies of 100 inside replies of 100, through variables, aliases and fragments, are costed and refused before they run', async () => {
    const refused = (body: GraphQLBody) => body.errors?.[0]?.extensions?.code;
    const two = JSON.stringify([target.id, (replies[0] as NostrEvent).id]);
    // Two events × (2 + 4 + 70 × (2 + 4 + 70 × (2 + 0.1))) = 21,432 > 20,000, at the depth limit of 8.
    const nested = `query ($f: Int) { events(ids: ${two}) { replies(first: $f) { edges { node { replies(first: $f) { edges { node { id } } } } } } } }`;
    expect(refused(await graphql(nested, { f: 70 }))).toBe('query_too_costly');
    // 60 per page: 15,852.
    expect((await graphql(nested, { f: 60 })).errors).toBeUndefined();
    // A fragment counts where it is spread: 100 ids × (2 + 4 + 50 × (2 + 0.1 + 2 + 0.1)) = 21,600.
    const hundred = JSON.stringify(Array.from({ length: 100 }, (_, index) => index.toString(16).padStart(64, 'c')));
    const fragment = 'fragment S on Event { replies(first: $f) { edges { node { id stats { replies } } } } }';
    expect(refused(await graphql(`query ($f: Int) { events(ids: ${hundred}) { ...S } } ${fragment}`, { f: 50 }))).toBe('query_too_costly');
    expect((await graphql(`query ($f: Int) { events(ids: ${hundred}) { ...S } } ${fragment}`, { f: 40 })).errors).toBeUndefined();
    // Aliases count each time they select.
    const manyAliases = `query ($f: Int) { event(id: "${target.id}") { ${Array.from({ length: 10 }, (_, index) => `a${index}: replies(first: $f) { edges { node { replies(first: $f) { edges { node { id } } } } } }`).join(' ')} } }`;
    // 2 + 10 × (4 + 30 × (2 + 4 + 30 × 2.1)) = 20,742; with 25, 14,667.
    expect(refused(await graphql(manyAliases, { f: 30 }))).toBe('query_too_costly');
    expect((await graphql(manyAliases, { f: 25 })).errors).toBeUndefined();
  });

  it('first and after as hostile variables: floats, strings and forged cursors are refused with their codes, never a 500', async () => {
    const codes = async (variables: Record<string, unknown>) => {
      const body = await graphql(PAGE, { id: target.id, ...variables });
      return body.errors?.map((error) => error.extensions?.code ?? error.message);
    };
    expect(await codes({ first: 2.5 })).toBeDefined();
    expect(await codes({ first: '10' })).toBeDefined();
    const forged = [
      Buffer.from(`r1:-1:${'a'.repeat(64)}`).toString('base64url'),
      Buffer.from(`r1:9007199254740992:${'a'.repeat(64)}`).toString('base64url'),
      Buffer.from(`r1:1:${'A'.repeat(64)}`).toString('base64url'),
      Buffer.from(`r1:01:${'a'.repeat(64)}`).toString('base64url'),
      Buffer.from(`r2:1:${'a'.repeat(64)}`).toString('base64url'),
    ];
    for (const after of forged) expect(await codes({ first: 5, after })).toEqual(['invalid_cursor']);
    // The largest created_at a cursor may carry reads an empty page.
    const edge = Buffer.from(`r1:9007199254740991:${'f'.repeat(64)}`).toString('base64url');
    expect((await page(5, edge)).edges).toEqual([]);
  });
});
