import fc from 'fast-check';
import { nip19 } from 'nostr-tools';
import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { postGraphql, useTestServer } from './support/test-server.js';

/**
 * searchProfiles over GraphQL: the ranking by followers on the real app and a real
 * store, the errors of the table for a query or `first` out of range, hostile queries, and the cost.
 */

const T = 1_700_000_000;
const list = (name: string, follows: string[]) => signed(name, { kind: 3, created_at: T, tags: follows.map((followed) => ['p', pubkeyOf(followed)]), content: '' });

// 30 "satoshi" profiles; satoshi 7 has 3 followers, satoshi 12 two, satoshi 20 one.
const seed: NostrEvent[] = [
  ...Array.from({ length: 30 }, (_, index) => profile(`satoshi ${index}`, { name: `Satoshi ${index}`, nip05: `sat${index}@nakamoto.example` })),
  profile('jack', { name: 'jack', display_name: 'Jack 🤙', nip05: 'jack@cash.app' }),
  list('fan a', ['satoshi 7', 'satoshi 12', 'satoshi 20']),
  list('fan b', ['satoshi 7', 'satoshi 12']),
  list('fan c', ['satoshi 7']),
];

const SEARCH = 'query ($query: String!, $first: Int) { searchProfiles(query: $query, first: $first) { pubkey name followersCount } }';

describe('searchProfiles over GraphQL', () => {
  const context = useTestServer(seed);
  const search = async (query: string, first?: number) => postGraphql(context.server, SEARCH, first === undefined ? { query } : { query, first });

  it('ranks by followersCount, then pubkey; `first` defaults to 20', async () => {
    const response = await search('sat');
    expect(response.status).toBe(200);
    const found = response.body.data?.searchProfiles as { pubkey: string; name: string; followersCount: number }[];
    expect(found).toHaveLength(20);
    expect(found.slice(0, 3)).toEqual([
      { pubkey: pubkeyOf('satoshi 7'), name: 'Satoshi 7', followersCount: 3 },
      { pubkey: pubkeyOf('satoshi 12'), name: 'Satoshi 12', followersCount: 2 },
      { pubkey: pubkeyOf('satoshi 20'), name: 'Satoshi 20', followersCount: 1 },
    ]);
    const rest = Array.from({ length: 30 }, (_, index) => index)
      .filter((index) => ![7, 12, 20].includes(index))
      .map((index) => pubkeyOf(`satoshi ${index}`))
      .sort();
    expect(found.slice(3).map((entry) => entry.pubkey)).toEqual(rest.slice(0, 17));
    expect((await search('sat', 100)).body.data?.searchProfiles).toHaveLength(30);
    expect((await search('satoshi 2', 100)).body.data?.searchProfiles).toHaveLength(11); // 2, 20–29
    expect((await search('jack@cash.app')).body).toEqual({ data: { searchProfiles: [{ pubkey: pubkeyOf('jack'), name: 'jack', followersCount: 0 }] } });
  });

  it('a query of only emoji or punctuation finds nothing; one of 1–64 characters is fine, else invalid_search; `first` outside 1–100 is invalid_argument', async () => {
    for (const query of ['🤙', '@', '  ', '-'.repeat(64), '🤙'.repeat(64)]) {
      expect((await search(query)).body, query).toEqual({ data: { searchProfiles: [] } });
    }
    for (const query of ['', 'a'.repeat(65), '🤙'.repeat(65)]) {
      const response = await search(query);
      expect(response.status, query).toBe(200);
      expect(response.body.data ?? null).toBeNull();
      expect(response.body.errors?.[0]?.extensions?.code, query).toBe('invalid_search');
      expect(response.body.errors?.[0]?.message).toContain('1 to 64 characters');
    }
    for (const first of [0, 101, -1]) expect((await search('sat', first)).body.errors?.[0]?.extensions?.code).toBe('invalid_argument');
  });

  it('a secret key as the query (in a variable, alone or among words, in any case) is secret_key_refused, never searched for and never echoed', async () => {
    const nsec = nip19.nsecEncode(new Uint8Array(32).fill(7));
    for (const query of [nsec, `jack ${nsec}`, nsec.toUpperCase(), `${'a'.repeat(60)} ${nsec}`]) {
      const response = await search(query);
      expect(response.status, query).toBe(200);
      expect(response.body.data ?? null).toBeNull();
      expect(response.body.errors?.[0]?.extensions?.code).toBe('secret_key_refused');
      expect(response.text.toLowerCase()).not.toContain(nsec.toLowerCase());
    }
  });

  it('any query string gets an answer or invalid_search, never an error of its own (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 80 }), async (query) => {
        const response = await search(query);
        expect(response.status).toBe(200);
        if (response.body.errors) expect(response.body.errors[0]?.extensions?.code).toBe('invalid_search');
        else expect(Array.isArray(response.body.data?.searchProfiles)).toBe(true);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 40), seed: Number(process.env.FUZZ_SEED ?? 28) },
    );
  });

  it('a search costs what it may read (4,000): four in one request are allowed, five (aliases, even of one query) are refused before any runs', async () => {
    const aliases = (count: number) => `{ ${Array.from({ length: count }, (_, index) => `s${index}: searchProfiles(query: "sat", first: 1) { pubkey }`).join(' ')} }`;
    const four = await postGraphql(context.server, aliases(4));
    expect(four.status).toBe(200);
    expect(Object.values(four.body.data ?? {})).toEqual(Array.from({ length: 4 }, () => [{ pubkey: pubkeyOf('satoshi 7') }]));
    const five = await postGraphql(context.server, aliases(5));
    expect(five.body.errors?.[0]?.extensions?.code).toBe('query_too_costly');
    expect(five.body.data ?? null).toBeNull();
  });

  it('the cost model counts `first` profiles: followers of every profile found, 100 × 100, is refused before it runs', async () => {
    const nested = (inner: number) => `searchProfiles(query: "sat", first: 100) { followers(first: ${inner}) { edges { profile { name } } } }`;
    // 4,000 + 100 × (1 + 4 + 40 × (1 + 2 + 0.1)) = 16,900 units: allowed.
    expect((await postGraphql(context.server, `{ ${nested(40)} }`)).status).toBe(200);
    // 100 followers each: 35,500.
    const refused = await postGraphql(context.server, `{ ${nested(100)} }`);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('query_too_costly');
    expect(refused.body.data ?? null).toBeNull();
  });
});
