import { nip19 } from 'nostr-tools';
import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { startLoopbackRelay } from './support/loopback-relay.js';
import { relayScenario } from './support/relay-scenario.js';
import { getJson } from './support/test-server.js';

// Outbox discovery (NIP-65) against real WebSocket relays on loopback: ours (test/support/
// loopback-relay.ts) and @nostr-relay/core. Nothing is mocked at the socket level.

const { relay, thirdParty, service } = relayScenario({ allowPrivateHints: true });

/** A relay that refuses connections: started for a free port, then stopped. */
async function deadRelay(): Promise<string> {
  const started = await startLoopbackRelay();
  await started.stop();
  return started.url;
}

/** A NIP-65 relay list: `write` relays unmarked (read and write), `read` relays marked read. */
function relayList(author: string, write: string[], read: string[] = [], created_at = 1_700_000_000): NostrEvent {
  return signed(author, {
    kind: 10002,
    created_at,
    tags: [...write.map((url) => ['r', url]), ...read.map((url) => ['r', url, 'read'])],
  });
}

const profileReq = (...authors: string[]) => [{ kinds: [0], authors }];

describe('outbox discovery (NIP-65)', () => {
  it('a relay list in the index sends a missing profile to the author\'s write relays at once, never to its read relays', async () => {
    const dana = profile('ob-dana', { name: 'Dana' });
    const base = await relay();
    const write = await relay({ events: [dana] });
    const readOnly = await relay({ events: [dana] });
    const { server, store } = await service({ urls: [base.url] }, [relayList('ob-dana', [write.url], [readOnly.url])]);
    await store.store.marks.set([`relays:${dana.pubkey}`], 300);

    const response = await getJson(`${server.url}/user-profile?pubkey=${dana.pubkey}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ profile: dana });
    // The list was known and fresh: no discovery filter; the write relay got one REQ; the read relay none.
    expect(base.requests).toEqual([profileReq(dana.pubkey)]);
    expect(write.requests).toEqual([profileReq(dana.pubkey)]);
    expect(readOnly.requests).toEqual([]);
    expect((await store.store.getProfiles([dana.pubkey]))[0]?.event).toEqual(dana);
  });

  it('a stored relay list past PROFILE_TTL is used at once and looked for again; a newer one that arrives is stored and its new relays asked', async () => {
    const eli = profile('ob-eli', { name: 'Eli' });
    const old = await relay();
    const moved = await relay({ events: [eli] });
    const newer = relayList('ob-eli', [old.url, moved.url], [], 1_700_000_500);
    const base = await relay({ events: [newer] });
    const { server, store } = await service({ urls: [base.url] }, [relayList('ob-eli', [old.url])]);

    const response = await getJson(`${server.url}/user-profile?pubkey=${eli.pubkey}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ profile: eli });
    expect(base.requests).toEqual([[{ kinds: [0], authors: [eli.pubkey] }, { kinds: [10002], authors: [eli.pubkey] }]]);
    expect(old.requests).toEqual([profileReq(eli.pubkey)]);
    expect(moved.requests).toEqual([profileReq(eli.pubkey)]);
    expect((await store.store.getReplaceable(10002, [eli.pubkey]))[0]?.event).toEqual(newer);
    expect(await store.store.marks.has([`relays:${eli.pubkey}`])).toEqual([true]);
  });

  it('a relay list the index lacks is fetched from INDEXER_RELAYS in the same REQ, stored, and used: the next lookup needs no discovery', async () => {
    const erin = profile('ob-erin', { name: 'Erin' });
    const note = signed('ob-erin', { content: 'only on my own relay' });
    const list = relayList('ob-erin', []);
    const write = await relay({ events: [erin, note] });
    const erinList = relayList('ob-erin', [write.url], [], list.created_at + 1);
    const base = await relay();
    const indexer = await relay({ events: [erinList] });
    const { server, store } = await service({ urls: [base.url], indexerUrls: [indexer.url] });

    const response = await getJson(`${server.url}/user-profile?pubkey=${erin.pubkey}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ profile: erin });
    const discovery = [{ kinds: [0], authors: [erin.pubkey] }, { kinds: [10002], authors: [erin.pubkey] }];
    expect(base.requests).toEqual([discovery]);
    expect(indexer.requests).toEqual([discovery]);
    expect(write.requests).toEqual([profileReq(erin.pubkey)]);
    // Verified and stored like any replaceable event.
    expect((await store.store.getReplaceable(10002, [erin.pubkey]))[0]?.event).toEqual(erinList);

    // An nevent with the author: the list is in the index now, so its write relay is asked at once,
    // and the indexer (which holds no notes) is not asked for an id.
    const nevent = nip19.neventEncode({ id: note.id, author: erin.pubkey });
    const event = await getJson(`${server.url}/event?id=${nevent}`);
    expect(event.status).toBe(200);
    expect((event.body as { event: NostrEvent }).event).toEqual(note);
    expect(base.requests.at(-1)).toEqual([{ ids: [note.id] }, { kinds: [5], '#e': [note.id] }]);
    expect(indexer.requests).toHaveLength(1);
    expect(write.requests.at(-1)).toEqual([{ ids: [note.id] }, { kinds: [5], '#e': [note.id] }]);
  });

  it('an nevent with an author finds a note that only the author\'s write relay holds, on a third-party relay (@nostr-relay/core)', async () => {
    const fay = profile('ob-fay', { name: 'Fay' });
    const note = signed('ob-fay', { content: 'published to my outbox only' });
    const write = await thirdParty([note, fay]);
    const base = await relay({ events: [relayList('ob-fay', [write.url])] });
    const { server } = await service({ urls: [base.url] });

    const bare = await getJson(`${server.url}/event?id=${note.id}`);
    // A bare id names no author: nobody knows where to look but the base relays.
    expect(bare.status).toBe(404);
    const nevent = nip19.neventEncode({ id: note.id, author: fay.pubkey });
    const found = await getJson(`${server.url}/event?id=${nevent}`);
    expect(found.status).toBe(200);
    expect(found.body).toEqual({ event: note, profiles: { [fay.pubkey]: fay } });
  });

  it('batching: the missing profiles of one /event go to each write relay in one subscription, each author on at most OUTBOX_RELAYS_PER_PUBKEY relays', async () => {
    const people = ['ob-p1', 'ob-p2', 'ob-p3', 'ob-p4'].map((name) => profile(name, { name }));
    const [w1, w2, w3] = await Promise.all([relay({ events: people }), relay({ events: people }), relay({ events: people })]);
    const lists = [
      relayList('ob-p1', [w1!.url, w2!.url, w3!.url]),
      relayList('ob-p2', [w1!.url, w2!.url]),
      relayList('ob-p3', [w2!.url, w1!.url, w3!.url]),
      relayList('ob-p4', [w3!.url, w1!.url]),
    ];
    const note = signed('ob-p1', { tags: people.slice(1).map((person) => ['p', person.pubkey]) });
    const base = await relay({ events: [note] });
    const { server } = await service({ urls: [base.url], outbox: { enabled: true, relaysPerPubkey: 2, maxRelays: 20 } }, lists);

    const response = await getJson(`${server.url}/event?id=${note.id}`);
    expect(response.status).toBe(200);
    expect(Object.keys((response.body as { profiles: object }).profiles).sort()).toEqual(people.map((p) => p.pubkey).sort());
    const asked = new Map<string, number>();
    for (const write of [w1!, w2!, w3!]) {
      expect(write.requests.length).toBeLessThanOrEqual(1);
      for (const author of write.requests[0]?.[0]?.authors ?? []) asked.set(author, (asked.get(author) ?? 0) + 1);
    }
    // Greedy cover: w1 serves all four, then one more relay each; nobody is asked of three relays.
    expect(w1!.requests).toHaveLength(1);
    expect([...asked.values()].every((count) => count === 2)).toBe(true);
    expect(asked.size).toBe(4);
  });

  it('dead and silent write relays: the live one is found within RELAY_TIMEOUT_MS, through the author\'s next relays', async () => {
    const gus = profile('ob-gus', { name: 'Gus' });
    const silent = await relay({ silent: true });
    const dead = await deadRelay();
    const live = await relay({ events: [gus] });
    const base = await relay();
    const timeoutMs = 1500;
    const { server } = await service({ urls: [base.url], timeoutMs }, [relayList('ob-gus', [dead, silent.url, live.url])]);

    const started = performance.now();
    const response = await getJson(`${server.url}/user-profile?pubkey=${gus.pubkey}`);
    const elapsed = performance.now() - started;
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ profile: gus });
    expect(elapsed).toBeLessThan(timeoutMs + 100);
    expect(live.requests).toEqual([profileReq(gus.pubkey)]);
  });

  it('only dead and silent write relays: 404 from the base relays, within the deadline, and the dead relay rests for the next request', async () => {
    const hal = pubkeyOf('ob-hal');
    const silent = await relay({ silent: true });
    const dead = await deadRelay();
    const base = await relay();
    const timeoutMs = 1000;
    const { server } = await service({ urls: [base.url], timeoutMs }, [relayList('ob-hal', [dead, silent.url])]);

    const started = performance.now();
    const response = await getJson(`${server.url}/user-profile?pubkey=${hal}`);
    expect(performance.now() - started).toBeLessThan(timeoutMs + 100);
    expect(response.status).toBe(404);
    expect(server.pool?.health.resting(dead)).toBe(true);
    expect(server.pool?.health.get(dead)?.failures).toBe(1);
    // (A learned relay's rest is logged at debug: the test server logs at info.)
  });

  it('write relays at private addresses are refused unless RELAY_ALLOW_PRIVATE (checked on the resolved address)', async () => {
    const ivy = profile('ob-ivy', { name: 'Ivy' });
    const write = await relay({ events: [ivy] });
    const byName = `ws://localhost:${write.port}/`;
    const base = await relay();
    const { server } = await service({ urls: [base.url], allowPrivateHints: false }, [relayList('ob-ivy', [write.url, byName])]);

    const response = await getJson(`${server.url}/user-profile?pubkey=${ivy.pubkey}`);
    expect(response.status).toBe(404);
    expect(write.requests).toEqual([]);
  });

  it('MAX_RELAY_CONNECTIONS caps the connections open at once, whatever the relay lists name', async () => {
    const names = Array.from({ length: 8 }, (_, index) => `ob-cap-${index}`);
    const writes = await Promise.all(names.map((name) => relay({ events: [profile(name, { name })] })));
    const lists = names.map((name, index) => relayList(name, [writes[index]!.url]));
    const note = signed('ob-cap-0', { tags: names.slice(1).map((name) => ['p', pubkeyOf(name)]) });
    const base = await relay({ events: [note] });
    const { server } = await service({ urls: [base.url], maxConnections: 4 }, lists);

    const response = await getJson(`${server.url}/event?id=${note.id}`);
    expect(response.status).toBe(200);
    // One configured relay and three learned at once, at most: the other write relays wait for an
    // idle connection to be closed for them, and every author is still found within the deadline.
    expect(server.pool?.peakConnections).toBe(4);
    expect(writes.every((write) => write.requests.length === 1)).toBe(true);
    expect(Object.keys((response.body as { profiles: object }).profiles).length).toBe(8);
  });

  it('OUTBOX=false: no relay list is asked for and no write relay is asked', async () => {
    const jo = profile('ob-jo', { name: 'Jo' });
    const write = await relay({ events: [jo] });
    const base = await relay();
    const { server } = await service(
      { urls: [base.url], outbox: { enabled: false, relaysPerPubkey: 2, maxRelays: 20 } },
      [relayList('ob-jo', [write.url])],
    );
    expect((await getJson(`${server.url}/user-profile?pubkey=${jo.pubkey}`)).status).toBe(404);
    expect(base.requests).toEqual([profileReq(jo.pubkey)]);
    expect(write.requests).toEqual([]);
  });
});

