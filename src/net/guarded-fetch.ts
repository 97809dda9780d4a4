import { Agent, request } from 'node:https';
import { isIP, type Socket } from 'node:net';
import { isPublicAddress, publicOnlyLookup } from '../relays/relay-socket.js';
import { DomainSlots } from './domain-slots.js';

/**
 * HTTPS GETs of small documents at URLs that untrusted input chose: NIP-05 nostr.json (a profile's
 * or a client's `name@domain`) and LNURL pay endpoints (a profile's `lud16`/`lud06`). Everything
 * about them is untrusted, hence, for every such exchange: HTTPS only; a deadline for the whole
 * exchange (waiting for a slot, DNS, connect, TLS, body); a cap on the body; no redirects followed
 * (NIP-05: "Fetchers MUST ignore any HTTP redirects"; a redirect would also carry the exchange to
 * an address the policy below never judged); the address policy of relay hints (public addresses
 * only, checked on the resolved address, unless RELAY_ALLOW_PRIVATE); and caps on exchanges at once,
 * in all and per domain (domain-slots.ts).
 */

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
  /** Exchanges at once, in all. */
  maxConcurrent: number;
  /** Exchanges (and connections) at once with one domain. */
  maxPerDomain: number;
  /** The largest body read, in bytes; past it (by Content-Length or as it arrives) the exchange fails as `too large`. */
  maxBodyBytes: number;
  /** Sent as User-Agent. */
  userAgent: string;
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

/**
 * The guarded GET. Connections are kept alive and reused per domain (at most maxPerDomain of them),
 * so that many exchanges with one domain cost one TLS handshake, not one each; the address policy
 * holds for reused connections too, as it was checked on the address each one was opened to.
 */
export class GuardedFetcher {
  private readonly agent: Agent;
  private readonly slots: DomainSlots;

  constructor(private readonly options: GuardedFetcherOptions) {
    this.slots = new DomainSlots(options.maxConcurrent, options.maxPerDomain);
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: options.maxPerDomain,
      maxFreeSockets: options.maxPerDomain,
      timeout: IDLE_CONNECTION_MS,
      ...(options.allowPrivate ? {} : { lookup: publicOnlyLookup }),
    });
    // Not the Agent's maxTotalSockets: it counts idle connections, so a new domain would wait for
    // another's to time out. The slots cap exchanges; this caps idle connections in all.
    this.agent.on('free', (socket: Socket) => this.closeIdleBeyondCap(socket));
  }

  /** GETs `url` within `deadline` (whose signal also ends it at shutdown); never throws. */
  async get(url: URL, { signal: deadline, endsAt }: Deadline, options: GetOptions = {}): Promise<GuardedFetchResult> {
    if (url.protocol !== 'https:') return failed('not https', 'policy');
    // An IP literal is dialled without DNS, so the lookup never sees it: judged here.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (!this.options.allowPrivate && isIP(literal) !== 0 && !isPublicAddress(literal)) return failed('not a public address', 'policy');
    if (deadline.aborted) return abortFailure(deadline);
    const release = await this.slots.acquire(url.host, deadline, options.background ?? false);
    // No slot in time: the domain was not asked (nothing to remember about it).
    if (!release) return failed(deadline.aborted && !timedOut(deadline) ? 'aborted' : 'busy', 'not_asked');
    if (endsAt - performance.now() < MIN_EXCHANGE_MS) {
      release();
      return failed('busy', 'not_asked');
    }
    let exchange = await this.exchange(url, deadline, options);
    // Once: a kept connection may be closed by the server just as we send on it.
    if (exchange.staleConnection) exchange = await this.exchange(url, deadline, options);
    void exchange.ended.then(release);
    return exchange.result;
  }

  /** Past maxConcurrent idle connections, closes the longest idle (else many domains would keep thousands open). */
  private closeIdleBeyondCap(freed: Socket): void {
    // The agent has just listed `freed`; its lists are in the order their domains were first kept.
    const idle = Object.values(this.agent.freeSockets).flatMap((sockets) => sockets ?? []);
    if (idle.length > this.options.maxConcurrent) (idle.find((socket) => socket !== freed) ?? freed).destroy();
  }

  /** Closes kept connections (at shutdown; exchanges under way end by their deadline signal). */
  close(): void {
    this.agent.destroy();
  }

  private exchange(url: URL, deadline: AbortSignal, options: GetOptions): Promise<Exchange> {
    if (deadline.aborted) return Promise.resolve({ result: abortFailure(deadline), staleConnection: false, ended: Promise.resolve() });
    const { maxBodyBytes, userAgent } = this.options;
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
          headers: { accept: 'application/json', 'user-agent': userAgent },
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
