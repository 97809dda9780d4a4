import { ERRORS } from '../src/errors.js';
import { nip19 } from 'nostr-tools';
import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { relayScenario } from './support/relay-scenario.js';
import { getJson, postGraphql, startTestServer } from './support/test-server.js';
import { createTestStore } from './support/test-store.js';

// Every test gets its own store, relays and server: relay traffic is what the tests count.
const { cleanups, relay, service } = relayScenario();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const alice = profile('fill-alice', { name: 'Alice' });
const bob = profile('fill-bob', { name: 'Bob' });
const carol = profile('fill-carol', { name: 'Carol' });
const note = signed('fill-alice', {
  content: `hi nostr:${nip19.npubEncode(pubkeyOf('fill-carol'))}`,
  tags: [
    ['p', pubkeyOf('fill-bob')],
    ['p', pubkeyOf('fill-nobody')], // no profile anywhere
  ],
});
const expectedEventBody = { event: note, profiles: { [alice.pubkey]: alice, [bob.pubkey]: bob, [carol.pubkey]: carol } };
const UNKNOWN_ID = 'f'.repeat(64);

describe('fetch on miss: /event', () => {
  it('a cold /event fetches the event, then all missing profiles in one subscription per relay, and stores them', async () => {
    const a = await relay({ events: [note, alice, bob] });
    const b = await relay({ events: [carol] });
    const { server, store } = await service({ urls: [a.url, b.url] });

    const response = await getJson(`${server.url}/event?id=${note.id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.body).toEqual(expectedEventBody);
    // Per relay: one REQ for the id, one for every relevant profile together, which also asks for
    // the relay lists (kind 10002) the index lacks (outbox discovery, NIP-65).
    const authors = [note.pubkey, pubkeyOf('fill-bob'), pubkeyOf('fill-nobody'), pubkeyOf('fill-carol')];
    const profileFilters = [{ kinds: [0], authors }, { kinds: [10002], authors }];
    for (const asked of [a, b]) expect(asked.requests).toEqual([[{ ids: [note.id] }, { kinds: [5], '#e': [note.id] }], profileFilters]);
    // Stored: the index answers without the relays now.
    expect((await store.store.getEvents([note.id]))[0]?.event).toEqual(note);
    expect((await store.store.getProfiles([carol.pubkey]))[0]?.event).toEqual(carol);
  });

  it('the second lookup is served from the index with every relay stopped', async () => {
    const a = await relay({ events: [note, alice, bob, carol] });
    const { server } = await service({ urls: [a.url] });
    expect((await getJson(`${server.url}/event?id=${note.id}`)).body).toEqual(expectedEventBody);
    await a.stop();
    const again = await getJson(`${server.url}/event?id=${note.id}`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(expectedEventBody);
    const profileAgain = await getJson(`${server.url}/user-profile?pubkey=${bob.pubkey}`);
    expect(profileAgain.body).toEqual({ profile: bob });
  });

  it('an id no relay has is 404 once every relay has sent EOSE, and the miss is remembered for NEGATIVE_TTL', async () => {
    const a = await relay({ events: [note] });
    const { server } = await service({ urls: [a.url], negativeTtlSeconds: 1 });
    const first = await getJson(`${server.url}/event?id=${UNKNOWN_ID}`);
    expect(first.status).toBe(404);
    expect(first.body).toEqual({ error: { status: 404, code: 'event_not_found', message: 'No event with this id is known.' } });
    expect(a.requests).toHaveLength(1);
    // Within the TTL: answered from the negative cache, no relay traffic.
    expect((await getJson(`${server.url}/event?id=${UNKNOWN_ID}`)).status).toBe(404);
    expect(a.requests).toHaveLength(1);
    // After it: the relays are asked again, and an event published meanwhile is found.
    await sleep(1100);
    const late = signed('fill-late', { content: 'published after the first lookup' });
    a.add(late);
    expect((await getJson(`${server.url}/event?id=${UNKNOWN_ID}`)).status).toBe(404);
    expect(a.requests).toHaveLength(2);
    expect((await getJson(`${server.url}/event?id=${late.id}`)).status).toBe(200);
  });

  it('404 within the deadline when one relay answers and another never does', async () => {
    const answering = await relay({ events: [] });
    const silent = await relay({ silent: true });
    const { server } = await service({ urls: [answering.url, silent.url], timeoutMs: 800 });
    const started = Date.now();
    const response = await getJson(`${server.url}/event?id=${UNKNOWN_ID}`);
    const took = Date.now() - started;
    expect(response.status).toBe(404);
    expect(took).toBeGreaterThanOrEqual(600);
    expect(took).toBeLessThan(1300);
  });

  it('500 relays_unavailable within the deadline when the only relay never answers; nothing is remembered', async () => {
    const silent = await relay({ silent: true });
    const { server, store } = await service({ urls: [silent.url], timeoutMs: 600 });
    const started = Date.now();
    const response = await getJson(`${server.url}/event?id=${UNKNOWN_ID}`);
    expect(Date.now() - started).toBeLessThan(1100);
    expect(response.status).toBe(500);
    expect(response.body).toEqual({
      error: {
        status: 500,
        code: 'relays_unavailable',
        message: 'Not in the index, and no relay could be reached or answered in time. Try again shortly.',
      },
    });
    expect(await store.store.marks.has([`event:${UNKNOWN_ID}`])).toEqual([false]);
  });

  it('500 when every relay is down, for /event and /user-profile; 200 for what the index holds', async () => {
    const a = await relay();
    const b = await relay();
    await a.stop();
    await b.stop();
    const { server } = await service({ urls: [a.url, b.url] }, [bob]);
    const event = await getJson(`${server.url}/event?id=${note.id}`);
    expect(event.status).toBe(500);
    expect((event.body as { error: { code: string } }).error.code).toBe('relays_unavailable');
    const user = await getJson(`${server.url}/user-profile?pubkey=${alice.pubkey}`);
    expect(user.status).toBe(500);
    expect((user.body as { error: { code: string } }).error.code).toBe('relays_unavailable');
    expect(user.text).not.toContain('127.0.0.1');
    expect((await getJson(`${server.url}/user-profile?pubkey=${bob.pubkey}`)).status).toBe(200);
  });

  it('every relay down: `pubkey(pubkey:)` answers, its profile is null with relays_unavailable (not a silent "no profile")', async () => {
    const a = await relay();
    await a.stop();
    const { server } = await service({ urls: [a.url] }, [bob]);
    const response = await postGraphql(server, `{ pubkey(pubkey: "${alice.pubkey}") { pubkey profile { name } } held: pubkey(pubkey: "${bob.pubkey}") { profile { name } } }`);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ pubkey: { pubkey: alice.pubkey, profile: null }, held: { profile: { name: 'Bob' } } });
    expect(response.body.errors?.map((error) => [error.path, error.extensions?.code])).toEqual([[['pubkey', 'profile'], 'relays_unavailable']]);
  });

  it('every relay down: an event the index holds is 200, with the profiles the index holds and no others', async () => {
    const a = await relay();
    await a.stop();
    const { server } = await service({ urls: [a.url] }, [note, bob]);
    // alice, carol and fill-nobody are not in the index, and no relay can be asked: relays_unavailable
    // for each of them, which leaves them out of the map instead of failing the request.
    const response = await getJson(`${server.url}/event?id=${note.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ event: note, profiles: { [bob.pubkey]: bob } });
  });

  it('an event with a bad signature is never returned nor stored; the valid version from another relay is', async () => {
    const forged: NostrEvent = { ...note, content: `${note.content} (edited by the relay)` };
    const forgedProfile: NostrEvent = { ...bob, content: JSON.stringify({ name: 'Mallory' }) };
    const liar = await relay({ events: [forged, forgedProfile] });
    const { server, store } = await service({ urls: [liar.url] });
    expect((await getJson(`${server.url}/event?id=${note.id}`)).status).toBe(404);
    expect((await getJson(`${server.url}/user-profile?pubkey=${bob.pubkey}`)).status).toBe(404);
    expect(await store.store.getEvents([note.id])).toEqual([null]);
    expect(await store.store.getProfiles([bob.pubkey])).toEqual([null]);

    const honest = await relay({ events: [note, bob] });
    const both = await service({ urls: [liar.url, honest.url] });
    const response = await getJson(`${both.server.url}/event?id=${note.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ event: note, profiles: { [bob.pubkey]: bob } });
  });

  it('a profile that does not arrive in time is just absent from the map', async () => {
    const events = await relay({ events: [note, alice] });
    const slow = await relay({ silent: true });
    const { server } = await service({ urls: [events.url, slow.url], timeoutMs: 700 });
    // The event comes from the first relay at once; the profiles wait for the silent one until the deadline.
    const response = await getJson(`${server.url}/event?id=${note.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ event: note, profiles: { [alice.pubkey]: alice } });
  });

  it('an old profile version a relay still holds is not served by id, as the index would not serve it (it may be covered by an a-tag deletion since)', async () => {
    const old = profile('fill-gina', { name: 'Gina (old)' }, 1_700_000_000);
    const current = profile('fill-gina', { name: 'Gina' }, 1_700_000_900);
    const a = await relay({ events: [old] });
    const { server, store } = await service({ urls: [a.url] }, [current]);
    await store.store.marks.set([`profile:${current.pubkey}`], 300); // fresh: no refresh in the way
    const response = await getJson(`${server.url}/event?id=${old.id}`);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: { status: 404, code: 'event_not_found', message: ERRORS.event_not_found.message } });
    expect((await store.store.getProfiles([current.pubkey]))[0]?.event).toEqual(current); // never regressed
    // Remembered like a miss: the relay is not asked again.
    const asked = a.requests.length;
    expect((await getJson(`${server.url}/event?id=${old.id}`)).status).toBe(404);
    expect(a.requests.length).toBe(asked);
  });

  it('concurrent lookups of the same missing id share one relay query', async () => {
    const a = await relay({ events: [note, alice, bob, carol] });
    const { server } = await service({ urls: [a.url] });
    const responses = await Promise.all(Array.from({ length: 8 }, () => getJson(`${server.url}/event?id=${note.id}`)));
    for (const response of responses) expect(response.body).toEqual(expectedEventBody);
    const idRequests = a.requests.filter(([filter]) => filter?.ids !== undefined);
    const profileRequests = a.requests.filter(([filter]) => filter?.kinds !== undefined);
    expect(idRequests).toHaveLength(1);
    expect(profileRequests).toHaveLength(1);
  });

  it('GraphQL fields fetch on miss too: event with author and relevant profiles', async () => {
    const a = await relay({ events: [note, alice, bob, carol] });
    const { server } = await service({ urls: [a.url] });
    const response = await getJson(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ event(id: "${note.id}") { id author { name } relevantProfiles { name } } }` }),
    });
    expect(response.body).toEqual({
      data: { event: { id: note.id, author: { name: 'Alice' }, relevantProfiles: [{ name: 'Alice' }, { name: 'Bob' }, { name: 'Carol' }] } },
    });
  });
});

describe('coalescing across instances sharing one store', () => {
  it('a second instance waits for the first one\'s relay query instead of asking again, for ids and profiles', async () => {
    const slow = await relay({ events: [note, alice, bob, carol], delayMs: 300 });
    const { server: first, store } = await service({ urls: [slow.url] });
    const second = await startTestServer(store.store, { relays: { urls: [slow.url] } });
    cleanups.push(() => second.close());

    const fromFirst = getJson(`${first.url}/event?id=${note.id}`);
    await expect.poll(() => slow.requests.length, { timeout: 1000, interval: 5 }).toBe(1);
    const fromSecond = getJson(`${second.url}/event?id=${note.id}`);
    expect((await fromFirst).body).toEqual(expectedEventBody);
    expect((await fromSecond).body).toEqual(expectedEventBody);
    // One REQ for the id and one for the profiles, from the first instance only.
    expect(slow.requests.map(([filter]) => (filter?.ids ? 'ids' : 'profiles'))).toEqual(['ids', 'profiles']);
  });

  it('a miss found by one instance is a 404 for the instance that waited', async () => {
    const slow = await relay({ events: [], delayMs: 300 });
    const { server: first, store } = await service({ urls: [slow.url] });
    const second = await startTestServer(store.store, { relays: { urls: [slow.url] } });
    cleanups.push(() => second.close());
    const pubkey = pubkeyOf('fill-nobody-anywhere');
    const fromFirst = getJson(`${first.url}/user-profile?pubkey=${pubkey}`);
    await expect.poll(() => slow.requests.length, { timeout: 1000, interval: 5 }).toBe(1);
    const fromSecond = getJson(`${second.url}/user-profile?pubkey=${pubkey}`);
    expect((await fromFirst).status).toBe(404);
    expect((await fromSecond).status).toBe(404);
    expect(slow.requests).toHaveLength(1);
  });
});

describe('fetch on miss: /user-profile', () => {
  it('returns the newest kind 0 of all relays once each has sent EOSE', async () => {
    const older = profile('fill-dave', { name: 'Dave (old)' }, 1_700_000_000);
    const newer = profile('fill-dave', { name: 'Dave (new)' }, 1_700_000_500);
    const a = await relay({ events: [newer] });
    const b = await relay({ events: [older] });
    const { server } = await service({ urls: [a.url, b.url] });
    const response = await getJson(`${server.url}/user-profile?pubkey=${newer.pubkey}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ profile: newer });
  });

  it('concurrent lookups of one missing pubkey share one subscription; its absence is then remembered', async () => {
    const a = await relay({ events: [] });
    const { server } = await service({ urls: [a.url] });
    const pubkey = pubkeyOf('fill-ghost');
    const responses = await Promise.all(Array.from({ length: 6 }, () => getJson(`${server.url}/user-profile?pubkey=${pubkey}`)));
    expect(responses.map((response) => response.status)).toEqual([404, 404, 404, 404, 404, 404]);
    expect(a.requests).toEqual([[{ kinds: [0], authors: [pubkey] }, { kinds: [10002], authors: [pubkey] }]]);
    expect((await getJson(`${server.url}/user-profile?pubkey=${pubkey}`)).status).toBe(404);
    expect(a.requests).toHaveLength(1);
  });
});

