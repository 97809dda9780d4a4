import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { registry } from '../src/metrics/metrics.js';
import { pubkeyOfArgument } from '../src/schema/profile.js';
import { createContext } from '../src/schema/context.js';
import type { KeptAnswer } from '../src/http/routes/rest-lookup.js';
import type { KeptGraphqlAnswer } from '../src/http/graphql/direct-execution.js';
import { ReadReceipt } from '../src/store/read-receipt.js';
import { OfferedKeys } from '../src/store/answer-cache.js';
import { writeQuotedJson } from '../src/store/json-text.js';
import { deletion } from './support/deletion-conformance.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { type CachedInstance, cachedInstance } from './support/hot-cache-instance.js';
import { sleep, timeUntil, until } from './support/polling.js';
import { startLoopbackRelay } from './support/loopback-relay.js';
import { createTestStore, type TestStore, testClusterNodes } from './support/test-store.js';
import { getJson, postGraphql, startTestServer, type TestServer } from './support/test-server.js';

const T = 1_700_000_000;
/** Runs of the property below (FUZZ_RUNS for a long run). */
const RUNS = Number(process.env.FUZZ_RUNS ?? 15);
// A stream of its own unless asked: one whose asks never met a kept GraphQL answer failed a CI run.
const SEED = Number(process.env.FUZZ_SEED ?? 2626);
/** The profiles map of an /event answer, as names by pubkey. */
const namesOf = (answer: { body: unknown }) =>
  Object.fromEntries(Object.entries((answer.body as { profiles: Record<string, { content: string }> }).profiles).map(([pubkey, event]) => [pubkey, JSON.parse(event.content).name]));

/** What a client can tell of an answer: status, body, validators. */
const seen = (answer: Awaited<ReturnType<typeof getJson>>) => ({
  status: answer.status,
  text: answer.text,
  etag: answer.headers.get('etag'),
  lastModified: answer.headers.get('last-modified'),
});

describe('keys offered once (the admission of kept answers)', () => {
  it('a key is admitted the second time it is offered, then forgotten; at most `max` are remembered, the oldest going first', () => {
    const offered = new OfferedKeys(3);
    expect(offered.seenBefore('/event?a')).toBe(false);
    expect(offered.seenBefore('/event?a')).toBe(true);
    expect(offered.size).toBe(0);
    for (const key of ['k1', 'k2', 'k3', 'k4']) expect(offered.seenBefore(key)).toBe(false);
    expect(offered.size).toBe(3);
    // k1 went first; the others are still remembered.
    expect(offered.seenBefore('k2')).toBe(true);
    expect(offered.seenBefore('k1')).toBe(false);
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 40 }), { maxLength: 200 }), (keys) => {
        const bounded = new OfferedKeys(16);
        for (const key of keys) bounded.seenBefore(key);
        return bounded.size <= 16;
      }),
    );
  });
});

