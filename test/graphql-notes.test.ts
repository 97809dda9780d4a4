import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { encodeCursor } from '../src/schema/paging.js';
import { deletion } from './support/deletion-conformance.js';
import { pubkeyOf, signed } from './support/events.js';
import { type LoopbackRelay, startLoopbackRelay } from './support/loopback-relay.js';
import { createTestStore, type TestStore } from './support/test-store.js';
import { collectPages, postGraphql, startTestServer, type TestServer, useTestServer } from './support/test-server.js';

/**
 * What someone wrote over GraphQL (`Profile.notes`): newest first, then by id, across
 * the kinds asked, paged with every event exactly once, on the real app and a real store.
 */

const T = 1_700_000_000;
const profile = (name: string) => signed(name, { kind: 0, created_at: T, content: JSON.stringify({ name }) });
const note = (content: string, at: number, kind = 1) => signed('writer', { kind, created_at: at, content, tags: kind === 30023 ? [['d', content]] : [] });

// 30 notes, ten per created_at (ties broken by id), a reaction, two articles; someone else's note.
const notes = Array.from({ length: 30 }, (_, index) => note(`note ${index}`, T + 100 - Math.floor(index / 10)));
const reaction = signed('writer', { kind: 7, created_at: T + 200, tags: [['e', (notes[0] as NostrEvent).id]], content: '+' });
const articles = [note('first article', T + 50, 30023), note('second article', T + 150, 30023)];
const seed: NostrEvent[] = [profile('writer'), profile('reader'), ...notes, reaction, ...articles, signed('reader', { created_at: T + 300, content: 'mine' })];

const newestFirst = (events: NostrEvent[]) => [...events].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1)).map((event) => event.id);

const graphql = postGraphql;

const PAGE = `query ($pubkey: String!, $kinds: [Int!], $first: Int, $after: String) {
  profile(pubkey: $pubkey) { notes(kinds: $kinds, first: $first, after: $after) { edges { cursor node { id kind createdAt } } pageInfo { hasNextPage endCursor } } }
}`;

