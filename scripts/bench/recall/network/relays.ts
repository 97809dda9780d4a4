// The relays of the simulated network, each on its own loopback port, counted by `Accounting`:
// - ours: a NIP-01 relay like test/support/loopback-relay.ts (REQ → stored matches newest first,
//   then EOSE), indexed, and able to be slow (answers after a delay) or silent (never answers);
// - third-party: @nostr-relay/core with @nostr-relay/validator (as test/support/third-party-relay.ts),
//   over an indexed in-memory repository, slow or silent by holding REQs back before it sees them;
// - dead: refusing (a reserved port nothing listens on: ECONNREFUSED) or resetting (accepts TCP and
//   resets it at once).
// Events are put in storage directly (`hold`); nobody publishes through the protocol.
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server } from 'node:net';
import { NostrRelay } from '@nostr-relay/core';
import { type Event, EventRepository, type Filter as RelayFilter, LogLevel } from '@nostr-relay/common';
import { Validator } from '@nostr-relay/validator';
import type { Filter } from 'nostr-tools/filter';
import { type WebSocket, WebSocketServer } from 'ws';
import type { NostrEvent } from '../../../../src/nostr/event.js';
import type { Accounting } from './accounting.js';
import { EventIndex } from './event-index.js';

export type Behaviour = 'live' | 'slow' | 'silent' | 'refusing' | 'resetting';
export type Implementation = 'ours' | 'third-party';

export interface RelaySpec {
  index: number;
  behaviour: Behaviour;
  implementation: Implementation;
  /** How long a slow relay waits before answering a REQ. */
  delayMs: number;
}

export interface SimRelay {
  readonly spec: RelaySpec;
  readonly url: string;
  readonly port: number;
  hold(event: NostrEvent): void;
  holds(id: string): boolean;
  stop(): Promise<void>;
}

export function isDead(behaviour: Behaviour): boolean {
  return behaviour === 'refusing' || behaviour === 'resetting';
}

/** Whether what a relay holds can reach the service: dead and silent relays never hand anything over. */
export function isLive(behaviour: Behaviour): boolean {
  return behaviour === 'live' || behaviour === 'slow';
}

/** `refusingPort`: a free port reserved by the caller for a refusing relay (nothing will listen on it). */
export async function startRelay(spec: RelaySpec, accounting: Accounting, refusingPort: () => Promise<number>): Promise<SimRelay> {
  const events = new EventIndex();
  const base = { spec, hold: (event: NostrEvent) => events.add(event), holds: (id: string) => events.has(id) };
  if (spec.behaviour === 'refusing') {
    const port = await refusingPort();
    return { ...base, url: urlOf(port), port, stop: async () => {} };
  }
  if (spec.behaviour === 'resetting') {
    const server = createTcpServer((socket) => {
      accounting.deadDials += 1;
      socket.resetAndDestroy();
    });
    const port = await listen(server);
    return { ...base, url: urlOf(port), port, stop: () => new Promise((resolve) => server.close(() => resolve())) };
  }
  const onSocket = spec.implementation === 'ours' ? ourRelay(spec, events, accounting) : thirdPartyRelay(spec, events, accounting);
  const listening = await listenWebSockets(spec.index, accounting, onSocket);
  return { ...base, url: urlOf(listening.port), port: listening.port, stop: listening.stop };
}

/** As relays are written in NIP-65 lists: no trailing slash (the service normalises either way). */
function urlOf(port: number): string {
  return `ws://127.0.0.1:${port}`;
}

/** Listens on a free loopback port (an HTTP server is a TCP server too). */
function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

