import { nsecEncode, npubEncode } from 'nostr-tools/nip19';
import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { profile, pubkeyOf, secretKey, signed } from './support/events.js';
import { getJson, postGraphql, startTestServer, useTestServer } from './support/test-server.js';
import { createTestStore } from './support/test-store.js';

// GET /search: a search screen in one request, by the REST routes' one mechanism (a fixed
// operation, src/http/operations/search.graphql), checked against Query.searchNotes over GraphQL.

const T0 = 1_700_000_000;
const authors = ['rs-alice', 'rs-bob'];
// 30 notes that say "lightning", ten of them in one second, each naming someone; others that do not.
const notes = Array.from({ length: 30 }, (_, n) => signed(authors[n % 2] as string, { created_at: T0 + 100 + Math.max(0, n - 10), content: `Lightning ${n} nostr:${npubEncode(pubkeyOf('rs-named'))}`, tags: [['p', pubkeyOf('rs-named')]] }));
const other = signed('rs-alice', { created_at: T0 + 500, content: 'nothing about it' });
const article = signed('rs-bob', { kind: 30023, created_at: T0 + 50, content: 'an essay', tags: [['d', 'essay'], ['title', 'On Lightning']] });
const profiles = ['rs-alice', 'rs-bob', 'rs-named'].map((name) => profile(name, { name }));

const context = useTestServer([...notes, other, article, ...profiles]);
const get = (query: string, init?: RequestInit) => getJson(`${context.server.url}/search${query}`, init);
const newestFirst = (a: NostrEvent, b: NostrEvent) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1);

interface Page {
  events: NostrEvent[];
  profiles: Record<string, NostrEvent>;
  next: string | null;
}

describe('GET /search', () => {
  it('200: the matching notes and articles newest first with their people\'s profiles; `next` pages to the end as GraphQL does', async () => {
    const response = await get('?q=lightn');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = response.body as Page;
    expect(Object.keys(body)).toEqual(['events', 'profiles', 'next']);
    const expected = [...notes, article].sort(newestFirst);
    expect(body.events).toEqual(expected.slice(0, 20));
    expect(Object.keys(body.profiles).sort()).toEqual(['rs-alice', 'rs-bob', 'rs-named'].map((name) => pubkeyOf(name)).sort());
    const graphql = await postGraphql(context.server, '{ searchNotes(query: "lightn") { edges { node { id } } pageInfo { hasNextPage endCursor } } }');
    const page = graphql.body.data?.searchNotes as { edges: { node: { id: string } }[]; pageInfo: { endCursor: string } };
    expect(body.events.map((event) => event.id)).toEqual(page.edges.map((edge) => edge.node.id));
    expect(body.next).toBe(page.pageInfo.endCursor);
    const rest = (await get(`?q=lightn&limit=40&after=${encodeURIComponent(body.next as string)}`)).body as Page;
    expect([...body.events, ...rest.events]).toEqual(expected);
    expect(rest.next).toBeNull();
  });

  it('kinds, authors, since and until narrow it; nothing found is an empty page; ETag 304 while nothing changed', async () => {
    expect(((await get('?q=lightning&kinds=30023')).body as Page).events).toEqual([article]);
    const bobs = ((await get(`?q=lightning&kinds=1&authors=${npubEncode(pubkeyOf('rs-bob'))}&limit=40`)).body as Page).events;
    expect(bobs).toEqual(notes.filter((note) => note.pubkey === pubkeyOf('rs-bob')).sort(newestFirst));
    const late = ((await get(`?q=lightning&since=${T0 + 110}&until=${T0 + 115}&limit=40`)).body as Page).events;
    expect(late).toEqual(notes.filter((note) => note.created_at >= T0 + 110 && note.created_at <= T0 + 115).sort(newestFirst));
    const none = await get('?q=zebracorn');
    expect([none.status, none.body]).toEqual([200, { events: [], profiles: {}, next: null }]);
    const one = await get('?q=lightning&limit=2');
    const again = await get('?q=lightning&limit=2', { headers: { 'if-none-match': one.headers.get('etag') as string } });
    expect(again.status).toBe(304);
  });

  it('hostile parameters: the exact error for each, never a 500, nothing echoed', async () => {
    const nsec = nsecEncode(secretKey('rs-alice'));
    const cases: [string, number, string][] = [
      ['', 400, 'missing_parameter'],
      ['?q=a&q=b', 400, 'repeated_parameter'],
      [`?q=${'x'.repeat(65)}`, 400, 'invalid_search'],
      [`?q=${nsec}`, 400, 'secret_key_refused'],
      ...['0', '41', '1.5', 'x'].map((limit): [string, number, string] => [`?q=lightning&limit=${limit}`, 400, 'invalid_argument']),
      ...['7', '1,x', ',', '1,1,1,1,1'].map((kinds): [string, number, string] => [`?q=lightning&kinds=${kinds}`, 400, 'invalid_argument']),
      ['?q=lightning&authors=npub1nope', 400, 'invalid_pubkey'],
      [`?q=lightning&authors=${Array.from({ length: 21 }, (_, n) => pubkeyOf(`rs-${n}`)).join(',')}`, 400, 'invalid_argument'],
      ['?q=lightning&since=yesterday', 400, 'invalid_argument'],
      ['?q=lightning&until=-1', 400, 'invalid_argument'],
      ['?q=lightning&viewer=npub1nope', 400, 'invalid_pubkey'],
      ['?q=lightning&after=garbage', 400, 'invalid_cursor'],
    ];
    for (const [query, status, code] of cases) {
      const response = await get(query);
      expect([query, response.status, (response.body as { error: { code: string } }).error?.code]).toEqual([query, status, code]);
      expect(response.text).not.toContain(nsec);
    }
  });

  it('501 note_search_off where the operator did not turn it on', async () => {
    const store = await createTestStore(undefined, { noteSearch: false });
    const server = await startTestServer(store.store);
    try {
      const response = await getJson(`${server.url}/search?q=lightning`);
      expect([response.status, (response.body as { error: { code: string } }).error.code]).toEqual([501, 'note_search_off']);
    } finally {
      await server.close();
      await store.cleanup();
    }
  });
});
