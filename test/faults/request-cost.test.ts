import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { importEvents } from '../../src/import/import-events.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { MAX_PROFILE_BYTES } from '../../src/nostr/work-caps.js';
import { derivedValuesBytes, relevantPubkeysOf } from '../../src/store/derived-values.js';
import type { EventStore, Held } from '../../src/store/event-store.js';
import { toStoredEvent } from '../../src/store/stored-event.js';
import { pubkeyOf, signed } from '../support/events.js';
import { relayScenario } from '../support/relay-scenario.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createTestStore } from '../support/test-store.js';
import { isDeleted } from '../../src/store/tombstones.js';

/**
 * No request may cost seconds (§3, §4). Each case stores what an attacker can make us
 * store (a relay hint brings any valid event; the oversized ones stand for what an earlier version
 * stored), then sends the request the review measured, and bounds what it cost this process: CPU
 * time (process.cpuUsage) and the longest event-loop stall (monitorEventLoopDelay), with the service
 * in this process. Before the fix each of these cost seconds (figures in the test names).
 */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The longest stall a request may cause. The issue names 200 ms; these requests measure 20–130 ms
 * alone, but test files run in parallel on two cores, and a stall is wall time: a process waiting
 * for a core stalls too. CPU time is the figure that does not move with load: it is bounded too.
 */
const MAX_STALL_MS = 500;

async function measured<T>(work: () => Promise<T>): Promise<{ result: T; cpuMs: number; stallMs: number }> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const before = process.cpuUsage();
  const result = await work();
  const used = process.cpuUsage(before);
  delay.disable();
  return { result, cpuMs: (used.user + used.system) / 1000, stallMs: delay.max / 1e6 };
}

async function serve(seed: readonly NostrEvent[], options: Parameters<typeof startTestServer>[1] = {}): Promise<{ server: TestServer; store: EventStore }> {
  const store = await createTestStore();
  cleanups.push(() => store.cleanup());
  // Straight into the store, as an earlier version (or a relay hint) put it there.
  for (let at = 0; at < seed.length; at += 20) await store.store.putEvents(seed.slice(at, at + 20));
  const server = await startTestServer(store.store, options);
  cleanups.push(() => server.close());
  return { server, store: store.store };
}

async function graphql(url: string, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  return { status: response.status, body: (await response.json()) as { data?: Record<string, unknown> | null; errors?: Array<{ extensions?: { code?: string } }> } };
}

/** JSON of about `bytes` characters made of empty objects: the costliest shape for JSON.parse. */
const emptyObjects = (bytes: number, name?: string) => `{${name ? `"name":${JSON.stringify(name)},` : ''}"a":[${'{},'.repeat(Math.floor(bytes / 3) - 10)}{}]}`;

const notesBy = (author: string, count: number) => Array.from({ length: count }, (_, n) => signed(author, { content: `note ${n}`, created_at: 1_700_000_000 + n }));

const aliases = (count: number, selection: string) => Array.from({ length: count }, (_, n) => `a${n}: ${selection}`).join(' ');

/**
 * `author`'s profile (kind 0 with `content`) and 100 notes by them, stored; then, measured,
 * `events(ids: [the notes]) { a0: author { name } … }` with `aliasCount` aliases.
 */
async function authorNames(author: string, content: string, aliasCount: number) {
  const notes = notesBy(author, 100);
  const { server } = await serve([signed(author, { kind: 0, content }), ...notes]);
  return measured(() =>
    graphql(server.url, `query ($ids: [String!]!) { events(ids: $ids) { ${aliases(aliasCount, 'author { name }')} } }`, { ids: notes.map((note) => note.id) }),
  );
}


/** Counts the bytes of the profiles the real store hands back from now on (it still reads through). */
function countProfileBytesRead(store: EventStore): { read: number } {
  const counted = { read: 0 };
  const read = store.getProfiles.bind(store);
  store.getProfiles = async (pubkeys): Promise<Held[]> => {
    const held = await read(pubkeys);
    for (const value of held) if (value && !isDeleted(value)) counted.read += value.json.bytes.length;
    return held;
  };
  return counted;
}