describe('large lookups', () => {
  it('1,000 missing profiles in one GraphQL request: one REQ per relay, split into filters of 500', async () => {
    const a = await relay({ events: [bob] });
    const store = await createTestStore();
    cleanups.push(() => store.cleanup());
    const server = await startTestServer(store.store, { relays: { urls: [a.url], maxKeysPerRequest: 1000 }, lookup: { maxListLength: 1000 } });
    cleanups.push(() => server.close());
    const pubkeys = [bob.pubkey, ...Array.from({ length: 999 }, (_, n) => `f${n.toString(16)}`.padStart(64, '0'))];
    const response = await getJson(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query ($p: [String!]!) { profiles(pubkeys: $p) { name } }', variables: { p: pubkeys } }),
    });
    const profiles = (response.body as { data: { profiles: ({ name: string } | null)[] } }).data.profiles;
    expect(profiles).toHaveLength(1000);
    expect(profiles[0]).toEqual({ name: 'Bob' });
    expect(profiles.filter(Boolean)).toHaveLength(1);
    expect(a.requests).toHaveLength(1);
    // Profiles and relay lists (outbox discovery), 500 authors per filter.
    expect(a.requests[0]?.map((filter) => [filter.kinds, filter.authors?.length])).toEqual([
      [[0], 500],
      [[0], 500],
      [[10002], 500],
      [[10002], 500],
    ]);
  });
});

