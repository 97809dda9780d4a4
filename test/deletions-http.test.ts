import { neventEncode, noteEncode, npubEncode } from 'nostr-tools/nip19';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors.js';
import { serializeEvent } from '../src/nostr/event.js';
import { deletion, vanish } from './support/deletion-conformance.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { getJson, startTestServer, type TestServer } from './support/test-server.js';
import { BOTH_STORES, type OpenedStore } from './support/both-stores.js';

/**
 * Deletions (NIP-09) and requests to vanish (NIP-62) as clients see them over HTTP, on a real server
 * on each store: REST answers 404 event_deleted / profile_deleted, a deleted profile is left out of
 * /event's profiles map, GraphQL answers null without an error. No relays: the index alone answers.
 */

const T = 1_700_000_000;
const JSON_TYPE = 'application/json; charset=utf-8';

// The author deletes a note (e tag); the deletion arrives after the note.
const alice = profile('dh-alice', { name: 'Alice' }, T);
const deletedNote = signed('dh-alice', { content: 'deleted by its author', created_at: T + 1 });
const aliceDeletes = deletion('dh-alice', { ids: [deletedNote.id], at: T + 10 });

// Someone else "deletes" a note of Alice's: nothing changes.
const keptNote = signed('dh-alice', { content: 'still here', created_at: T + 2 });
const malloryDeletes = deletion('dh-mallory', { ids: [keptNote.id], at: T + 10 });

// Bob deletes his profile (a tag `0:<pubkey>:`); his notes stay, and notes naming him stay.
const BOB = pubkeyOf('dh-bob');
const bob = profile('dh-bob', { name: 'Bob' }, T);
const bobDeletesProfile = deletion('dh-bob', { addresses: [`0:${BOB}:`], at: T + 10 });
const byBob = signed('dh-bob', { content: 'my profile is gone, my note is not', created_at: T + 3 });
const namingBob = signed('dh-alice', {
  content: `hello nostr:${npubEncode(BOB)}`,
  tags: [['p', BOB]],
  created_at: T + 4,
});

// Carol asks to vanish at T + 50: everything of hers up to then goes; a newer note is served.
const CAROL = pubkeyOf('dh-carol');
const carol = profile('dh-carol', { name: 'Carol' }, T);
const carolNote = signed('dh-carol', { content: 'before vanishing', created_at: T + 5 });
const carolArticle = signed('dh-carol', { kind: 30023, tags: [['d', 'essay']], content: 'an essay', created_at: T + 6 });
const carolAtRequest = signed('dh-carol', { content: 'same second as the request', created_at: T + 50 });
const carolVanishes = vanish('dh-carol', T + 50);
const carolLater = signed('dh-carol', { content: 'back again', created_at: T + 60 });

// Order independence: the deletions (and a request to vanish) are stored before what they name.
const DAVE = pubkeyOf('dh-dave');
const daveNote = signed('dh-dave', { content: 'deleted before it arrived', created_at: T + 7 });
const dave = profile('dh-dave', { name: 'Dave' }, T);
const daveDeletesFirst = deletion('dh-dave', { ids: [daveNote.id], addresses: [`0:${DAVE}:`], at: T + 20 });
const ERIN = pubkeyOf('dh-erin');
const erinVanishesFirst = vanish('dh-erin', T + 50);
const erinNote = signed('dh-erin', { content: 'arrives after the request to vanish', created_at: T + 8 });
const erin = profile('dh-erin', { name: 'Erin' }, T);
// Frank deletes one profile version by id (e tag), before the version arrives.
const FRANK = pubkeyOf('dh-frank');
const frank = profile('dh-frank', { name: 'Frank' }, T);
const frankDeletesFirst = deletion('dh-frank', { ids: [frank.id], at: T + 20 });

/** In the order the store receives them, one write each: deletions after their targets here… */
const AFTER = [
  alice,
  deletedNote,
  aliceDeletes,
  keptNote,
  malloryDeletes,
  bob,
  byBob,
  namingBob,
  bobDeletesProfile,
  carol,
  carolNote,
  carolArticle,
  carolAtRequest,
  carolVanishes,
  carolLater,
];
/** …and before them here. */
const BEFORE = [daveDeletesFirst, daveNote, dave, erinVanishesFirst, erinNote, erin, frankDeletesFirst, frank];

const STORES = BOTH_STORES;

const deletedBody = (code: 'event_deleted' | 'profile_deleted') => ({
  error: { status: 404, code, message: ERRORS[code].message },
});