/** A WebSocket server whose TCP connections are counted from the moment they are accepted. */
async function listenWebSockets(index: number, accounting: Accounting, onSocket: (socket: WebSocket) => void) {
  const server = createHttpServer((_request, response) => response.writeHead(426).end());
  server.on('connection', (socket) => {
    accounting.opened(index);
    socket.once('close', () => accounting.closed(index));
  });
  const wss = new WebSocketServer({ server });
  // ws moves a socket to CLOSING as soon as either side sends a close frame.
  accounting.countWebSockets(() => [...wss.clients].filter((client) => client.readyState === client.OPEN).length);
  wss.on('connection', (socket) => {
    socket.on('error', () => {}); // a reset from the service must not stop the bench
    accounting.webSocketOpened();
    onSocket(socket);
  });
  const port = await listen(server);
  const stop = async () => {
    for (const client of wss.clients) client.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { port, stop };
}

function ourRelay(spec: RelaySpec, events: EventIndex, accounting: Accounting) {
  return (socket: WebSocket) => {
    const send = (message: unknown[]) => socket.send(JSON.stringify(message));
    // Subscriptions not closed: a slow answer to one the service gave up on is not sent.
    const open = new Set<string>();
    const answer = (subscriptionId: string, filters: Filter[]) => {
      if (!open.has(subscriptionId) || socket.readyState !== socket.OPEN) return;
      const sent = new Set<string>();
      for (const filter of filters) {
        for (const event of events.find(filter)) {
          if (sent.has(event.id)) continue;
          sent.add(event.id);
          send(['EVENT', subscriptionId, event]);
        }
      }
      send(['EOSE', subscriptionId]);
    };
    socket.on('message', (data) => {
      let message: unknown;
      try {
        message = JSON.parse(String(data));
      } catch {
        return send(['NOTICE', 'invalid: not JSON']);
      }
      if (!Array.isArray(message)) return;
      const [type, subscriptionId, ...filters] = message as [string, string, ...Filter[]];
      if (type === 'REQ') {
        accounting.req(spec.index, filters);
        open.add(subscriptionId);
        if (spec.behaviour === 'silent') return;
        if (spec.behaviour === 'slow') setTimeout(() => answer(subscriptionId, filters), spec.delayMs).unref();
        else answer(subscriptionId, filters);
      } else if (type === 'CLOSE') {
        open.delete(subscriptionId);
      } else if (type === 'EVENT') {
        const id = (message[1] as { id?: unknown } | undefined)?.id;
        send(['OK', typeof id === 'string' ? id : '', false, 'blocked: a read-only bench relay']);
      }
    });
  };
}

/** @nostr-relay/core's storage: the same index, with its repository's default limit of 500. */
class IndexedRepository extends EventRepository {
  constructor(private readonly events: EventIndex) {
    super();
  }

  isSearchSupported(): boolean {
    return false;
  }

  upsert(event: Event) {
    const isDuplicate = this.events.has(event.id);
    this.events.add(event as NostrEvent);
    return { isDuplicate };
  }

  find(filter: RelayFilter): Event[] {
    return this.events.find(filter as Filter, 500) as Event[];
  }

  async destroy(): Promise<void> {}
}

function thirdPartyRelay(spec: RelaySpec, events: EventIndex, accounting: Accounting) {
  const relay = new NostrRelay(new IndexedRepository(events), { logLevel: LogLevel.ERROR });
  const validator = new Validator();
  return (socket: WebSocket) => {
    relay.handleConnection(socket, '127.0.0.1');
    // A slow relay's REQs wait here; a CLOSE of one still waiting drops it.
    const waiting = new Map<string, NodeJS.Timeout>();
    socket.on('message', async (data) => {
      try {
        const message = await validator.validateIncomingMessage(data);
        if (message[0] === 'REQ') {
          const subscriptionId = message[1];
          accounting.req(spec.index, message.slice(2) as Filter[]);
          if (spec.behaviour === 'silent') return;
          if (spec.behaviour === 'slow') {
            const timer = setTimeout(() => {
              waiting.delete(subscriptionId);
              void relay.handleMessage(socket, message);
            }, spec.delayMs);
            waiting.set(subscriptionId, timer);
            return;
          }
        }
        if (message[0] === 'CLOSE' && waiting.has(message[1])) {
          clearTimeout(waiting.get(message[1]));
          waiting.delete(message[1]);
          return;
        }
        await relay.handleMessage(socket, message);
      } catch (error) {
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(['NOTICE', (error as Error).message]));
      }
    });
    socket.on('close', () => {
      for (const timer of waiting.values()) clearTimeout(timer);
      relay.handleDisconnect(socket);
    });
  };
}