describe('keys asked of the relays per request are capped (RELAY_MAX_KEYS_PER_REQUEST; found by review)', () => {
  it('past the cap, the rest is throttled: the relays hear of the first keys only, the list answers too_many_requests', async () => {
    const a = await relay({ events: [bob] });
    const { server } = await service({ urls: [a.url], maxKeysPerRequest: 10 });
    const pubkeys = [bob.pubkey, ...Array.from({ length: 19 }, (_, n) => `e${n.toString(16)}`.padStart(64, '0'))];
    const response = await getJson(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query ($p: [String!]!) { profiles(pubkeys: $p) { name } }', variables: { p: pubkeys } }),
    });
    expect((response.body as { errors: { extensions: { code: string } }[] }).errors[0]?.extensions.code).toBe('too_many_requests');
    expect(a.requests).toHaveLength(1);
    expect(a.requests[0]?.[0]?.authors).toHaveLength(10);
    // An /event with its profiles stays far below the cap (MAX_PROFILES + 1).
    expect((await getJson(`${server.url}/user-profile?pubkey=${bob.pubkey}`)).body).toEqual({ profile: bob });
  });
});

describe('fresh profiles (stale-while-revalidate)', () => {
  it('serves a stale profile at once, refreshes it in the background once per PROFILE_TTL, and serves the edit', async () => {
    const v1 = profile('fill-erin', { name: 'Erin v1' }, 1_700_000_000);
    const v2 = profile('fill-erin', { name: 'Erin v2' }, 1_700_000_100);
    const v3 = profile('fill-erin', { name: 'Erin v3' }, 1_700_000_200);
    const a = await relay({ events: [v2] });
    // v1 came from an import: never checked against the relays, so stale from the start.
    const { server } = await service({ urls: [a.url], profileTtlSeconds: 1 }, [v1]);
    const url = `${server.url}/user-profile?pubkey=${v1.pubkey}`;

    expect((await getJson(url)).body).toEqual({ profile: v1 }); // served at once
    await expect.poll(async () => (await getJson(url)).body, { timeout: 3000, interval: 50 }).toEqual({ profile: v2 });
    expect(a.requests).toHaveLength(1); // one refresh, however many reads

    a.add(v3); // edited on the relay
    expect((await getJson(url)).body).toEqual({ profile: v2 }); // still fresh: no relay traffic
    expect(a.requests).toHaveLength(1);
    await sleep(1100);
    await expect.poll(async () => (await getJson(url)).body, { timeout: 3000, interval: 50 }).toEqual({ profile: v3 });
    expect(a.requests).toHaveLength(2);
  });

  it('a refresh that finds an older version on the relays never regresses the stored profile', async () => {
    const older = profile('fill-frank', { name: 'Frank old' }, 1_700_000_000);
    const newer = profile('fill-frank', { name: 'Frank new' }, 1_700_000_100);
    const a = await relay({ events: [older] });
    const { server } = await service({ urls: [a.url] }, [newer]);
    const url = `${server.url}/user-profile?pubkey=${newer.pubkey}`;
    expect((await getJson(url)).body).toEqual({ profile: newer });
    await expect.poll(() => a.requests.length, { timeout: 2000, interval: 20 }).toBe(1);
    await sleep(100);
    expect((await getJson(url)).body).toEqual({ profile: newer });
  });
});

