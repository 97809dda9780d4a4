import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileMarkKey } from '../src/store/mark-store.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { type LoopbackRelay, startLoopbackRelay } from './support/loopback-relay.js';
import { type PrivateRedis, startPrivateRedis } from './support/redis-server.js';
import { getJson, startTestServer, type TestServer } from './support/test-server.js';
import { createTestStore, type TestStore } from './support/test-store.js';

// Command statistics are server-wide, so this file counts on a private redis-server.
let redis: PrivateRedis;
let testStore: TestStore;
let server: TestServer;
let admin: Redis;

const mentioned = Array.from({ length: 19 }, (_, n) => `friend-${n}`);
const note = signed('author', { tags: mentioned.map((name) => ['p', pubkeyOf(name)]) });
const authorProfile = profile('author', { name: 'author' });

beforeAll(async () => {
  redis = await startPrivateRedis();
  testStore = await createTestStore(redis.url);
  await testStore.store.putEvents([note, authorProfile, ...mentioned.map((name) => profile(name, { name }))]);
  server = await startTestServer(testStore.store);
  admin = new Redis(redis.url);
});
afterAll(async () => {
  admin?.disconnect();
  await server?.close();
  await testStore?.cleanup();
  await redis?.stop();
});

/** Commands Redis executed while `run` ran, by name (CONFIG RESETSTAT + INFO commandstats). */
async function commandsDuring(run: () => Promise<unknown>): Promise<Record<string, number>> {
  await admin.config('RESETSTAT');
  await run();
  const info = await admin.info('commandstats');
  const counts: Record<string, number> = {};
  for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (!name?.startsWith('config') && name !== 'info') counts[name as string] = Number(calls);
  }
  return counts;
}

describe('DataLoader batching, counted in Redis', () => {
  it('/event with 20 relevant pubkeys costs 2 commands: the event, then one MGET of all profiles', async () => {
    let body: { profiles: object } | undefined;
    const counts = await commandsDuring(async () => {
      body = (await getJson(`${server.url}/event?id=${note.id}`)).body as { profiles: object };
    });
    expect(Object.keys(body?.profiles ?? {})).toHaveLength(20);
    expect(counts).toEqual({ mget: 2 });
  });

  it('/user-profile costs 1 command', async () => {
    const counts = await commandsDuring(() =>
      getJson(`${server.url}/user-profile?pubkey=${pubkeyOf('author')}`),
    );
    expect(counts).toEqual({ mget: 1 });
  });

  it('/event of a kind-0 event costs 2: the id marker, then its slot, which also answers the author profile', async () => {
    const counts = await commandsDuring(async () => {
      expect((await getJson(`${server.url}/event?id=${authorProfile.id}`)).status).toBe(200);
    });
    expect(counts).toEqual({ mget: 2 });
  });

  it('a GraphQL query asking for author and relevant profiles of an event still costs 2', async () => {
    const query = `{ event(id: "${note.id}") { author { name } relevantProfiles { name } relevantPubkeys } }`;
    const counts = await commandsDuring(async () => {
      const response = await getJson(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      expect(
        (response.body as { data: { event: { relevantProfiles: unknown[] } } }).data.event.relevantProfiles,
      ).toHaveLength(20);
    });
    expect(counts).toEqual({ mget: 2 });
  });

  it('a GraphQL query for several profiles at once costs 1', async () => {
    const pubkeys = mentioned.slice(0, 10).map(pubkeyOf);
    const counts = await commandsDuring(async () => {
      const response = await getJson(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query:
            'query ($p: [String!]!, $one: String!) { profiles(pubkeys: $p) { name } profile(pubkey: $one) { name } }',
          variables: { p: pubkeys, one: pubkeyOf('author') },
        }),
      });
      expect(response.status).toBe(200);
    });
    expect(counts).toEqual({ mget: 1 });
  });
});

describe('with relays configured, cached reads cost the same', () => {
  let relay: LoopbackRelay;
  let withRelays: TestServer;
  const everyone = ['author', ...mentioned].map(pubkeyOf);

  beforeAll(async () => {
    relay = await startLoopbackRelay();
    withRelays = await startTestServer(testStore.store, { relays: { urls: [relay.url] } });
  });
  afterAll(async () => {
    await withRelays?.close();
    await relay?.stop();
  });

  it('fresh profiles: /user-profile is 1 command and /event 2, the freshness marks ride in the same MGET', async () => {
    await testStore.store.marks.set(everyone.map(profileMarkKey), 300);
    const profileCounts = await commandsDuring(async () => {
      expect((await getJson(`${withRelays.url}/user-profile?pubkey=${pubkeyOf('author')}`)).status).toBe(200);
    });
    expect(profileCounts).toEqual({ mget: 1 });
    const eventCounts = await commandsDuring(async () => {
      const response = await getJson(`${withRelays.url}/event?id=${note.id}`);
      expect(Object.keys((response.body as { profiles: object }).profiles)).toHaveLength(20);
    });
    expect(eventCounts).toEqual({ mget: 2 });
    expect(relay.requests).toHaveLength(0);
  });

  it('a stale profile is served from that one MGET; its refresh is claimed with one SET NX, then asked of the relays', async () => {
    await testStore.store.marks.clear([profileMarkKey(pubkeyOf('author'))]);
    const counts = await commandsDuring(async () => {
      expect((await getJson(`${withRelays.url}/user-profile?pubkey=${pubkeyOf('author')}`)).body).toEqual({ profile: authorProfile });
      await expect.poll(() => relay.requests.length, { timeout: 2000, interval: 20 }).toBe(1);
    });
    // The read: one MGET. The background refresh: one SET NX (the claim), one MGET (the author's
    // relay list, for its write relays, with that list's freshness mark), then the relays, which
    // are also asked for that list (the author has none: no freshness mark is written).
    expect(counts.mget).toBe(2);
    expect(counts.set).toBe(1);
    expect(relay.requests).toEqual([[{ kinds: [0], authors: [pubkeyOf('author')] }, { kinds: [10002], authors: [pubkeyOf('author')] }]]);
  });

  it('a remembered miss of a profile is 2 commands: its mark, then the author\'s relay list with its freshness mark (no relay asked)', async () => {
    const nobody = pubkeyOf('remembered-nobody');
    expect((await getJson(`${withRelays.url}/user-profile?pubkey=${nobody}`)).status).toBe(404);
    const asked = relay.requests.length;
    const counts = await commandsDuring(async () => {
      expect((await getJson(`${withRelays.url}/user-profile?pubkey=${nobody}`)).status).toBe(404);
    });
    expect(counts).toEqual({ mget: 2 });
    expect(relay.requests).toHaveLength(asked);
  });
});
