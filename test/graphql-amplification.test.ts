import { describe, expect, it } from 'vitest';
import { serializeEvent } from '../src/nostr/event.js';
import { pubkeyOf, signed } from './support/events.js';
import { getJson, useTestServer } from './support/test-server.js';

// Issue 18 §1: 20 profiles, each naming all 20 (p tags), and a note naming all 20.
const USERS = Array.from({ length: 20 }, (_, index) => `user${index}`);
const P_TAGS = USERS.map((user) => ['p', pubkeyOf(user)]);
const PROFILES = USERS.map((user) =>
  signed(user, { kind: 0, content: JSON.stringify({ name: user, about: 'x'.repeat(400) }), tags: P_TAGS }),
);
const NOTE = signed('user0', { content: 'hello all', tags: P_TAGS });

const context = useTestServer([...PROFILES, NOTE]);
const small = useTestServer([...PROFILES, NOTE], { graphql: { maxResponseBytes: 16 * 1024 } });

interface GraphQLBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

async function graphql(query: string, url = context.server.url, variables?: Record<string, unknown>) {
  const response = await getJson(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return { ...response, body: response.body as GraphQLBody };
}

const ids = (count: number) => JSON.stringify(Array.from({ length: count }, () => NOTE.id));

describe('GraphQL output is bounded by what is asked (issue 18 §1)', () => {
  it('the reported query (one note ×100, relevantProfiles twice nested) is refused before any read: query_too_costly', async () => {
    const query = `{ events(ids: ${ids(100)}) { relevantProfiles { event { relevantProfiles { event { json } } } } } }`;
    expect(query.length).toBeLessThan(10_000);
    const response = await graphql(query);
    expect(response.status).toBe(200);
    expect(response.body.data ?? null).toBeNull();
    expect(response.body.errors?.map((error) => error.extensions?.code)).toEqual(['query_too_costly']);
    expect(response.body.errors?.[0]?.message).toMatch(/limit is 20000/);
    expect(response.text.length).toBeLessThan(1000);
  });

  it('one more level with aliases is refused the same way', async () => {
    const level = (depth: number): string =>
      depth === 0 ? 'json' : `a: relevantProfiles { event { ${level(depth - 1)} } } b: relevantProfiles { event { ${level(depth - 1)} } }`;
    const response = await graphql(`{ events(ids: ${ids(100)}) { ${level(3)} } }`);
    expect(response.body.errors?.map((error) => error.extensions?.code)).toEqual(['query_too_costly']);
  });

  it('fragments count every time they select', async () => {
    const distinct = JSON.stringify(Array.from({ length: 10 }, (_, index) => index.toString(16).padStart(64, '0')));
    const query = `query { events(ids: ${distinct}) { ...P } }
      fragment P on Event { relevantProfiles { event { relevantProfiles { pubkey } } } }`;
    const response = await graphql(query);
    expect(response.body.errors?.map((error) => [error.extensions?.code, error.message])).toEqual([['query_too_costly', expect.any(String)]]);
  });

  it('a list variable is costed by its distinct items', async () => {
    const query = 'query($ids: [String!]!) { events(ids: $ids) { relevantProfiles { event { relevantProfiles { pubkey } } } } }';
    const one = await graphql(query, context.server.url, { ids: Array.from({ length: 100 }, () => NOTE.id) });
    expect(one.body.errors).toBeUndefined();
    const many = await graphql(query, context.server.url, {
      ids: Array.from({ length: 100 }, (_, index) => index.toString(16).padStart(64, '0')),
    });
    expect(many.body.errors?.map((error) => error.extensions?.code)).toEqual(['query_too_costly']);
  });

  it('a repeated id is answered once: events(ids: [note ×100]) is the answer for one note', async () => {
    const response = await graphql(`{ events(ids: ${ids(100)}) { json } profiles(pubkeys: ${JSON.stringify([NOTE.pubkey, NOTE.pubkey.toUpperCase()])}) { pubkey } }`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: { events: [{ json: serializeEvent(NOTE) }], profiles: [{ pubkey: NOTE.pubkey }] },
    });
  });

  it('what REST answers, GraphQL answers at about the same size: one level of relevantProfiles is allowed', async () => {
    const rest = await getJson(`${context.server.url}/event?id=${NOTE.id}`);
    const response = await graphql(`{ event(id: "${NOTE.id}") { json relevantProfiles { pubkey event { json } } } }`);
    expect(response.body.errors).toBeUndefined();
    expect(response.text.length).toBeLessThan(rest.text.length * 2);
    // Nested once more, it stays within MAX_PROFILES × the REST answer.
    const nested = await graphql(`{ event(id: "${NOTE.id}") { relevantProfiles { event { relevantProfiles { pubkey } } } } }`);
    expect(nested.body.errors).toBeUndefined();
    expect(nested.text.length).toBeLessThan(rest.text.length * 100);
  });

  it('an answer over MAX_RESPONSE_BYTES is refused with response_too_large, and nothing of it is sent', async () => {
    const query = `{ event(id: "${NOTE.id}") { relevantProfiles { about event { json content } } } }`;
    expect((await graphql(query)).body.errors).toBeUndefined();
    const response = await graphql(query, small.server.url);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: null,
      errors: [{ message: expect.stringContaining('MAX_RESPONSE_BYTES'), extensions: { code: 'response_too_large' } }],
    });
  });
});
