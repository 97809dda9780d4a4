import { connect } from 'node:net';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { startTestServer, type TestServer, useTestServer } from './support/test-server.js';
import { createTestStore } from './support/test-store.js';

/**
 * /openapi.json: a valid OpenAPI 3.1 document (checked by
 * @seriousme/openapi-schema-validator), generated from the routes, and real answers of every
 * status of both REST routes valid against it (Ajv, JSON Schema 2020-12, with the document's own
 * components). Validators we did not write.
 */

const alice = profile('openapi-alice', { name: 'alice' });
const note = signed('openapi-alice', { content: 'documented', tags: [['p', pubkeyOf('openapi-bob')]] });
const context = useTestServer([alice, note]);

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }>; headers?: Record<string, unknown> }> }>>;
}

let document: OpenApiDocument;
const ajv = new Ajv2020({ strict: false, allErrors: true });

beforeAll(async () => {
  const response = await fetch(`${context.server.url}/openapi.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  document = (await response.json()) as OpenApiDocument;
  ajv.addSchema(document, 'openapi.json');
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const pointer = (...segments: string[]) => segments.map((segment) => segment.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** Checks one real answer against the document: its status is documented, and its body matches. */
async function conforms(path: string, response: Response): Promise<void> {
  const text = await response.text();
  const documented = document.paths[path]?.get?.responses[String(response.status)];
  expect(documented, `${path} ${response.status} is documented`).toBeDefined();
  if (!documented?.content) {
    expect(text).toBe('');
    return;
  }
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const validate = ajv.getSchema(`openapi.json#/${pointer('paths', path, 'get', 'responses', String(response.status), 'content', 'application/json', 'schema')}`);
  expect(validate).toBeDefined();
  const body = JSON.parse(text) as unknown;
  const valid = validate?.(body);
  expect(valid, `${path} ${response.status}: ${JSON.stringify(validate?.errors)}`).toBe(true);
}

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document with both routes and every status', async () => {
    const result = await new Validator().validate(structuredClone(document) as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    // Not vacuous: the validator refuses a document without its info.
    const broken = structuredClone(document) as unknown as Record<string, unknown>;
    delete broken.info;
    expect((await new Validator().validate(broken as unknown as Parameters<Validator['validate']>[0])).valid).toBe(false);
    expect(document.openapi).toBe('3.1.0');
    for (const path of ['/user-profile', '/event', '/thread', '/feed', '/notifications']) {
      const responses = document.paths[path]?.get?.responses ?? {};
      expect(Object.keys(responses).sort()).toEqual(['200', '304', '400', '404', '405', '429', '500', '503']);
      expect(responses['200']?.headers).toHaveProperty('etag');
      expect(responses['429']?.headers).toHaveProperty('retry-after');
    }
    // /search also says 501: search of notes off (NOTE_SEARCH).
    expect(Object.keys(document.paths['/search']?.get?.responses ?? {}).sort()).toEqual(['200', '304', '400', '404', '405', '429', '500', '501', '503']);
    // No request path of ours is missing, and none is there that we do not answer.
    expect(Object.keys(document.paths).sort()).toEqual(['/', '/event', '/feed', '/healthz', '/metrics', '/notifications', '/readyz', '/search', '/thread', '/user-profile']);
  });

  it('lists every error code of the table that the REST routes answer, under its status', () => {
    const codes = (path: string, status: number) => {
      const schema = ajv.getSchema(`openapi.json#/${pointer('paths', path, 'get', 'responses', String(status), 'content', 'application/json', 'schema', 'properties', 'error', 'properties', 'code')}`)?.schema as { enum: string[] };
      return schema.enum;
    };
    expect(codes('/event', 404).sort()).toEqual(['event_deleted', 'event_not_found']);
    expect(codes('/user-profile', 404).sort()).toEqual(['nip05_not_found', 'nip05_unresolvable', 'profile_deleted', 'profile_not_found']);
    expect(codes('/thread', 404).sort()).toEqual(['event_deleted', 'event_not_found']);
    expect(codes('/thread', 400)).toEqual(expect.arrayContaining(['invalid_argument', 'invalid_cursor', 'invalid_id']));
    for (const path of ['/event', '/user-profile', '/thread', '/feed', '/notifications']) {
      for (const status of [400, 404, 405, 429, 500, 503]) {
        for (const code of codes(path, status)) expect(ERRORS[code as keyof typeof ERRORS].status, `${path} ${code}`).toBe(status);
      }
      expect(codes(path, 500).sort()).toEqual(['corrupt_data', 'internal_error', 'relays_unavailable', 'store_unavailable']);
    }
  });

  it('200, 304, 400, 404 and 405 answers conform', async () => {
    const url = context.server.url;
    const ok = await fetch(`${url}/event?id=${note.id}`);
    const etag = ok.headers.get('etag') as string;
    await conforms('/event', ok);
    await conforms('/user-profile', await fetch(`${url}/user-profile?pubkey=${alice.pubkey}`));
    await conforms('/event', await fetch(`${url}/event?id=${note.id}`, { headers: { 'if-none-match': etag } }));
    for (const bad of ['/event?id=nope', '/event', `/event?id=${note.id}&id=${note.id}`, '/event?id=nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5']) {
      await conforms('/event', await fetch(`${url}${bad}`));
    }
    await conforms('/user-profile', await fetch(`${url}/user-profile?pubkey=npub1nope`));
    await conforms('/event', await fetch(`${url}/event?id=${'0'.repeat(64)}`));
    await conforms('/user-profile', await fetch(`${url}/user-profile?pubkey=${pubkeyOf('nobody')}`));
    const thread = await fetch(`${url}/thread?id=${note.id}`);
    const threadTag = thread.headers.get('etag') as string;
    await conforms('/thread', thread);
    await conforms('/thread', await fetch(`${url}/thread?id=${note.id}`, { headers: { 'if-none-match': threadTag } }));
    for (const bad of ['/thread', `/thread?id=${note.id}&limit=0`, `/thread?id=${note.id}&after=x`, `/thread?id=${'0'.repeat(64)}`]) {
      await conforms('/thread', await fetch(`${url}${bad}`));
    }
    await conforms('/feed', await fetch(`${url}/feed?pubkey=${alice.pubkey}`));
    for (const bad of ['/feed', `/feed?pubkey=${alice.pubkey}&limit=99`, `/feed?pubkey=${alice.pubkey}&after=x`]) await conforms('/feed', await fetch(`${url}${bad}`));
    // Not vacuous: a thread body with anything more, or a stats field missing, is refused.
    const thread200 = ajv.getSchema(`openapi.json#/${pointer('paths', '/thread', 'get', 'responses', '200', 'content', 'application/json', 'schema')}`);
    const good = { event: alice, parents: [], replies: [], stats: { replies: 0, threadReplies: 0, quotes: 0, reposts: 0, reactions: { pubkeys: 0, likes: 0, dislikes: 0, byContent: [] }, zaps: { count: 0, msats: 0, senders: 0, pending: 0 }, trusted: false }, profiles: {}, next: null };
    expect(thread200?.(good)).toBe(true);
    expect(thread200?.({ ...good, extra: 1 })).toBe(false);
    expect(thread200?.({ ...good, stats: { ...good.stats, quotes: undefined } })).toBe(false);
    // Not vacuous: the schemas refuse what the routes must never send.
    const profile200 = ajv.getSchema(`openapi.json#/${pointer('paths', '/user-profile', 'get', 'responses', '200', 'content', 'application/json', 'schema')}`);
    expect(profile200?.({ profile: { ...alice, kind: 1 } })).toBe(false);
    expect(profile200?.({ profile: { ...alice, extra: true } })).toBe(false);
    expect(profile200?.({ profile: alice })).toBe(true);
    const post = await fetch(`${url}/event?id=${note.id}`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    await conforms('/event', post);
  });

  it('429 conforms (RATE_LIMIT)', async () => {
    const store = await createTestStore();
    cleanups.push(() => store.cleanup());
    const server = await startTestServer(store.store, { rateLimits: { requests: { perSecond: 1, burst: 1 }, trustProxy: false } });
    cleanups.push(() => server.close());
    await fetch(`${server.url}/event?id=${note.id}`);
    const limited = await fetch(`${server.url}/event?id=${note.id}`);
    expect(limited.status).toBe(429);
    await conforms('/event', limited);
  });

  it('500 conforms (the store unreachable)', async () => {
    const store = await createTestStore();
    cleanups.push(() => store.cleanup());
    const server: TestServer = await startTestServer(store.store);
    cleanups.push(() => server.close());
    store.client.disconnect();
    const failed = await fetch(`${server.url}/user-profile?pubkey=${alice.pubkey}`);
    expect(failed.status).toBe(500);
    await conforms('/user-profile', failed);
  });

  it('503 conforms (too many connections from one client)', async () => {
    const store = await createTestStore();
    cleanups.push(() => store.cleanup());
    const server = await startTestServer(store.store, {
      http: { requestTimeoutMs: 10_000, idleTimeoutMs: 5_000, maxConnections: 100, maxConnectionsPerClient: 1, maxRequestsPerConnection: 8 },
    });
    cleanups.push(() => server.close());
    // One connection held open (nothing sent), then a second one is over the cap.
    const port = Number(new URL(server.url).port);
    const held = connect(port, '127.0.0.1');
    await new Promise((resolve) => held.once('connect', resolve));
    cleanups.push(async () => {
      held.destroy();
    });
    const refused = await fetch(`${server.url}/event?id=${note.id}`);
    expect(refused.status).toBe(503);
    await conforms('/event', refused);
  });
});
