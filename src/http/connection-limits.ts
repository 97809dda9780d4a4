import type { IncomingMessage, Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { HttpLimits } from '../config/env.js';
import { ERRORS, type ErrorCode, errorBody } from '../errors.js';
import { clientKey } from '../client-key.js';
import { JSON_TYPE, sendError } from './reply.js';


/** A socket with nothing moving either way for this long is closed, whatever it is waiting for. */
export const SOCKET_INACTIVITY_MS = 30_000;
/** At shutdown, requests still in flight after this are cut (the service's own force is at 10 s). */
const SHUTDOWN_GRACE_MS = 8000;
/** How often Node checks requestTimeout (its default, 30 s, would let a slow request live 40 s). */
export const CONNECTIONS_CHECKING_INTERVAL_MS = 1000;

/** A whole HTTP response in the error shape, for a socket no request has reached yet. */
export function rawErrorResponse(code: ErrorCode): string {
  const { status } = ERRORS[code];
  const body = JSON.stringify(errorBody(code));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${JSON_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Caps on what one client holds of the server: connections in total (Node closes the
 * excess at once) and per client address (the excess gets a 503 in the error shape and is closed),
 * the time a request may take to arrive, and an idle keep-alive socket's life.
 */
export function limitConnections(server: Server, limits: HttpLimits): void {
  server.maxConnections = limits.maxConnections;
  server.requestTimeout = limits.requestTimeoutMs;
  server.headersTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.idleTimeoutMs;
  if (limits.maxConnectionsPerClient === 0) return;
  const perClient = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const client = clientKey(socket.remoteAddress);
    const open = (perClient.get(client) ?? 0) + 1;
    perClient.set(client, open);
    socket.once('close', () => {
      const left = (perClient.get(client) ?? 1) - 1;
      if (left <= 0) perClient.delete(client);
      else perClient.set(client, left);
    });
    if (open > limits.maxConnectionsPerClient) {
      // Answered before any request of it is read, then closed: nothing of it reaches a route.
      socket.pause();
      socket.end(rawErrorResponse('too_many_connections'));
      setTimeout(() => socket.destroy(), 1000).unref();
    }
  });
}

/**
 * Pipelining: a client may send many requests on one connection without reading the answers;
 * Node starts them all. At most `max` run at once per connection; the excess is answered 429.
 * Returns the same count for requests answered outside Fastify (RequestsPerConnection).
 */
export function limitRequestsPerConnection(app: FastifyInstance, max: number): RequestsPerConnection {
  const inProgress = new WeakMap<Socket, Set<IncomingMessage>>();
  const done = (raw: IncomingMessage) => inProgress.get(raw.socket)?.delete(raw);
  const running = (socket: Socket) => {
    let requests = inProgress.get(socket);
    if (!requests) {
      requests = new Set();
      inProgress.set(socket, requests);
    }
    return requests;
  };
  app.addHook('onRequest', (request, reply, next) => {
    const requests = running(request.raw.socket);
    if (requests.size >= max) {
      sendError(reply, 'too_many_requests');
      return;
    }
    requests.add(request.raw);
    next();
  });
  app.addHook('onResponse', (request, _reply, next) => {
    done(request.raw);
    next();
  });
  app.addHook('onRequestAbort', (request, next) => {
    done(request.raw);
    next();
  });
  return {
    hasRoom: (socket) => (inProgress.get(socket)?.size ?? 0) < max,
    admit: (request) => {
      running(request.socket).add(request);
    },
    release: done,
  };
}

/**
 * The same cap for requests answered outside Fastify (the fast lane): one is counted like the
 * route's until its answer is written out or its connection goes. Queued behind another answer, or
 * unread by its client, an answer holds its body in memory that long (uncounted, pipelined asks of
 * a large kept answer held 158 MB from a few connections: found by review).
 */
export interface RequestsPerConnection {
  /** Whether the connection can take one more request. */
  hasRoom(socket: Socket): boolean;
  /** Counts `request` on its connection until it is released (its exchange over: fast-lane.ts onceOver). */
  admit(request: IncomingMessage): void;
  release(request: IncomingMessage): void;
}

/** What the close needs of requests answered outside Fastify (the fast lane). */
export interface ShutdownGate {
  /** Whether the close has started. */
  closing(): boolean;
  /**
   * Counts a request taken before the close as in flight until it is released (its exchange over:
   * fast-lane.ts onceOver): the close waits for it as for the routes' (within SHUTDOWN_GRACE_MS), and Fastify, if
   * it is handed on, answers it rather than refusing it as come too late.
   */
  admit(request: IncomingMessage): void;
  release(request: IncomingMessage): void;
}

/**
 * Shutdown: from the moment `close()` starts, requests that reach the app (pipelined
 * behind one in flight) get a 503 in the error shape (`shutting_down`) that closes their
 * connection, and keep-alive sockets are closed as soon as they are idle: in-flight requests
 * finish, and the server closes right after them instead of waiting for keep-alive timeouts.
 * Returns what the fast lane asks of it (ShutdownGate).
 */
export function closeConnectionsOnShutdown(app: FastifyInstance): ShutdownGate {
  let closing = false;
  const inFlight = new Set<IncomingMessage>();
  // Once nothing is in flight, every connection goes, idle or not: a client that connected and sent
  // nothing, or half a request, would otherwise hold the close until the 10 s force (exit 1).
  const closeAfterInFlight = () =>
    setImmediate(() => (inFlight.size === 0 ? app.server.closeAllConnections() : app.server.closeIdleConnections()));
  app.addHook('preClose', (next) => {
    closing = true;
    closeAfterInFlight();
    // In flight for longer than this (a relay wait is 3 s by default): closed anyway.
    setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
    next();
  });
  // Both hooks may run for one request (an abort, then the answer): a set counts it once.
  const settled = (raw: IncomingMessage) => {
    inFlight.delete(raw);
    if (closing) closeAfterInFlight();
  };
  app.addHook('onRequestAbort', (request, next) => {
    settled(request.raw);
    next();
  });
  app.addHook('onRequest', (request, reply, next) => {
    // Taken by the fast lane before the close, then handed on: in flight already.
    const admitted = inFlight.has(request.raw);
    inFlight.add(request.raw);
    if (!closing || admitted) return next();
    sendError(reply.header('connection', 'close'), 'shutting_down');
  });
  app.addHook('onResponse', (request, _reply, next) => {
    settled(request.raw);
    next();
  });
  return {
    closing: () => closing,
    admit: (request) => {
      inFlight.add(request);
    },
    release: settled,
  };
}
