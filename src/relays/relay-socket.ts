import { type LookupAddress, type LookupOptions, lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import WebSocket, { type ClientOptions } from 'ws';
import { MessageScreen, type ScreenHooks } from './message-screen.js';

/** The largest relay message we accept: far above real events (relays cap them near 512 KiB). */
export const MAX_RELAY_MESSAGE_BYTES = 2 * 1024 * 1024;

/**
 * Whether a connection to this IP address is allowed for an untrusted (learned) relay, a hint or a
 * write relay from a relay list: only public
 * unicast addresses. Loopback, private (RFC 1918, fc00::/7), link-local (169.254/16 and fe80::/10,
 * where cloud metadata services live), carrier-grade NAT, multicast, unspecified, reserved and
 * tunnelling ranges (6to4, Teredo, which can wrap any IPv4) are refused. IPv4-mapped IPv6 is judged
 * as the IPv4 address it carries.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  if (parsed.range() !== 'unicast') return false;
  // IPv6: only global unicast (2000::/3). ipaddr.js calls everything it has no name for "unicast",
  // including the deprecated IPv4-compatible ::/96 (`::7f00:1` is 127.0.0.1).
  return parsed.kind() === 'ipv4' || (parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

/**
 * Whether a name that resolved to `addresses` may be dialled by an untrusted party's choice: it
 * resolved, and to public addresses only (one private address among public ones is refused: the
 * connection could land on it).
 */
export function allPublic(addresses: readonly { address: string }[]): boolean {
  return addresses.length > 0 && addresses.every(({ address }) => isPublicAddress(address));
}

/** Refused because the hint's host is (or resolves to) an address that is not public. */
export class NonPublicAddressError extends Error {
  constructor(readonly host: string) {
    super(`relay hint refused: ${host} is not a public address`);
    this.name = 'NonPublicAddressError';
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A DNS lookup for sockets to untrusted relays: it resolves, then fails if any resolved address is
 * not public. Because the socket connects to exactly the addresses checked here, a name that
 * resolves differently the second time (DNS rebinding) cannot slip past the check.
 */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    if (!allPublic(addresses)) {
      return callback(Object.assign(new NonPublicAddressError(hostname), { code: 'ENONPUBLIC' }), []);
    }
    if (options.all) return callback(null, addresses);
    const [first] = addresses as [LookupAddress];
    return callback(null, first.address, first.family);
  });
}

/** Whether a hint's URL may be dialled at all: an IP literal is judged here (sockets skip DNS for it). */
export function hintHostAllowed(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return isIP(host) === 0 || isPublicAddress(host);
}

/**
 * nostr-tools clears `onerror` when it gives up on a connection and then closes the socket; closing a
 * socket that is still connecting makes ws emit 'error' on the next tick, and an 'error' without a
 * listener is an uncaught exception that would stop the process. This listener stays for good.
 */
function keepErrorsHandled(socket: WebSocket): void {
  socket.on('error', () => {});
}

/**
 * nostr-tools reads messages through `onmessage`: it gets only what the screen admits
 * (message-screen.ts), read from ws' raw bytes so that a message dropped is never decoded whole.
 */
function screenMessages(socket: WebSocket, screen: MessageScreen): void {
  let handler: ((event: WebSocket.MessageEvent) => void) | null = null;
  Object.defineProperty(socket, 'onmessage', {
    configurable: true,
    get: () => handler,
    set: (value: ((event: WebSocket.MessageEvent) => void) | null) => {
      handler = value;
    },
  });
  socket.on('message', (data, isBinary) => {
    const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    const text = screen.admit(bytes, isBinary);
    if (text !== undefined && handler) handler.call(socket, { data: text, type: 'message', target: socket });
  });
}

const BASE_OPTIONS: ClientOptions = {
  maxPayload: MAX_RELAY_MESSAGE_BYTES,
  followRedirects: false,
  perMessageDeflate: false,
};

/**
 * A WebSocket class for nostr-tools (Node 20 has no global WebSocket), which constructs it with the
 * URL only, so the options and the screen's hooks are fixed per class: one class per relay
 * connection. `publicOnly` for learned relays (hints, relay lists): every resolved address must be
 * public (see publicOnlyLookup).
 */
export function relaySocket({ publicOnly, hooks }: { publicOnly: boolean; hooks: ScreenHooks }): new (url: string) => WebSocket {
  // `lookup` is not in ws' types, but ws hands its options to net/tls.connect, which honour it.
  const options: ClientOptions & { lookup?: typeof publicOnlyLookup } = publicOnly ? { ...BASE_OPTIONS, lookup: publicOnlyLookup } : BASE_OPTIONS;
  return class RelaySocket extends WebSocket {
    private readonly screen: MessageScreen;

    constructor(url: string) {
      super(url, options);
      keepErrorsHandled(this);
      this.screen = new MessageScreen({
        isOpen: hooks.isOpen,
        onFlood: () => {
          // At once, without a closing handshake: nothing more is read from it.
          this.terminate();
          hooks.onFlood();
        },
      });
      screenMessages(this, this.screen);
      // Pings are answered by ws without reaching the screen: counted like a message that answers nothing (found by review).
      this.on('ping', (data: Buffer) => this.screen.unasked(data.length));
    }

    /** Each REQ of ours renews the relay's budget of unasked traffic, each CLOSE starts a grace (message-screen.ts). */
    override send(...args: [data: unknown, ...rest: unknown[]]): void {
      if (typeof args[0] === 'string' && args[0].startsWith('["REQ"')) this.screen.asked();
      // Our own CLOSE (nostr-tools writes ["CLOSE","<id>"]): its answer in flight is not a flood.
      else if (typeof args[0] === 'string' && args[0].startsWith('["CLOSE"')) {
        const id = (JSON.parse(args[0]) as unknown[])[1];
        if (typeof id === 'string') this.screen.closed(id);
      }
      (WebSocket.prototype.send as (...forwarded: unknown[]) => void).apply(this, args);
    }
  };
}
