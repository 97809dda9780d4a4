import { request } from 'node:http';
import { nsecEncode } from 'nostr-tools/nip19';
import { generateSecretKey } from 'nostr-tools/pure';
import { describe, expect, it } from 'vitest';
import { REQUEST_LOG_MAX_DELAY_MS } from '../src/logger.js';
import { profile } from './support/events.js';
import { useTestServer } from './support/test-server.js';

const context = useTestServer([profile('alice', { name: 'alice' })]);

const NSEC = nsecEncode(generateSecretKey());
/** A long run of the key's data: found in any text that still carries the key. */
const DATA = NSEC.slice(5, 40);
const perCharacter = (text: string) => [...text].map((char) => `%${char.charCodeAt(0).toString(16)}`).join('');

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request exactly as written (fetch would normalise or refuse some of these paths). */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Raw> {
  const url = new URL(context.server.url);
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: url.hostname, port: url.port, method, path, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const graphql = (body: unknown) => raw('POST', '/graphql', { 'content-type': 'application/json' }, JSON.stringify(body));

/** Seven reported leaks and echoes of a secret key, each reproduced as reported. */
const LEAKS: [string, () => Promise<Raw>][] = [
  ['an nsec in the path', () => raw('GET', `/user-profile/${NSEC}`)],
  ['a malformed URL around an nsec', () => raw('GET', `/${NSEC}%zz`)],
  ['a percent-encoded nsec with an undecodable neighbour', () => raw('GET', `/user-profile?pubkey=%6E${NSEC.slice(1)}&x=%zz`)],
  ['an nsec percent-encoded per character', () => raw('GET', `/user-profile?pubkey=${perCharacter(NSEC)}`)],
  ['an uppercase nsec in the query', () => raw('GET', `/event?id=${NSEC.toUpperCase()}`)],
  ['an nsec as a parameter name', () => raw('GET', `/event?${NSEC}=1`)],
  ['an nsec as the request id', () => raw('GET', `/user-profile?pubkey=x`, { 'x-request-id': NSEC })],
  ['an nsec in a preflight header list', () =>
    raw('OPTIONS', '/event', { origin: 'https://a.example', 'access-control-request-method': 'GET', 'access-control-request-headers': NSEC })],
  ['a JSON-escaped nsec in a GraphQL argument', () =>
    raw('POST', '/graphql', { 'content-type': 'application/json' }, `{"query":"{ profile(pubkey: \\"\\\\u006e${NSEC.slice(1)}\\") { name } }"}`)],
  ['an nsec as an unexpected GraphQL token', () => graphql({ query: `{ profile(pubkey: ${NSEC}) { name } }` })],
  ['an nsec as an unknown GraphQL field', () => graphql({ query: `{ ${NSEC} }` })],
  ['an nsec in a variable of the wrong type', () =>
    graphql({ query: 'query($p: Timestamp) { __typename }', variables: { p: NSEC } })],
  ['an nsec in a GET variables parameter', () => raw('GET', `/graphql?query=%7B__typename%7D&variables=${NSEC}`)],
  ['an nsec in the GraphQL GET query', () => raw('GET', `/graphql?query=${NSEC}`, { accept: 'application/json' })],
  // Found by review: GraphQL's braced \u{6E} escape (also under @skip), and unescape's %u006E.
  ['a braced-escape nsec in a GraphQL GET document', () =>
    raw('GET', `/graphql?query=${encodeURIComponent(`{ profile(pubkey: "\\u{6E}${NSEC.slice(1)}") @skip(if: true) { name } }`)}`, { accept: 'application/json' })],
  ['a %u-escaped nsec in the query and the path', () => raw('GET', `/user-profile/%u006E${NSEC.slice(1)}?pubkey=%u006E${NSEC.slice(1)}`)],
];

describe('a secret key sent by mistake reaches no response and no log line (DESIGN §1)', () => {
  it.each(LEAKS)('%s', async (_label, send) => {
    const response = await send();
    expect(response.status).toBeLessThan(500);
    expect(response.body.toLowerCase()).not.toContain(DATA);
    expect(JSON.stringify(response.headers).toLowerCase()).not.toContain(DATA);
    await new Promise((resolve) => setTimeout(resolve, REQUEST_LOG_MAX_DELAY_MS + 50));
    const logs = context.server.logs.join('').toLowerCase();
    expect(logs).not.toContain(DATA);
    // What was logged of the request is there, redacted, not dropped.
    expect(logs).toContain('[redacted]');
  });

  it('client errors are never logged at level error', async () => {
    await graphql({ query: 'query($p: Int) { profile(pubkey: $p) { name } }', variables: { p: 1 } });
    await graphql({ query: '{ profile(pubkey: 1) { name } }' });
    await raw('GET', '/%zz');
    await new Promise((resolve) => setTimeout(resolve, REQUEST_LOG_MAX_DELAY_MS + 50));
    const errors = context.server.logs.join('').split('\n').filter((line) => line.includes('"level":"error"'));
    expect(errors).toEqual([]);
  });
});

describe('/graphql answers what yoga answered badly (§6)', () => {
  it('CORS is open to every origin, without credentials, never reflecting the Origin', async () => {
    const response = await raw('GET', '/graphql?query=%7B__typename%7D', { origin: 'https://evil.example' });
    expect(response.status).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    const preflight = await raw('OPTIONS', '/graphql', {
      origin: 'https://evil.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(preflight.headers['access-control-allow-methods']).toBe('GET, POST');
    expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it.each(['%25', '%7B', 'null%20x', '%7B%22a%22%3A1%7Dx'])('malformed variables=%s is 400 invalid_graphql_request, not 500', async (value) => {
    for (const parameter of ['variables', 'extensions']) {
      const response = await raw('GET', `/graphql?query=%7B__typename%7D&${parameter}=${value}`);
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(response.body)).toEqual({
        errors: [{ message: expect.any(String), extensions: { code: 'invalid_graphql_request' } }],
      });
    }
  });

  it('JSON that is not an object is yoga\'s own 400', async () => {
    const response = await raw('GET', '/graphql?query=%7B__typename%7D&variables=%5B1%5D');
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toEqual({
      errors: [{ message: 'Expected "variables" param to be empty or an object, but given array.', extensions: { code: 'invalid_graphql_request' } }],
    });
  });

  it('a POST body that is not JSON is 400 invalid_graphql_request, never quoted back (found by review)', async () => {
    const body = `not json ${'A'.repeat(50_000)} ${NSEC}`;
    const response = await raw('POST', '/graphql', { 'content-type': 'application/json' }, body);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toEqual({
      errors: [{ message: expect.any(String), extensions: { code: 'invalid_graphql_request' } }],
    });
    expect(response.body.length).toBeLessThan(300);
  });

  it('a POST body over 128 KiB is 413, one of unknown length 411; yoga never reads them', async () => {
    const big = await raw('POST', '/graphql', { 'content-type': 'application/json' }, JSON.stringify({ query: `{ __typename } #${'x'.repeat(140_000)}` }));
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body).errors[0].extensions.code).toBe('body_too_large');
    const chunked = await raw('POST', '/graphql', { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, '{"query":"{ __typename }"}');
    expect(chunked.status).toBe(411);
    expect(JSON.parse(chunked.body).errors[0].extensions.code).toBe('length_required');
  });

  it('other methods are 405 with Allow, an unknown content type 415, both in the error shape (not 404, not null)', async () => {
    const put = await raw('PUT', '/graphql', { 'content-type': 'application/json' }, '{}');
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('GET, POST');
    expect(JSON.parse(put.body)).toEqual({ errors: [{ message: '/graphql answers GET and POST only.', extensions: { code: 'method_not_allowed' } }] });
    const text = await raw('POST', '/graphql', { 'content-type': 'text/plain' }, '{ __typename }');
    expect(text.status).toBe(415);
    expect(JSON.parse(text.body).errors[0].extensions.code).toBe('unsupported_media_type');
  });

  it('a browser GET with GraphiQL off gets a JSON answer saying how to ask, not null', async () => {
    const response = await raw('GET', '/graphql', { accept: 'text/html' });
    expect(response.status).toBe(406);
    expect(JSON.parse(response.body)).toEqual({
      errors: [{ message: expect.stringContaining('POST /graphql'), extensions: { code: 'not_acceptable' } }],
    });
  });
});
