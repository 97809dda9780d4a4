import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { profile, pubkeyOf } from './support/events.js';
import { getJson, useTestServer } from './support/test-server.js';
import { HOME_ROUTES } from '../src/http/routes/home.js';
import { PACKAGE_VERSION } from '../src/version.js';

const alice = profile('alice', { name: 'alice' });

const context = useTestServer([alice]);

describe('HTTP behaviour shared by every route (DESIGN §1)', () => {
  it.each(['POST', 'PUT', 'PATCH', 'DELETE'])(
    '%s on a REST route is 405 with Allow, in the error shape',
    async (method) => {
      for (const path of ['/event?id=x', '/user-profile']) {
        const response = await getJson(`${context.server.url}${path}`, { method, body: '{}' });
        expect(response.status).toBe(405);
        expect(response.headers.get('allow')).toBe('GET, HEAD');
        expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(response.body).toEqual({
          error: {
            status: 405,
            code: 'method_not_allowed',
            message: 'This route answers GET and HEAD only.',
          },
        });
      }
    },
  );

  it('HEAD answers like GET without a body', async () => {
    const get = await fetch(`${context.server.url}/user-profile?pubkey=${alice.pubkey}`);
    const head = await fetch(`${context.server.url}/user-profile?pubkey=${alice.pubkey}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(await head.text()).toBe('');
    const missing = await fetch(`${context.server.url}/event?id=${'c'.repeat(64)}`, { method: 'HEAD' });
    expect(missing.status).toBe(404);
  });

  it('OPTIONS without a preflight is answered as one (RFC 9110 §9.3.7: it asks what the route allows), by @fastify/cors', async () => {
    for (const [path, methods] of [['/event?id=x', 'GET, HEAD'], ['/user-profile', 'GET, HEAD'], ['/graphql', 'GET, POST']] as const) {
      const response = await fetch(`${context.server.url}${path}`, { method: 'OPTIONS' });
      expect(response.status).toBe(204);
      expect(await response.text()).toBe('');
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-allow-methods')).toBe(methods);
      expect(response.headers.get('access-control-max-age')).toBe('86400');
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  it('a CORS preflight is answered for GET', async () => {
    const response = await fetch(`${context.server.url}/event?id=x`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-custom',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toBe('GET, HEAD');
    expect(response.headers.get('access-control-allow-headers')).toBe('*');
  });

  it('GET / says where to go (JSON unless the client prefers HTML): the service, its version, its routes and how full the index is', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'text/html;q=0.5, application/json']) {
      const response = await getJson(`${context.server.url}/`, accept ? { headers: { accept } } : {});
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('vary')).toContain('accept');
      expect(response.body).toEqual({
        service: 'nostr-lookup',
        version: PACKAGE_VERSION,
        routes: HOME_ROUTES,
        index: { events: 1, kinds: { 0: 1 }, profiles: 1, followLists: 0, follows: 0, notifications: 0, storedBytes: expect.any(Number) as number },
      });
    }
    expect(Object.keys(HOME_ROUTES)).toEqual(expect.arrayContaining(['/graphql', '/docs', '/notifications?pubkey=…']));
  });

  it('GET / is a page for a browser: what the index holds, the routes as links, nothing it did not write', async () => {
    const response = await fetch(`${context.server.url}/`, { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const page = await response.text();
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain('The index holds <strong>1</strong> events, <strong>1</strong> profiles, <strong>0</strong> follow lists naming <strong>0</strong> follows, and <strong>0</strong> notifications');
    expect(page).toContain('<a href="/graphql"><code>/graphql</code></a>');
    expect(page).toContain('<code>/event?id=…</code>: an event with the profiles of its people');
    // Self-contained: no script, no stylesheet or image from anywhere.
    expect(page).not.toMatch(/<script|<link|<img|https?:\/\//);
  });

  it.each(['/index.html', '/events', '/event/', '/user-profile/x', '/EVENT', '/graphql/x', '/%2e%2e/etc/passwd'])(
    'unknown path %s is 404 JSON',
    async (path) => {
      const response = await getJson(`${context.server.url}${path}`);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.body).toEqual({
        error: { status: 404, code: 'route_not_found', message: 'There is no such route.' },
      });
    },
  );

  it('cache headers: briefly public on success, shorter on 404, never on errors', async () => {
    expect(
      (await fetch(`${context.server.url}/user-profile?pubkey=${alice.pubkey}`)).headers.get('cache-control'),
    ).toBe('public, max-age=60');
    expect(
      (await fetch(`${context.server.url}/user-profile?pubkey=${pubkeyOf('x')}`)).headers.get('cache-control'),
    ).toBe('public, max-age=10');
    expect((await fetch(`${context.server.url}/user-profile?pubkey=bad`)).headers.get('cache-control')).toBe(
      'no-store',
    );
  });

  it('a request id is returned, taken from x-request-id only when it is plain', async () => {
    const given = await fetch(`${context.server.url}/healthz`, { headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers.get('x-request-id')).toBe('abc-123');
    const hostile = await fetch(`${context.server.url}/healthz`, { headers: { 'x-request-id': 'a b\u00ff{"x":1}' } });
    expect(hostile.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('/healthz is 200 and /readyz 200 while the store answers', async () => {
    expect(await getJson(`${context.server.url}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await getJson(`${context.server.url}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready' } });
  });

  it('any query string gets a JSON answer with a 200, 400 or 404, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/event', '/user-profile'),
        fc.array(fc.tuple(fc.constantFrom('id', 'pubkey', 'x', 'id[]', ''), fc.string({ unit: 'binary' })), {
          maxLength: 4,
        }),
        async (path, pairs) => {
          const query = pairs.map(([key, value]) => `${key}=${encodeURIComponent(value)}`).join('&');
          const response = await getJson(`${context.server.url}${path}?${query}`);
          expect([200, 400, 404]).toContain(response.status);
          expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
          if (response.status !== 200) expect(Object.keys(response.body as object)).toEqual(['error']);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('raw, badly encoded query strings are still answered in JSON', async () => {
    for (const query of ['id=%', 'id=%ZZ', 'id=%00', 'pubkey=%E0%A4%A', '&&&=&', 'id&id', '%%%']) {
      for (const path of ['/event', '/user-profile']) {
        const response = await getJson(`${context.server.url}${path}?${query}`);
        expect(response.status).toBe(400);
        expect((response.body as { error: { status: number } }).error.status).toBe(400);
      }
    }
  });
});

describe('malformed paths', () => {
  const context = useTestServer();
  it.each(['/%', '/event%', '/%E0%A4%A'])('%s is answered in the error shape, status and body agreeing', async (path) => {
    const response = await getJson(`${context.server.url}${path}`);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const { error } = response.body as { error: { status: number; code: string } };
    expect(error.status).toBe(response.status);
    expect([400, 404]).toContain(response.status);
  });
});

describe('GET / with LANDING=false', () => {
  const quiet = useTestServer([], { landing: false });

  it('is a 404 as any unknown path, and the other routes answer', async () => {
    const response = await getJson(`${quiet.server.url}/`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: { status: 404, code: 'route_not_found', message: 'There is no such route.' } });
    expect((await fetch(`${quiet.server.url}/healthz`)).status).toBe(200);
  });
});
