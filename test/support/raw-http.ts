import { connect, type Socket } from 'node:net';

/** A raw TCP connection to a test server, for what fetch cannot do: pipelining, slow or partial requests. */
export interface RawConnection {
  socket: Socket;
  /** Everything received so far. */
  received(): string;
  /** Resolves when the server closes the connection (with what was received). */
  closed: Promise<string>;
  write(text: string): void;
}

export function openRaw(url: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', () => {});
    const closed = new Promise<string>((done) => socket.once('close', () => done(received)));
    socket.once('connect', () =>
      resolve({ socket, received: () => received, closed, write: (text) => socket.write(text) }),
    );
    socket.once('error', reject);
  });
}

/** The status codes of every response in a raw HTTP/1.1 stream, in order. */
export function statusesOf(stream: string): number[] {
  return [...stream.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
}

export const get = (path: string, headers = '') => `GET ${path} HTTP/1.1\r\nHost: test\r\n${headers}\r\n`;
