import type { FastifyPluginCallback } from 'fastify';
import { PACKAGE_VERSION } from '../../version.js';
import { DOCUMENTATION_ONLY, HOME_SCHEMA } from '../openapi/schemas.js';
import { JSON_TYPE } from '../reply.js';

/** What GET / lists: every route a client or an operator may start from, with one line on each. */
export const HOME_ROUTES: Readonly<Record<string, string>> = {
  '/user-profile?pubkey=…': 'the latest profile (kind 0) of a pubkey',
  '/event?id=…': 'an event with the profiles of its people',
  '/thread?id=…': 'a thread screen: the event, its parents, a page of replies, stats and profiles',
  '/feed?pubkey=…': "a page of a pubkey's home feed",
  '/notifications?pubkey=…': 'a page of what happened to a pubkey',
  '/graphql': 'the GraphQL API (GraphiQL in a browser, where enabled)',
  '/docs': 'the REST API, its parameters, answers and errors (OpenAPI: /openapi.json)',
  '/healthz': 'liveness',
  '/readyz': 'readiness: the store answers',
  '/metrics': 'Prometheus metrics (where enabled)',
};

/**
 * GET / → `{"service", "version", "routes": {path: what it is}}`: a newcomer who opens the
 * service's address is told where to go, rather than answered a bare 404.
 */
export const homeRoute: FastifyPluginCallback = (app, _options, done) => {
  const body = JSON.stringify({ service: 'nostr-lookup', version: PACKAGE_VERSION, routes: HOME_ROUTES });
  app.get('/', { schema: HOME_SCHEMA, ...DOCUMENTATION_ONLY }, async (_request, reply) => reply.header('content-type', JSON_TYPE).header('cache-control', 'no-store').send(body));
  done();
};
