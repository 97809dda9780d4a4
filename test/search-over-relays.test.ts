import { afterEach, describe, expect, it } from 'vitest';
import { BOTH_STORES, storeAndServer } from './support/both-stores.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { startLoopbackRelay } from './support/loopback-relay.js';

// End to end: with SEARCH_RELAYS, searchProfiles first asks them (NIP-50,
// `{"kinds":[0],"search":…}`), verifies and stores what they answer, then ranks it with the index's
// own profiles; once per RELATIONS_TTL per query. Without SEARCH_RELAYS no relay hears a search.

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const T = 1_700_000_000;
const held = profile('alice', { name: 'Satoshi Held' });
const remote = [
  profile('bob', { name: 'Satoshi Remote', nip05: 'bob@example.com' }),
  // The loopback relay does not read `search`: it answers every profile, as a careless relay might.
  profile('carol', { name: 'Someone Else' }),
];
// Signed by bob's key over other content: does not verify, never stored.
const forged = { ...profile('dave', { name: 'Satoshi Forged' }), pubkey: pubkeyOf('bob') };
const follows = signed('erin', { kind: 3, created_at: T, tags: [['p', pubkeyOf('bob')]], content: '' });
const QUERY = '{ searchProfiles(query: "satoshi") { pubkey name followersCount } }';

describe.each(BOTH_STORES)('searchProfiles with SEARCH_RELAYS ($name)', ({ open }) => {
  it('asks the search relays once per query, stores what verifies, ranks it with the rest', async () => {
    const searchRelay = await startLoopbackRelay({ events: [...remote, forged] });
    const plainRelay = await startLoopbackRelay({ events: [] });
    cleanups.push(() => searchRelay.stop(), () => plainRelay.stop());
    const { server, store } = await storeAndServer(open, cleanups, { urls: [plainRelay.url], indexerUrls: [], searchUrls: [searchRelay.url] }, [held, follows]);
    const ask = async (query = QUERY) => {
      const response = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
      return { status: response.status, body: await response.json() };
    };
    const expected = {
      status: 200,
      body: { data: { searchProfiles: [{ pubkey: pubkeyOf('bob'), name: 'Satoshi Remote', followersCount: 1 }, { pubkey: pubkeyOf('alice'), name: 'Satoshi Held', followersCount: 0 }] } },
    };
    expect(await ask()).toEqual(expected);
    const searches = () => searchRelay.requests.filter((filters) => filters.some((filter) => filter.search !== undefined));
    expect(searches().map((filters) => filters.map(({ kinds, search }) => ({ kinds, search })))).toEqual([[{ kinds: [0], search: 'satoshi' }]]);
    expect(plainRelay.requests.some((filters) => filters.some((filter) => filter.search !== undefined))).toBe(false);
    // What verified is stored (carol too: she does not match, but is a profile now held); the forgery is not.
    const [carol, forgedHeld] = await store.getProfiles([pubkeyOf('carol'), pubkeyOf('dave')]);
    expect(carol).not.toBeNull();
    expect(forgedHeld).toBeNull();
    expect((await ask('{ searchProfiles(query: "forged") { pubkey } }')).body).toEqual({ data: { searchProfiles: [] } });
    // Asked again within RELATIONS_TTL: the index answers alone.
    expect(await ask()).toEqual(expected);
    expect(searches()).toHaveLength(2); // "satoshi" once, "forged" once
  }, 30_000);

  it('without SEARCH_RELAYS no relay hears a search: the index answers', async () => {
    const relay = await startLoopbackRelay({ events: remote });
    cleanups.push(() => relay.stop());
    const { server } = await storeAndServer(open, cleanups, { urls: [relay.url], indexerUrls: [] }, [held]);
    const response = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: QUERY }) });
    expect(await response.json()).toEqual({ data: { searchProfiles: [{ pubkey: pubkeyOf('alice'), name: 'Satoshi Held', followersCount: 0 }] } });
    expect(relay.requests.some((filters) => filters.some((filter) => filter.search !== undefined))).toBe(false);
  }, 30_000);
});

describe.each(BOTH_STORES)('searchNotes with SEARCH_RELAYS ($name)', ({ open }) => {
  it('asks the search relays once per query for notes and articles, stores and indexes what verifies, the index answers by its own rule', async () => {
    const heldNote = signed('alice', { created_at: T, content: 'Bitcoin Lightning, held here' });
    const remoteNote = signed('bob', { created_at: T + 10, content: 'bitcoin lightning from a relay' });
    // The loopback relay does not read `search`: it answers a note that does not match too.
    const unrelated = signed('carol', { created_at: T + 20, content: 'something else' });
    const forgedNote = { ...signed('dave', { created_at: T + 30, content: 'bitcoin lightning forged' }), pubkey: pubkeyOf('bob') };
    const searchRelay = await startLoopbackRelay({ events: [remoteNote, unrelated, forgedNote] });
    // SEARCH_RELAYS are asked only while RELAYS has some (with none, no relay traffic at all).
    const plainRelay = await startLoopbackRelay({ events: [] });
    cleanups.push(() => searchRelay.stop(), () => plainRelay.stop());
    const { server, store } = await storeAndServer(open, cleanups, { urls: [plainRelay.url], indexerUrls: [], searchUrls: [searchRelay.url] }, [heldNote]);
    const ask = async (query: string) => {
      const response = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `{ searchNotes(query: "${query}") { edges { node { id } } } }` }) });
      return { status: response.status, body: (await response.json()) as { data?: { searchNotes: { edges: { node: { id: string } }[] } } } };
    };
    const found = await ask('BITCOIN light');
    expect(found.status).toBe(200);
    expect(found.body.data?.searchNotes.edges.map((edge) => edge.node.id)).toEqual([remoteNote.id, heldNote.id]);
    const searches = () => searchRelay.requests.filter((filters) => filters.some((filter) => filter.search !== undefined));
    // The query's words as the rule reads them (NFKC, lower case), the last as typed.
    expect(searches().map((filters) => filters.map(({ kinds, search }) => ({ kinds, search })))).toEqual([[{ kinds: [1, 30023], search: 'bitcoin light' }]]);
    const [unrelatedHeld, forgedHeld] = await store.getEvents([unrelated.id, forgedNote.id]);
    expect(unrelatedHeld).not.toBeNull();
    expect(forgedHeld).toBeNull();
    // Asked again within RELATIONS_TTL: the index answers alone; a later page never asks.
    expect((await ask('bitcoin light')).body.data?.searchNotes.edges).toHaveLength(2);
    expect(searches()).toHaveLength(1);
    expect(plainRelay.requests.some((filters) => filters.some((filter) => filter.search !== undefined))).toBe(false);
  }, 30_000);
});