describe('relay hints (nevent/nprofile) are untrusted', () => {
  const hinted = signed('fill-hinted', { content: 'only on the hinted relay' });

  it('a hint to a loopback relay is refused unless RELAY_ALLOW_PRIVATE', async () => {
    const configured = await relay({ events: [] });
    const hintRelay = await relay({ events: [hinted] });
    const nevent = nip19.neventEncode({ id: hinted.id, relays: [hintRelay.url] });
    const refusing = await service({ urls: [configured.url] });
    expect((await getJson(`${refusing.server.url}/event?id=${nevent}`)).status).toBe(404);
    expect(hintRelay.requests).toHaveLength(0);
    expect(configured.requests).toHaveLength(1);

    const allowing = await service({ urls: [configured.url], allowPrivateHints: true });
    const response = await getJson(`${allowing.server.url}/event?id=${nevent}`);
    expect(response.status).toBe(200);
    expect((response.body as { event: NostrEvent }).event).toEqual(hinted);
    expect(hintRelay.requests[0]).toEqual([{ ids: [hinted.id] }, { kinds: [5], '#e': [hinted.id] }]);
  });

  it('an nprofile hint is followed for /user-profile when allowed', async () => {
    const configured = await relay({ events: [] });
    const hintRelay = await relay({ events: [bob] });
    const nprofile = nip19.nprofileEncode({ pubkey: bob.pubkey, relays: [hintRelay.url] });
    const refusing = await service({ urls: [configured.url] });
    expect((await getJson(`${refusing.server.url}/user-profile?pubkey=${nprofile}`)).status).toBe(404);
    expect(hintRelay.requests).toHaveLength(0);
    const allowing = await service({ urls: [configured.url], allowPrivateHints: true });
    expect((await getJson(`${allowing.server.url}/user-profile?pubkey=${nprofile}`)).body).toEqual({ profile: bob });
    expect(hintRelay.requests).toEqual([[{ kinds: [0], authors: [bob.pubkey] }]]);
  });

  it('follows at most 3 hints per request, and hints that are not ws(s) URLs are ignored', async () => {
    const configured = await relay({ events: [] });
    const hintRelays = await Promise.all([1, 2, 3, 4].map(() => relay({ events: [] })));
    const nevent = nip19.neventEncode({
      id: UNKNOWN_ID,
      relays: ['https://example.com', 'javascript:alert(1)', ...hintRelays.map((hintRelay) => hintRelay.url)],
    });
    const { server } = await service({ urls: [configured.url], allowPrivateHints: true });
    expect((await getJson(`${server.url}/event?id=${nevent}`)).status).toBe(404);
    expect(hintRelays.map((hintRelay) => hintRelay.requests.length)).toEqual([1, 1, 1, 0]);
  });
});

