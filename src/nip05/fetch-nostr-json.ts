import { Agent, request } from 'node:https';
import { isIP, type Socket } from 'node:net';
import { isHex64, type Nip05Name } from '../nostr/identifiers.js';
import { isPublicAddress, publicOnlyLookup } from '../relays/relay-socket.js';
import { parseRelayUrl } from '../relays/relay-url.js';
import { DomainSlots } from './domain-slots.js';

/**
 * NIP-05 resolutions over HTTPS: `GET https://<domain>/.well-known/nostr.json?name=<name>`.
 * Everything about them is untrusted (the domain is chosen by whoever wrote the identifier), hence:
 * a deadline for the whole exchange (waiting for a slot, DNS, connect, TLS, body), a cap on the
 * body, no redirects followed (NIP-05: "Fetchers MUST ignore any HTTP redirects given by the
 * /.well-known/nostr.json endpoint"), the address policy of relay hints (public addresses only,
 * checked on the resolved address, unless RELAY_ALLOW_PRIVATE), and caps on exchanges at once, in
 * all and per domain (domain-slots.ts).
 */

/** The largest nostr.json read: a static file may list many names, but not megabytes of them. */
export const MAX_NOSTR_JSON_BYTES = 512 * 1024;

/** Relays kept from a nostr.json for one pubkey (they become relay hints, at most 3 of them asked). */
const MAX_RELAYS_PER_NAME = 10;

/**
 * Entries of the pubkey's `relays` list looked at, at most: reading a URL costs microseconds, and a
 * document may list 120,000 junk strings (issue 31: 780 ms of CPU per lookup).
 */
const MAX_RELAY_ENTRIES_READ = 20;

/**
 * How long an idle connection to a domain is kept for the next resolution: below the 5 s keep-alive
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

const USER_AGENT = 'nostr-lookup (NIP-05 resolver)';

/** What a domain said about a name: its pubkey (and relays), that it does not know it, or nothing usable. */
export type NostrJsonAnswer =
  | { kind: 'found'; pubkey: string; relays: string[] }
  | { kind: 'not_found' }
  | { kind: 'unresolvable'; reason: string };

/** Why a domain was not asked at all: no slot in time (`busy`) or shutdown (`aborted`). */
const NOT_ASKED = new Set(['busy', 'aborted']);

/** Whether the answer says something about the domain (worth caching), rather than about us being busy or closing. */
export function answeredByDomain(answer: NostrJsonAnswer): boolean {
  return answer.kind !== 'unresolvable' || !NOT_ASKED.has(answer.reason);
}

/** When an exchange must have ended: its signal aborts then (or at shutdown); `endsAt` is that time on performance.now()'s clock. */
export interface Deadline {
  signal: AbortSignal;
  endsAt: number;
}

export interface NostrJsonFetcherOptions {
  /** RELAY_ALLOW_PRIVATE: loopback, private and link-local addresses allowed (tests, local setups). */
  allowPrivate: boolean;
  /** NIP05_MAX_CONCURRENT: exchanges at once, in all. */
  maxConcurrent: number;
  /** NIP05_MAX_PER_DOMAIN: exchanges (and connections) at once with one domain. */
  maxPerDomain: number;
}

const NOT_FOUND: NostrJsonAnswer = { kind: 'not_found' };

function unresolvable(reason: string): NostrJsonAnswer {
  return { kind: 'unresolvable', reason };
}

/** Why a deadline signal ended the exchange: its time ran out, or the service is closing. */
function abortReason(signal: AbortSignal): string {
  return (signal.reason as Error | undefined)?.name === 'TimeoutError' ? 'timeout' : 'aborted';
}

/** One exchange as it went: the answer (possibly before the body has been read to its end), and when the connection was done with. */
interface Exchange {
  answer: NostrJsonAnswer;
  /** A reused connection the server had closed meanwhile: nothing was asked, ask again. */
  staleConnection: boolean;
  ended: Promise<void>;
}

/**
 * Asks domains for nostr.json documents. Connections are kept alive and reused per domain (at most
 * NIP05_MAX_PER_DOMAIN of them), so that resolving many names at one domain costs one TLS
 * handshake, not one each; the address policy holds for reused connections too, as it was checked
 * on the address each one was opened to.
 */
export class NostrJsonFetcher {
  private readonly agent: Agent;
  private readonly slots: DomainSlots;

