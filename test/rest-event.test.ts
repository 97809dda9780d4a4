import { readFileSync } from 'node:fs';
import { neventEncode, noteEncode, npubEncode } from 'nostr-tools/nip19';
import { describe, expect, it } from 'vitest';
import { type NostrEvent, serializeEvent } from '../src/nostr/event.js';
import { profile, pubkeyOf, realEvents, signed } from './support/events.js';
import { getJson, startTestServer, useTestServer } from './support/test-server.js';

const roles = JSON.parse(
  readFileSync(new URL('./fixtures/real-event-roles.json', import.meta.url), 'utf8'),
) as Record<'mention' | 'ptags' | 'repost' | 'big', string>;
const tampered = JSON.parse(
  readFileSync(new URL('./fixtures/tampered-event.json', import.meta.url), 'utf8'),
) as NostrEvent;

const names = [
  'author',
  'p-tagged',
  'P-tagged',
  'mentioned',
  'e-author',
  'q-author',
  'reposted',
  'no-profile',
] as const;
const pk = Object.fromEntries(names.map((name) => [name, pubkeyOf(name)])) as Record<
  (typeof names)[number],
  string
>;
const profiles = Object.fromEntries(
  names.filter((name) => name !== 'no-profile').map((name) => [name, profile(name, { name })]),
) as Record<string, NostrEvent>;
const SOME_ID = 'a'.repeat(64);

/** A note naming one pubkey through each DESIGN §1 source, and one without a profile. */
const note = signed('author', {
  created_at: 2 ** 31 + 99,
  content: `gm nostr:${npubEncode(pk.mentioned)} 🌅 "quoted" \\ / ünï`,
  tags: [
    ['p', pk['p-tagged']],
    ['p', pk['no-profile']],
    ['P', pk['P-tagged']],
    ['e', SOME_ID, '', 'root', pk['e-author']],
    ['q', SOME_ID, '', pk['q-author']],
  ],
});
const original = signed('reposted', { content: 'the original' });
const repost = signed('author', { kind: 6, content: serializeEvent(original), tags: [['e', original.id]] });
const lonely = signed('no-profile', { content: 'nobody knows me' });
const crowded = signed('author', {
  tags: Array.from({ length: 120 }, (_, n) => ['p', pubkeyOf(`crowd-${n}`)]),
});
const crowd = Array.from({ length: 120 }, (_, n) => profile(`crowd-${n}`, { n }));

const context = useTestServer([note, repost, lonely, crowded, ...Object.values(profiles), ...crowd, ...realEvents()]);

const get = (query: string) => getJson(`${context.server.url}/event${query}`);