interface GraphQLResponse {
  data?: Record<string, unknown> | null;
  errors?: unknown[];
}

describe.each(STORES)('deletions over HTTP, $name store', ({ open }) => {
  let opened: OpenedStore;
  let server: TestServer;
  const writes: string[] = [];

  beforeAll(async () => {
    opened = await open();
    // One write per event, in order: the order of arrival is what the rules must not depend on.
    for (const event of [...AFTER, ...BEFORE]) writes.push(...(await opened.store.putEvents([event])));
    server = await startTestServer(opened.store);
  });
  afterAll(async () => {
    await server?.close();
    await opened?.cleanup();
  });

  const event = (id: string) => getJson(`${server.url}/event?id=${encodeURIComponent(id)}`);
  const userProfile = (pubkey: string) => getJson(`${server.url}/user-profile?pubkey=${encodeURIComponent(pubkey)}`);

  async function expectDeleted(response: Awaited<ReturnType<typeof getJson>>, code: 'event_deleted' | 'profile_deleted') {
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe(JSON_TYPE);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.body).toEqual(deletedBody(code));
    expect(response.text).toBe(JSON.stringify(deletedBody(code)));
  }

  it('the store took every write as the rules say (the setup the HTTP answers rest on)', () => {
    expect(writes).toEqual([
      // AFTER
      'stored', // alice
      'stored', // deletedNote
      'applied', // aliceDeletes
      'stored', // keptNote
      'applied', // malloryDeletes: stored, applies to nothing
      'stored', // bob
      'stored', // byBob
      'stored', // namingBob
      'applied', // bobDeletesProfile
      'stored', // carol
      'stored', // carolNote
      'stored', // carolArticle
      'stored', // carolAtRequest
      'applied', // carolVanishes
      'stored', // carolLater
      // BEFORE
      'applied', // daveDeletesFirst
      'deleted', // daveNote
      'deleted', // dave
      'applied', // erinVanishesFirst
      'deleted', // erinNote
      'deleted', // erin
      'applied', // frankDeletesFirst
      'deleted', // frank
    ]);
  });

  it('a note deleted by its author: GET /event answers 404 event_deleted, whatever form the id takes', async () => {
    await expectDeleted(await event(deletedNote.id), 'event_deleted');
    await expectDeleted(await event(noteEncode(deletedNote.id)), 'event_deleted');
    await expectDeleted(await event(`nostr:${neventEncode({ id: deletedNote.id, author: deletedNote.pubkey })}`), 'event_deleted');
    // HEAD says the same status, without a body.
    const head = await fetch(`${server.url}/event?id=${deletedNote.id}`, { method: 'HEAD' });
    expect(head.status).toBe(404);
    expect(await head.text()).toBe('');
  });

  it('the deletion request itself stays readable (200), with its author’s profile', async () => {
    const response = await event(aliceDeletes.id);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(JSON_TYPE);
    expect(response.text).toBe(`{"event":${serializeEvent(aliceDeletes)},"profiles":{"${alice.pubkey}":${serializeEvent(alice)}}}`);
  });

  it('an unknown id is still event_not_found, not event_deleted', async () => {
    const response = await event('c'.repeat(64));
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: { status: 404, code: 'event_not_found', message: ERRORS.event_not_found.message } });
  });

  it('a note "deleted" by another key: 200 as usual', async () => {
    const response = await event(keptNote.id);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(JSON_TYPE);
    expect(response.text).toBe(`{"event":${serializeEvent(keptNote)},"profiles":{"${alice.pubkey}":${serializeEvent(alice)}}}`);
  });

  it('a deleted profile: GET /user-profile answers 404 profile_deleted (hex and npub)', async () => {
    await expectDeleted(await userProfile(BOB), 'profile_deleted');
    await expectDeleted(await userProfile(npubEncode(BOB)), 'profile_deleted');
    // The kind-0 event itself, asked by id, is deleted too.
    await expectDeleted(await event(bob.id), 'event_deleted');
    // A live profile still answers.
    const live = await userProfile(alice.pubkey);
    expect(live.status).toBe(200);
    expect(live.text).toBe(`{"profile":${serializeEvent(alice)}}`);
  });

  it('a deleted profile is left out of /event’s profiles map: a note by its author, and a note naming it', async () => {
    const own = await event(byBob.id);
    expect(own.status).toBe(200);
    expect(own.text).toBe(`{"event":${serializeEvent(byBob)},"profiles":{}}`);

    const naming = await event(namingBob.id);
    expect(naming.status).toBe(200);
    expect(naming.headers.get('content-type')).toBe(JSON_TYPE);
    expect(naming.text).toBe(`{"event":${serializeEvent(namingBob)},"profiles":{"${alice.pubkey}":${serializeEvent(alice)}}}`);
    expect(Object.keys((naming.body as { profiles: object }).profiles)).not.toContain(BOB);
  });

  it('a request to vanish: the author’s earlier events are event_deleted (at its second too), the profile profile_deleted', async () => {
    for (const gone of [carolNote, carolArticle, carolAtRequest, carol]) await expectDeleted(await event(gone.id), 'event_deleted');
    await expectDeleted(await userProfile(CAROL), 'profile_deleted');
  });

  it('a request to vanish: an event newer than the request is 200 (without the vanished profile); the request itself stays readable', async () => {
    const later = await event(carolLater.id);
    expect(later.status).toBe(200);
    expect(later.text).toBe(`{"event":${serializeEvent(carolLater)},"profiles":{}}`);
    const request = await event(carolVanishes.id);
    expect(request.status).toBe(200);
    expect(request.text).toBe(`{"event":${serializeEvent(carolVanishes)},"profiles":{}}`);
  });

  it('order independence: deletions and a request to vanish stored before what they name', async () => {
    await expectDeleted(await event(daveNote.id), 'event_deleted');
    await expectDeleted(await event(dave.id), 'event_deleted');
    await expectDeleted(await userProfile(DAVE), 'profile_deleted');
    await expectDeleted(await event(erinNote.id), 'event_deleted');
    await expectDeleted(await event(erin.id), 'event_deleted');
    await expectDeleted(await userProfile(ERIN), 'profile_deleted');
    // A profile version deleted by id (e tag) before it arrived.
    await expectDeleted(await event(frank.id), 'event_deleted');
    await expectDeleted(await userProfile(FRANK), 'profile_deleted');
    // The requests themselves are served.
    for (const request of [daveDeletesFirst, erinVanishesFirst, frankDeletesFirst]) expect((await event(request.id)).status).toBe(200);
  });

  async function graphql(query: string, variables?: Record<string, unknown>) {
    const response = await getJson(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query, variables }),
    });
    return { ...response, body: response.body as GraphQLResponse };
  }

  it('GraphQL: deleted events and profiles are null, with no errors, and HTTP 200', async () => {
    const unknown = 'd'.repeat(64);
    const response = await graphql(
      `query ($id: String!, $pubkey: String!, $ids: [String!]!) {
        event(id: $id) { id }
        profile(pubkey: $pubkey) { name }
        events(ids: $ids) { id }
      }`,
      {
        id: deletedNote.id,
        pubkey: BOB,
        ids: [deletedNote.id, keptNote.id, carolNote.id, carolLater.id, daveNote.id, unknown, erinNote.id, bob.id],
      },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    expect(response.body).toEqual({
      data: {
        event: null,
        profile: null,
        events: [null, { id: keptNote.id }, null, { id: carolLater.id }, null, null, null, null],
      },
    });
  });

  it('GraphQL: profiles(pubkeys:) and an event’s author / relevantProfiles leave deleted profiles out', async () => {
    const response = await graphql(
      `query ($pubkeys: [String!]!, $byBob: String!, $naming: String!) {
        profiles(pubkeys: $pubkeys) { name }
        own: event(id: $byBob) { id author { name } relevantProfiles { pubkey } }
        naming: event(id: $naming) { id author { name } relevantPubkeys relevantProfiles { pubkey name } }
      }`,
      { pubkeys: [alice.pubkey, BOB, CAROL, DAVE, ERIN, FRANK], byBob: byBob.id, naming: namingBob.id },
    );
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: {
        profiles: [{ name: 'Alice' }, null, null, null, null, null],
        own: { id: byBob.id, author: null, relevantProfiles: [] },
        naming: {
          id: namingBob.id,
          author: { name: 'Alice' },
          relevantPubkeys: [alice.pubkey, BOB],
          relevantProfiles: [{ pubkey: alice.pubkey, name: 'Alice' }],
        },
      },
    });
  });

  it('GraphQL over GET says the same', async () => {
    const query = encodeURIComponent(`{ event(id: "${carolNote.id}") { id } profile(pubkey: "${CAROL}") { name } }`);
    const response = await getJson(`${server.url}/graphql?query=${query}`, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { event: null, profile: null } });
  });
});
