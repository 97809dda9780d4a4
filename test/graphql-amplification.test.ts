import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { approximateJsonBytes } from '../src/http/graphql/use-query-limits.js';
import { serializeEvent } from '../src/nostr/event.js';
import { ObjectBudget } from '../src/schema/object-budget.js';
import { pubkeyOf, signed } from './support/events.js';
import { getJson, useTestServer } from './support/test-server.js';

// A reported amplification: 20 profiles, each naming all 20 (p tags), and a note naming all 20.
const USERS = Array.from({ length: 20 }, (_, index) => `user${index}`);
const P_TAGS = USERS.map((user) => ['p', pubkeyOf(user)]);
const PROFILES = USERS.map((user) =>
  signed(user, { kind: 0, content: JSON.stringify({ name: user, about: 'x'.repeat(400) }), tags: P_TAGS }),
);
const NOTE = signed('user0', { content: 'hello all', tags: P_TAGS });

const context = useTestServer([...PROFILES, NOTE]);
// 5,000 characters that JSON writes as six bytes each (\u0001): 30 KB on the wire.
const CONTROL = signed('user1', { content: '\u0001'.repeat(5000) });
const small = useTestServer([...PROFILES, NOTE, CONTROL], { graphql: { maxResponseBytes: 16 * 1024 } });
const CAP = 64 * 1024;
const capped = useTestServer([...PROFILES, NOTE], { graphql: { maxResponseBytes: CAP } });

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

