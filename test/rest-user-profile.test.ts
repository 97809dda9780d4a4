import { nprofileEncode, npubEncode, nsecEncode } from 'nostr-tools/nip19';
import { describe, expect, it } from 'vitest';
import { REQUEST_LOG_MAX_DELAY_MS } from '../src/logger.js';
import { serializeEvent } from '../src/nostr/event.js';
import { profile, pubkeyOf, realEvents } from './support/events.js';
import { getJson, useTestServer } from './support/test-server.js';

const alice = profile(
  'alice',
  { name: 'alice', about: 'emoji 🤙 "quotes" \\ </script> \u2028 / ünï' },
  2 ** 31 + 7,
);
const ALICE = pubkeyOf('alice');

const context = useTestServer([alice, ...realEvents()]);

const get = (query: string) => getJson(`${context.server.url}/user-profile${query}`);

describe('GET /user-profile (spec §4.1, DESIGN §1)', () => {
  it('200 with exactly {"profile": <event>}, the event byte-exact as signed', async () => {
    const response = await get(`?pubkey=${ALICE}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.text).toBe(`{"profile":${serializeEvent(alice)}}`);
    expect(response.body).toEqual({ profile: alice });
  });

  it('created_at beyond 2^31 comes back exact', async () => {
    const { text } = await get(`?pubkey=${ALICE}`);
    expect(text).toContain(`"created_at":${2 ** 31 + 7},`);
  });

  it.each([
    ['uppercase hex', () => ALICE.toUpperCase()],
    ['npub', () => npubEncode(ALICE)],
    ['nprofile', () => nprofileEncode({ pubkey: ALICE, relays: ['wss://relay.example'] })],
    ['nostr:npub', () => `nostr:${npubEncode(ALICE)}`],
    ['nostr:hex', () => `nostr:${ALICE}`],
    ['surrounding whitespace', () => `  ${npubEncode(ALICE)}\t`],
  ])('accepts %s', async (_label, form) => {
    const response = await get(`?pubkey=${encodeURIComponent(form())}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ profile: alice });
  });

  it('ignores unknown extra parameters', async () => {
    expect((await get(`?pubkey=${ALICE}&x=1&id=zzz`)).status).toBe(200);
  });

  it('the latest of several real profile versions wins', async () => {
    const versions = realEvents().filter((event) => event.kind === 0);
    const pubkey = versions.find(
      (event, index) => versions.findIndex((other) => other.pubkey === event.pubkey) !== index,
    )?.pubkey;
    const several = versions.filter((event) => event.pubkey === pubkey);
    expect(several.length).toBeGreaterThan(1);
    const latest = several.sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1))[0];
    expect((await get(`?pubkey=${pubkey}`)).body).toEqual({ profile: latest });
  });

  it('404 in the error shape when the pubkey has no profile', async () => {
    const response = await get(`?pubkey=${pubkeyOf('nobody')}`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.body).toEqual({
      error: {
        status: 404,
        code: 'profile_not_found',
        message: 'No profile (kind 0 event) is known for this pubkey.',
      },
    });
  });

  it.each([
    ['missing', '', 'missing_parameter'],
    ['empty', '?pubkey=', 'missing_parameter'],
    ['blank', '?pubkey=%20%20', 'missing_parameter'],
    ['repeated', `?pubkey=${ALICE}&pubkey=${ALICE}`, 'repeated_parameter'],
    ['short hex', `?pubkey=${ALICE.slice(1)}`, 'invalid_pubkey'],
    ['a note id', `?pubkey=note1${'q'.repeat(58)}`, 'invalid_pubkey'],
    ['garbage', '?pubkey=%F0%9F%A4%99%00%ZZ', 'invalid_pubkey'],
    ['array syntax', `?pubkey[]=${ALICE}`, 'missing_parameter'],
    ['long', `?pubkey=${'a'.repeat(8_000)}`, 'invalid_pubkey'],
  ])('400 %s', async (_label, query, code) => {
    const response = await get(query);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect((response.body as { error: { code: string; status: number } }).error).toMatchObject({
      status: 400,
      code,
    });
  });

  it('431 in the error shape for a URL too large for the HTTP parser', async () => {
    const response = await get(`?pubkey=${'a'.repeat(20_000)}`);
    expect(response.status).toBe(431);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.body).toEqual({
      error: {
        status: 431,
        code: 'request_too_large',
        message: 'The request line or headers are too large.',
      },
    });
  });

  it('refuses an nsec with 400, never echoes it, and never logs it', async () => {
    const nsec = nsecEncode(new Uint8Array(32).fill(42));
    for (const query of [
      `?pubkey=${nsec}`,
      `?pubkey=nostr%3A${nsec}`,
      `?pubkey=${encodeURIComponent(nsec).replace('n', '%6E')}`,
    ]) {
      const response = await get(query);
      expect(response.status).toBe(400);
      expect((response.body as { error: { code: string } }).error.code).toBe('secret_key_refused');
      expect(response.text).not.toContain(nsec);
      expect(response.text).not.toContain(nsec.slice(5, 30));
    }
    // Request lines are handed to the log's destination at most REQUEST_LOG_MAX_DELAY_MS after they are made.
    await new Promise((resolve) => setTimeout(resolve, REQUEST_LOG_MAX_DELAY_MS + 50));
    const logs = context.server.logs.join('');
    expect(logs).toContain('[redacted]');
    expect(logs).not.toContain(nsec.slice(5, 30));
  });
});
