import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import proxyAddr from '@fastify/proxy-addr';
import { parse as parseQueryString } from 'fast-querystring';
import type { Logger, RequestLog } from '../logger.js';
import type { AnswerCache } from '../store/answer-cache.js';
import { joinJson, writeQuotedJson } from '../store/json-text.js';
import { notModified, validatorHeaders } from './conditional.js';
import type { RequestsPerConnection, ShutdownGate } from './connection-limits.js';
import { isJsonContentType, type KeptGraphqlAnswer, MAX_KEPT_KEY_LENGTH, responseMediaType } from './graphql/direct-execution.js';
import { cacheControlFor, JSON_TYPE } from './reply.js';
import { type KeptAnswer, type KeptAnswerRoute, keptAnswerOf, servedAgain } from './routes/rest-lookup.js';

/** What decides whether a request may be answered here at all, from the app's own limits. */
export interface FastLaneGates {
  /** The close (connection-limits.ts): once it has started Fastify answers 503; what the lane took before, it waits for. */
  shutdown: ShutdownGate;
  /** The per-connection cap (MAX_REQUESTS_PER_CONNECTION), shared with the routes. */
  connections: RequestsPerConnection;
  /** With RATE_LIMIT: counts the client's request where it is allowed at once (rate-limits.ts). */
  takeRequest?: (ip: string | undefined) => boolean;
  /** The client's address, as Fastify's request.ip reads it (TRUST_PROXY). */
  clientAddress(request: IncomingMessage): string | undefined;
}

/** The kept answers of /graphql's prepared operations (graphql/direct-execution.ts), looked up here for a JSON POST. */
export interface FastLaneGraphql {
  /** The endpoint, spelled exactly (yoga's graphqlEndpoint). */
  path: string;
  answers: AnswerCache<KeptGraphqlAnswer>;
}

export interface FastLaneOptions {
  /** The routes whose answers may be kept (those with an answer key: /user-profile, /event). */
  routes: readonly KeptAnswerRoute[];
  answers: AnswerCache<KeptAnswer>;
  graphql?: FastLaneGraphql;
  gates: FastLaneGates;
  /** The request id Fastify would give this request (app.ts genReqId). */
  requestId(headers: IncomingHttpHeaders): string;
  /** The headers @fastify/cors adds to an answer to a GET (app.ts). */
  corsHeaders: Readonly<Record<string, string>>;
  logRequest: RequestLog;
  /** Where a failure of the lane itself is logged (never expected: the request then goes to Fastify). */
  logger: Logger;
  /** The request metrics, when on (routes/metrics.ts): route pattern, method, status, seconds. */
  countRequest?: (route: string, method: string, status: number, seconds: number) => void;
}

/** Fastify's own request handler (its serverFactory's). */
export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Answers `request` and says true, or says false and leaves it untouched for Fastify. A /graphql
 * POST it takes (says true) and, once its body is read, answers or hands on to `handOn` (Fastify)
 * with the body kept for the route (preReadBody).
 */
export type FastLane = (request: IncomingMessage, response: ServerResponse, handOn: RequestHandler) => boolean;

/** The bodies the lane read before handing their requests on (the /graphql route reads them here). */
const preRead = new WeakMap<IncomingMessage, Buffer>();

/** The body the fast lane read from `request` before handing it to Fastify, if it did. */
export function preReadBody(request: IncomingMessage): Buffer | undefined {
  return preRead.get(request);
}

/**
 * Kept answers served before the framework. A `GET /user-profile` or `/event` whose answer the
 * answer cache holds (store/answer-cache.ts), or a JSON `POST /graphql` whose body a prepared
 * operation's kept answer is under (postFrom), is served from the node:http request handler, without
 * Fastify's request, reply, routing and hook chain: that machinery cost more CPU than the answer
 * itself (BENCHMARKS.md, "CPU per request"). What a client or an operator sees is what the route
 * gives: the same bytes, status and headers (x-request-id, CORS, ETag, Last-Modified, 304,
 * Cache-Control; test/fast-lane.test.ts compares them), the request-log line and the metrics once
 * the answer is written out (as the route's onResponse hooks), the same rate limit and
 * per-connection cap, counted in the same counters. A header the routes' hooks or replies add
 * (app.ts, reply.ts) must be added here too: the test compares every header.
 *
 * Anything else goes to Fastify untouched (a POST /graphql the lane read, with its body): another method (HEAD included) or path, a path spelled
 * otherwise (percent-encoded, a trailing slash), a request with a body, a query the route would
 * refuse, an answer not kept, a closing server, a full connection, and a request the rate limit
 * cannot let through at once (refused, or waiting for a lease: with RATE_LIMIT's burst at 8 or less
 * every lease is a single request, so the route serves them all): there the plugin decides, and
 * counts, as for every request.
 */