describe('GraphQL output is bounded by what is asked', () => {
  it('the reported query (one note ×100, relevantProfiles twice nested) is refused before any read: query_too_costly', async () => {
    const query = `{ events(ids: ${ids(100)}) { relevantProfiles { event { relevantProfiles { event { json } } } } } }`;
    expect(query.length).toBeLessThan(10_000);
    const response = await graphql(query);
    // Refused before execution: a request error, 400 (README: GraphQL errors and statuses).
    expect(response.status).toBe(400);
    expect(response.body.data).toBeUndefined();
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

  it('a list given as a variable default is costed like a literal (found by review: it counted as 1)', async () => {
    const distinct = JSON.stringify(Array.from({ length: 100 }, (_, index) => index.toString(16).padStart(64, '0')));
    const query = `query Q($ids: [String!]! = ${distinct}) { events(ids: $ids) { relevantProfiles { event { relevantProfiles { pubkey } } } } }`;
    const response = await graphql(query);
    expect(response.body.errors?.map((error) => error.extensions?.code)).toEqual(['query_too_costly']);
  });

  it('while it runs, the objects handed back are counted too: past GRAPHQL_MAX_COST the request fails', () => {
    const budget = new ObjectBudget(10);
    budget.charge(6);
    budget.charge(4);
    expect(() => budget.charge(1)).toThrow(expect.objectContaining({ code: 'query_too_costly' }));
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

  it('the cap counts bytes as sent: escapes and UTF-8, not string length (found by review)', async () => {
    const response = await graphql(`{ events(ids: ["${CONTROL.id}"]) { content } }`, small.server.url);
    expect(response.body.errors?.map((error) => error.extensions?.code)).toEqual(['response_too_large']);
    expect(response.text.length).toBeLessThan(1000);
    // The event as an object: its stored JSON (30 KB of escapes) counted as it is sent.
    const raw = await graphql(`{ events(ids: ["${CONTROL.id}"]) { raw } }`, small.server.url);
    expect(raw.body.errors?.map((error) => error.extensions?.code)).toEqual(['response_too_large']);
    expect(raw.text.length).toBeLessThan(1000);
    const fits = await graphql(`{ events(ids: ["${NOTE.id}"]) { raw } }`, small.server.url);
    expect(fits.body).toEqual({ data: { events: [{ raw: NOTE }] } });
  });

  it('no query of at most 10 KB answers more than MAX_RESPONSE_BYTES, whatever it nests, aliases or repeats (property)', async () => {
    const scalar = fc.constantFrom('json', 'raw', 'content', 'id', 'pubkey', 'kind', 'createdAt', 'tags', 'relevantPubkeys');
    const profileScalar = fc.constantFrom('pubkey', 'name', 'about', 'displayName');
    const alias = fc.option(fc.constantFrom('a', 'b', 'c', 'd'), { nil: undefined });
    const named = (name: string, as: string | undefined, index: number) => (as ? `${as}${index}: ${name}` : name);
    const { eventSelection } = fc.letrec((tie) => ({
      eventSelection: fc
        .array(
          fc.oneof(
            { depthSize: 'small' },
            fc.tuple(alias, scalar).map(([as, name]) => ({ as, text: name })),
            fc.tuple(alias, tie('profileSelection')).map(([as, inner]) => ({ as, text: `relevantProfiles { ${inner as string} }` })),
            fc.tuple(alias, tie('profileSelection')).map(([as, inner]) => ({ as, text: `author { ${inner as string} }` })),
          ),
          { minLength: 1, maxLength: 4 },
        )
        .map((fields) => fields.map(({ as, text }, index) => named(text, as, index)).join(' ')),
      profileSelection: fc
        .array(
          fc.oneof(
            { depthSize: 'small' },
            fc.tuple(alias, profileScalar).map(([as, name]) => ({ as, text: name })),
            fc.tuple(alias, tie('eventSelection')).map(([as, inner]) => ({ as, text: `event { ${inner as string} }` })),
          ),
          { minLength: 1, maxLength: 4 },
        )
        .map((fields) => fields.map(({ as, text }, index) => named(text, as, index)).join(' ')),
    }));
    // Ids of what the store holds (the note, the profiles), repeated or not, and unknown ones.
    const known = [NOTE.id, ...PROFILES.map((event) => event.id)];
    const id = fc.oneof(fc.constantFrom(...known), fc.nat({ max: 1000 }).map((n) => n.toString(16).padStart(64, '0')));
    const root = fc
      .tuple(fc.array(id, { minLength: 1, maxLength: 60 }), eventSelection)
      .map(([ids, selection]) => `{ events(ids: ${JSON.stringify(ids)}) { ${selection} } }`);
    const seen = { answered: 0, tooCostly: 0, tooLarge: 0, largest: 0 };
    await fc.assert(
      fc.asyncProperty(root, async (query) => {
        fc.pre(query.length <= 10_000);
        const response = await graphql(query, capped.server.url);
        seen.largest = Math.max(seen.largest, response.text.length);
        if (response.body.data) seen.answered += 1;
        if (response.text.includes('query_too_costly')) seen.tooCostly += 1;
        if (response.text.includes('response_too_large')) seen.tooLarge += 1;
        expect([200, 400]).toContain(response.status);
        expect(response.text.length).toBeLessThanOrEqual(CAP + 1024);
        const codes = (response.body.errors ?? []).map((error) => error.extensions?.code);
        // Every error carries a table code.
        for (const code of codes) {
          expect(['query_too_costly', 'response_too_large', 'graphql_validation_failed', 'query_too_deep', 'too_many_aliases', 'too_many_tokens']).toContain(code);
        }
        // A request refused before execution is 400; one that ran (data, even null) is 200.
        expect(response.status).toBe('data' in response.body ? 200 : 400);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 150), seed: Number(process.env.FUZZ_SEED ?? 42) },
    );
    // Not vacuous: the generated queries reach every outcome, and answers near the cap.
    expect(seen.answered).toBeGreaterThan(0);
    expect(seen.tooCostly).toBeGreaterThan(0);
    expect(seen.tooLarge).toBeGreaterThan(0);
    expect(seen.largest).toBeGreaterThan(CAP / 4);
  }, 120_000);
});

describe('approximateJsonBytes: the size check of every answer', () => {
  // GraphQL data: keys are GraphQL names (ASCII), strings anything (lone surrogates, controls, emoji).
  const name = fc.stringMatching(/^[_A-Za-z][_0-9A-Za-z]{0,8}$/);
  const text = fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('"', '\\', '\u0001', '\ud800', 'a') }));
  const { json } = fc.letrec((tie) => ({
    json: fc.oneof(
      { depthSize: 'small' },
      text,
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('json')),
      fc.dictionary(name, tie('json')),
    ),
  }));

  it('is never less than the bytes JSON.stringify writes (property)', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(approximateJsonBytes(value, Number.MAX_SAFE_INTEGER)).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(value)));
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 300), seed: Number(process.env.FUZZ_SEED ?? 42) },
    );
  });

  it('looks at the characters before it refuses: an answer under the limit that only the rough bound passes is accepted', () => {
    const value = { json: 'a'.repeat(1000) };
    // Rough bound: six bytes per character (6,000+); exact: 1,000 and a few.
    expect(approximateJsonBytes(value, 2000)).toBeLessThanOrEqual(2000);
    expect(approximateJsonBytes({ json: '\u0001'.repeat(1000) }, 2000)).toBeGreaterThan(2000);
    expect(approximateJsonBytes({ json: 'é'.repeat(1000) }, 1500)).toBeGreaterThan(1500);
  });
});
