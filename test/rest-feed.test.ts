import { nsecEncode } from 'nostr-tools/nip19';
import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { profile, pubkeyOf, secretKey, signed } from './support/events.js';
import { getJson, postGraphql, useTestServer } from './support/test-server.js';

// GET /feed: a home screen in one request, by the REST routes' one mechanism (a fixed operation,
// src/http/operations/feed.graphql), checked against Pubkey.feed over GraphQL and the rules.

const T0 = 1_700_000_000;
const reader = 'fd-reader';
const authors = ['fd-alice', 'fd-bob', 'fd-carol'];
const follows = signed(reader, { kind: 3, created_at: T0, tags: [...authors, 'fd-muted'].map((name) => ['p', pubkeyOf(name)]) });
const mutes = signed(reader, { kind: 10000, created_at: T0, tags: [['p', pubkeyOf('fd-muted')]] });
// 30 notes, ten of them in one second; a reply (not in a feed by default); a muted author's note;
// a stranger's note (not followed).
const notes = Array.from({ length: 30 }, (_, n) => signed(authors[n % 3] as string, { created_at: T0 + 100 + Math.max(0, n - 10), content: `note ${n} nostr:${'npub1'}`, tags: [['p', pubkeyOf('fd-named')]] }));
const reply = signed('fd-alice', { created_at: T0 + 500, content: 'a reply', tags: [['e', (notes[0] as NostrEvent).id, '', 'root']] });
const muted = signed('fd-muted', { created_at: T0 + 600, content: 'muted' });
const stranger = signed('fd-stranger', { created_at: T0 + 700, content: 'not followed' });
const profiles = ['fd-alice', 'fd-bob', 'fd-named'].map((name) => profile(name, { name }));

const context = useTestServer([follows, mutes, ...notes, reply, muted, stranger, ...profiles]);
const get = (query: string, init?: RequestInit) => getJson(`${context.server.url}/feed${query}`, init);
const newestFirst = (a: NostrEvent, b: NostrEvent) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1);

interface Feed {
  events: NostrEvent[];
  profiles: Record<string, NostrEvent>;
  next: string | null;
}

describe('GET /feed', () => {
  it('200: the followed authors\' notes newest first, no reply, nothing muted or unfollowed, the shown authors\' and named profiles; `next` pages to the end as GraphQL does', async () => {
    const response = await get(`?pubkey=${pubkeyOf(reader)}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = response.body as Feed;
    expect(Object.keys(body)).toEqual(['events', 'profiles', 'next']);
    const expected = [...notes].sort(newestFirst);
    expect(body.events).toEqual(expected.slice(0, 20));
    expect(Object.keys(body.profiles).sort()).toEqual(['fd-alice', 'fd-bob', 'fd-named'].map((name) => pubkeyOf(name)).sort());
    const graphql = await postGraphql(context.server, `{ pubkey(pubkey: "${pubkeyOf(reader)}") { feed { edges { node { id } } pageInfo { hasNextPage endCursor } } } }`);
    const feed = (graphql.body.data?.pubkey as { feed: { edges: { node: { id: string } }[]; pageInfo: { endCursor: string } } }).feed;
    expect(body.events.map((event) => event.id)).toEqual(feed.edges.map((edge) => edge.node.id));
    expect(body.next).toBe(feed.pageInfo.endCursor);
    const rest = (await get(`?pubkey=${pubkeyOf(reader)}&limit=50&after=${encodeURIComponent(body.next as string)}`)).body as Feed;
    expect([...body.events, ...rest.events]).toEqual(expected);
    expect(rest.next).toBeNull();
  });

  it('a pubkey without a follow list has an empty feed; ETag 304 while nothing changed', async () => {
    const empty = await get(`?pubkey=${pubkeyOf('fd-nobody')}`);
    expect([empty.status, empty.body]).toEqual([200, { events: [], profiles: {}, next: null }]);
    const one = await get(`?pubkey=${pubkeyOf(reader)}&limit=2`);
    const again = await get(`?pubkey=${pubkeyOf(reader)}&limit=2`, { headers: { 'if-none-match': one.headers.get('etag') as string } });
    expect(again.status).toBe(304);
  });

  it('hostile parameters: the exact error for each, never a 500, nothing echoed', async () => {
    const nsec = nsecEncode(secretKey(reader));
    const cases: [string, number, string][] = [
      ['', 400, 'missing_parameter'],
      [`?pubkey=${pubkeyOf(reader)}&pubkey=${pubkeyOf(reader)}`, 400, 'repeated_parameter'],
      ['?pubkey=npub1nope', 400, 'invalid_pubkey'],
      [`?pubkey=${nsec}`, 400, 'secret_key_refused'],
      ...['0', '51', '1.5', 'x'].map((limit): [string, number, string] => [`?pubkey=${pubkeyOf(reader)}&limit=${limit}`, 400, 'invalid_argument']),
      [`?pubkey=${pubkeyOf(reader)}&after=garbage`, 400, 'invalid_cursor'],
    ];
    for (const [query, status, code] of cases) {
      const response = await get(query);
      expect([query, response.status, (response.body as { error: { code: string } }).error.code]).toEqual([query, status, code]);
      expect(response.text).not.toContain(nsec);
    }
  });
});