export function createFastLane(options: FastLaneOptions): FastLane {
  const answer = answerFrom(options);
  const post = options.graphql && postFrom(options, options.graphql);
  return (request, response, handOn) => {
    try {
      if (request.method === 'POST') return post !== undefined && request.url === options.graphql?.path && post(request, response, handOn);
      return answer(request, response);
    } catch (error) {
      // Nothing sent yet: the route answers (and its error handler, if it fails the same way).
      options.logger.error({ err: error }, 'fast lane failed');
      if (!response.headersSent) return false;
      response.destroy();
      return true;
    }
  };
}

/**
 * A JSON `POST /graphql` whose answer may be kept: its body is read here (at most
 * MAX_KEPT_KEY_LENGTH bytes, of a stated length), then, where graphql/direct-execution.ts keeps
 * an answer under those bytes, served as the route serves it (status, media type, headers, log
 * line, metrics, limits); anything else is handed to Fastify with its body (preReadBody). A body
 * cut short (the client gone) is answered by no one, as the route would not.
 */
function postFrom({ gates, requestId, corsHeaders, logRequest, countRequest, logger }: FastLaneOptions, graphql: FastLaneGraphql) {
  return (request: IncomingMessage, response: ServerResponse, handOn: RequestHandler): boolean => {
    const { headers } = request;
    const length = headers['content-length'];
    if (headers['transfer-encoding'] !== undefined || length === undefined || !/^\d{1,4}$/.test(length) || Number(length) > MAX_KEPT_KEY_LENGTH) return false;
    const mediaType = responseMediaType(headers.accept);
    if (mediaType === undefined || !isJsonContentType(headers['content-type']) || gates.shutdown.closing() || !gates.connections.hasRoom(request.socket)) return false;
    const started = performance.now();
    // In flight from here, as the route's requests are from their headers: a close waits for it.
    gates.shutdown.admit(request);
    let admitted = false;
    let logServed: (() => void) | undefined;
    // All this lane does when the exchange is over, in one place (see answerFrom).
    onceOver(request, response, () => {
      gates.shutdown.release(request);
      if (admitted) gates.connections.release(request);
      if (logServed && response.writableFinished) logServed();
    });
    const serve = (body: Buffer): boolean => {
      const kept = graphql.answers.find(body.toString('latin1'));
      // Asked again now: requests pipelined behind this one were let in before any body was read.
      if (kept === undefined || !gates.connections.hasRoom(request.socket)) return false;
      if (gates.takeRequest && !gates.takeRequest(gates.clientAddress(request))) return false;
      gates.connections.admit(request);
      admitted = true;
      servedAgain(graphql.answers, kept);
      const reqId = requestId(headers);
      const payload = writeQuotedJson(kept.body);
      logServed = () => {
        const ms = performance.now() - started;
        logRequest({ reqId, method: 'POST', url: graphql.path, status: 200, ms });
        countRequest?.(graphql.path, 'POST', 200, ms / 1000);
      };
      response.writeHead(200, { 'x-request-id': reqId, ...corsHeaders, 'content-type': `${mediaType}; charset=utf-8`, 'content-length': payload.length });
      response.end(payload);
      return true;
    };
    readBody(request, (body) => {
      if (body === undefined) return;
      let served = false;
      try {
        served = serve(body);
      } catch (error) {
        logger.error({ err: error }, 'fast lane failed');
        if (response.headersSent) {
          response.destroy();
          return;
        }
      }
      if (served) return;
      preRead.set(request, body);
      handOn(request, response);
    });
    return true;
  };
}