describe('poisoned misses: only trusted relays decide a shared miss', () => {
  const hinted = signed('fill-poison', { content: 'only on the hinted relay' });
  const hintedProfile = profile('fill-poison-profile', { name: 'only on a hinted relay' });

  it('a plain-id miss does not hide a hinted relay: the nevent that names it answers 200', async () => {
    const configured = await relay({ events: [] });
    const hintRelay = await relay({ events: [hinted] });
    const { server } = await service({ urls: [configured.url], allowPrivateHints: true });
    expect((await getJson(`${server.url}/event?id=${hinted.id}`)).status).toBe(404);
    const nevent = nip19.neventEncode({ id: hinted.id, relays: [hintRelay.url] });
    const response = await getJson(`${server.url}/event?id=${nevent}`);
    expect(response.status).toBe(200);
    expect((response.body as { event: NostrEvent }).event).toEqual(hinted);
    // The trusted relay was not asked for the id again within NEGATIVE_TTL (only for the author's
    // profile, which no mark covers); the hint was asked once for the id.
    expect(configured.requests.filter(([filter]) => 'ids' in (filter ?? {}))).toEqual([[{ ids: [hinted.id] }, { kinds: [5], '#e': [hinted.id] }]]);
    expect(hintRelay.requests[0]).toEqual([{ ids: [hinted.id] }, { kinds: [5], '#e': [hinted.id] }]);
  });

  it('the same for profiles: a marked miss does not hide an nprofile hint', async () => {
    const configured = await relay({ events: [] });
    const hintRelay = await relay({ events: [hintedProfile] });
    const { server } = await service({ urls: [configured.url], allowPrivateHints: true });
    expect((await getJson(`${server.url}/user-profile?pubkey=${hintedProfile.pubkey}`)).status).toBe(404);
    const nprofile = nip19.nprofileEncode({ pubkey: hintedProfile.pubkey, relays: [hintRelay.url] });
    expect((await getJson(`${server.url}/user-profile?pubkey=${nprofile}`)).body).toEqual({ profile: hintedProfile });
  });

  it('an untrusted hint that answers EOSE while the trusted relays are down leaves no shared 404', async () => {
    const configured = await relay({ events: [] });
    await configured.stop();
    const hintRelay = await relay({ events: [] });
    const { server, store } = await service({ urls: [configured.url], allowPrivateHints: true });
    const nevent = nip19.neventEncode({ id: UNKNOWN_ID, relays: [hintRelay.url] });
    // For its own request, the hinted relay's answer counts: it had nothing.
    expect((await getJson(`${server.url}/event?id=${nevent}`)).status).toBe(404);
    expect(hintRelay.requests).toHaveLength(1);
    // For everyone else, nothing was decided: no mark, and a plain lookup is still "unavailable".
    expect(await store.store.marks.has([`event:${UNKNOWN_ID}`])).toEqual([false]);
    const plain = await getJson(`${server.url}/event?id=${UNKNOWN_ID}`);
    expect(plain.status).toBe(500);
    expect((plain.body as { error: { code: string } }).error.code).toBe('relays_unavailable');
    const nprofile = nip19.nprofileEncode({ pubkey: pubkeyOf('fill-nobody'), relays: [hintRelay.url] });
    expect((await getJson(`${server.url}/user-profile?pubkey=${nprofile}`)).status).toBe(404);
    expect(await store.store.marks.has([`profile:${pubkeyOf('fill-nobody')}`])).toEqual([false]);
  });
});

