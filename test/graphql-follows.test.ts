import fc from 'fast-check';
import { nip19 } from 'nostr-tools';
import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { pubkeyOf, signed } from './support/events.js';
import { collectPages, postGraphql, type TestServer, useTestServer } from './support/test-server.js';

/**
 * Follows over GraphQL: counts, followers by pubkey and following in the list's
 * order, paged, on the real app and a real store; pubkeys without a profile have `profile: null`.
 */

const T = 1_700_000_000;
const profile = (name: string) => signed(name, { kind: 0, created_at: T, content: JSON.stringify({ name }) });
const list = (name: string, follows: string[], at = T) => signed(name, { kind: 3, created_at: at, tags: follows.map((pubkey) => ['p', pubkey]), content: '' });

const fans = Array.from({ length: 23 }, (_, index) => `fan ${index}`);
const followed = Array.from({ length: 30 }, (_, index) => pubkeyOf(`followed ${index}`));
const seed: NostrEvent[] = [
  profile('star'),
  profile('fan 0'),
  // star follows 30 pubkeys (none has a profile) and itself.
  list('star', [...followed, pubkeyOf('star')]),
  // 23 fans follow star; fan 0 follows it twice in one list.
  ...fans.map((fan, index) => list(fan, index === 0 ? [pubkeyOf('star'), pubkeyOf('star')] : [pubkeyOf('star')])),
  // `followed 0` has no profile: it follows star and fan 0 (and is followed by star), and wrote two notes.
  list('followed 0', [pubkeyOf('star'), pubkeyOf('fan 0')]),
  signed('followed 0', { kind: 1, created_at: T + 1, content: 'first' }),
  signed('followed 0', { kind: 1, created_at: T + 2, content: 'second' }),
];

interface Connection {
  edges: { cursor: string; pubkey: string; profile: { name: string | null } | null }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  totalCount: number;
}

const graphql = postGraphql;

const PAGE = (field: 'followers' | 'following') =>
  `query ($pubkey: String!, $first: Int, $after: String) { profile(pubkey: $pubkey) { ${field}(first: $first, after: $after) { edges { cursor pubkey profile { name } } pageInfo { hasNextPage endCursor } totalCount } } }`;

async function page(server: TestServer, field: 'followers' | 'following', first: number, after: string | null): Promise<Connection> {
  const response = await graphql(server, PAGE(field), { pubkey: pubkeyOf('star'), first, after });
  expect(response.status, response.text).toBe(200);
  return (response.body.data?.profile as Record<string, Connection>)[field] as Connection;
}

async function all(server: TestServer, field: 'followers' | 'following', first: number): Promise<Connection['edges']> {
  return (await collectPages((after) => page(server, field, first, after))).flatMap((connection) => connection.edges);
}