describe('relay lists and nevent authors are untrusted input', () => {
  it('a relay list that names a configured relay never makes it a learned one: it is not refused, rested or dropped', async () => {
    const nia = profile('ob-nia', { name: 'Nia' });
    const other = profile('ob-other', { name: 'Other' });
    const base = await relay({ events: [other] });
    const { server } = await service({ urls: [base.url], allowPrivateHints: false }, [relayList('ob-nia', [base.url])]);

    for (let round = 0; round < 3; round += 1) {
      expect((await getJson(`${server.url}/user-profile?pubkey=${nia.pubkey}`)).status).toBe(404);
    }
    expect(server.pool?.health.resting(base.url)).toBe(false);
    expect(server.pool?.health.get(base.url)).toMatchObject({ refused: 0, failures: 0 });
    expect((await getJson(`${server.url}/user-profile?pubkey=${other.pubkey}`)).status).toBe(200);
  });

  it('a made-up nevent author whose relay answers at once never decides a miss: 500 while the configured relay cannot say, then 200 for everyone', async () => {
    const real = signed('ob-real', { content: 'held by the configured relay' });
    const base = await relay({ events: [real], silent: true });
    const decoy = await relay();
    const { server } = await service({ urls: [base.url], timeoutMs: 600 }, [relayList('ob-liar', [decoy.url])]);

    const lying = nip19.neventEncode({ id: real.id, author: pubkeyOf('ob-liar') });
    expect((await getJson(`${server.url}/event?id=${lying}`)).status).toBe(500);
    expect(decoy.requests).toEqual([[{ ids: [real.id] }, { kinds: [5], '#e': [real.id] }]]);
    // The configured relay answers again: the id was not remembered as missing.
    base.silent = false;
    const found = await getJson(`${server.url}/event?id=${real.id}`);
    expect(found.status).toBe(200);
    expect((found.body as { event: NostrEvent }).event).toEqual(real);
  });

  it('a relay list is an event like any: an nevent for one is found by its id (NIP-65 kind 10002)', async () => {
    const list = relayList('ob-lister', ['wss://relay.example.com']);
    const base = await relay({ events: [list] });
    const { server } = await service({ urls: [base.url] });
    const response = await getJson(`${server.url}/event?id=${nip19.neventEncode({ id: list.id, author: list.pubkey })}`);
    expect(response.status).toBe(200);
    expect((response.body as { event: NostrEvent }).event).toEqual(list);
  });

  it('nevents naming ever new authors for a remembered miss keep its note bounded', async () => {
    const missing = 'e'.repeat(64);
    const base = await relay();
    const { server, store } = await service({ urls: [base.url] });
    expect((await getJson(`${server.url}/event?id=${missing}`)).status).toBe(404);
    for (let index = 0; index < 40; index += 1) {
      const nevent = nip19.neventEncode({ id: missing, author: pubkeyOf(`ob-made-up-${index}`) });
      expect((await getJson(`${server.url}/event?id=${nevent}`)).status).toBe(404);
    }
    const [note] = await store.store.marks.notes([`event:${missing}`]);
    expect(note?.split(' ')).toHaveLength(32);
    // Full: the next made-up author is not looked for.
    const asked = base.requests.length;
    const another = nip19.neventEncode({ id: missing, author: pubkeyOf('ob-made-up-last') });
    expect((await getJson(`${server.url}/event?id=${another}`)).status).toBe(404);
    expect(base.requests).toHaveLength(asked);
  });
});

