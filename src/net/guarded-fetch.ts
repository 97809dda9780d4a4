import { type LookupAddress, promises as dns } from 'node:dns';
import { Agent, request } from 'node:https';
import { isIP, type Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Nip05Config } from '../config/env.js';
import { allPublic } from '../relays/relay-socket.js';
import { DomainSlots } from './domain-slots.js';

/**
 * HTTPS GETs of small documents at URLs that untrusted input chose: NIP-05 nostr.json (a profile's
 * or a client's `name@domain`) and LNURL pay endpoints (a profile's `lud16`/`lud06`), through one
 * fetcher for the whole service (its slots and connections shared by both). Everything about them
 * is untrusted, hence, for every such exchange: HTTPS only; a deadline for the whole exchange
 * (DNS, waiting for a slot, connect, TLS, body); a cap on the body; no redirects followed (NIP-05:
 * "Fetchers MUST ignore any HTTP redirects"; a redirect would also carry the exchange to an address
 * the policy below never judged); the address policy of relay hints (public addresses only, unless
 * RELAY_ALLOW_PRIVATE); and caps on exchanges at once, in all and per address (domain-slots.ts).
 *
 * A name is resolved once, here: the policy judges what it resolved to, the slot is taken for the
 * address, and the connection is made to that very address (the name goes in SNI and Host). Keyed
 * by name, many names of one server (wildcard DNS, a.example, b.example…) each had a cap of their
 * own; and a second resolution by the socket could land elsewhere than the one judged (rebinding).
 */

/** Resolves a host name to its addresses, as dns.lookup with `all` does (tests map names to loopback). */
export type HostLookup = (hostname: string) => Promise<LookupAddress[]>;

const systemLookup: HostLookup = (hostname) => dns.lookup(hostname, { all: true });

/**
 * How long an idle connection to a domain is kept for the next exchange: below the 5 s keep-alive
 * of common servers (Node's own), so that we close it before they do and seldom send on a socket
 * they are closing.
 */
const IDLE_CONNECTION_MS = 4000;

/**
 * No exchange is started with less time left than this (one that waited its turn may have little):
 * it could not end (a TLS handshake alone takes longer), and its connection would be opened only to
 * be closed.
 */
const MIN_EXCHANGE_MS = 50;

/** When an exchange must have ended: its signal aborts then (or at shutdown); `endsAt` is that time on performance.now()'s clock. */
export interface Deadline {
  signal: AbortSignal;
  endsAt: number;
}

export interface GuardedFetcherOptions {
  /** RELAY_ALLOW_PRIVATE: loopback, private and link-local addresses allowed (tests, local setups). */
  allowPrivate: boolean;
  /** Exchanges at once, in all (NIP05_MAX_CONCURRENT); DNS lookups at once too. */
  maxConcurrent: number;
  /** Exchanges, and connections, at once with one address (NIP05_MAX_PER_DOMAIN): an IPv4 address, or an IPv6 /64. */
  maxPerAddress: number;
  /** How names are resolved: the system's resolver (dns.lookup) unless a test maps names. */
  lookup?: HostLookup;
}

/**
 * Why an exchange gave no body: `not_asked` (no slot in time, or shutdown: nothing was learnt about
 * the domain), `policy` (refused by our rules: not HTTPS, not a public address, a redirect, a body
 * too large), `status` (the server answered with a status the caller does not read), `network`
 * (timeout, DNS, connection, TLS: the domain may answer later).
 */
export type FailureCause = 'not_asked' | 'policy' | 'status' | 'network';

export type GuardedFetchResult =
  | { kind: 'answered'; status: number; text: string }
  | { kind: 'failed'; reason: string; cause: FailureCause; status?: number };