  constructor(private readonly options: NostrJsonFetcherOptions) {
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

  /**
   * Asks the domain of `name` within `deadline` (whose signal also ends it at shutdown); never throws.
   * `background` (a verification nobody waits for): only within its share of the slots, never in line.
   */
  async fetch(name: Nip05Name, { signal: deadline, endsAt }: Deadline, background = false): Promise<NostrJsonAnswer> {
    const url = new URL(`https://${name.domain}/.well-known/nostr.json`);
    url.searchParams.set('name', name.name);
    // An IP literal is dialled without DNS, so the lookup never sees it: judged here.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (!this.options.allowPrivate && isIP(literal) !== 0 && !isPublicAddress(literal)) return unresolvable('not a public address');
    if (deadline.aborted) return unresolvable(abortReason(deadline));
    const release = await this.slots.acquire(name.domain, deadline, background);
    // No slot in time: the domain was not asked (nothing to remember about it).
    if (!release) return unresolvable(deadline.aborted && abortReason(deadline) === 'aborted' ? 'aborted' : 'busy');
    if (endsAt - performance.now() < MIN_EXCHANGE_MS) {
      release();
      return unresolvable('busy');
    }
    let exchange = await this.exchange(url, name.name, deadline);
    // Once: a kept connection may be closed by the server just as we send on it.
    if (exchange.staleConnection) exchange = await this.exchange(url, name.name, deadline);
    void exchange.ended.then(release);
    return exchange.answer;
  }

  /** Past NIP05_MAX_CONCURRENT idle connections, closes the longest idle (else names at many domains would keep thousands open). */
  private closeIdleBeyondCap(freed: Socket): void {
    // The agent has just listed `freed`; its lists are in the order their domains were first kept.
    const idle = Object.values(this.agent.freeSockets).flatMap((sockets) => sockets ?? []);
    if (idle.length > this.options.maxConcurrent) (idle.find((socket) => socket !== freed) ?? freed).destroy();
  }

  /** Closes kept connections (at shutdown; exchanges under way end by their deadline signal). */
  close(): void {
    this.agent.destroy();
  }

  private exchange(url: URL, name: string, deadline: AbortSignal): Promise<Exchange> {
    if (deadline.aborted) return Promise.resolve({ answer: unresolvable(abortReason(deadline)), staleConnection: false, ended: Promise.resolve() });
    return new Promise((resolve) => {
      let answered = false;
      let over = false;
      let responded = false;
      let endExchange!: () => void;
      const ended = new Promise<void>((done) => (endExchange = done));
      // The caller's answer, once; a 404's body may still be read after it.
      const answer = (value: NostrJsonAnswer, staleConnection = false) => {
        if (answered) return;
        answered = true;
        resolve({ answer: value, staleConnection, ended });
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
      const fail = (value: NostrJsonAnswer) => {
        answer(value);
        end(false);
      };
      const onAbort = () => fail(unresolvable(abortReason(deadline)));
      const outgoing = request(
        url,
        {
          method: 'GET',
          headers: { accept: 'application/json', 'user-agent': USER_AGENT },
          agent: this.agent,
          maxHeaderSize: 16 * 1024,
        },
        (response) => {
          responded = true;
          const status = response.statusCode ?? 0;
          if (status >= 300 && status < 400) return fail(unresolvable('redirect'));
          // A server that knows no such name may say so with 404; any other failure is no answer.
          if (status !== 200 && status !== 404) return fail(unresolvable(`status ${status}`));
          if (Number(response.headers['content-length']) > MAX_NOSTR_JSON_BYTES) return fail(unresolvable('too large'));
          // A 404 answers at once; its body is read (within the same caps) only to keep the connection.
          if (status === 404) answer(NOT_FOUND);
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_NOSTR_JSON_BYTES) return fail(unresolvable('too large'));
            if (status === 200) chunks.push(chunk);
          });
          response.on('end', () => {
            answer(status === 200 ? readNostrJson(Buffer.concat(chunks).toString('utf8'), name) : NOT_FOUND);
            end(true);
          });
          // Closed before its end (after 'end', this changes nothing).
          response.on('close', () => fail(unresolvable('connection failed')));
          response.on('error', () => fail(unresolvable('connection failed')));
        },
      );
      // Node's error codes (ENOTFOUND, ECONNREFUSED, ENONPUBLIC, certificate errors) say why, without client input.
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        const stale = !responded && outgoing.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
        answer(unresolvable(error.code === 'ENONPUBLIC' ? 'not a public address' : (error.code ?? 'connection failed')), stale);
        end(false);
      });
      deadline.addEventListener('abort', onAbort, { once: true });
      outgoing.end();
    });
  }
}

/**
 * Reads a nostr.json body: `{"names": {<name>: <hex pubkey>}, "relays": {<hex pubkey>: [<url>…]}}`.
 * Names are matched case-insensitively (NIP-05 local parts are). A name the document does not hold
 * is not found; a document that is not JSON, has no `names` object, or maps the name to something
 * other than a hex pubkey (an npub, say: NIP-05 requires hex) is unusable. The work is bounded:
 * the text by MAX_NOSTR_JSON_BYTES, the pubkey's relays by MAX_RELAY_ENTRIES_READ.
 */
export function readNostrJson(text: string, name: string): NostrJsonAnswer {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return unresolvable('not JSON');
  }
  if (!isPlainObject(document) || !isPlainObject(document.names)) return unresolvable('no names object');
  const value = ownValue(document.names, name);
  if (value === undefined) return NOT_FOUND;
  if (typeof value !== 'string' || !isHex64(value)) return unresolvable('pubkey is not hex');
  const pubkey = value.toLowerCase();
  // Under the pubkey as written, in lowercase or as `names` spells it: never a search through every key.
  const byPubkey = isPlainObject(document.relays) ? document.relays : {};
  const listed = Object.hasOwn(byPubkey, pubkey) ? byPubkey[pubkey] : Object.hasOwn(byPubkey, value) ? byPubkey[value] : undefined;
  const relays: string[] = [];
  if (Array.isArray(listed)) {
    for (const item of listed.slice(0, MAX_RELAY_ENTRIES_READ)) {
      const url = typeof item === 'string' ? parseRelayUrl(item) : undefined;
      if (url !== undefined && !relays.includes(url)) relays.push(url);
      if (relays.length >= MAX_RELAYS_PER_NAME) break;
    }
  }
  return { kind: 'found', pubkey, relays };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value under `key`, else under a key equal to it ignoring case (own properties only: no `__proto__` tricks). */
function ownValue(object: Record<string, unknown>, key: string): unknown {
  if (Object.hasOwn(object, key)) return object[key];
  const lower = key.toLowerCase();
  const match = Object.keys(object).find((candidate) => candidate.toLowerCase() === lower);
  return match === undefined ? undefined : object[match];
}