/** The whole body, or undefined when the request ends before it does (the client gone). */
function readBody(request: IncomingMessage, done: (body: Buffer | undefined) => void): void {
  const chunks: Buffer[] = [];
  let ended = false;
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.once('end', () => {
    ended = true;
    done(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
  });
  // An aborted request emits 'error' where someone listens, and 'close' in any case.
  request.on('error', () => {});
  request.once('close', () => {
    if (!ended) done(undefined);
  });
}

function answerFrom({ routes, answers, gates, requestId, corsHeaders, logRequest, countRequest }: FastLaneOptions) {
  const byPath = new Map(routes.map((route) => [route.path, route]));
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    if (request.method !== 'GET') return false;
    const url = request.url ?? '';
    const mark = url.indexOf('?');
    const route = mark > 0 ? byPath.get(url.slice(0, mark)) : undefined;
    if (route === undefined || hasBody(request.headers) || gates.shutdown.closing() || !gates.connections.hasRoom(request.socket)) return false;
    const started = performance.now();
    const kept = keptAnswerOf(route, answers, parseQueryString(url.slice(mark + 1)));
    if (kept === undefined) return false;
    if (gates.takeRequest && !gates.takeRequest(gates.clientAddress(request))) return false;
    // Served from here on: counted as the route counts it, and waited for by a close, until the
    // exchange is over (onceOver).
    gates.connections.admit(request);
    gates.shutdown.admit(request);
    servedAgain(answers, kept);
    const reqId = requestId(request.headers);
    const { validators, parts } = kept.rendered;
    // In the order the route's reply sets them: the id first (onRequest), CORS, the validators.
    const headers: Record<string, string | number> = { 'x-request-id': reqId, ...corsHeaders, ...validatorHeaders(validators) };
    let status = 200;
    let body: Buffer | undefined;
    if (notModified(request.headers, validators)) {
      status = 304;
      headers['cache-control'] = cacheControlFor(304);
    } else {
      body = joinJson(parts);
      headers['content-type'] = JSON_TYPE;
      headers['cache-control'] = cacheControlFor(200);
      headers['content-length'] = body.length;
    }
    // Released when the exchange is over (written out or its connection gone), and then logged and
    // counted if it was written out, as the route's onResponse hooks do. One callback does it all:
    // a listener and its closure per concern cost more than the concern (BENCHMARKS.md).
    onceOver(request, response, () => {
      gates.connections.release(request);
      gates.shutdown.release(request);
      if (!response.writableFinished) return;
      const ms = performance.now() - started;
      logRequest({ reqId, method: 'GET', url, status, ms });
      countRequest?.(route.path, 'GET', status, ms / 1000);
    });
    response.writeHead(status, headers);
    response.end(body);
    return true;
  };
}

/** Per connection, the exchanges of the lane on it not over yet: what its close ends (onceOver). */
const openExchanges = new WeakMap<Socket, Set<() => void>>();

/**
 * Calls `over` once, when the exchange of `request` is over: its response closes (written out, or
 * cut), or its connection closes first. Node closes no response it has not started writing: one
 * queued behind another on a connection that goes (pipelining) emits neither 'finish' nor 'close',
 * and its request stayed counted in flight for good (found by review; Fastify's own requests end
 * by onRequestAbort). One 'close' listener per connection, not per request.
 */
function onceOver(request: IncomingMessage, response: ServerResponse, over: () => void): void {
  const { socket } = request;
  const exchanges = openExchanges.get(socket) ?? exchangesOf(socket);
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    exchanges.delete(end);
    over();
  };
  exchanges.add(end);
  response.once('close', end);
  // Gone already (its 'close' emitted before this exchange was seen): over at once.
  if (socket.destroyed) queueMicrotask(end);
}

/** A connection's first exchange of the lane: its set, ended all together when it closes. */
function exchangesOf(socket: Socket): Set<() => void> {
  const exchanges = new Set<() => void>();
  openExchanges.set(socket, exchanges);
  socket.once('close', () => {
    for (const end of [...exchanges]) end();
  });
  return exchanges;
}

/** A request that carries a body (read or refused by Fastify's parsers, never here). */
function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

/**
 * The client's address as Fastify's request.ip reads it for a TRUST_PROXY value
 * (fastify/lib/request.js, getTrustProxyFn): the socket's peer, or with a proxy trusted, the
 * nearest untrusted hop of X-Forwarded-For, by the same library. A hop count trusts no one
 * (Fastify fails closed there: the peer cannot be checked).
 */
export function clientAddressReader(trustProxy: boolean | number | string | readonly string[]): (request: IncomingMessage) => string | undefined {
  if (trustProxy === false || trustProxy === 0) return (request) => request.socket.remoteAddress;
  const trust =
    trustProxy === true
      ? () => true
      : typeof trustProxy === 'number'
        ? () => false
        : proxyAddr.compile(typeof trustProxy === 'string' ? trustProxy.split(',').map((value) => value.trim()) : [...trustProxy]);
  return (request) => {
    const addresses = proxyAddr.all(request, trust);
    return addresses[addresses.length - 1];
  };
}