describe('GET /event (spec §4.2, DESIGN §1)', () => {
  it('200 with exactly {event, profiles}: author first, then each kind of relevant pubkey, in first-seen order', async () => {
    const response = await get(`?id=${note.id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const order = ['author', 'p-tagged', 'P-tagged', 'mentioned', 'e-author', 'q-author'];
    const expected = `{"event":${serializeEvent(note)},"profiles":{${order
      .map((name) => `"${pubkeyOf(name)}":${serializeEvent(profiles[name] as NostrEvent)}`)
      .join(',')}}}`;
    expect(response.text).toBe(expected);
  });

  it('omits a relevant pubkey without a profile (no null values)', async () => {
    const { body } = await get(`?id=${note.id}`);
    const map = (body as { profiles: Record<string, unknown> }).profiles;
    expect(Object.keys(map)).not.toContain(pk['no-profile']);
    expect(Object.values(map)).not.toContain(null);
  });

  it('profiles may be {} when nobody has a profile', async () => {
    const response = await get(`?id=${lonely.id}`);
    expect(response.status).toBe(200);
    expect(response.text).toBe(`{"event":${serializeEvent(lonely)},"profiles":{}}`);
  });

  it('a repost (kind 6) includes the author of the embedded signed event (NIP-18)', async () => {
    const { body } = await get(`?id=${repost.id}`);
    expect(Object.keys((body as { profiles: object }).profiles)).toEqual([pk.author, pk.reposted]);
  });

  it('the profiles map is capped at MAX_PROFILES (default 100), author included', async () => {
    const { body } = await get(`?id=${crowded.id}`);
    const keys = Object.keys((body as { profiles: object }).profiles);
    expect(keys).toHaveLength(100);
    expect(keys[0]).toBe(pk.author);
    expect(keys[99]).toBe(pubkeyOf('crowd-98'));
  });

  it('honours a smaller MAX_PROFILES: the cap counts relevant pubkeys, with or without a profile', async () => {
    const small = await startTestServer(context.store.store, { lookup: { maxProfiles: 3 } });
    try {
      const { body } = await getJson(`${small.url}/event?id=${note.id}`);
      // The first three relevant pubkeys are author, p-tagged and no-profile (which has none).
      expect(Object.keys((body as { profiles: object }).profiles)).toEqual([pk.author, pk['p-tagged']]);
    } finally {
      await small.close();
    }
  });

  it.each([
    ['uppercase hex', () => note.id.toUpperCase()],
    ['note', () => noteEncode(note.id)],
    [
      'nevent',
      () => neventEncode({ id: note.id, relays: ['wss://r.example'], author: note.pubkey, kind: 1 }),
    ],
    ['nostr:note', () => `nostr:${noteEncode(note.id)}`],
    ['nostr:nevent', () => `nostr:${neventEncode({ id: note.id })}`],
    ['whitespace', () => `\t${note.id} `],
  ])('accepts %s', async (_label, form) => {
    const response = await get(`?id=${encodeURIComponent(form())}`);
    expect(response.status).toBe(200);
    expect((response.body as { event: NostrEvent }).event).toEqual(note);
  });

  it('real events: p-tag and nostr: mention notes come back with their resolvable profiles', async () => {
    const real = realEvents();
    const latestProfile = new Map<string, NostrEvent>();
    for (const event of real.filter((e) => e.kind === 0)) {
      const held = latestProfile.get(event.pubkey);
      if (!held || event.created_at > held.created_at) latestProfile.set(event.pubkey, event);
    }
    for (const id of [roles.ptags, roles.mention, roles.repost]) {
      const event = real.find((e) => e.id === id) as NostrEvent;
      const response = await get(`?id=${id}`);
      expect(response.status).toBe(200);
      const body = response.body as { event: NostrEvent; profiles: Record<string, NostrEvent> };
      expect(body.event).toEqual(event);
      expect(body.profiles[event.pubkey]).toEqual(latestProfile.get(event.pubkey));
      expect(Object.keys(body.profiles).length).toBeGreaterThan(1);
      for (const [pubkey, kind0] of Object.entries(body.profiles))
        expect(kind0).toEqual(latestProfile.get(pubkey));
    }
  });

  it('an event over 64 KiB comes back byte-exact', async () => {
    const big = realEvents().find((e) => e.id === roles.big) as NostrEvent;
    const response = await get(`?id=${big.id}`);
    expect(response.text.startsWith(`{"event":${serializeEvent(big)},"profiles":`)).toBe(true);
    expect(response.text.length).toBeGreaterThan(65_536);
  });

  it('a kind-0 event can be looked up by id while it is the latest version', async () => {
    const author = profiles.author as NostrEvent;
    const response = await get(`?id=${author.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ event: author, profiles: { [pk.author]: author } });
  });

  it('the tampered event was refused at import, so it is 404', async () => {
    const { store } = context.store;
    expect(await store.getEvents([tampered.id])).toEqual([null]);
    expect((await get(`?id=${tampered.id}`)).status).toBe(404);
  });

  it('404 in the error shape for an unknown id', async () => {
    const response = await get(`?id=${'b'.repeat(64)}`);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      error: { status: 404, code: 'event_not_found', message: 'No event with this id is known.' },
    });
  });

  it.each([
    ['missing', '', 'missing_parameter'],
    ['empty', '?id=', 'missing_parameter'],
    ['repeated', `?id=${SOME_ID}&id=${SOME_ID}`, 'repeated_parameter'],
    ['an npub', `?id=${npubEncode(pk.author)}`, 'invalid_id'],
    ['odd hex', `?id=${SOME_ID}0`, 'invalid_id'],
    ['wrong name', `?event=${SOME_ID}`, 'missing_parameter'],
    ['nsec', `?id=nsec1${'q'.repeat(58)}`, 'secret_key_refused'],
  ])('400 %s', async (_label, query, code) => {
    const response = await get(query);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect((response.body as { error: object }).error).toMatchObject({ status: 400, code });
  });
});

describe('the profiles map is bounded by MAX_RESPONSE_BYTES (found by review: 100 profiles of 800 KB made a 79 MB answer)', () => {
  const fat = Array.from({ length: 10 }, (_, index) => profile(`fat-${index}`, { name: `fat ${index}`, about: 'x'.repeat(3000) }));
  const fatNote = signed('fat-0', { content: 'names ten large profiles', tags: fat.map((event) => ['p', event.pubkey]) });
  const capped = useTestServer([...fat, fatNote], { graphql: { maxResponseBytes: 10_000 } });

  it('profiles past the cap are left out, in relevant-pubkey order; the event is always there', async () => {
    const response = await getJson(`${capped.server.url}/event?id=${fatNote.id}`);
    expect(response.status).toBe(200);
    const body = response.body as { event: unknown; profiles: Record<string, unknown> };
    expect(body.event).toEqual(fatNote);
    // The map may add 10,000 bytes to the event: profiles of ~3.3 KB, two fit, not a third.
    const each = serializeEvent(fat[0] as NostrEvent).length + 70;
    expect([2 * each < 10_000, 3 * each > 10_000]).toEqual([true, true]);
    expect(Object.keys(body.profiles)).toEqual(fat.slice(0, 2).map((event) => event.pubkey));
    expect(response.text.length).toBeLessThan(serializeEvent(fatNote).length + 10_000);
  });
});
