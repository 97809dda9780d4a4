import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { resolve } from 'node:path';

/** The test CA the suite trusts through NODE_EXTRA_CA_CERTS (set in vitest.config.ts), and the server it signed (localhost, 127.0.0.1, ::1). */
export const TEST_CA_FILE = resolve('test/fixtures/tls/ca.pem');
const CERT = readFileSync(resolve('test/fixtures/tls/server.pem'));
const KEY = readFileSync(resolve('test/fixtures/tls/server-key.pem'));

/** How the server answers `/.well-known/nostr.json?name=<name>`; a function gets the raw exchange. */
export type NostrJsonRoute =
  | { json: unknown; status?: number; delayMs?: number }
  | ((request: IncomingMessage, response: ServerResponse) => void);

export interface Nip05Server {
  /** `127.0.0.1:<port>`: the domain of this server's names. */
  domain: string;
  port: number;
  /** Requests received so far, by the `name` they asked (`''` for none), and every path asked. */
  hits: Map<string, number>;
  paths: string[];
  /** TCP connections accepted, open now and open at once at most; TLS handshakes completed. */
  connections: { accepted: number; open: number; peak: number; handshakes: number };
  /** Sets how a name is answered (names are looked up in lowercase, as asked). */
  route(name: string, answer: NostrJsonRoute): void;
  /** Sets how another path is answered (an LNURL pay endpoint, say), whatever its query. */
  routePath(path: string, answer: NostrJsonRoute): void;
  close(): Promise<void>;
}

/**
 * A real HTTPS server on a loopback port serving NIP-05 nostr.json documents per name, with the
 * test certificate; unknown names get `{"names": {}}`. Other paths (LNURL pay endpoints) are served
 * as routePath sets them, else 404.
 */
export async function startNip05Server(): Promise<Nip05Server> {
  const routes = new Map<string, NostrJsonRoute>();
  const pathRoutes = new Map<string, NostrJsonRoute>();
  const hits = new Map<string, number>();
  const paths: string[] = [];
  const server = createServer({ cert: CERT, key: KEY }, (request, response) => {
    const url = new URL(request.url ?? '/', 'https://localhost');
    paths.push(url.pathname);
    const name = url.searchParams.get('name') ?? '';
    hits.set(name, (hits.get(name) ?? 0) + 1);
    const pathRoute = pathRoutes.get(url.pathname);
    if (url.pathname !== '/.well-known/nostr.json' && !pathRoute) {
      response.writeHead(404).end();
      return;
    }
    const route = pathRoute ?? routes.get(name) ?? { json: { names: {} } };
    if (typeof route === 'function') {
      route(request, response);
      return;
    }
    const send = () => response.writeHead(route.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(route.json));
    if (route.delayMs) setTimeout(send, route.delayMs);
    else send();
  });
  const connections = { accepted: 0, open: 0, peak: 0, handshakes: 0 };
  // A connection's end as the TLS socket sees it, by the client's port (the raw socket says only 'close', later).
  const ends = new Map<number, () => void>();
  server.on('connection', (socket: Socket) => {
    connections.accepted++;
    const port = socket.remotePort ?? 0;
    let state: 'accepted' | 'open' | 'closed' = 'accepted';
    const closed = () => {
      if (state === 'open') connections.open--;
      state = 'closed';
      if (ends.get(port) === closed) ends.delete(port);
    };
    ends.set(port, closed);
    socket.once('close', closed);
    // Counted on the next turn of the event loop: a client that closes one connection and then
    // opens another has sent its end first, but both may arrive in one turn, and a connection closed
    // during its handshake says so only in that turn's last phase ('close'), after the accept.
    setTimeout(() => {
      if (state !== 'accepted') return;
      state = 'open';
      connections.peak = Math.max(connections.peak, ++connections.open);
    }, 0);
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    connections.handshakes++;
    const port = socket.remotePort ?? 0;
    socket.once('end', () => ends.get(port)?.());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    domain: `127.0.0.1:${port}`,
    port,
    hits,
    paths,
    connections,
    route: (name, answer) => routes.set(name, answer),
    routePath: (path, answer) => pathRoutes.set(path, answer),
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
