import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { profile, signed } from './support/events.js';
import { useTestServer } from './support/test-server.js';

/**
 * The direct path (src/http/graphql/direct-execution.ts) answers JSON POSTs without yoga's Fetch
 * layer; it must answer exactly as yoga does. A body with `"extensions": {}` is left to yoga, so each
 * request is sent both ways and the answers compared: status, content type and body.
 */

const alice = profile('direct-alice', { name: 'alice', nip05: 'alice@example.com' });
const note = signed('direct-alice', { content: 'hello', tags: [['p', alice.pubkey]] });
const context = useTestServer([alice, note]);

async function both(body: Record<string, unknown>, accept?: string) {
  const send = async (payload: Record<string, unknown>) => {
    const response = await fetch(`${context.server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(accept ? { accept } : {}) },
      body: JSON.stringify(payload),
    });
    return { status: response.status, type: response.headers.get('content-type'), body: (await response.json()) as unknown };
  };
  return { direct: await send(body), yoga: await send({ ...body, extensions: {} }) };
}

const QUERIES = [
  `{ event(id: "${note.id}") { id kind author { name } relevantProfiles { pubkey name } } }`,
  `query Q($id: String!) { event(id: $id) { json } }`,
  `query Q($id: String!) { event(id: $id) { raw json r: raw relevantProfiles { event { raw } } } }`,
  `query A { __typename } query B { profile(pubkey: "${alice.pubkey}") { name nip05 } }`,
  '{ profile(pubkey: "nope") { name } }',
  '{ profiles(pubkeys: ["x", "y"]) { name } }',
  '{ nope }',
  '{ event(id: ',
  `{ ${Array.from({ length: 16 }, (_, index) => `a${index}: __typename`).join(' ')} }`,
  '{ event(id: "x") { author { event { author { event { author { event { author { event { id } } } } } } } } } }',
  'query ($p: String!) { profile(pubkey: $p) { name } }',
  'subscription { x }',
  'mutation { x }',
  `query F { ...P } fragment P on Query { profile(pubkey: "${alice.pubkey}") { ... on Profile { name } bad: nip05 } event(id: "nope") { id } }`,
  '{ profile(pubkey: "nsec1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqwkhnav") { name } }',
  '{ __schema { queryType { name } } }',
  '',
];

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);

describe('POST /graphql: the direct path answers as yoga does', () => {
  it('for generated requests: queries, variables, operation names, accept headers', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...QUERIES),
        fc.option(fc.constantFrom<Record<string, unknown>>({ id: note.id }, { p: alice.pubkey }, { p: 5 }, {}, { id: 'x' }), { nil: undefined }),
        fc.option(fc.constantFrom('Q', 'A', 'B', 'F', 'Nope', ''), { nil: undefined }),
        fc.option(fc.constantFrom('application/json', 'application/graphql-response+json', '*/*', 'application/graphql-response+json, application/json;q=0.9'), { nil: undefined }),
        async (query, variables, operationName, accept) => {
          const body = { query, ...(variables ? { variables } : {}), ...(operationName !== undefined ? { operationName } : {}) };
          // Run twice: the second run of a document is compiled (use-compiled-execution.ts).
          for (let run = 0; run < 2; run++) {
            const { direct, yoga } = await both(body, accept);
            expect(direct).toEqual(yoga);
          }
        },
      ),
      { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? 42) },
    );
    // Four requests a run: the long mode (FUZZ_RUNS=10000) needs minutes, not the default 20 s.
  }, Math.max(20_000, RUNS * 20));
});

describe('POST /graphql: prepared operations (a query text validated twice) answer as yoga does', () => {
  it('cost by the variables of each request, variable errors, data: the same on every run, before and after preparation', async () => {
    const query = 'query ($ids: [String!]!) { events(ids: $ids) { id relevantProfiles { event { relevantProfiles { name } } } } }';
    const variables = [
      { ids: [note.id] },
      // 100 ids, each multiplied through relevantProfiles twice: refused by cost, not by preparation.
      { ids: Array.from({ length: 100 }, () => note.id) },
      // A single value is coerced to a list of one (GraphQL input coercion): an invalid id.
      { ids: 'not a list' },
      { ids: null },
      { ids: [note.id, 42] },
    ];
    const seen = new Set<string>();
    for (let run = 0; run < 5; run++) {
      for (const vars of variables) {
        const { direct, yoga } = await both({ query, variables: vars });
        expect(direct).toEqual(yoga);
        seen.add(JSON.stringify((direct.body as { errors?: { extensions?: { code?: string } }[] }).errors?.map((error) => error.extensions?.code) ?? []));
      }
    }
    // Not vacuous: data, a cost refusal, a field error and variable errors were all answered.
    expect(seen).toEqual(new Set(['[]', '["query_too_costly"]', '["invalid_id"]', '["graphql_validation_failed"]']));
  });
});
