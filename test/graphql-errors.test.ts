import { describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors.js';
import { useTestServer } from './support/test-server.js';

/**
 * Every GraphQL error carries a code from the one table, and its HTTP status follows one rule
 * (README "GraphQL errors and statuses"): a request refused before execution (no
 * `data`) is 400, whatever the media type asked; errors of an executed request come with `data`
 * and 200.
 */

const context = useTestServer();
const MEDIA_TYPES = ['application/json', 'application/graphql-response+json'];

async function post(body: unknown, accept: string) {
  const response = await fetch(`${context.server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type'), body: JSON.parse(text) as Record<string, unknown> };
}

const deep = '{ event(id: "x") { author { event { author { event { author { event { author { event { id } } } } } } } } } }';
const aliased = `{ ${Array.from({ length: 16 }, (_, index) => `a${index}: profile(pubkey: "x") { name }`).join(' ')} }`;

describe.each(MEDIA_TYPES)('GraphQL request errors, accept: %s', (accept) => {
  it.each([
    ['nested deeper than 8', { query: deep }, 'query_too_deep', 'Query depth limit of 8 exceeded, found 10.'],
    ['more than 15 aliases', { query: aliased }, 'too_many_aliases', 'Aliases limit of 15 exceeded, found 16.'],
    ['more than 2,000 tokens', { query: `{ ${'__typename '.repeat(2100)} }` }, 'too_many_tokens', 'Token limit of 2000 exceeded.'],
    ['more than 50 directives', { query: `{ __typename ${'@include(if: true) '.repeat(51)} }` }, 'too_many_directives', 'Directives limit of 50 exceeded, found 51.'],
    ['a document that does not parse', { query: '{ event(id: ' }, 'graphql_parse_failed', 'Syntax Error: Unexpected <EOF>.'],
    ['an unknown field', { query: '{ nope }' }, 'graphql_validation_failed', 'Cannot query field "nope" on type "Query".'],
    ['a variable of the wrong type', { query: 'query ($p: String!) { profile(pubkey: $p) { name } }', variables: { p: 5 } }, 'graphql_validation_failed', 'Variable "$p" got invalid value 5; String cannot represent a non string value: 5'],
    ['no query', { variables: {} }, 'invalid_graphql_request', 'Must provide query string.'],
    ['an array (batching)', [{ query: '{ __typename }' }, { query: '{ __typename }' }], 'batching_not_supported', ERRORS.batching_not_supported.message],
  ])('%s: 400 %s', async (_label, body, code, message) => {
    const response = await post(body, accept);
    expect(response.status).toBe(400);
    expect(response.body.data).toBeUndefined();
    expect(response.body.errors).toEqual([expect.objectContaining({ message, extensions: { code } })]);
    expect(response.type).toBe(`${accept === 'application/json' ? 'application/json' : 'application/graphql-response+json'}; charset=utf-8`);
  });

  it('a query over GRAPHQL_MAX_COST is refused before execution: 400 query_too_costly', async () => {
    const ids = JSON.stringify(Array.from({ length: 100 }, (_, index) => String(index)));
    const response = await post({ query: `{ events(ids: ${ids}) { relevantProfiles { event { relevantProfiles { name } } } } }` }, accept);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ errors: [{ message: expect.stringContaining('the limit is 20000'), extensions: { code: 'query_too_costly' } }] });
  });

  it('errors of an executed request come with data and 200: list_too_long, invalid_id', async () => {
    const list = await post({ query: `{ profiles(pubkeys: ${JSON.stringify(Array.from({ length: 101 }, () => 'x'))}) { name } }` }, accept);
    expect(list.status).toBe(200);
    // (`locations` only on the first run: compiled execution, from the second, reports the path alone.)
    expect(list.body).toEqual({
      data: null,
      errors: [expect.objectContaining({ message: ERRORS.list_too_long.message, path: ['profiles'], extensions: { code: 'list_too_long' } })],
    });
    const invalid = await post({ query: '{ event(id: "nope") { id } profile(pubkey: "nope") { name } }' }, accept);
    expect(invalid.status).toBe(200);
    expect(invalid.body.data).toEqual({ event: null, profile: null });
    expect((invalid.body.errors as { extensions: { code: string } }[]).map((error) => error.extensions.code)).toEqual(['invalid_id', 'invalid_pubkey']);
  });
});

describe('GET /graphql from a browser while GraphiQL is off', () => {
  it('answers 406 with a JSON error saying how to send GraphQL, never null', async () => {
    const response = await fetch(`${context.server.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(406);
    expect(await response.json()).toEqual({ errors: [{ message: ERRORS.not_acceptable.message, extensions: { code: 'not_acceptable' } }] });
  });
});

describe('a misspelled field', () => {
  const development = useTestServer([], { graphql: { graphiql: true } });

  it('is answered with a suggestion where GraphiQL is on (development), and without one where it is off', async () => {
    const ask = async (url: string) => {
      const response = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ profile(pubkey: "x") { nmae } }' }) });
      return ((await response.json()) as { errors: { message: string }[] }).errors[0]?.message;
    };
    expect(await ask(development.server.url)).toBe('Cannot query field "nmae" on type "Profile". Did you mean "name"?');
    expect(await ask(context.server.url)).toBe('Cannot query field "nmae" on type "Profile". [Suggestion hidden]');
  });
});