export interface GetOptions {
  /** The largest body read, in bytes; past it (by Content-Length or as it arrives) the exchange fails as `too large`. */
  maxBodyBytes: number;
  /** Sent as User-Agent: says which check asks. */
  userAgent: string;
  /** A check nobody waits for: only within its share of the slots, never in line (domain-slots.ts). */
  background?: boolean;
  /** Statuses whose body is read and returned (else the exchange fails as `status N`); 200 by default. */
  bodyStatuses?: readonly number[];
  /**
   * Statuses answered as soon as their headers arrive, with an empty text: their body is still read
   * (within the same caps), only to keep the connection for the next exchange.
   */
  headerStatuses?: readonly number[];
}

const DEFAULT_BODY_STATUSES = [200];

function failed(reason: string, cause: FailureCause, status?: number): GuardedFetchResult {
  return status === undefined ? { kind: 'failed', reason, cause } : { kind: 'failed', reason, cause, status };
}

function timedOut(signal: AbortSignal): boolean {
  return (signal.reason as Error | undefined)?.name === 'TimeoutError';
}

/** Why a deadline signal ended the exchange: its time ran out, or the service is closing. */
function abortFailure(signal: AbortSignal): GuardedFetchResult {
  return timedOut(signal) ? failed('timeout', 'network') : failed('aborted', 'not_asked');
}

/** One exchange as it went: the result (possibly before the body has been read to its end), and when the connection was done with. */
interface Exchange {
  result: GuardedFetchResult;
  /** A reused connection the server had closed meanwhile: nothing was asked, ask again. */
  staleConnection: boolean;
  ended: Promise<void>;
}

/** Where an exchange connects: the address its name resolved to (the one judged), and the key of its slot. */
interface Target {
  address: string;
  slot: string;
}

/**
 * The slot of an address: an IPv4 address itself (an IPv4-mapped IPv6 one as the IPv4 it carries),
 * an IPv6 one by its /64, the least a site is given: a server may answer on any address of it, and
 * a cap per /128 would let one server's names take 2^64 caps.
 */
export function slotKey(address: string): string {
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  return `${(parsed as ipaddr.IPv6).toNormalizedString().split(':').slice(0, 4).join(':')}::/64`;
}

/**
 * The guarded GET. Connections are kept alive and reused per name and address (at most
 * maxPerAddress connections to one address, idle ones included), so that many exchanges with one
 * domain cost one TLS handshake, not one each; the address policy holds for reused connections
 * too, as it was checked on the address each one was opened to.
 */
export class GuardedFetcher {
  private readonly agent: Agent;
  private readonly slots: DomainSlots;
  /** DNS lookups at once: they take threads of libuv's small pool, and a name's server may be slow to answer. */
  private readonly lookups: DomainSlots;
  private readonly lookup: HostLookup;

