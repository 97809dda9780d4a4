import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { profile, pubkeyOf, signed } from './support/events.js';
import { useTestServer } from './support/test-server.js';
import { renderedBody } from '../src/http/conditional.js';
import { serializeEvent } from '../src/nostr/event.js';
import { JsonText } from '../src/store/json-text.js';

/**
 * Conditional requests on the REST routes (RFC 9110 §13): a strong ETag from the ids
 * of every event in the body, Last-Modified from their newest created_at, If-None-Match and
 * If-Modified-Since answered 304 without a body, HEAD with the same headers.
 */

const NOW = Math.floor(Date.now() / 1000);
const alice = profile('etag-alice', { name: 'alice' }, NOW - 3600);
const bob = profile('etag-bob', { name: 'bob' }, NOW - 7200);
const note = signed('etag-alice', { content: 'hi bob', tags: [['p', pubkeyOf('etag-bob')]], created_at: NOW - 600 });
// An author's clock in the future: Last-Modified must still not be later than now.
const future = profile('etag-future', { name: 'future' }, NOW + 86_400 * 365);
const context = useTestServer([alice, bob, note, future]);

const url = (path: string) => `${context.server.url}${path}`;
const httpDate = (seconds: number) => new Date(seconds * 1000).toUTCString();
const eventTag = (...ids: string[]) => `"${createHash('sha256').update(ids.join(',')).digest('base64url')}"`;

