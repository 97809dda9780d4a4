import { naddrEncode } from 'nostr-tools/nip19';
import { describe, expect, it } from 'vitest';
import type { RelayConfig } from '../src/config/env.js';
import { ERRORS } from '../src/errors.js';
import { type NostrEvent, serializeEvent } from '../src/nostr/event.js';
import { BOTH_STORES, storeAndServer } from './support/both-stores.js';
import { deletion } from './support/deletion-conformance.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { relayScenario } from './support/relay-scenario.js';
import { getJson } from './support/test-server.js';

/**
 * naddr (NIP-19) on /event and GraphQL `event(id:)`: the latest version of a
 * replaceable or addressable event by kind, author and `d`, from the index, or on a miss from the
 * relays, answered exactly as an event by id is (with its profiles).
 */

const { cleanups, relay } = relayScenario();
const T = 1_700_000_000;
const author = pubkeyOf('naddr-ana');
const article = (at: number, content: string, d = 'essay') =>
  signed('naddr-ana', { kind: 30023, created_at: at, tags: [['d', d], ['p', pubkeyOf('naddr-ben')]], content });
const card = profile('naddr-ana', { name: 'Ana' }, T);
const ben = profile('naddr-ben', { name: 'Ben' }, T);

describe.each(BOTH_STORES)('naddr lookups, $name store', ({ open }) => {
  const service = (relays: Partial<RelayConfig>, seed: NostrEvent[] = []) => storeAndServer(open, cleanups, relays, seed);

  it('from the index: the latest version with its profiles, exactly as /event by id answers it; GraphQL too', async () => {
    const v1 = article(T, 'first');
    const v2 = article(T + 10, 'second');
    const { server } = await service({ urls: [] }, [v1, v2, card, ben]);
    const naddr = naddrEncode({ kind: 30023, pubkey: author, identifier: 'essay' });
    const byAddress = await getJson(`${server.url}/event?id=nostr:${naddr}`);
    const byId = await getJson(`${server.url}/event?id=${v2.id}`);
    expect(byAddress.status).toBe(200);
    expect(byAddress.text).toBe(byId.text);
    expect(byAddress.text).toBe(`{"event":${serializeEvent(v2)},"profiles":{"${author}":${serializeEvent(card)},"${ben.pubkey}":${serializeEvent(ben)}}}`);
    // A replaceable kind by naddr (d ignored): the profile itself.
    const profileAddress = naddrEncode({ kind: 0, pubkey: author, identifier: '' });
    expect((await getJson(`${server.url}/event?id=${profileAddress}`)).body).toEqual({ event: card, profiles: { [author]: card } });
    // Unknown d: 404 event_not_found.
    const missing = await getJson(`${server.url}/event?id=${naddrEncode({ kind: 30023, pubkey: author, identifier: 'nope' })}`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { status: 404, code: 'event_not_found', message: ERRORS.event_not_found.message } });
    // GraphQL: event(id: naddr) and events([naddr, id]).
    const graphql = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ event(id: "${naddr}") { id content } events(ids: ["${naddr}", "${v1.id}", "${naddr}"]) { id } }` }),
    });
    expect(graphql.status).toBe(200);
    expect(await graphql.json()).toEqual({ data: { event: { id: v2.id, content: 'second' }, events: [{ id: v2.id }, null] } });
  });

  it('an naddr whose versions its author deleted (a tag): 404 event_deleted', async () => {
    const v1 = article(T, 'first');
    const request = deletion('naddr-ana', { addresses: [`30023:${author}:essay`], at: T + 5 });
    const { server } = await service({ urls: [] }, [v1, request]);
    const response = await getJson(`${server.url}/event?id=${naddrEncode({ kind: 30023, pubkey: author, identifier: 'essay' })}`);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: { status: 404, code: 'event_deleted', message: ERRORS.event_deleted.message } });
  });

  it('on a miss, from a relay: asked by kind, author and d; the newest version the relay holds wins, is stored, and answers from the index after', async () => {
    const v1 = article(T, 'first');
    const v2 = article(T + 10, 'second');
    const holder = await relay({ events: [v1, v2, card] });
    const { server, store } = await service({ urls: [holder.url] });
    const naddr = naddrEncode({ kind: 30023, pubkey: author, identifier: 'essay' });
    const response = await getJson(`${server.url}/event?id=${naddr}`);
    expect(response.status).toBe(200);
    expect((response.body as { event: NostrEvent }).event).toEqual(v2);
    // The same REQ asks for the author's relay list (outbox discovery, NIP-65).
    // The same REQ asks for deletion requests naming the coordinate, from its author only (NIP-09 a
    // tags), and for the author's relay list (outbox discovery, NIP-65).
    expect(holder.requests[0]).toEqual([
      { kinds: [30023], authors: [author], '#d': ['essay'] },
      { kinds: [5], authors: [author], '#a': [`30023:${author}:essay`] },
      { kinds: [10002], authors: [author] },
    ]);
    expect((await store.getByCoordinates([`30023:${author}:essay`]))[0]?.event).toEqual(v2);
    await holder.stop();
    expect((await getJson(`${server.url}/event?id=${naddr}`)).status).toBe(200);
  });

  it('on a miss, an a-tag deletion the relay holds (NIP-09) is applied: 404 event_deleted, and kept for the next version sent', async () => {
    const v1 = article(T, 'first');
    const v2 = article(T + 10, 'second');
    const request = deletion('naddr-ana', { addresses: [`30023:${author}:essay`], at: T + 10 });
    const holder = await relay({ events: [v1, v2, request] });
    const { server, store } = await service({ urls: [holder.url] });
    const naddr = naddrEncode({ kind: 30023, pubkey: author, identifier: 'essay' });
    const response = await getJson(`${server.url}/event?id=${naddr}`);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: { status: 404, code: 'event_deleted', message: ERRORS.event_deleted.message } });
    // The deletion is stored: the versions it covers are refused from now on, a later one is not.
    expect(await store.putEvents([v2])).toEqual(['deleted']);
    const v3 = article(T + 20, 'third');
    expect(await store.putEvents([v3])).toEqual(['stored']);
    holder.reset([]);
    expect((await getJson(`${server.url}/event?id=${naddr}`)).body).toMatchObject({ event: v3 });
  });

  it('a held version is served at once and looked for again in the background, once per PROFILE_TTL: an edit shows on a later read', async () => {
    const v1 = article(T, 'first');
    const v2 = article(T + 10, 'edited');
    const holder = await relay({ events: [v2] });
    const { server } = await service({ urls: [holder.url] }, [v1]);
    const naddr = naddrEncode({ kind: 30023, pubkey: author, identifier: 'essay' });
    expect((await getJson(`${server.url}/event?id=${naddr}`)).body).toMatchObject({ event: v1 });
    let latest: unknown;
    for (let attempt = 0; attempt < 50; attempt++) {
      latest = (await getJson(`${server.url}/event?id=${naddr}`)).body;
      if ((latest as { event: NostrEvent }).event.id === v2.id) break;
      await new Promise((done) => setTimeout(done, 50));
    }
    expect(latest).toMatchObject({ event: v2 });
    // Once refreshed, it is fresh for PROFILE_TTL: reads do not ask the relay again.
    const asked = holder.requests.length;
    for (let round = 0; round < 5; round++) await getJson(`${server.url}/event?id=${naddr}`);
    expect(holder.requests.length).toBe(asked);
  });

  it("on a miss, someone else's a-tag deletion of the coordinate does nothing", async () => {
    const v1 = article(T, 'first');
    const forged = deletion('naddr-ben', { addresses: [`30023:${author}:essay`], at: T + 10 });
    const holder = await relay({ events: [v1, forged], newestFirstAcrossFilters: true });
    const { server, store } = await service({ urls: [holder.url] });
    const response = await getJson(`${server.url}/event?id=${naddrEncode({ kind: 30023, pubkey: author, identifier: 'essay' })}`);
    expect(response.status).toBe(200);
    expect((response.body as { event: NostrEvent }).event).toEqual(v1);
    expect((await store.getEvents([forged.id]))[0]).toBeNull();
  });

  it('many naddrs in one request: one filter per kind (and one for their deletions), not one per author', async () => {
    const authors = Array.from({ length: 60 }, (_, index) => `naddr-many-${index}`);
    const articles = authors.map((name, index) => signed(name, { kind: 30023, created_at: T, tags: [['d', `post-${index}`]], content: name }));
    const holder = await relay({ events: articles });
    const { server } = await service({ urls: [holder.url], outbox: { enabled: false, relaysPerPubkey: 2, maxRelays: 20 } });
    const naddrs = articles.map((event, index) => naddrEncode({ kind: 30023, pubkey: event.pubkey, identifier: `post-${index}` }));
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query ($ids: [String!]!) { events(ids: $ids) { id } }', variables: { ids: naddrs } }),
    });
    expect(await response.json()).toEqual({ data: { events: articles.map((event) => ({ id: event.id })) } });
    expect(holder.requests).toHaveLength(1);
    const [versions, deletions, ...rest] = holder.requests[0] ?? [];
    expect(rest).toEqual([]);
    expect(versions).toEqual({ kinds: [30023], authors: articles.map((event) => event.pubkey), '#d': articles.map((_, index) => `post-${index}`) });
    expect(deletions).toMatchObject({ kinds: [5], authors: articles.map((event) => event.pubkey) });
  });

  it('hostile naddr input: a regular kind, bad TLVs, a secret key: 400, never a lookup', async () => {
    const { server } = await service({ urls: [] });
    for (const id of [naddrEncode({ kind: 1, pubkey: author, identifier: 'x' }), 'naddr1qqqqqq', `naddr1${'q'.repeat(5000)}`]) {
      const response = await getJson(`${server.url}/event?id=${id}`);
      expect(response.status).toBe(400);
      expect((response.body as { error: { code: string } }).error.code).toBe('invalid_id');
    }
  });
});