  constructor(private readonly options: GuardedFetcherOptions) {
    this.slots = new DomainSlots(options.maxConcurrent, options.maxPerAddress);
    this.lookups = new DomainSlots(options.maxConcurrent, options.maxConcurrent);
    this.lookup = options.lookup ?? systemLookup;
    // Every connection is to an IP literal (resolved and judged in get()): the agent never resolves.
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: options.maxPerAddress,
      maxFreeSockets: options.maxPerAddress,
      timeout: IDLE_CONNECTION_MS,
    });
    // Not the Agent's maxTotalSockets: it counts idle connections, so a new domain would wait for
    // another's to time out. The slots cap exchanges; this caps idle connections in all.
    this.agent.on('free', (socket: Socket) => this.closeIdleBeyondCap(socket));
  }

  /** GETs `url` within `deadline` (whose signal also ends it at shutdown); never throws. */
  async get(url: URL, { signal: deadline, endsAt }: Deadline, options: GetOptions): Promise<GuardedFetchResult> {
    if (url.protocol !== 'https:') return failed('not https', 'policy');
    if (deadline.aborted) return abortFailure(deadline);
    const background = options.background ?? false;
    const target = await this.resolve(url.hostname.replace(/^\[|\]$/g, ''), deadline, background);
    if ('kind' in target) return target;
    const release = await this.slots.acquire(target.slot, deadline, background);
    // No slot in time: the domain was not asked (nothing to remember about it).
    if (!release) return failed(deadline.aborted && !timedOut(deadline) ? 'aborted' : 'busy', 'not_asked');
    if (endsAt - performance.now() < MIN_EXCHANGE_MS) {
      release();
      return failed('busy', 'not_asked');
    }
    this.closeIdleBeyondAddressCap(target.slot);
    let exchange = await this.exchange(url, target.address, deadline, options);
    // Once: a kept connection may be closed by the server just as we send on it.
    if (exchange.staleConnection) exchange = await this.exchange(url, target.address, deadline, options);
    void exchange.ended.then(release);
    return exchange.result;
  }

  /**
   * The address to connect to: an IP literal as written, else the first address the name resolves
   * to, once every address it resolves to has passed the policy. Lookups are capped at once like
   * exchanges; one that outlives its deadline keeps its place until it ends.
   */
  private async resolve(hostname: string, deadline: AbortSignal, background: boolean): Promise<Target | GuardedFetchResult> {
    let addresses: LookupAddress[];
    if (isIP(hostname) !== 0) {
      addresses = [{ address: hostname, family: isIP(hostname) }];
    } else {
      const release = await this.lookups.acquire('', deadline, background);
      if (!release) return failed(deadline.aborted && !timedOut(deadline) ? 'aborted' : 'busy', 'not_asked');
      if (deadline.aborted) {
        release();
        return abortFailure(deadline);
      }
      const lookup = this.lookup(hostname).finally(release);
      let onAbort = () => {};
      const aborted = new Promise<undefined>((resolve) => {
        onAbort = () => resolve(undefined);
        deadline.addEventListener('abort', onAbort, { once: true });
      });
      try {
        const found = await Promise.race([lookup, aborted]);
        if (found === undefined) return abortFailure(deadline);
        addresses = found;
      } catch (error) {
        // ENOTFOUND, EAI_AGAIN…: Node's codes say why, without client input.
        return failed((error as NodeJS.ErrnoException).code ?? 'DNS failed', 'network');
      } finally {
        deadline.removeEventListener('abort', onAbort);
        lookup.catch(() => {}); // an abandoned lookup may still fail
      }
    }
    if (!this.options.allowPrivate && !allPublic(addresses)) return failed('not a public address', 'policy');
    const [first] = addresses;
    if (!first || !ipaddr.isValid(first.address)) return failed('DNS failed', 'network');
    return { address: first.address, slot: slotKey(first.address) };
  }

  /** Past maxConcurrent idle connections, closes the longest idle (else many domains would keep thousands open). */
  private closeIdleBeyondCap(freed: Socket): void {
    // The agent has just listed `freed`; its lists are in the order their domains were first kept.
    const idle = this.idleSockets();
    if (idle.length > this.options.maxConcurrent) (idle.find((socket) => socket !== freed) ?? freed).destroy();
  }

  /**
   * Before an exchange with an address: its exchanges under way (this one included) and its idle
   * connections (kept for any of its names) at most maxPerAddress, closing the longest idle. The
   * exchange then holds at most one more connection than those under way: the cap holds for
   * connections, not only exchanges, however many names the address has.
   */
  private closeIdleBeyondAddressCap(slot: string): void {
    const idle = this.idleSockets().filter((socket) => socket.remoteAddress !== undefined && slotKey(socket.remoteAddress) === slot);
    let excess = idle.length + this.slots.runningWith(slot) - this.options.maxPerAddress;
    for (const socket of idle) {
      if (excess-- <= 0) break;
      socket.destroy();
    }
  }

  private idleSockets(): Socket[] {
    return Object.values(this.agent.freeSockets).flatMap((sockets) => sockets ?? []);
  }

  /** Closes kept connections (at shutdown; exchanges under way end by their deadline signal). */
  close(): void {
    this.agent.destroy();
  }

  /** One exchange with `url`'s server at `address` (the name goes in SNI and Host, so TLS checks the certificate against it). */
  private exchange(url: URL, address: string, deadline: AbortSignal, options: GetOptions): Promise<Exchange> {
    if (deadline.aborted) return Promise.resolve({ result: abortFailure(deadline), staleConnection: false, ended: Promise.resolve() });
    const { maxBodyBytes, userAgent } = options;
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    const bodyStatuses = options.bodyStatuses ?? DEFAULT_BODY_STATUSES;
    const headerStatuses = options.headerStatuses ?? [];
    return new Promise((resolve) => {
      let answered = false;
      let over = false;
      let responded = false;
      let endExchange!: () => void;
      const ended = new Promise<void>((done) => (endExchange = done));
      // The caller's result, once; a header status's body may still be read after it.
      const answer = (value: GuardedFetchResult, staleConnection = false) => {
        if (answered) return;
        answered = true;
        resolve({ result: value, staleConnection, ended });
      };
      // The connection goes back to the pool only after a body read to its end; else it is closed,
      // and its slot is free once it is (so that a domain never has more open than its cap).
      const end = (reusable: boolean) => {
        if (over) return;
        over = true;
        deadline.removeEventListener('abort', onAbort);
        if (reusable) return endExchange();
        const socket = outgoing.socket;
        outgoing.destroy();
        if (!socket || socket.closed) endExchange();
        else socket.once('close', endExchange);
      };
      const fail = (value: GuardedFetchResult) => {
        answer(value);
        end(false);
      };
      const onAbort = () => fail(abortFailure(deadline));
      const outgoing = request(
        url,
        {
          method: 'GET',
          // The address as the host dialled (no DNS, and the agent keeps connections per address and name).
          hostname: address,
          // SNI and the certificate's name: the name (an IP literal is checked as the address, without SNI).
          ...(isIP(hostname) === 0 ? { servername: hostname } : {}),
          headers: { host: url.host, accept: 'application/json', 'user-agent': userAgent },
          agent: this.agent,
          maxHeaderSize: 16 * 1024,
        },
        (response) => {
          responded = true;
          const status = response.statusCode ?? 0;
          if (status >= 300 && status < 400) return fail(failed('redirect', 'policy', status));
          const readsBody = bodyStatuses.includes(status);
          if (!readsBody && !headerStatuses.includes(status)) return fail(failed(`status ${status}`, 'status', status));
          if (Number(response.headers['content-length']) > maxBodyBytes) return fail(failed('too large', 'policy'));
          // A header status answers at once; its body is read (within the same caps) only to keep the connection.
          if (!readsBody) answer({ kind: 'answered', status, text: '' });
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBodyBytes) return fail(failed('too large', 'policy'));
            if (readsBody) chunks.push(chunk);
          });
          response.on('end', () => {
            answer({ kind: 'answered', status, text: Buffer.concat(chunks).toString('utf8') });
            end(true);
          });
          // Closed before its end (after 'end', this changes nothing).
          response.on('close', () => fail(failed('connection failed', 'network')));
          response.on('error', () => fail(failed('connection failed', 'network')));
        },
      );
      // Node's error codes (ENOTFOUND, ECONNREFUSED, ENONPUBLIC, certificate errors) say why, without client input.
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        const stale = !responded && outgoing.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
        answer(error.code === 'ENONPUBLIC' ? failed('not a public address', 'policy') : failed(error.code ?? 'connection failed', 'network'), stale);
        end(false);
      });
      deadline.addEventListener('abort', onAbort, { once: true });
      outgoing.end();
    });
  }
}

/**
 * The service's one guarded fetcher (NIP-05 and LNURL pay endpoints), from NIP-05's settings:
 * RELAY_ALLOW_PRIVATE, NIP05_MAX_CONCURRENT, NIP05_MAX_PER_DOMAIN (a cap per address).
 */
export function createGuardedFetcher(config: Pick<Nip05Config, 'allowPrivate' | 'maxConcurrent' | 'maxPerDomain'>, lookup?: HostLookup): GuardedFetcher {
  const { allowPrivate, maxConcurrent, maxPerDomain } = config;
  return new GuardedFetcher({ allowPrivate, maxConcurrent, maxPerAddress: maxPerDomain, ...(lookup ? { lookup } : {}) });
}