describe('follows over GraphQL', () => {
  const context = useTestServer(seed);

  it('counts: followers and following, from the index', async () => {
    const response = await graphql(context.server, '{ profile(pubkey: "' + pubkeyOf('star') + '") { followersCount followingCount } fan: profile(pubkey: "' + pubkeyOf('fan 0') + '") { followersCount followingCount } }');
    expect(response.body).toEqual({ data: { profile: { followersCount: 25, followingCount: 31 }, fan: { followersCount: 1, followingCount: 1 } } });
  });

  it('followers by pubkey ascending, each once across pages of any size, with their profiles where known (star follows itself)', async () => {
    const expected = [...fans.map(pubkeyOf), pubkeyOf('star'), pubkeyOf('followed 0')].sort();
    for (const first of [1, 5, 24, 100]) {
      const edges = await all(context.server, 'followers', first);
      expect(edges.map((edge) => edge.pubkey), `first ${first}`).toEqual(expected);
    }
    const edges = await all(context.server, 'followers', 50);
    expect(edges.find((edge) => edge.pubkey === pubkeyOf('fan 0'))?.profile).toEqual({ name: 'fan 0' });
    expect(edges.find((edge) => edge.pubkey === pubkeyOf('fan 1'))?.profile).toBeNull();
    expect((await page(context.server, 'followers', 10, null)).totalCount).toBe(25);
  });

  it('following in the order the list names them, each once across pages (property: any page size)', async () => {
    const expected = [...followed, pubkeyOf('star')];
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 40 }), async (first) => {
        const edges = await all(context.server, 'following', first);
        expect(edges.map((edge) => edge.pubkey)).toEqual(expected);
      }),
      { numRuns: 8, seed: 28 },
    );
    const first = await page(context.server, 'following', 3, null);
    expect(first.totalCount).toBe(31);
    expect(first.edges.map((edge) => edge.profile)).toEqual([null, null, null]);
  });

  it('a list replaced between pages: the next page goes on after the last pubkey seen, never repeating one', async () => {
    const first = await page(context.server, 'following', 5, null);
    // The list loses its first two pubkeys: positions move, the cursor's pubkey is still there.
    await context.store.store.putEvents([list('star', [...followed.slice(2), pubkeyOf('star')], T + 10)]);
    const second = await page(context.server, 'following', 5, first.pageInfo.endCursor);
    expect(second.edges.map((edge) => edge.pubkey)).toEqual(followed.slice(5, 10));
    expect(second.totalCount).toBe(29);
    // Put back for the other tests.
    await context.store.store.putEvents([list('star', [...followed, pubkeyOf('star')], T + 20)]);
  });

  it('`first` outside 1–100 is invalid_argument; a cursor not ours (or of the other list) is invalid_cursor', async () => {
    for (const field of ['followers', 'following'] as const) {
      for (const first of [0, 101, -1]) {
        const response = await graphql(context.server, PAGE(field), { pubkey: pubkeyOf('star'), first });
        expect(response.body.errors?.[0]?.extensions?.code, `${field} ${first}`).toBe('invalid_argument');
      }
      const other = (await page(context.server, field === 'followers' ? 'following' : 'followers', 1, null)).pageInfo.endCursor;
      for (const after of ['', 'nope', 'cjE6MTo' + 'a'.repeat(20), other]) {
        const response = await graphql(context.server, PAGE(field), { pubkey: pubkeyOf('star'), first: 2, after });
        expect(response.body.errors?.[0]?.extensions?.code, `${field} ${after}`).toBe('invalid_cursor');
      }
    }
  });

  it('a pubkey without a profile: `pubkey(pubkey:)` reads its follows, followers and notes; `profile` is null there', async () => {
    const query = `query ($pubkey: String!) { pubkey(pubkey: $pubkey) { pubkey profile { name } followersCount followingCount following(first: 5) { edges { pubkey profile { name } } totalCount } followers { edges { pubkey } totalCount } notes(first: 5) { edges { node { content } } } } profile(pubkey: $pubkey) { name } }`;
    const quiet = pubkeyOf('followed 0');
    for (const named of [quiet, nip19.npubEncode(quiet), `nostr:${nip19.nprofileEncode({ pubkey: quiet, relays: [] })}`]) {
      const response = await graphql(context.server, query, { pubkey: named });
      expect(response.status, named).toBe(200);
      expect(response.body, named).toEqual({
        data: {
          pubkey: {
            pubkey: quiet,
            profile: null,
            followersCount: 1,
            followingCount: 2,
            following: { edges: [{ pubkey: pubkeyOf('star'), profile: { name: 'star' } }, { pubkey: pubkeyOf('fan 0'), profile: { name: 'fan 0' } }], totalCount: 2 },
            followers: { edges: [{ pubkey: pubkeyOf('star') }], totalCount: 1 },
            notes: { edges: [{ node: { content: 'second' } }, { node: { content: 'first' } }] },
          },
          profile: null,
        },
      });
    }
    // With a profile, `pubkey { profile }` is that profile; a pubkey nobody mentions answers zeros.
    const star = await graphql(context.server, query, { pubkey: pubkeyOf('star') });
    expect((star.body.data?.pubkey as { profile: unknown; followersCount: number }).profile).toEqual({ name: 'star' });
    const nobody = await graphql(context.server, '{ pubkey(pubkey: "' + pubkeyOf('nobody') + '") { profile { name } followersCount followingCount following { totalCount } } }');
    expect(nobody.body).toEqual({ data: { pubkey: { profile: null, followersCount: 0, followingCount: 0, following: { totalCount: 0 } } } });
  });

  it('`pubkey(pubkey:)` with anything but a pubkey: null with an error code, its siblings answered', async () => {
    const star = pubkeyOf('star');
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 80 }), fc.constantFrom('', 'npub1nope', 'f'.repeat(63), 'g'.repeat(64), `nsec1${'q'.repeat(58)}`, `${star}0`)), async (hostile) => {
        const response = await graphql(context.server, 'query ($p: String!) { pubkey(pubkey: $p) { pubkey followersCount } star: pubkey(pubkey: "' + star + '") { pubkey } }', { p: hostile });
        expect(response.status).toBe(200);
        expect(response.body.data).toEqual({ pubkey: null, star: { pubkey: star } });
        expect(response.body.errors?.map((error) => error.path)).toEqual([['pubkey']]);
        expect(response.body.errors?.[0]?.extensions?.code).toMatch(/^(invalid_pubkey|secret_key_refused|nip05_unresolvable|nip05_not_found)$/);
      }),
      { numRuns: 40, seed: 28 },
    );
    // A secret key: refused by name, as a variable (the field) and as a literal (the whole document, 400).
    const nsec = nip19.nsecEncode(new Uint8Array(32).fill(7));
    for (const named of [nsec, `nostr:${nsec}`, nsec.toUpperCase()]) {
      const variable = await graphql(context.server, 'query ($p: String!) { pubkey(pubkey: $p) { pubkey } }', { p: named });
      expect(variable.status, named).toBe(200);
      expect(variable.body.data, named).toEqual({ pubkey: null });
      expect(variable.body.errors?.[0]?.extensions?.code, named).toBe('secret_key_refused');
    }
    const literal = await graphql(context.server, `{ pubkey(pubkey: "${nsec}") { pubkey } }`);
    expect(literal.status).toBe(400);
    expect(literal.body.data ?? null).toBeNull();
    expect(literal.body.errors?.[0]?.extensions?.code).toBe('secret_key_refused');
    expect(literal.text).not.toContain(nsec);
  });

  it('the cost model multiplies a page by `first`: followers of 100 followers, 100 each, are over 20,000 units and refused before they run', async () => {
    const star = pubkeyOf('star');
    const nested = (inner: number) => `profile(pubkey: "${star}") { followers(first: 100) { edges { profile { followers(first: ${inner}) { edges { profile { name } } } } } } }`;
    // 1 + 4 + 100 + 100 × (2 + 4 + 50 × (1 + 2 + 0.1)) = 16,205 units: allowed.
    expect((await graphql(context.server, `{ ${nested(50)} }`)).status).toBe(200);
    // With 100 inside: 31,705.
    const refused = await graphql(context.server, `{ ${nested(100)} }`);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('query_too_costly');
    expect(refused.body.data ?? null).toBeNull();
  });

  it('from an event whose author has no profile, Event.authorPubkey leads to the author: follows, notes, and a null profile', async () => {
    const [first] = seed.filter((event) => event.content === 'first');
    const response = await graphql(
      context.server,
      `{ event(id: "${first?.id}") { author { name } authorPubkey { pubkey profile { name } followingCount followersCount notes(first: 5) { edges { node { content } } } } } }`,
    );
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: {
        event: {
          author: null,
          authorPubkey: {
            pubkey: pubkeyOf('followed 0'),
            profile: null,
            followingCount: 2,
            followersCount: 1,
            notes: { edges: [{ node: { content: 'second' } }, { node: { content: 'first' } }] },
          },
        },
      },
    });
  });
});
