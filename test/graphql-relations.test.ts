import fc from 'fast-check';
import { createReadStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors.js';
import { importEvents } from '../src/import/import-events.js';
import type { NostrEvent } from '../src/nostr/event.js';
import { LmdbEventStore } from '../src/store/embedded/lmdb-event-store.js';
import type { EventStore, Held } from '../src/store/event-store.js';
import type { RelationIndex } from '../src/store/relation-index.js';
import { BOTH_STORES, type OpenedStore } from './support/both-stores.js';
import { deletion } from './support/deletion-conformance.js';
import { pubkeyOf, signed } from './support/events.js';
import { collectPages, getJson, postGraphql, startTestServer, type TestServer, type TestServerOptions } from './support/test-server.js';

/**
 * Threads and reactions over GraphQL (DESIGN "Relationships"): Event.parent, root,
 * replies (a connection) and stats, on both stores, through a real server on a real port.
 */

const T = 1_700_000_000;
const ALICE = pubkeyOf('alice');

// A note with every kind of relation (expected figures in 'stats' below).
const X = signed('alice', { content: 'the note', created_at: T });
const markedRoot = signed('bob', { tags: [['e', X.id, '', 'root'], ['p', ALICE]], content: 'marked, root only', created_at: T + 10 });
const positional = signed('carol', { tags: [['e', X.id]], content: 'positional, one tag', created_at: T + 11 });
const deep = signed('dave', { tags: [['e', X.id, 'wss://relay.example', 'root'], ['e', markedRoot.id, '', 'reply']], content: 'marked, nested', created_at: T + 12 });
const comment = signed('erin', { kind: 1111, tags: [['E', X.id, '', ALICE], ['K', '1'], ['e', X.id], ['k', '1']], content: 'NIP-22', created_at: T + 13 });
const nestedComment = signed('frank', { kind: 1111, tags: [['E', X.id], ['K', '1'], ['e', comment.id], ['k', '1111']], content: 'NIP-22, nested', created_at: T + 14 });
const positionalSeveral = signed('grace', { tags: [['e', X.id], ['e', positional.id]], content: 'positional, several', created_at: T + 15 });
const quote = signed('bob', { tags: [['q', X.id]], content: 'look at this', created_at: T + 16 });
const reposts = [
  signed('bob', { kind: 6, tags: [['e', X.id], ['p', ALICE]], created_at: T + 17 }),
  signed('bob', { kind: 16, tags: [['e', X.id], ['k', '1']], created_at: T + 18 }),
  signed('carol', { kind: 6, tags: [['e', X.id]], created_at: T + 19 }),
];
const react = (author: string, content: string, target = X.id, at = T + 20) =>
  signed(author, { kind: 7, tags: [['e', target], ['p', ALICE]], content, created_at: at });
const reactions = [react('bob', '+'), react('bob', '🤙'), react('carol', ''), react('dave', '-'), react('erin', '🤙'), react('frank', '🤙')];
// A reply to an unknown event, and one to an event its author deleted.
const orphan = signed('heidi', { tags: [['e', 'ab'.repeat(32), '', 'reply']], content: 'to nothing', created_at: T + 21 });
const doomed = signed('ivan', { content: 'soon gone', created_at: T + 1 });
const toDoomed = signed('judy', { tags: [['e', doomed.id, '', 'root']], content: 'to the deleted', created_at: T + 22 });

// Many replies in the same second: only their ids order them.
const BUSY = signed('alice', { content: 'busy thread', created_at: T });
const SAME_SECOND = Array.from({ length: 25 }, (_, index) => signed(`replier${index}`, { tags: [['e', BUSY.id, '', 'root']], content: `reply ${index}`, created_at: T + 100 }));
// One of them listed by the index but not found by id (the store below hides it): skipped.
const HIDDEN = SAME_SECOND[7] as NostrEvent;

// 60 distinct reaction contents: byContent answers the first 50.
const CROWDED = signed('alice', { content: 'react to me', created_at: T });
const CROWD = Array.from({ length: 60 }, (_, index) => react(`reactor${index}`, `:e${index}:`, CROWDED.id));

// 50 targets for one batched stats read.
const NOTES = Array.from({ length: 50 }, (_, index) => signed('mallory', { content: `note ${index}`, created_at: T + index }));

const SEED = [
  X, markedRoot, positional, deep, comment, nestedComment, positionalSeveral, quote, ...reposts, ...reactions,
  orphan, doomed, toDoomed, deletion('ivan', { ids: [doomed.id] }),
  BUSY, ...SAME_SECOND, CROWDED, ...CROWD, ...NOTES,
];

/** By created_at, then id: the order replies are listed in. */
const byPosition = (a: NostrEvent, b: NostrEvent) => a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The store as the server sees it, instrumented: every `relations.stats` call recorded, and the
 * events of `hidden` not found by id (as if missing from the index that lists them).
 */
function instrumented(store: EventStore, hidden: ReadonlySet<string>) {
  const statsCalls: string[][] = [];
  const relations = new Proxy(store.relations, {
    get(target, property) {
      if (property === 'stats') {
        return (ids: readonly string[]) => {
          statsCalls.push([...ids]);
          return target.stats(ids);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as RelationIndex;
  const wrapped = new Proxy(store, {
    get(target, property) {
      if (property === 'relations') return relations;
      if (property === 'getEvents') {
        return async (ids: readonly string[]): Promise<Held[]> => {
          const found = await target.getEvents(ids);
          return found.map((held, index) => (hidden.has(ids[index] as string) ? null : held));
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: wrapped, statsCalls };
}

const graphql = postGraphql;

interface Page {
  edges: { cursor: string; node: { id: string } }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

const PAGE_QUERY = 'query ($id: String!, $first: Int, $after: String) { event(id: $id) { replies(first: $first, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } } }';

async function page(server: TestServer, id: string, first: number, after: string | null): Promise<Page> {
  const { status, body } = await graphql(server, PAGE_QUERY, { id, first, after });
  expect(status).toBe(200);
  expect(body.errors).toBeUndefined();
  return (body.data?.event as { replies: Page }).replies;
}

/** Every page of `id`'s replies, `first` at a time: the ids in order, and the pages read. */
async function allPages(server: TestServer, id: string, first: number): Promise<{ ids: string[]; pages: Page[] }> {
  const pages = await collectPages((after) => page(server, id, first, after));
  return { ids: pages.flatMap((read) => read.edges.map((edge) => edge.node.id)), pages };
}

describe.each(BOTH_STORES)('Threads and reactions over GraphQL, $name store', ({ open }) => {
  const cleanups: (() => Promise<unknown>)[] = [];
  const context = {} as { server: TestServer; store: EventStore; statsCalls: string[][]; open: () => Promise<OpenedStore> };

  /** A fresh store with `seed` (one write per event) and a server on it, instrumented; closed after the suite. */
  async function serve(seed: readonly NostrEvent[], options: TestServerOptions = {}, hidden: ReadonlySet<string> = new Set()) {
    const opened = await open();
    cleanups.push(() => opened.cleanup());
    for (const event of seed) await opened.store.putEvents([event]);
    const { store, statsCalls } = instrumented(opened.store, hidden);
    const server = await startTestServer(store, options);
    cleanups.push(() => server.close());
    return { server, store: opened.store, statsCalls };
  }

  beforeAll(async () => {
    Object.assign(context, await serve(SEED, {}, new Set([HIDDEN.id])));
  }, 60_000);

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('stats of a note with replies, quotes, reposts and reactions: exact figures; byContent by count, then content', async () => {
    const query = `{ event(id: "${X.id}") { stats { replies threadReplies quotes reposts reactions { pubkeys likes dislikes byContent { content pubkeys } } } } }`;
    const { status, body } = await graphql(context.server, query);
    expect(status).toBe(200);
    expect(body).toEqual({
      data: {
        event: {
          stats: {
            // markedRoot, positional, comment (deep, nestedComment and positionalSeveral reply to those).
            replies: 3,
            threadReplies: 6,
            quotes: 1,
            // bob twice (kinds 6 and 16), carol.
            reposts: 2,
            reactions: {
              pubkeys: 5,
              likes: 2,
              dislikes: 1,
              byContent: [
                { content: '🤙', pubkeys: 3 },
                { content: '', pubkeys: 1 },
                { content: '+', pubkeys: 1 },
                { content: '-', pubkeys: 1 },
              ],
            },
          },
        },
      },
    });
  });

  it('an event nothing relates to has zeros; a reply has its own figures', async () => {
    const { status, body } = await graphql(
      context.server,
      `{ events(ids: ["${quote.id}", "${markedRoot.id}"]) { stats { replies threadReplies quotes reposts reactions { pubkeys likes dislikes byContent { content } } } } }`,
    );
    expect(status).toBe(200);
    const zeros = { replies: 0, threadReplies: 0, quotes: 0, reposts: 0, reactions: { pubkeys: 0, likes: 0, dislikes: 0, byContent: [] } };
    expect(body).toEqual({ data: { events: [{ stats: zeros }, { stats: { ...zeros, replies: 1 } }] } });
  });

  it('byContent answers the 50 most common contents, pubkeys counts every author', async () => {
    const { status, body } = await graphql(context.server, `{ event(id: "${CROWDED.id}") { stats { reactions { pubkeys byContent { content pubkeys } } } } }`);
    expect(status).toBe(200);
    const contents = CROWD.map((event) => event.content).sort();
    expect(body).toEqual({
      data: { event: { stats: { reactions: { pubkeys: 60, byContent: contents.slice(0, 50).map((content) => ({ content, pubkeys: 1 })) } } } },
    });
  });

  it('parent and root: NIP-10 marked and positional, NIP-22; null when not a reply, unknown or deleted', async () => {
    const asked = [X, markedRoot, positional, deep, comment, nestedComment, positionalSeveral, quote, orphan, toDoomed];
    const { status, body } = await graphql(context.server, `{ events(ids: ${JSON.stringify(asked.map((event) => event.id))}) { id parent { id } root { id } } }`);
    expect(status).toBe(200);
    const of = (event: NostrEvent | null) => (event ? { id: event.id } : null);
    const row = (event: NostrEvent, parent: NostrEvent | null, root: NostrEvent | null) => ({ id: event.id, parent: of(parent), root: of(root) });
    expect(body).toEqual({
      data: {
        events: [
          row(X, null, null),
          row(markedRoot, X, X), // marked `root` only: the parent is the root
          row(positional, X, X), // one unmarked tag: root and parent
          row(deep, markedRoot, X), // marked `root` and `reply`
          row(comment, X, X), // NIP-22: `E` root, `e` parent
          row(nestedComment, comment, X),
          row(positionalSeveral, positional, X), // several unmarked: first root, last parent
          row(quote, null, null), // a `q` tag does not thread
          row(orphan, null, null), // parent unknown (and no root)
          row(toDoomed, null, null), // its root and parent was deleted by its author
        ],
      },
    });
  });

  it('replies: oldest first, with cursors and page info; a reply of a reply is not listed; after the last, an empty page', async () => {
    const first = await page(context.server, X.id, 20, null);
    expect(first.edges.map((edge) => edge.node.id)).toEqual([markedRoot.id, positional.id, comment.id]);
    expect(first.pageInfo).toEqual({ hasNextPage: false, endCursor: first.edges[2]?.cursor });
    expect(new Set(first.edges.map((edge) => edge.cursor)).size).toBe(3);
    const after = await page(context.server, X.id, 20, first.pageInfo.endCursor);
    expect(after).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
    // Paging from an edge's cursor reads what follows that edge.
    const rest = await page(context.server, X.id, 1, first.edges[0]?.cursor ?? null);
    expect(rest.edges.map((edge) => edge.node.id)).toEqual([positional.id]);
    expect(rest.pageInfo).toEqual({ hasNextPage: true, endCursor: rest.edges[0]?.cursor });
  });

  it('replies paged 2 at a time, 25 in one second: the pages concatenate to the full list, none twice; a reply not found is skipped', async () => {
    const expected = [...SAME_SECOND].sort(byPosition).filter((event) => event.id !== HIDDEN.id).map((event) => event.id);
    const { ids, pages } = await allPages(context.server, BUSY.id, 2);
    expect(ids).toEqual(expected);
    expect(new Set(ids).size).toBe(24);
    // 25 positions, 2 a page: 13 pages, every page but the last says more follow.
    expect(pages.length).toBe(13);
    expect(pages.map((read) => read.pageInfo.hasNextPage)).toEqual([...Array.from({ length: 12 }, () => true), false]);
    // The default page is 20.
    const { body } = await graphql(context.server, `{ event(id: "${BUSY.id}") { replies { edges { node { id } } pageInfo { hasNextPage } } } }`);
    expect((body.data?.event as { replies: Page }).replies.pageInfo.hasNextPage).toBe(true);
    expect((body.data?.event as { replies: Page }).replies.edges.length).toBe(19); // 20 positions, the hidden one skipped
  });

  it.each([0, 101, -1, null])('first: %s is invalid_argument, the event null with it', async (first) => {
    const query = `query ($first: Int) { event(id: "${X.id}") { id replies(first: $first) { edges { cursor } } } }`;
    const { status, body } = await graphql(context.server, query, { first });
    expect(status).toBe(200);
    expect(body).toEqual({
      data: { event: null },
      errors: [{ message: ERRORS.invalid_argument.message, locations: [{ line: 1, column: query.indexOf('replies') + 1 }], path: ['event', 'replies'], extensions: { code: 'invalid_argument' } }],
    });
  });

  const cursor = (text: string) => Buffer.from(text, 'latin1').toString('base64url');
  const goodId = 'a'.repeat(64);
  it.each([
    ['empty', ''],
    ['not base64url', 'garbage!'],
    ['base64url of something else', cursor('hello, world')],
    ['garbage', 'garbage'],
    ['a bad id', cursor(`r1:${T}:${'Z'.repeat(64)}`)],
    ['an id in uppercase', cursor(`r1:${T}:${goodId.toUpperCase()}`)],
    ['a short id', cursor(`r1:${T}:${goodId.slice(1)}`)],
    ['another version', cursor(`r2:${T}:${goodId}`)],
    ['a created_at with leading zeros', cursor(`r1:0${T}:${goodId}`)],
    ['a created_at past 2^53', cursor(`r1:${2 ** 53}:${goodId}`)],
    ['padded', `${cursor(`r1:${T}:${goodId}`)}==`],
    ['base64 with padding of another length', `${cursor(`r1:${T}:${goodId}x`)}=`],
  ])('a cursor that is not ours (%s) is invalid_cursor', async (_label, after) => {
    const query = `query ($after: String) { event(id: "${X.id}") { replies(first: 2, after: $after) { edges { cursor } } } }`;
    const { status, body, text } = await graphql(context.server, query, { after });
    expect(status).toBe(200);
    expect(body).toEqual({
      data: { event: null },
      errors: [{ message: ERRORS.invalid_cursor.message, locations: [{ line: 1, column: query.indexOf('replies') + 1 }], path: ['event', 'replies'], extensions: { code: 'invalid_cursor' } }],
    });
    if (after.length > 4) expect(text).not.toContain(after);
  });

  it('a cursor of our own form is accepted whatever it was read from (it names a position, nothing else)', async () => {
    const read = await page(context.server, X.id, 20, cursor(`r1:${T + 11}:${'f'.repeat(64)}`));
    expect(read.edges.map((edge) => edge.node.id)).toEqual([comment.id]);
  });

  it('stats of 50 events in one request is one store call; so are the stats of a page of replies', async () => {
    context.statsCalls.length = 0;
    const ids = NOTES.map((event) => event.id);
    const { status, body } = await graphql(context.server, `{ events(ids: ${JSON.stringify(ids)}) { id stats { replies reactions { likes } } } }`);
    expect(status).toBe(200);
    expect(body).toEqual({ data: { events: ids.map((id) => ({ id, stats: { replies: 0, reactions: { likes: 0 } } })) } });
    expect(context.statsCalls).toEqual([ids]);

    context.statsCalls.length = 0;
    const nested = await graphql(context.server, `{ event(id: "${X.id}") { replies { edges { node { stats { replies } } } } } }`);
    expect(nested.body).toEqual({
      data: { event: { replies: { edges: [{ node: { stats: { replies: 1 } } }, { node: { stats: { replies: 1 } } }, { node: { stats: { replies: 1 } } }] } } },
    });
    expect(context.statsCalls).toEqual([[markedRoot.id, positional.id, comment.id]]);
  });

  it('the cost model multiplies by first: 100 ids × replies(first: 45) with stats is allowed, first: 50 is refused before anything runs', async () => {
    const ids = JSON.stringify(Array.from({ length: 100 }, (_, index) => index.toString(16).padStart(64, '0')));
    const query = `query ($first: Int) { events(ids: ${ids}) { replies(first: $first) { edges { node { stats { replies } } } pageInfo { hasNextPage } } } }`;
    // 100 × (2 + 4 + 45 × (2 + 2 + 0.1) + 0.1) = 19,060 units: under the limit.
    const allowed = await graphql(context.server, query, { first: 45 });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toEqual({ data: { events: Array.from({ length: 100 }, () => null) } });
    // 100 × (6 + 50 × 4.1 + 0.1) = 21,110: over it.
    const refused = await graphql(context.server, query, { first: 50 });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      errors: [
        {
          message:
            'The query may cost about 21110 units of work (each field by what it reads, lists multiplied through: relevantProfiles by 100, pages by their first, each searchProfiles 4000 and its first, each searchNotes 8000); the limit is 20000. Ask for fewer ids, fewer fields, smaller pages or nest less.',
          extensions: { code: 'query_too_costly' },
        },
      ],
    });
    // Left out, first is the schema's default (20): 100 × (6 + 20 × 4.1 + 0.1) = 8,810.
    const defaulted = await graphql(context.server, query.replace('query ($first: Int) ', '').replace('(first: $first)', ''));
    expect(defaulted.status).toBe(200);
    expect(defaulted.body).toEqual(allowed.body);
  });

  it('REST bodies do not change: /event is the event and its profiles, nothing of its relations', async () => {
    const { status, body } = await getJson(`${context.server.url}/event?id=${X.id}`);
    expect(status).toBe(200);
    expect(body).toEqual({ event: X, profiles: {} });
  });

  it('a page of large replies counts their bytes against the read bound: response_too_large, whatever is selected', async () => {
    const big = signed('alice', { content: 'big thread', created_at: T });
    // Five replies of 100 KB: 500 KB, over the bound of 256 KiB (MAX_RESPONSE_BYTES, never less than MAX_EVENT_BYTES).
    const large = Array.from({ length: 5 }, (_, index) => signed(`big${index}`, { tags: [['e', big.id]], content: `${index}`.repeat(100_000), created_at: T + index }));
    const { server } = await serve([big, ...large], { graphql: { maxResponseBytes: 64 * 1024 } });
    const { status, body } = await graphql(server, `{ event(id: "${big.id}") { replies(first: 5) { edges { node { id } } } } }`);
    expect(status).toBe(200);
    // Refused whole, as any answer over the bound (use-query-limits.ts): data null, the error alone.
    expect(body).toEqual({
      data: null,
      errors: [{ message: 'The events and profiles this answer reads are more than 262144 bytes (MAX_RESPONSE_BYTES). Ask for fewer ids or nest less.', extensions: { code: 'response_too_large' } }],
    });
    // Two of them fit.
    const two = await graphql(server, `{ event(id: "${big.id}") { replies(first: 2) { edges { node { id } } } } }`);
    expect(two.body).toEqual({ data: { event: { replies: { edges: [{ node: { id: large[0]?.id } }, { node: { id: large[1]?.id } }] } } } });
  }, 30_000);

  it('paging, as a property: random replies (many sharing a created_at, kinds 1 and 1111) and page sizes; the pages concatenate to the sorted set', async () => {
    let run = 0;
    const reply = fc.record({ author: fc.nat({ max: 5 }), second: fc.nat({ max: 2 }), comment: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(fc.array(reply, { maxLength: 14 }), fc.integer({ min: 1, max: 6 }), async (drafts, first) => {
        run += 1;
        const parent = signed('alice', { content: `property parent ${run}`, created_at: T });
        const replies = drafts.map(({ author, second, comment: isComment }, index) =>
          signed(`author${author}`, {
            kind: isComment ? 1111 : 1,
            tags: isComment ? [['E', parent.id], ['e', parent.id]] : [['e', parent.id, '', 'reply']],
            content: `run ${run} reply ${index}`,
            created_at: T + second,
          }),
        );
        // Replies before their parent, in the order drawn.
        await context.store.putEvents([...replies, parent]);
        const { ids, pages } = await allPages(context.server, parent.id, first);
        expect(ids).toEqual([...replies].sort(byPosition).map((event) => event.id));
        expect(pages.length).toBe(Math.max(1, Math.ceil(replies.length / first)));
        for (const read of pages.slice(0, -1)) expect(read.edges.length).toBe(first);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 25), seed: Number(process.env.FUZZ_SEED ?? 26) },
    );
  }, 120_000);
});

describe('the "Threads and reactions" examples of docs/relationships.md, over sample/events.jsonl', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-threads-'));
  const store = new LmdbEventStore(dir);
  let server: TestServer;
  beforeAll(async () => {
    await importEvents(createReadStream(new URL('../sample/events.jsonl', import.meta.url)), store);
    server = await startTestServer(store);
  }, 60_000);
  afterAll(async () => {
    await server.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers each request of the section exactly as the docs show', async () => {
    const readme = readFileSync(new URL('../docs/relationships.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Threads and reactions'), readme.indexOf('## Follows'));
    const lines = section.split('\n');
    const examples = lines.flatMap((line, index) => {
      const body = /^\$ curl -s -X POST http:\/\/127\.0\.0\.1:8080\/graphql -H 'content-type: application\/json' -d '(.*)'$/.exec(line)?.[1];
      return body === undefined ? [] : [{ body, answer: lines[index + 1] }];
    });
    expect(examples.length).toBe(3);
    for (const { body, answer } of examples) {
      const response = await getJson(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(response.status).toBe(200);
      expect(response.text).toBe(answer);
    }
  });
});
