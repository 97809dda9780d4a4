import type { Plugin } from 'graphql-yoga';
import { ERRORS, graphqlErrorBody } from '../../errors.js';

/**
 * yoga parses `variables` and `extensions` of a GET (and JSON bodies) with JSON.parse and answers a
 * SyntaxError with 500 "Unexpected error.". A request that does not parse is the client's mistake:
 * 400 `invalid_graphql_request` in the GraphQL error shape, from the one table.
 */
export function useRequestParseErrors(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser, fetchAPI }) {
      if (!requestParser) return;
      setRequestParser(async (request) => {
        try {
          return await requestParser(request);
        } catch (error) {
          if (!(error instanceof SyntaxError)) throw error;
          return new fetchAPI.Response(JSON.stringify(graphqlErrorBody('invalid_graphql_request')), {
            status: ERRORS.invalid_graphql_request.status,
            headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
          });
        }
      });
    },
  };
}
