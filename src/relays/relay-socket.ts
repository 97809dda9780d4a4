import { type LookupAddress, type LookupOptions, lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import WebSocket, { type ClientOptions } from 'ws';
import { isRelayMessage } from './relay-message.js';

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
  // including the deprecated IPv4-compatible ::/96 (`::7f00:1` is 127.0.0.1; issue 18 §5).
  return parsed.kind() === 'ipv4' || (parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

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
    if (addresses.length === 0 || !addresses.every(({ address }) => isPublicAddress(address))) {
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

const onmessageAccessor = Object.getOwnPropertyDescriptor(WebSocket.prototype, 'onmessage');

/** nostr-tools reads messages through `onmessage`: only well-formed relay messages reach it. */
function dropMalformedMessages(socket: WebSocket): void {
  if (!onmessageAccessor?.get || !onmessageAccessor.set) throw new Error('ws has no onmessage accessor');
  const { get, set } = onmessageAccessor;
  Object.defineProperty(socket, 'onmessage', {
    configurable: true,
    get: () => get.call(socket),
    set: (handler: ((event: WebSocket.MessageEvent) => void) | null) =>
      set.call(socket, handler && ((event: WebSocket.MessageEvent) => isRelayMessage(event.data) && handler(event))),
  });
}

const BASE_OPTIONS: ClientOptions = {
  maxPayload: MAX_RELAY_MESSAGE_BYTES,
  followRedirects: false,
  perMessageDeflate: false,
};

/**
 * WebSocket classes for nostr-tools (Node 20 has no global WebSocket). nostr-tools constructs them
 * with the URL only, so the options are fixed per class.
 */
export class RelaySocket extends WebSocket {
  constructor(url: string) {
    super(url, BASE_OPTIONS);
    keepErrorsHandled(this);
    dropMalformedMessages(this);
  }
}

/** For learned relays (hints, relay lists): every resolved address must be public (see publicOnlyLookup). */
export class PublicOnlyRelaySocket extends WebSocket {
  constructor(url: string) {
    // `lookup` is not in ws' types, but ws hands its options to net/tls.connect, which honour it.
    const options: ClientOptions & { lookup: typeof publicOnlyLookup } = { ...BASE_OPTIONS, lookup: publicOnlyLookup };
    super(url, options);
    keepErrorsHandled(this);
    dropMalformedMessages(this);
  }
}
