import { type Filter, matchFilter } from 'nostr-tools/filter';
import { type WebSocket, WebSocketServer } from 'ws';
import type { NostrEvent } from '../../src/nostr/event.js';

/**
 * A small NIP-01 relay on loopback for tests: REQ answers stored events that match (newest first,
 * honouring `limit`), then EOSE, then live events; CLOSE ends a subscription. It does not verify what
 * it holds, so a test can make it serve a forged event. It records every REQ so tests can count
 * subscriptions, and can be made silent (accepts REQ, never answers) or stopped and started again.
 */
export interface LoopbackRelay {
  readonly url: string;
  readonly port: number;
  /** Every REQ received, as its filters, in order. */
  readonly requests: Filter[][];
  /** The most subscriptions one connection has held open at once. */
  readonly maxOpenSubscriptions: number;
  /** Accept subscriptions but never send anything (the deadline path). */
  silent: boolean;
  /** Wait this long before answering a REQ (a slow relay). */
  delayMs: number;
  /** Stores events (anything event-shaped) and sends them to live subscriptions that match. */
  add(...events: NostrEvent[]): void;
  /** Replaces what the relay holds. */
  reset(events: NostrEvent[]): void;
  /** Closes the listening socket and every connection. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
}

interface Client {
  socket: WebSocket;
  subscriptions: Map<string, Filter[]>;
}

function matchesAny(filters: Filter[], event: NostrEvent): boolean {
  return filters.some((filter) => matchFilter(filter, event as Parameters<typeof matchFilter>[1]));
}

export async function startLoopbackRelay(
  options: {
    events?: NostrEvent[];
    port?: number;
    silent?: boolean;
    delayMs?: number;
    /** Answer a REQ's filters together, newest first (as relays that merge filters do), instead of filter by filter. */
    newestFirstAcrossFilters?: boolean;
  } = {},
): Promise<LoopbackRelay> {
  let events = [...(options.events ?? [])];
  const clients = new Set<Client>();
  const requests: Filter[][] = [];
  let server: WebSocketServer | undefined;
  let port = options.port ?? 0;
  let maxOpenSubscriptions = 0;

  const send = (client: Client, message: unknown[]) => client.socket.send(JSON.stringify(message));

  const answer = (client: Client, subscriptionId: string, filters: Filter[]) => {
    const sent = new Set<string>();
    if (options.newestFirstAcrossFilters) {
      const matching = events.filter((event) => matchesAny(filters, event)).sort((a, b) => b.created_at - a.created_at);
      for (const event of matching) send(client, ['EVENT', subscriptionId, event]);
      send(client, ['EOSE', subscriptionId]);
      return;
    }
    for (const filter of filters) {
      const matching = events
        .filter((event) => matchFilter(filter, event as Parameters<typeof matchFilter>[1]))
        .sort((a, b) => b.created_at - a.created_at)
        .slice(0, filter.limit ?? Number.POSITIVE_INFINITY);
      for (const event of matching) {
        if (sent.has(event.id)) continue;
        sent.add(event.id);
        send(client, ['EVENT', subscriptionId, event]);
      }
    }
    send(client, ['EOSE', subscriptionId]);
  };

  const onMessage = (client: Client, data: string) => {
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch {
      send(client, ['NOTICE', 'invalid: not JSON']);
      return;
    }
    if (!Array.isArray(message)) return;
    const [type, ...rest] = message as [string, ...unknown[]];
    if (type === 'REQ') {
      const [subscriptionId, ...filters] = rest as [string, ...Filter[]];
      requests.push(filters);
      client.subscriptions.set(subscriptionId, filters);
      maxOpenSubscriptions = Math.max(maxOpenSubscriptions, client.subscriptions.size);
      if (relay.silent) return;
      if (relay.delayMs > 0) setTimeout(() => answer(client, subscriptionId, filters), relay.delayMs);
      else answer(client, subscriptionId, filters);
    } else if (type === 'CLOSE') {
      client.subscriptions.delete(rest[0] as string);
    } else if (type === 'EVENT') {
      const event = rest[0] as NostrEvent;
      relay.add(event);
      send(client, ['OK', event.id, true, '']);
    }
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const wss = new WebSocketServer({ host: '127.0.0.1', port });
      wss.once('listening', () => {
        const address = wss.address();
        if (typeof address === 'object' && address !== null) port = address.port;
        server = wss;
        resolve();
      });
      wss.once('error', reject);
      wss.on('connection', (socket) => {
        const client: Client = { socket, subscriptions: new Map() };
        clients.add(client);
        socket.on('message', (data) => onMessage(client, String(data)));
        socket.on('close', () => clients.delete(client));
      });
    });

  const relay: LoopbackRelay = {
    get url() {
      return `ws://127.0.0.1:${port}/`;
    },
    get port() {
      return port;
    },
    requests,
    get maxOpenSubscriptions() {
      return maxOpenSubscriptions;
    },
    silent: options.silent ?? false,
    delayMs: options.delayMs ?? 0,
    add(...added) {
      events.push(...added);
      if (relay.silent) return;
      for (const client of clients) {
        for (const [subscriptionId, filters] of client.subscriptions) {
          for (const event of added) if (matchesAny(filters, event)) send(client, ['EVENT', subscriptionId, event]);
        }
      }
    },
    reset(replacement) {
      events = [...replacement];
    },
    async stop() {
      const wss = server;
      server = undefined;
      if (!wss) return;
      for (const client of clients) client.socket.terminate();
      clients.clear();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
    start: listen,
  };
  await listen();
  return relay;
}