interface Connection {
  edges: { cursor: string; node: { id: string; kind: number; createdAt: number } }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

async function page(server: TestServer, variables: Record<string, unknown>): Promise<Connection> {
  const response = await graphql(server, PAGE, { pubkey: pubkeyOf('writer'), ...variables });
  expect(response.status, response.text).toBe(200);
  expect(response.body.errors, response.text).toBeUndefined();
  return (response.body.data?.profile as { notes: Connection }).notes;
}

async function all(server: TestServer, kinds: number[] | undefined, first: number): Promise<string[]> {
  const pages = await collectPages((after) => page(server, { ...(kinds ? { kinds } : {}), first, after }));
  return pages.flatMap((connection) => connection.edges.map((edge) => edge.node.id));
}

describe('notes over GraphQL', () => {
  const context = useTestServer(seed);

  it('kind 1 by default, newest first then by id, 20 a page', async () => {
    const first = await page(context.server, {});
    expect(first.edges.map((edge) => edge.node.id)).toEqual(newestFirst(notes).slice(0, 20));
    expect(first.edges.every((edge) => edge.node.kind === 1)).toBe(true);
    expect(first.pageInfo).toEqual({ hasNextPage: true, endCursor: first.edges[19]?.cursor });
  });

  it('every event exactly once across pages of any size, across kinds; an addressable kind its latest versions (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 40 }), fc.subarray([1, 7, 30023], { minLength: 1 }), async (first, kinds) => {
        const expected = newestFirst([...notes, reaction, ...articles].filter((event) => kinds.includes(event.kind)));
        expect(await all(context.server, kinds, first)).toEqual(expected);
      }),
      { numRuns: 12, seed: 28 },
    );
  });

  it('a note deleted between pages: the next page goes on after the cursor, the deleted one gone, none repeated', async () => {
    const first = await page(context.server, { first: 5 });
    const doomed = newestFirst(notes)[6] as string;
    await context.store.store.putEvents([deletion('writer', { ids: [doomed], at: T + 400 })]);
    const second = await page(context.server, { first: 5, after: first.pageInfo.endCursor });
    expect(second.edges.map((edge) => edge.node.id)).toEqual(newestFirst(notes).slice(5, 11).filter((id) => id !== doomed));
  });

  it('hostile arguments: kinds empty, more than 20, out of 0–65535, replaceable, ephemeral or zap receipts and `first` outside 1–100 are invalid_argument; a cursor not ours (a reply cursor too) is invalid_cursor', async () => {
    const twentyOne = Array.from({ length: 21 }, (_, index) => 40_000 + index);
    for (const variables of [{ kinds: [] }, { kinds: twentyOne }, { kinds: [-1] }, { kinds: [65_536] }, { kinds: null }, { kinds: [1, 0] }, { kinds: [3] }, { kinds: [10_002] }, { kinds: [20_001] }, { kinds: [9735] }, { first: 0 }, { first: 101 }]) {
      const response = await graphql(context.server, PAGE, { pubkey: pubkeyOf('writer'), ...variables });
      expect(response.body.errors?.[0]?.extensions?.code, JSON.stringify(variables)).toBe('invalid_argument');
      expect(response.body.data?.profile ?? null).toBeNull();
    }
    // Twenty kinds, repeated ones counted once, are fine.
    const twenty = [1, 7, 30023, ...Array.from({ length: 17 }, (_, index) => 40_000 + index)];
    expect((await page(context.server, { kinds: [...twenty, 1, 1] })).edges).toHaveLength(20);
    const replyCursor = encodeCursor({ createdAt: T + 100, id: (notes[0] as NostrEvent).id }, 'replies');
    for (const after of ['', 'nope', replyCursor, `${encodeCursor({ createdAt: T, id: 'a'.repeat(64) }, 'notes')}=`]) {
      const response = await graphql(context.server, PAGE, { pubkey: pubkeyOf('writer'), after });
      expect(response.body.errors?.[0]?.extensions?.code, after).toBe('invalid_cursor');
    }
  });

  it('another author has their own list; a pubkey without notes an empty page', async () => {
    const response = await graphql(context.server, PAGE, { pubkey: pubkeyOf('reader') });
    expect((response.body.data?.profile as { notes: Connection }).notes.edges).toHaveLength(1);
    const none = await graphql(context.server, PAGE, { pubkey: pubkeyOf('reader'), kinds: [30023] });
    expect(none.body).toEqual({ data: { profile: { notes: { edges: [], pageInfo: { hasNextPage: false, endCursor: null } } } } });
  });

  it('the cost model multiplies a page by `first`: notes of followers, 50 each, twice, is refused before it runs', async () => {
    // 1 + 4 + 100 + 100 × (2 + 8 + 50 × (2 + 0.1)) = 11,605 units; twice, 23,210.
    const nested = `profile(pubkey: "${pubkeyOf('writer')}") { followers(first: 100) { edges { profile { notes(first: 50) { edges { node { id } } } } } } }`;
    expect((await graphql(context.server, `{ ${nested} }`)).status).toBe(200);
    const refused = await graphql(context.server, `{ a: ${nested} b: ${nested} }`);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('query_too_costly');
  });
});

describe('notes over GraphQL with relays', () => {
  // The index holds the writer's ten newest notes (more than the first page); the relay holds all thirty.
  const context = {} as { relay: LoopbackRelay; store: TestStore; server: TestServer };
  beforeAll(async () => {
    context.relay = await startLoopbackRelay({ events: [profile('writer'), ...notes] });
    context.store = await createTestStore();
    await context.store.store.putEvents([profile('writer'), ...newestFirstEvents(notes).slice(0, 10)]);
    context.server = await startTestServer(context.store.store, { relays: { urls: [context.relay.url], outbox: { enabled: false, relaysPerPubkey: 3, maxRelays: 8 } } });
  });
  afterAll(async () => {
    await context.server?.close();
    await context.store?.cleanup();
    await context.relay?.stop();
  });

  it('a first page asks the relays ({"authors","kinds"}) even when the index fills it, once per RELATIONS_TTL; later pages page through what they brought', async () => {
    const first = await page(context.server, { first: 5 });
    expect(first.edges.map((edge) => edge.node.id)).toEqual(newestFirst(notes).slice(0, 5));
    const asked = context.relay.requests.filter((filters) => filters.some((filter) => filter.authors !== undefined && filter.kinds?.includes(1)));
    expect(asked[0]).toEqual([{ authors: [pubkeyOf('writer')], kinds: [1], limit: 500 }]);
    // The rest pages from the index now: every note exactly once.
    expect(await all(context.server, undefined, 7)).toEqual(newestFirst(notes));
    const before = context.relay.requests.length;
    await page(context.server, { first: 5 });
    expect(context.relay.requests).toHaveLength(before);
  });
});

function newestFirstEvents(events: NostrEvent[]): NostrEvent[] {
  return [...events].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1));
}
