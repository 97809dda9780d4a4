import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ERRORS, graphqlErrorBody } from '../../errors.js';
import { JSON_TYPE } from '../reply.js';

/** yoga's own refusals of a request it could not parse: a 400 that quotes the body it could not read. */
const isParseRefusal = (error: unknown) =>
  error instanceof GraphQLError && (error.extensions?.http as { status?: number } | undefined)?.status === 400;

/**
 * yoga parses `variables` and `extensions` of a GET (and JSON bodies) with JSON.parse and answers a
 * SyntaxError with 500 "Unexpected error.", and a POST body that is not JSON with a 400 that quotes
 * the whole body (a secret key in it, and a 25 MB body is a 150 MB answer). A request that does
 * not parse is the client's mistake: 400 `invalid_graphql_request` in the GraphQL error shape.
 */
export function useRequestParseErrors(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser, fetchAPI }) {
      if (!requestParser) return;
      setRequestParser(async (request) => {
        try {
          return await requestParser(request);
        } catch (error) {
          // Never yoga's message for these: it quotes the body it could not parse, whole.
          if (!(error instanceof SyntaxError) && !isParseRefusal(error)) throw error;
          return new fetchAPI.Response(JSON.stringify(graphqlErrorBody('invalid_graphql_request')), {
            status: ERRORS.invalid_graphql_request.status,
            headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store' },
          });
        }
      });
    },
  };
}