// REST answers made only of the hot cache's entries, kept while those entries hold
// (store/answer-cache.ts). The hot cache is for a single Redis (a cluster run leaves it off: README).
describe.skipIf(testClusterNodes() !== undefined)('kept REST answers (the hot cache on)', () => {
  const opened: { writer: TestStore; instance: CachedInstance; plain?: TestServer }[] = [];
  afterEach(async () => {
    for (const { writer, instance, plain } of opened.splice(0)) {
      await plain?.close();
      await instance.close();
      await writer.cleanup();
    }
  });

  async function setUp(maxBytes?: number) {
    const writer = await createTestStore();
    const instance = await cachedInstance(writer.url, writer.prefix, maxBytes);
    // The same lookups without any cache: what a kept answer must equal.
    const plain = await startTestServer(writer.store);
    opened.push({ writer, instance, plain });
    return { writer, instance, plain, answers: instance.store.answerCache<KeptAnswer>() as NonNullable<ReturnType<typeof instance.store.answerCache<KeptAnswer>>> };
  }

  it('an /event answer is kept and served again; a profile of its map replaced or deleted through another writer: seen within 50 ms', async () => {
    const { writer, instance, answers } = await setUp();
    const note = signed('kept ann', { created_at: T, content: 'hello', tags: [['p', pubkeyOf('kept bo')]] });
    await writer.store.putEvents([note, profile('kept ann', { name: 'ann' }, T), profile('kept bo', { name: 'bo' }, T)]);
    const url = `${instance.server.url}/event?id=${note.id}`;
    const first = await getJson(url);
    expect(first.status).toBe(200);
    expect(namesOf(first)).toEqual({ [pubkeyOf('kept ann')]: 'ann', [pubkeyOf('kept bo')]: 'bo' });
    // Kept the second time it is made (what is asked once is never kept).
    expect(answers.get(`/event?${note.id}`)).toBeUndefined();
    expect(seen(await getJson(url))).toEqual(seen(first));
    expect(answers.get(`/event?${note.id}`)).toBeDefined();
    // Served again: the same bytes and validators.
    const again = await getJson(url);
    expect(seen(again)).toEqual(seen(first));

    await writer.store.putEvents([profile('kept bo', { name: 'bo two' }, T + 1)]);
    expect(await timeUntil(() => getJson(url), (answer) => namesOf(answer)[pubkeyOf('kept bo')] === 'bo two')).toBeLessThan(50);
    expect((await getJson(url)).headers.get('etag')).not.toBe(first.headers.get('etag'));

    // The profile deleted by its author (NIP-09): left out of the map.
    await writer.store.putEvents([deletion('kept bo', { addresses: [`0:${pubkeyOf('kept bo')}:`] })]);
    expect(await timeUntil(() => getJson(url), (answer) => namesOf(answer)[pubkeyOf('kept bo')] === undefined)).toBeLessThan(50);
    expect(namesOf(await getJson(url))).toEqual({ [pubkeyOf('kept ann')]: 'ann' });
    // The event itself deleted: 404 event_deleted.
    await writer.store.putEvents([deletion('kept ann', { ids: [note.id] })]);
    expect(await timeUntil(() => getJson(url), (answer) => answer.status === 404)).toBeLessThan(50);
    expect(answers.get(`/event?${note.id}`)).toBeUndefined();
  });

  it('a map missing a profile is not kept: the profile, once it arrives, is in the next answer', async () => {
    const { writer, instance, answers } = await setUp();
    const note = signed('kept cy', { created_at: T, tags: [['p', pubkeyOf('kept dee')]] });
    await writer.store.putEvents([note, profile('kept cy', { name: 'cy' }, T)]);
    const url = `${instance.server.url}/event?id=${note.id}`;
    for (let n = 0; n < 3; n++) expect(namesOf(await getJson(url))).toEqual({ [pubkeyOf('kept cy')]: 'cy' });
    expect(answers.get(`/event?${note.id}`)).toBeUndefined();
    await writer.store.putEvents([profile('kept dee', { name: 'dee' }, T)]);
    for (let n = 0; n < 2; n++) expect(namesOf(await getJson(url))).toEqual({ [pubkeyOf('kept cy')]: 'cy', [pubkeyOf('kept dee')]: 'dee' });
    expect(answers.get(`/event?${note.id}`)).toBeDefined();
  });

  it('every spelling of one id or pubkey shares one answer: asking in new spellings keeps nothing more (found by review)', async () => {
    const { writer, instance, plain } = await setUp();
    const note = signed('kept hal', { created_at: T, content: 'spelled' });
    await writer.store.putEvents([note, profile('kept hal', { name: 'hal' }, T)]);
    for (let n = 0; n < 2; n++) {
      expect((await getJson(`${instance.server.url}/event?id=${note.id}`)).status).toBe(200);
      expect((await getJson(`${instance.server.url}/user-profile?pubkey=${note.pubkey}`)).status).toBe(200);
    }
    const held = instance.cache.size;
    const mixedCase = (hex: string, seed: number) => [...hex].map((c, i) => ((seed >> i % 16) & 1 ? c.toUpperCase() : c)).join('');
    for (let seed = 0; seed < 40; seed++) {
      for (const path of [
        `event?id=${mixedCase(note.id, seed)}`,
        `event?id=${encodeURIComponent(`${' '.repeat(seed * 50)}nostr:${note.id}`)}`,
        `user-profile?pubkey=${mixedCase(note.pubkey, seed)}`,
      ]) {
        const [kept, fresh] = await Promise.all([getJson(`${instance.server.url}/${path}`), getJson(`${plain.url}/${path}`)]);
        expect(seen(kept), path).toEqual(seen(fresh));
      }
    }
    expect(instance.cache.size).toBe(held);
  });

  it('with relays: a profile answer is kept with its freshness mark, and goes when the profile is replaced (the read-through path records its reads)', async () => {
    const relay = await startLoopbackRelay();
    try {
      const writer = await createTestStore();
      const instance = await cachedInstance(writer.url, writer.prefix, undefined, { relays: { urls: [relay.url] } });
      opened.push({ writer, instance });
      const answers = instance.store.answerCache<KeptAnswer>() as NonNullable<ReturnType<typeof instance.store.answerCache<KeptAnswer>>>;
      const pubkey = pubkeyOf('kept ivy');
      await writer.store.putEvents([profile('kept ivy', { name: 'ivy' }, T)]);
      await writer.store.marks.set([`profile:${pubkey}`], 300);
      const url = `${instance.server.url}/user-profile?pubkey=${pubkey}`;
      for (let n = 0; n < 2; n++) expect((await getJson(url)).status).toBe(200);
      expect(answers.get(`/user-profile?${pubkey}`)).toBeDefined();
      await writer.store.putEvents([profile('kept ivy', { name: 'ivy two' }, T + 1)]);
      expect(await timeUntil(() => getJson(url), (answer) => (answer.body as { profile: { content: string } }).profile.content === '{"name":"ivy two"}')).toBeLessThan(50);
      // Its mark gone (expired, or deleted): the next lookup refreshes from the relays; the answer went with the mark.
      await writer.store.marks.set([`profile:${pubkey}`], 1);
      expect((await getJson(url)).status).toBe(200);
      await sleep(1100);
      expect(answers.get(`/user-profile?${pubkey}`)).toBeUndefined();
      expect((await getJson(url)).status).toBe(200);
      await until(() => relay.requests.some((filters) => filters.some((filter) => filter.authors?.includes(pubkey))));
    } finally {
      await relay.stop();
    }
  });

  it('/graphql: a prepared query asked again is kept (the second time it is asked) and goes with what it read; one that reads beside the cache (stats) never is', async () => {
    const { writer, instance } = await setUp();
    const note = signed('kept jo', { created_at: T, content: 'graphql', tags: [['p', pubkeyOf('kept kim')]] });
    await writer.store.putEvents([note, profile('kept jo', { name: 'jo' }, T), profile('kept kim', { name: 'kim' }, T)]);
    const query = 'query ($id: String!) { event(id: $id) { content relevantProfiles { name } } }';
    const names = async () => {
      const { status, body } = await postGraphql(instance.server, query, { id: note.id });
      expect(status).toBe(200);
      return (body.data?.event as { relevantProfiles: { name: string }[] }).relevantProfiles.map((profile) => profile.name);
    };
    // Prepared the second time it is validated; asked once more, then kept; then served as kept.
    for (let n = 0; n < 4; n++) expect(await names()).toEqual(['jo', 'kim']);
    const served = instance.cache.stats.answers;
    expect(await names()).toEqual(['jo', 'kim']);
    expect(instance.cache.stats.answers - served).toBe(1);
    await writer.store.putEvents([profile('kept kim', { name: 'kim two' }, T + 1)]);
    expect(await timeUntil(names, (got) => got[1] === 'kim two')).toBeLessThan(50);

    const stats = 'query ($id: String!) { event(id: $id) { stats { replies } } }';
    const before = instance.cache.stats.answers;
    for (let n = 0; n < 6; n++) expect((await postGraphql(instance.server, stats, { id: note.id })).status).toBe(200);
    expect(instance.cache.stats.answers).toBe(before);
  });

  it('/graphql: an answer with stored JSON is kept as pieces over the hot cache\'s values, whatever its size (an event with ten profiles, over 4 KB), and written as without the cache', async () => {
    const { writer, instance, plain } = await setUp();
    const mentioned = Array.from({ length: 10 }, (_, n) => `kept many ${n}`);
    const note = signed('kept lou', { created_at: T, content: 'ten', tags: mentioned.map((name) => ['p', pubkeyOf(name)]) });
    // Profiles of some 500 bytes each, with the characters a JSON string escapes.
    const about = `"quoted" \\ back\nslash, ünïcödé 🎉 ${'x'.repeat(400)}`;
    await writer.store.putEvents([note, profile('kept lou', { name: 'lou', about }, T), ...mentioned.map((name) => profile(name, { name, about }, T))]);
    const query = 'query ($id: String!) { event(id: $id) { json relevantProfiles { pubkey event { json } } } }';
    const body = JSON.stringify({ query, variables: { id: note.id } });
    const post = (server: Pick<TestServer, 'url'>) => getJson(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const fresh = await post(plain);
    expect(fresh.status).toBe(200);
    expect(fresh.text.length).toBeGreaterThan(4096);
    for (let n = 0; n < 4; n++) expect((await post(instance.server)).text).toBe(fresh.text);
    const served = instance.cache.stats.answers;
    expect((await post(instance.server)).text).toBe(fresh.text);
    expect(instance.cache.stats.answers - served).toBe(1);
    const kept = instance.store.answerCache<KeptGraphqlAnswer>()?.get(Buffer.from(body).toString('latin1'))?.body;
    expect(kept?.texts.length).toBe(12);
    // A profile replaced: the answer goes with it.
    await writer.store.putEvents([profile('kept many 3', { name: 'three' }, T + 1)]);
    expect(await timeUntil(() => post(instance.server), (answer) => answer.text.includes('three'))).toBeLessThan(50);
  });

  it('/graphql: an answer is kept under its body\'s bytes, served under either media type; spellings are kept apart and go alike; headers are checked first; a body carrying a secret key is never kept (found by review)', async () => {
    const { writer, instance, plain } = await setUp();
    const note = signed('kept ivy', { created_at: T, content: 'bytes', tags: [['p', pubkeyOf('kept ned')]] });
    await writer.store.putEvents([note, profile('kept ivy', { name: 'ivy' }, T), profile('kept ned', { name: 'ned' }, T)]);
    const query = 'query ($id: String!) { event(id: $id) { relevantProfiles { name } } }';
    const bodies = [
      JSON.stringify({ query, variables: { id: note.id } }),
      JSON.stringify({ variables: { id: note.id }, query }),
      ` ${JSON.stringify({ query, variables: { id: note.id.toUpperCase() } }, null, 2)}\n`,
    ];
    const post = (server: Pick<TestServer, 'url'>, body: string, accept: string, contentType = 'application/json') =>
      getJson(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': contentType, accept }, body });
    const asked = async (body: string, accept: string, contentType?: string) => {
      const [kept, fresh] = await Promise.all([post(instance.server, body, accept, contentType), post(plain, body, accept, contentType)]);
      expect({ status: kept.status, text: kept.text, type: kept.headers.get('content-type') }).toEqual({ status: fresh.status, text: fresh.text, type: fresh.headers.get('content-type') });
      return kept;
    };
    const accepts = ['application/json', 'application/graphql-response+json'];
    for (let n = 0; n < 4; n++) for (const body of bodies) for (const accept of accepts) await asked(body, accept);
    // One answer per spelling, served from then on under either media type, with that type.
    const served = instance.cache.stats.answers;
    for (const body of bodies) for (const accept of accepts) expect((await asked(body, accept)).headers.get('content-type')).toBe(`${accept}; charset=utf-8`);
    expect(instance.cache.stats.answers - served).toBe(bodies.length * accepts.length);
    // A kept body is text of its own (no view of Node's shared 8 KB pool, which it would hold
    // alive outside HOT_CACHE_MB: found by review), the answer's bytes once written.
    const keptBody = instance.store.answerCache<KeptGraphqlAnswer>()?.get(Buffer.from(bodies[0] as string).toString('latin1'))?.body;
    expect(keptBody && { between: keptBody.between.length, texts: keptBody.texts.length, text: writeQuotedJson(keptBody).toString() }).toEqual({ between: 1, texts: 0, text: (await asked(bodies[0] as string, 'application/json')).text });
    // The same bytes as another content type, or for a client that accepts no JSON: refused as
    // without the cache (415, 400, 406), never the kept answer.
    const refusedHeaders = [
      { contentType: 'text/plain', accept: 'application/json' },
      { contentType: 'application/x-www-form-urlencoded', accept: 'application/json' },
      { contentType: 'application/json', accept: 'text/html' },
      { contentType: 'application/json', accept: 'application/xml' },
    ];
    const beforeHeaders = instance.cache.stats.answers;
    for (const { contentType, accept } of refusedHeaders) expect((await asked(bodies[0] as string, accept, contentType)).status).not.toBe(200);
    expect(instance.cache.stats.answers).toBe(beforeHeaders);
    // A profile replaced: every spelling's answer goes with it.
    await writer.store.putEvents([profile('kept ned', { name: 'ned two' }, T + 1)]);
    await sleep(50);
    for (const body of bodies) expect(JSON.parse((await asked(body, accepts[0] as string)).text).data.event.relevantProfiles[1].name).toBe('ned two');
    // A secret key in the document is refused whole (400), in the variables refused by the lookup
    // (an error beside null data). Beside a query that runs (an unused variable, a repeated member
    // JSON.parse drops) it is answered, but never kept: an answer's key is its body.
    const nsec = 'nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5';
    const refusals = [
      { body: JSON.stringify({ query: `{ event(id: "${nsec}") { id } }` }), status: 400 },
      { body: JSON.stringify({ query, variables: { id: nsec } }), status: 200 },
    ];
    const carriers = [
      JSON.stringify({ query, variables: { id: note.id, unused: nsec } }),
      `{"query":${JSON.stringify(`{ event(id: "${nsec}") { id } }`)},"query":${JSON.stringify(query)},"variables":{"id":"${note.id}"}}`,
    ];
    const before = instance.cache.stats.answers;
    for (let n = 0; n < 4; n++) {
      for (const { body, status } of refusals) {
        const refused = await asked(body, accepts[1] as string);
        expect(refused.status).toBe(status);
        expect(JSON.parse(refused.text).errors[0].extensions.code).toBe('secret_key_refused');
        expect(refused.text).not.toContain(nsec);
      }
      for (const body of carriers) expect(JSON.parse((await asked(body, accepts[1] as string)).text).data.event.relevantProfiles[1].name).toBe('ned two');
    }
    expect(instance.cache.stats.answers).toBe(before);
  });

  it('a kept answer, REST or GraphQL, counts its lookups as a lookup does (nostr_lookup_lookups_total)', async () => {
    const { writer, instance, answers } = await setUp();
    await writer.store.putEvents([profile('kept eve', { name: 'eve' }, T)]);
    const url = `${instance.server.url}/user-profile?pubkey=${pubkeyOf('kept eve')}`;
    for (let n = 0; n < 2; n++) expect((await getJson(url)).status).toBe(200);
    expect(answers.get(`/user-profile?${pubkeyOf('kept eve')}`)).toBeDefined();
    const hits = async () => Number(/nostr_lookup_lookups_total\{kind="profile",outcome="index_hit"\} (\d+)/.exec(await registry.metrics())?.[1] ?? Number.NaN);
    const before = await hits();
    for (let n = 0; n < 3; n++) expect((await getJson(url)).status).toBe(200);
    expect((await hits()) - before).toBe(3);
    // A kept GraphQL answer too (prepared, made twice, then served).
    const query = 'query ($pubkey: String!) { profile(pubkey: $pubkey) { name } }';
    for (let n = 0; n < 4; n++) expect((await postGraphql(instance.server, query, { pubkey: pubkeyOf('kept eve') })).status).toBe(200);
    const served = instance.cache.stats.answers;
    const beforeGraphql = await hits();
    for (let n = 0; n < 3; n++) expect((await postGraphql(instance.server, query, { pubkey: pubkeyOf('kept eve') })).body.data).toEqual({ profile: { name: 'eve' } });
    expect(instance.cache.stats.answers - served).toBe(3);
    expect((await hits()) - beforeGraphql).toBe(3);
  });

  it('not kept: a Last-Modified held back to now (a created_at in the future), or a lookup by NIP-05 name', async () => {
    const { writer, instance, answers } = await setUp();
    const future = Math.floor(Date.now() / 1000) + 3600;
    await writer.store.putEvents([profile('kept fay', { name: 'fay' }, future)]);
    const url = `${instance.server.url}/user-profile?pubkey=${pubkeyOf('kept fay')}`;
    expect((await getJson(url)).status).toBe(200);
    expect((await getJson(url)).status).toBe(200);
    expect(answers.get(`/user-profile?${pubkeyOf('kept fay')}`)).toBeUndefined();

    // A name is resolved beside the store: whatever was read with it, the receipt is spoiled.
    const reads = new ReadReceipt();
    await instance.store.getProfiles([pubkeyOf('kept fay')], reads);
    expect(reads.whole).toBe(true);
    const context = createContext({ store: instance.store, limits: { maxProfiles: 10, maxListLength: 10 }, maxObjects: 100, reads });
    await expect(pubkeyOfArgument(context, 'fay@example.invalid')).rejects.toThrow();
    expect(reads.whole).toBe(false);
  });

  it('an answer goes with an entry evicted from a full cache, and its mark’s TTL bounds it', async () => {
    const { writer, instance, answers } = await setUp(48 * 1024);
    const notes = Array.from({ length: 60 }, (_, n) => signed('kept gus', { created_at: T + n, content: 'y'.repeat(900) }));
    await writer.store.putEvents([...notes, profile('kept gus', { name: 'gus' }, T)]);
    const first = notes[0] as (typeof notes)[number];
    for (let n = 0; n < 2; n++) expect((await getJson(`${instance.server.url}/event?id=${first.id}`)).status).toBe(200);
    expect(answers.get(`/event?${first.id}`)).toBeDefined();
    // The answer is asked after every other event, so it stays among the most recent; its event,
    // not read again (an answer refreshes its entries once a second), is the oldest and is evicted.
    let dropped = false;
    for (const note of notes.slice(1)) {
      expect((await getJson(`${instance.server.url}/event?id=${note.id}`)).status).toBe(200);
      dropped ||= answers.get(`/event?${first.id}`) === undefined;
    }
    // It went with its event (the cache holds at most its size), and is made again when asked.
    expect(dropped).toBe(true);
    expect(instance.cache.size).toBeLessThanOrEqual(48 * 1024);
    expect((await getJson(`${instance.server.url}/event?id=${first.id}`)).status).toBe(200);

    // A mark read with a profile (relays on) bounds the answers made of it.
    const pubkey = pubkeyOf('kept gus');
    await writer.store.marks.set([`profile:${pubkey}`], 1);
    const reads = new ReadReceipt();
    await instance.store.getProfilesWithMarks([pubkey], reads);
    for (let n = 0; n < 2; n++) answers.keep('test', { rendered: { parts: ['x'], validators: { etag: '"x"' } }, lookups: [] }, reads, 100);
    expect(answers.get('test')).toBeDefined();
    await sleep(1100);
    expect(answers.get('test')).toBeUndefined();
  });

  it('property: whatever is written, deleted, evicted or asked (hostile parameters too), a served answer is the one a lookup without any cache makes', async () => {
    const { writer, instance, plain } = await setUp(24 * 1024);
    const authors = ['kept p0', 'kept p1', 'kept p2'];
    const notes = authors.flatMap((author, a) =>
      [0, 1].map((n) => signed(author, { created_at: T + n, content: `note ${a}.${n} ${'z'.repeat(400)}`, tags: authors.filter((other) => other !== author).map((other) => ['p', pubkeyOf(other)]) })),
    );
    await writer.store.putEvents([...notes, ...authors.map((author) => profile(author, { name: `${author} v0` }, T))]);
    let version = 1;
    const parameter = fc.oneof(
      fc.constantFrom(...notes.map((note) => `event?id=${note.id}`), ...authors.map((author) => `user-profile?pubkey=${pubkeyOf(author)}`)),
      fc.constantFrom('event?id=', 'event?id=%00', 'user-profile?pubkey=&pubkey=', `event?id=${notes[0]?.id}&id=${notes[1]?.id}`, 'user-profile?pubkey=npub1'),
      fc.string({ maxLength: 80 }).map((text) => `user-profile?pubkey=${encodeURIComponent(text)}`),
      fc.constantFrom(...notes.flatMap((note) => [`graphql:${note.id}`, `graphql:${note.id.toUpperCase()}`, `graphql spaced:${note.id}`])),
    );
    // A GraphQL ask: the same prepared query for an event and its profiles, asked of both servers.
    const graphql = 'query ($id: String!) { event(id: $id) { json relevantProfiles { pubkey event { json } } } }';
    // GraphQL answers with an event served as kept: the property must have checked some.
    let keptGraphql = 0;
    // Deletions are for good (their notes are gone for the later runs too): rarer than the rest.
    const step = fc.oneof(
      { arbitrary: fc.record({ ask: parameter }), weight: 6 },
      { arbitrary: fc.record({ replace: fc.integer({ min: 0, max: authors.length - 1 }) }), weight: 2 },
      { arbitrary: fc.record({ remove: fc.integer({ min: 0, max: notes.length - 1 }) }), weight: 1 },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        for (const action of steps) {
          if ('ask' in action && action.ask.startsWith('graphql')) {
            const [how, id] = action.ask.split(':') as [string, string];
            // Answers are kept under the body's bytes: another spelling of one request is another key.
            const body = how === 'graphql' ? JSON.stringify({ query: graphql, variables: { id } }) : `\t${JSON.stringify({ variables: { id }, query: graphql }, null, 1)} `;
            const post = (server: Pick<TestServer, 'url'>) =>
              getJson(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' }, body });
            // Asked four times in turn: prepared by the second (the first time), made twice then
            // kept, served after (so kept answers are checked, not only made).
            for (let n = 0; n < 4; n++) {
              const served = instance.cache.stats.answers;
              const [kept, fresh] = await Promise.all([post(instance.server), post(plain)]);
              expect({ status: kept.status, text: kept.text }, action.ask).toEqual({ status: fresh.status, text: fresh.text });
              if (instance.cache.stats.answers > served && !kept.text.includes('"event":null')) keptGraphql++;
            }
            continue;
          }
          if ('ask' in action) {
            const [kept, fresh] = await Promise.all([getJson(`${instance.server.url}/${action.ask}`), getJson(`${plain.url}/${action.ask}`)]);
            expect(seen(kept), action.ask).toEqual(seen(fresh));
            continue;
          }
          if ('replace' in action) {
            const author = authors[action.replace] as string;
            await writer.store.putEvents([profile(author, { name: `${author} v${version}` }, T + version++)]);
          } else {
            const note = notes[action.remove] as (typeof notes)[number];
            await writer.store.putEvents([deletion(authorOf(note, authors), { ids: [note.id] })]);
          }
          // Within the 50 ms every instance is given to see a write.
          await sleep(50);
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
    expect(keptGraphql).toBeGreaterThan(0);
    // Each run writes and waits up to 12 times 50 ms: longer runs (FUZZ_RUNS) get the time they need.
  }, 20_000 + RUNS * 800);
});

/** The name of a note's author among `authors`. */
function authorOf(note: { pubkey: string }, authors: readonly string[]): string {
  return authors.find((author) => pubkeyOf(author) === note.pubkey) as string;
}