describe('GraphQL does derived work once per event, not per object or alias', () => {
  it('a 900 KB profile of {} (stored by an earlier version) and 100 notes: events(ids:[100]) { author { name } } ×3 aliases (was 16.5 s CPU, 13.7 s blocked)', async () => {
    const { result, cpuMs, stallMs } = await authorNames('cost-fat', emptyObjects(900_000, 'fat'), 3);
    expect(result.status).toBe(200);
    expect(result.body.errors).toBeUndefined();
    const events = result.body.data?.events as Array<Record<string, { name: string | null } | null>>;
    expect(events).toHaveLength(100);
    // Over MAX_PROFILE_BYTES: the profile is served, its metadata is not read.
    expect(events.every((event) => event.a0?.name === null && event.a2?.name === null)).toBe(true);
    expect(stallMs).toBeLessThan(MAX_STALL_MS);
    expect(cpuMs).toBeLessThan(1000);
  });

  it('a 60 KB profile of {} (storable today) is parsed once for 100 notes × 15 aliases (was once per object: 1,500 parses)', async () => {
    const { result, cpuMs, stallMs } = await authorNames('cost-sixty', emptyObjects(60_000, 'sixty'), 15);
    expect(result.status).toBe(200);
    expect(result.body.errors).toBeUndefined();
    const events = result.body.data?.events as Array<Record<string, { name: string | null }>>;
    expect(events.every((event) => Object.values(event).every((author) => author.name === 'sixty'))).toBe(true);
    expect(stallMs).toBeLessThan(MAX_STALL_MS);
    expect(cpuMs).toBeLessThan(1000);
  });

  // 13,000 junk mentions in ~900 KB: each is a bech32 decode that fails.
  const junkMentions = (seed: number) => `nostr:npub1${'q'.repeat(57)}${'acdefghjk'[seed % 9]} `.repeat(12_800);

  it('10 notes of 900 KB of invalid nostr:npub mentions × 15 aliases of relevantPubkeys (was 13.3 s with the loop blocked): refused by the parse budget, quickly', async () => {
    const notes = Array.from({ length: 10 }, (_, n) => signed(`cost-mentions-${n}`, { content: junkMentions(n) }));
    const { server } = await serve(notes);
    const { result, cpuMs, stallMs } = await measured(() =>
      graphql(server.url, `query ($ids: [String!]!) { events(ids: $ids) { ${aliases(15, 'relevantPubkeys')} } }`, { ids: notes.map((note) => note.id) }),
    );
    expect(result.status).toBe(200);
    // 10 × 900 KB is more than MAX_RESPONSE_BYTES (8 MiB in tests): refused.
    expect(result.body).toMatchObject({ data: null, errors: [{ extensions: { code: 'response_too_large' } }] });
    expect(stallMs).toBeLessThan(MAX_STALL_MS);
    expect(cpuMs).toBeLessThan(1000);
  });

  it('3 such notes × 15 aliases are answered (the author only: no mention is valid), each note scanned once', async () => {
    const notes = Array.from({ length: 3 }, (_, n) => signed(`cost-three-${n}`, { content: junkMentions(n) }));
    const { server } = await serve(notes);
    const { result, cpuMs, stallMs } = await measured(() =>
      graphql(server.url, `query ($ids: [String!]!) { events(ids: $ids) { ${aliases(15, 'relevantPubkeys')} } }`, { ids: notes.map((note) => note.id) }),
    );
    expect(result.body.errors).toBeUndefined();
    const events = result.body.data?.events as Array<Record<string, string[]>>;
    events.forEach((event, n) => expect(Object.values(event)).toEqual(Array(15).fill([notes[n]?.pubkey])));
    expect(stallMs).toBeLessThan(MAX_STALL_MS);
    expect(cpuMs).toBeLessThan(500);
  });

  it('REST /event of such a note: its mentions add about nothing to what sending its 900 KB costs, after the first request (was 100 ms each)', async () => {
    const note = signed('cost-rest', { content: junkMentions(1) });
    // The same bytes without a mention: what sending them costs here, measured alternately with the
    // note's (an absolute bound of 20 ms a request failed at 20.03 on a slow day).
    const plain = signed('cost-rest-plain', { content: 'q'.repeat(junkMentions(1).length) });
    const { server } = await serve([note, plain]);
    const once = (id: string) =>
      measured(async () => {
        const response = await fetch(`${server.url}/event?id=${id}`, { headers: { 'accept-encoding': 'identity' } });
        await response.arrayBuffer();
        return response.status;
      });
    for (const id of [note.id, plain.id]) expect((await once(id)).result).toBe(200);
    const costs = { note: [] as number[], plain: [] as number[] };
    let stall = 0;
    for (let n = 0; n < 20; n++) {
      for (const [name, id] of [['note', note.id], ['plain', plain.id]] as const) {
        const { result, cpuMs, stallMs } = await once(id);
        expect(result).toBe(200);
        costs[name].push(cpuMs);
        stall = Math.max(stall, stallMs);
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
    // The mentions' part of a request, median against median: under 10 ms (a scan of them per
    // request was 100 ms). Measured here: -2 to +3 ms; +4 ms with derived values never kept (too
    // close to the spread to assert: that cache is checked within a request above).
    expect(median(costs.note) - median(costs.plain)).toBeLessThan(10);
    expect(stall).toBeLessThan(MAX_STALL_MS);
  });

  it('the cost model charges relevantPubkeys: 15 aliases over 100 ids are 1,500 (was 0)', async () => {
    const { server } = await serve([], { graphql: { maxCost: 1000 } });
    const ids = Array.from({ length: 100 }, (_, n) => n.toString(16).padStart(64, '0'));
    const result = await graphql(server.url, `query ($ids: [String!]!) { events(ids: $ids) { ${aliases(15, 'relevantPubkeys')} } }`, { ids });
    expect(result.body.errors?.map((error) => error.extensions?.code)).toEqual(['query_too_costly']);
  });
});

describe('junk relay lists are read once, and only so far', () => {
  const scenario = relayScenario();
  // 90,000 `r` tags that are not relay URLs: 1.2 MB, stored by an earlier version (today's limit is 64 KiB).
  const junkList = (author: string, count: number) =>
    signed(author, { kind: 10002, tags: Array.from({ length: count }, (_, n) => ['r', `junk-${n}`]) });

  it('/user-profile of the author of a 90,000-entry list, ten times (was 410–480 ms each)', async () => {
    const relay = await scenario.relay();
    const list = junkList('cost-list', 90_000);
    const { server } = await scenario.service({ urls: [relay.url] }, [list]);
    const { result, cpuMs, stallMs } = await measured(async () => {
      const statuses: number[] = [];
      for (let n = 0; n < 10; n++) statuses.push((await fetch(`${server.url}/user-profile?pubkey=${list.pubkey}`)).status);
      return statuses;
    });
    expect(result).toEqual(Array(10).fill(404));
    expect(stallMs).toBeLessThan(MAX_STALL_MS);
    expect(cpuMs).toBeLessThan(500);
  });

  it('profiles(pubkeys: [10 authors of such lists]) with MISS_RATE_LIMIT=2: no stall (was 4.1 s blocked)', async () => {
    const relay = await scenario.relay();
    const lists = Array.from({ length: 10 }, (_, n) => junkList(`cost-lists-${n}`, 90_000));
    const store = await createTestStore();
    scenario.cleanups.push(() => store.cleanup());
    await store.store.putEvents(lists);
    const server = await startTestServer(store.store, { relays: { urls: [relay.url] }, rateLimits: { misses: { perSecond: 2, burst: 2 }, trustProxy: false } });
    scenario.cleanups.push(() => server.close());
    const { result, cpuMs, stallMs } = await measured(() =>
      graphql(server.url, 'query ($pubkeys: [String!]!) { profiles(pubkeys: $pubkeys) { name } }', { pubkeys: lists.map((list) => list.pubkey) }),
    );
    expect(result.status).toBe(200);
    expect(stallMs).toBeLessThan(MAX_STALL_MS);
    expect(cpuMs).toBeLessThan(1000);
  });
});

describe('/event reads its profiles up to the response cap, not all first', () => {
  it('100 relevant profiles at the size limit, MAX_RESPONSE_BYTES 1 MiB: the map stops at the cap and about that much is read (was every profile)', async () => {
    const profiles = Array.from({ length: 100 }, (_, n) =>
      signed(`cost-profile-${n}`, { kind: 0, content: JSON.stringify({ name: `p${n}`, about: 'x'.repeat(MAX_PROFILE_BYTES - 200) }) }),
    );
    const note = signed('cost-profile-0', { content: 'names a hundred large profiles', tags: profiles.map((event) => ['p', event.pubkey]) });
    const maxResponseBytes = 1024 * 1024;
    const { server, store } = await serve([...profiles, note], { graphql: { maxResponseBytes } });
    const profileBytes = countProfileBytesRead(store);
    const response = await fetch(`${server.url}/event?id=${note.id}`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { profiles: Record<string, unknown> };
    const shown = Object.keys(body.profiles).length;
    expect(shown).toBeGreaterThan(10);
    expect(shown).toBeLessThan(16);
    // Up to the cap, then one slice at most: not the 6.5 MB of all hundred.
    expect(profileBytes.read).toBeGreaterThan(maxResponseBytes);
    expect(profileBytes.read).toBeLessThanOrEqual(maxResponseBytes + 2 * (MAX_PROFILE_BYTES + 512));
    // GraphQL is refused instead of answered with a list cut short.
    const graphqlAnswer = await graphql(server.url, 'query ($id: String!) { event(id: $id) { relevantProfiles { name } } }', { id: note.id });
    expect(graphqlAnswer.body).toMatchObject({ data: null, errors: [{ extensions: { code: 'response_too_large' } }] });
  });

  it('a profile over 64 KiB, or an event over 900 KiB, is not stored from an import (too_large), so none can make /event read 90 MB', async () => {
    const store = await createTestStore();
    cleanups.push(() => store.cleanup());
    const big = signed('cost-big', { kind: 0, content: JSON.stringify({ name: 'big', about: 'x'.repeat(900_000) }) });
    const fits = signed('cost-fits', { kind: 0, content: JSON.stringify({ name: 'fits' }) });
    const lines = [JSON.stringify(big), JSON.stringify(fits)].join('\n');
    const counts = await importEvents(Readable.from([`${lines}\n`]), store.store);
    expect(counts).toMatchObject({ stored: 1, invalid: { too_large: 1 } });
    expect(await store.store.getProfiles([big.pubkey, fits.pubkey])).toEqual([null, expect.anything()]);
  });
});

describe('found by review of the fix (each failed on its first version)', () => {
  it('author reads the pubkey at its offset and events read by id are bounded: 20 notes of 900 KB with 300,000 empty tags (an earlier version stored them) are refused at once (100 of them were 11 s CPU, 15 s blocked, 1.2 GiB)', async () => {
    const notes = Array.from({ length: 20 }, (_, n) => signed(`review-tags-${n % 5}`, { content: `${n}`, tags: Array.from({ length: 300_000 }, () => []) }));
    const { server } = await serve(notes);
    const { result, cpuMs, stallMs } = await measured(() =>
      graphql(server.url, 'query ($ids: [String!]!) { events(ids: $ids) { author { __typename } } }', { ids: notes.map((note) => note.id) }),
    );
    expect(result.body).toMatchObject({ data: null, errors: [{ extensions: { code: 'response_too_large' } }] });
    expect(stallMs).toBeLessThan(MAX_STALL_MS);
    expect(cpuMs).toBeLessThan(1500);
  });

  it('relevantProfiles of the events of a list share the read bound: 20 notes × 16 distinct 60 KB profiles, MAX_RESPONSE_BYTES 1 MiB (was 17 MiB read)', async () => {
    const profiles = Array.from({ length: 320 }, (_, n) => signed(`review-share-${n}`, { kind: 0, content: JSON.stringify({ name: `s${n}`, about: 'x'.repeat(60_000) }) }));
    const notes = Array.from({ length: 20 }, (_, n) =>
      signed(`review-share-${n * 16}`, { content: `note ${n}`, tags: profiles.slice(n * 16, n * 16 + 16).map((event) => ['p', event.pubkey]) }),
    );
    const maxResponseBytes = 1024 * 1024;
    const { server, store } = await serve([...profiles, ...notes], { graphql: { maxResponseBytes } });
    const profileBytes = countProfileBytesRead(store);
    const result = await graphql(server.url, 'query ($ids: [String!]!) { events(ids: $ids) { relevantProfiles { name } } }', { ids: notes.map((note) => note.id) });
    expect(result.body).toMatchObject({ data: null, errors: [{ extensions: { code: 'response_too_large' } }] });
    // The bound, then at most one profile more per event.
    expect(profileBytes.read).toBeLessThanOrEqual(maxResponseBytes + 20 * (MAX_PROFILE_BYTES + 512));
  });

  it('a profile named by many events is read and counted once: 100 notes naming the same 40 profiles are answered (was response_too_large)', async () => {
    const profiles = Array.from({ length: 40 }, (_, n) => signed(`review-feed-${n}`, { kind: 0, content: JSON.stringify({ name: `f${n}`, about: 'x'.repeat(1500) }) }));
    const notes = Array.from({ length: 100 }, (_, n) => signed(`review-feed-${n % 40}`, { content: `feed ${n}`, tags: profiles.map((event) => ['p', event.pubkey]) }));
    const { server } = await serve([...profiles, ...notes], { graphql: { maxResponseBytes: 1024 * 1024 } });
    const result = await graphql(server.url, 'query ($ids: [String!]!) { events(ids: $ids) { id relevantProfiles { name } } }', { ids: notes.map((note) => note.id) });
    expect(result.body.errors).toBeUndefined();
    const events = result.body.data?.events as Array<{ relevantProfiles: Array<{ name: string }> }>;
    expect(events.every((event) => event.relevantProfiles.length === 40)).toBe(true);
  });

  it('REST /event of an event larger than MAX_RESPONSE_BYTES is still answered with the event (the cap bounds the map, not the event)', async () => {
    const note = signed('review-large', { content: 'x'.repeat(250_000) });
    const { server } = await serve([note], { graphql: { maxResponseBytes: 10_000 } });
    const response = await fetch(`${server.url}/event?id=${note.id}`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { event: NostrEvent }).event).toEqual(note);
  });

  it('the outcome does not depend on what is cached: the same refused query is refused again, warm', async () => {
    const articles = Array.from({ length: 100 }, (_, n) => signed(`review-warm-${n}`, { content: 'y'.repeat(54_000) }));
    // 100 × 54 KB: over a 4 MiB bound, whether the relevant pubkeys are cached or not.
    const { server } = await serve(articles, { graphql: { maxResponseBytes: 4 * 1024 * 1024 } });
    const query = 'query ($ids: [String!]!) { events(ids: $ids) { relevantPubkeys } }';
    const codes: unknown[] = [];
    for (let n = 0; n < 3; n++) {
      const result = await graphql(server.url, query, { ids: articles.map((article) => article.id) });
      codes.push(result.body.errors?.map((error) => error.extensions?.code));
    }
    expect(codes).toEqual([['response_too_large'], ['response_too_large'], ['response_too_large']]);
  });

  it('the derived-values cache counts what it holds (lru-cache measured every entry at 300 bytes)', () => {
    const before = derivedValuesBytes();
    const note = signed('review-cache', { tags: Array.from({ length: 100 }, (_, n) => ['p', pubkeyOf(`review-cache-${n}`)]) });
    expect(relevantPubkeysOf(toStoredEvent(note), 100)).toHaveLength(100);
    // 100 pubkeys of 64 characters, two bytes each.
    expect(derivedValuesBytes() - before).toBeGreaterThan(100 * 128);
  });
});