describe('misses per client are capped (a client must not make us flood relays)', () => {
  it('past MISS_CONCURRENCY_PER_CLIENT lookups at the relays at once, the next is 429 with Retry-After; later ones are admitted again', async () => {
    const silent = await relay({ silent: true });
    const { server } = await service({ urls: [silent.url], timeoutMs: 1000, missesPerClient: 2 });
    const ids = ['1', '2', '3'].map((digit) => digit.repeat(64));
    const started = Date.now();
    const [first, second, third] = await Promise.all(
      ids.map(async (id, index) => {
        await sleep(index * 50);
        const response = await getJson(`${server.url}/event?id=${id}`);
        return { ...response, ms: Date.now() - started };
      }),
    );
    expect([first?.status, second?.status]).toEqual([500, 500]);
    expect(third?.status).toBe(429);
    expect(third?.headers.get('retry-after')).toBe('1');
    expect(third?.body).toEqual({ error: { status: 429, code: 'too_many_requests', message: expect.any(String) } });
    expect(third?.ms).toBeLessThan(500);
    // The relays were asked twice, not three times; once those ended, the client is admitted again.
    expect(silent.requests).toHaveLength(2);
    expect((await getJson(`${server.url}/event?id=${'4'.repeat(64)}`)).status).toBe(500);
  });

  it('lookups of one key that join a lookup under way take no slot: ten concurrent misses of one pubkey from one client are all answered, the relays asked once', async () => {
    const silent = await relay({ silent: true });
    const { server } = await service({ urls: [silent.url], timeoutMs: 600, missesPerClient: 2 });
    const pubkey = pubkeyOf('fill-asked-ten-times');
    const first = getJson(`${server.url}/user-profile?pubkey=${pubkey}`);
    // The first is under way (its REQ reached the relay) before the other nine come.
    for (let attempt = 0; silent.requests.length === 0 && attempt < 100; attempt++) await sleep(10);
    const rest = await Promise.all(Array.from({ length: 9 }, () => getJson(`${server.url}/user-profile?pubkey=${pubkey}`)));
    const statuses = [(await first).status, ...rest.map((response) => response.status)];
    // The silent relay never answers: every lookup ends "unavailable" at its deadline, none 429.
    expect(statuses).toEqual(statuses.map(() => 500));
    expect(silent.requests).toHaveLength(1);
  });

  it('MISS_CONCURRENCY_PER_CLIENT=0 turns the cap off (behind a proxy every client has its address)', async () => {
    const silent = await relay({ silent: true });
    const { server } = await service({ urls: [silent.url], timeoutMs: 500, missesPerClient: 0 });
    const statuses = await Promise.all(
      ['5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e'].map(async (digit) => (await getJson(`${server.url}/event?id=${digit.repeat(64)}`)).status),
    );
    expect(statuses).toEqual(statuses.map(() => 500));
  });
});

describe('RELAYS empty', () => {
  it('no relay traffic at all: a miss is a plain 404', async () => {
    const { server } = await service({ urls: [] });
    expect((await getJson(`${server.url}/event?id=${UNKNOWN_ID}`)).status).toBe(404);
    expect((await getJson(`${server.url}/user-profile?pubkey=${pubkeyOf('fill-nobody')}`)).status).toBe(404);
  });
});