async function get(path: string, headers: Record<string, string> = {}, method = 'GET') {
  const response = await fetch(url(path), { method, headers });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

describe('ETag, Last-Modified, 304', () => {
  it('/user-profile: the ETag is the profile id, Last-Modified its created_at', async () => {
    const response = await get(`/user-profile?pubkey=${alice.pubkey}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe(`"${alice.id}"`);
    expect(response.headers.get('last-modified')).toBe(httpDate(alice.created_at));
    expect(response.headers.get('cache-control')).toBe('public, max-age=60');
  });

  it('/event: the ETag is derived from the event id and each profile id in body order; no Last-Modified (a body can change without anything in it being newer)', async () => {
    const response = await get(`/event?id=${note.id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe(eventTag(note.id, alice.id, bob.id));
    expect(response.headers.get('last-modified')).toBeNull();
    // If-Modified-Since alone never makes /event a 304.
    expect((await get(`/event?id=${note.id}`, { 'if-modified-since': httpDate(NOW) })).status).toBe(200);
  });

  it('a newer profile changes the ETag of every answer that embeds it', async () => {
    const before = await get(`/event?id=${note.id}`);
    const newerBob = profile('etag-bob', { name: 'bob, renamed' }, NOW - 60);
    await context.store.store.putEvents([newerBob]);
    const after = await get(`/event?id=${note.id}`);
    expect(after.headers.get('etag')).toBe(eventTag(note.id, alice.id, newerBob.id));
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    // The old tag no longer matches: 200 with the new body.
    const conditional = await get(`/event?id=${note.id}`, { 'if-none-match': before.headers.get('etag') as string });
    expect(conditional.status).toBe(200);
    expect(conditional.text).toBe(after.text);
  });

  it('If-None-Match with the current tag (alone, weak, in a list, or *) → 304 with the validators and no body', async () => {
    const path = `/user-profile?pubkey=${alice.pubkey}`;
    const etag = `"${alice.id}"`;
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const response = await get(path, { 'if-none-match': ifNoneMatch });
      expect(response.status, ifNoneMatch).toBe(304);
      expect(response.text).toBe('');
      expect(response.headers.get('etag')).toBe(etag);
      expect(response.headers.get('last-modified')).toBe(httpDate(alice.created_at));
      expect(response.headers.get('cache-control')).toBe('public, max-age=60');
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
    }
    expect((await get(path, { 'if-none-match': '"something else"' })).status).toBe(200);
  });

  it('If-Modified-Since: 304 when not before Last-Modified; If-None-Match decides alone when both are sent', async () => {
    const path = `/user-profile?pubkey=${alice.pubkey}`;
    expect((await get(path, { 'if-modified-since': httpDate(alice.created_at) })).status).toBe(304);
    expect((await get(path, { 'if-modified-since': httpDate(alice.created_at + 10) })).status).toBe(304);
    expect((await get(path, { 'if-modified-since': httpDate(alice.created_at - 1) })).status).toBe(200);
    expect((await get(path, { 'if-modified-since': 'not a date' })).status).toBe(200);
    // Only IMF-fixdate counts (Date.parse would take '99999'), and never a date in the future.
    expect((await get(path, { 'if-modified-since': '99999' })).status).toBe(200);
    expect((await get(path, { 'if-modified-since': httpDate(NOW + 86_400) })).status).toBe(200);
    expect((await get(path, { 'if-none-match': '"other"', 'if-modified-since': httpDate(alice.created_at) })).status).toBe(200);
  });

  it('Last-Modified is never in the future, whatever created_at claims', async () => {
    const response = await get(`/user-profile?pubkey=${future.pubkey}`);
    const lastModified = Date.parse(response.headers.get('last-modified') as string);
    expect(lastModified).toBeLessThanOrEqual(Date.now());
    expect(lastModified).toBeGreaterThan(Date.now() - 60_000);
  });

  it('HEAD answers the same status and headers as GET, without a body; conditional HEAD → 304', async () => {
    for (const path of [`/event?id=${note.id}`, `/user-profile?pubkey=${alice.pubkey}`]) {
      const full = await get(path);
      const head = await get(path, {}, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
      for (const name of ['etag', 'last-modified', 'content-type', 'cache-control', 'access-control-allow-origin', 'access-control-expose-headers']) {
        expect(head.headers.get(name), name).toBe(full.headers.get(name));
      }
      expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(full.text)));
      expect((await get(path, { 'if-none-match': full.headers.get('etag') as string }, 'HEAD')).status).toBe(304);
    }
  });

  it('errors carry no validators and ignore conditions', async () => {
    for (const path of ['/event?id=nope', `/event?id=${'0'.repeat(64)}`, '/user-profile']) {
      const response = await get(path, { 'if-none-match': '*' });
      expect([400, 404]).toContain(response.status);
      expect(response.headers.get('etag')).toBeNull();
      expect(response.headers.get('last-modified')).toBeNull();
    }
  });

  it('hostile If-None-Match and If-Modified-Since headers: never a 5xx, 304 only for the current tag (property)', async () => {
    const path = `/user-profile?pubkey=${alice.pubkey}`;
    const etag = `"${alice.id}"`;
    const header = fc.oneof(
      fc.string({ unit: fc.constantFrom('"', ',', ' ', 'W', '/', '*', 'a', '\t', ...alice.id.slice(0, 4)) }),
      fc.string(),
      fc.constant(etag.slice(0, -1)),
      fc.constant(etag.toUpperCase()),
    ).filter((value) => /^[\t\x20-\x7e]*$/.test(value));
    await fc.assert(
      fc.asyncProperty(header, fc.option(header, { nil: undefined }), async (ifNoneMatch, ifModifiedSince) => {
        const headers: Record<string, string> = { 'if-none-match': ifNoneMatch };
        if (ifModifiedSince !== undefined) headers['if-modified-since'] = ifModifiedSince;
        const response = await get(path, headers);
        const matches = ifNoneMatch.split(',').some((tag) => [etag, `W/${etag}`, '*'].includes(tag.trim()));
        expect(response.status).toBe(matches ? 304 : 200);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 100), seed: Number(process.env.FUZZ_SEED ?? 42) },
    );
  });
});

describe("a screen's tag (renderedBody: a digest of the body's strings and its events' ids)", () => {
  const events = [alice, bob, note, future].map((event) => JsonText.of(serializeEvent(event)));
  // JSON-like pieces, as the screens' renderers write them: any text but a raw NUL.
  const piece = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constantFrom('{"events":[', ',', '],"next":', 'null', '}'));
  const part = fc.oneof(piece, fc.constantFrom(...events));
  const body = (parts: readonly (string | JsonText)[]) => Buffer.concat(parts.map((one) => (typeof one === 'string' ? Buffer.from(one) : one.bytes)));

  it('sends the parts joined, and tags the same parts alike', () => {
    const parts = ['{"events":[', events[2] as JsonText, '],"profiles":{"k":', events[0] as JsonText, '},"next":null}'];
    const one = renderedBody(parts);
    expect(one.body?.equals(body(parts))).toBe(true);
    expect(one.validators.etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(renderedBody([...parts]).validators.etag).toBe(one.validators.etag);
    // Another event in the same place, a string changed, a JSON text that is no stored event changed: another tag.
    expect(renderedBody(parts.with(1, events[3] as JsonText)).validators.etag).not.toBe(one.validators.etag);
    expect(renderedBody(parts.with(4, '},"next":"x"}')).validators.etag).not.toBe(one.validators.etag);
    const plain = (text: string) => ['[', JsonText.of(text), ']'];
    expect(renderedBody(plain('{"a":1}')).validators.etag).not.toBe(renderedBody(plain('{"a":2}')).validators.etag);
    // A string that spells a mark and an id (no renderer writes a NUL) is no stand-in for the event (found by review).
    const event = events[2] as JsonText;
    const mimic = `\u0000${event.bytes.toString('latin1', 7, 71)}`;
    expect(renderedBody(['[', mimic, ']']).validators.etag).not.toBe(renderedBody(['[', event, ']']).validators.etag);
  });

  it('two lists of parts whose bodies differ never share a tag (property)', () => {
    fc.assert(
      fc.property(fc.array(part, { maxLength: 8 }), fc.array(part, { maxLength: 8 }), (a, b) => {
        const same = renderedBody(a).validators.etag === renderedBody(b).validators.etag;
        if (!body(a).equals(body(b))) expect(same).toBe(false);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 500) },
    );
  });
});