describe('a remembered miss does not hide new places to look', () => {
  it('a write relay learned after the miss is asked; one that already answered "not found" is not asked again', async () => {
    const kim = pubkeyOf('ob-kim');
    const note = signed('ob-kim', { content: 'on my relay' });
    const write = await relay({ events: [note] });
    const empty = await relay();
    const base = await relay();
    const { server, store } = await service({ urls: [base.url] });
    const nevent = nip19.neventEncode({ id: note.id, author: kim });

    // Missed once: the base relay answered EOSE, the author had no relay list anywhere.
    expect((await getJson(`${server.url}/event?id=${nevent}`)).status).toBe(404);
    expect((await getJson(`${server.url}/event?id=${note.id}`)).status).toBe(404);
    expect(base.requests).toHaveLength(1);

    // The author's list arrives (sync, import, another lookup): its relay is a new place to look.
    await store.store.putEvents([relayList('ob-kim', [empty.url])]);
    expect((await getJson(`${server.url}/event?id=${nevent}`)).status).toBe(404);
    expect(empty.requests).toEqual([[{ ids: [note.id] }, { kinds: [5], '#e': [note.id] }]]);
    expect(base.requests).toHaveLength(1);

    // A newer list adds the relay that has it: only that one is asked.
    await store.store.putEvents([relayList('ob-kim', [empty.url, write.url], [], 1_700_000_100)]);
    const found = await getJson(`${server.url}/event?id=${nevent}`);
    expect(found.status).toBe(200);
    expect((found.body as { event: NostrEvent }).event).toEqual(note);
    // Its first REQ is for the note; the second, for the author's profile in the answer's map. The
    // relay noted as having answered "not found" is asked for the profile only.
    expect(write.requests).toEqual([[{ ids: [note.id] }, { kinds: [5], '#e': [note.id] }], [{ kinds: [0], authors: [kim] }]]);
    expect(empty.requests).toEqual([[{ ids: [note.id] }, { kinds: [5], '#e': [note.id] }], [{ kinds: [0], authors: [kim] }]]);
    // The base relay, which answered the id already, is asked only for the profile (and the
    // author's list again: the one stored came without a freshness mark, as an import's does).
    expect(base.requests).toEqual([
      [{ ids: [note.id] }, { kinds: [5], '#e': [note.id] }, { kinds: [10002], authors: [kim] }],
      [{ kinds: [0], authors: [kim] }, { kinds: [10002], authors: [kim] }],
    ]);
  });

  it('an author with no relay list anywhere gets no list freshness mark: a random pubkey leaves only its miss mark', async () => {
    const ghost = pubkeyOf('ob-ghost');
    const base = await relay();
    const { server, store } = await service({ urls: [base.url] });
    expect((await getJson(`${server.url}/user-profile?pubkey=${ghost}`)).status).toBe(404);
    expect(await store.store.marks.has([`profile:${ghost}`, `relays:${ghost}`])).toEqual([true, false]);
  });

  it('a miss noted on the write relays is answered at once the next time, without asking anyone', async () => {
    const lou = pubkeyOf('ob-lou');
    const write = await relay();
    const base = await relay();
    const { server } = await service({ urls: [base.url] }, [relayList('ob-lou', [write.url])]);

    expect((await getJson(`${server.url}/user-profile?pubkey=${lou}`)).status).toBe(404);
    expect(write.requests).toEqual([profileReq(lou)]);
    const started = performance.now();
    expect((await getJson(`${server.url}/user-profile?pubkey=${lou}`)).status).toBe(404);
    expect(performance.now() - started).toBeLessThan(200);
    expect(write.requests).toHaveLength(1);
    expect(base.requests).toHaveLength(1);
  });
});
