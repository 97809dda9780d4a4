import type { ReadReceipt } from '../store/read-receipt.js';
import { clientKey } from '../client-key.js';
import { parseRelayUrl } from '../relays/relay-url.js';
import { timeoutSignal } from '../abortable.js';

/**
 * MISS_RATE_LIMIT for one client (http/rate-limits.ts): takes `keys` keys about to be asked of
 * relays from the client's allowance; resolves with how many of them it allows (the first ones)
 * and, when not all, the seconds to wait.
 */
export type MissLimit = (client: string, keys: number) => Promise<{ admitted: number; retryAfterSeconds: number }>;

/** At most this many relay hints are followed per request (untrusted input: each is a new connection). */
export const MAX_HINTS_PER_REQUEST = 3;

/** Event authors remembered per request, at most (as many as the ids a request may ask of relays). */
const MAX_AUTHORS_PER_REQUEST = 1000;

/**
 * The relay side of one request: its deadline, fixed when the request starts, and what its
 * identifiers carried (relay hints of nevent/nprofile, an nevent's author), collected by the
 * resolvers as they parse them.
 */
export class RelayRequest {
  /** Relay hints that came with the request (at most a few; the pool applies the address policy). */
  readonly hints: string[] = [];
  /** Keys (ids, pubkeys) this request has asked of the relays so far, capped by RELAY_MAX_KEYS_PER_REQUEST. */
  keysAsked = 0;
  /** The request's receipt of its store reads, where its answer may be kept (read-receipt.ts). */
  reads: ReadReceipt | undefined;
  /** Event id → its author, as an nevent named it: the author's write relays are asked for the event. */
  private readonly authors = new Map<string, string>();
  /** Write relays this request may still ask, all of its searches together (OUTBOX_MAX_RELAYS). */
  readonly outboxBudget: { left: number };
  private readonly startedAt = performance.now();
  #signal: AbortSignal | undefined;
  #querySignal: AbortSignal | undefined;
  #client: string | undefined;

  constructor(
    /** RELAY_TIMEOUT_MS: how long the request may wait for relays, all of its lookups together. */
    private readonly timeoutMs: number,
    /** The client's address (request.ip): its lookups that go to relays are capped per client. */
    private readonly address: string = '',
    /** OUTBOX_MAX_RELAYS: write relays one request may ask. */
    outboxMaxRelays = 20,
    /** MISS_RATE_LIMIT, when set: asked before each lookup of this request goes to relays. */
    readonly missLimit?: MissLimit,
  ) {
    this.outboxBudget = { left: outboxMaxRelays };
  }

  // The signals and the client key are made when the first lookup goes to the relays, not per
  // request: most requests are answered by the index, and two timers each cost a cached lookup
  // several times its CPU (found by review). The deadline still runs from the request's start.

  /** Aborts at the request's deadline, RELAY_TIMEOUT_MS after it started. */
  get signal(): AbortSignal {
    this.#signal ??= timeoutSignal(this.remaining(this.timeoutMs));
    return this.#signal;
  }

  /** Aborts a little before the deadline, so that what arrived can still be stored and returned. */
  get querySignal(): AbortSignal {
    this.#querySignal ??= timeoutSignal(this.remaining(this.timeoutMs - Math.min(100, this.timeoutMs / 10)));
    return this.#querySignal;
  }

  /** Who asks, for per-client caps: an IPv4 address or an IPv6 /64. */
  get client(): string {
    this.#client ??= clientKey(this.address);
    return this.#client;
  }

  /** Milliseconds until `querySignal` aborts. */
  queryMsLeft(): number {
    return this.remaining(this.timeoutMs - Math.min(100, this.timeoutMs / 10));
  }

  private remaining(afterStartMs: number): number {
    return Math.max(0, Math.floor(afterStartMs - (performance.now() - this.startedAt)));
  }

  /** Records the author an identifier (nevent) gave for an event id; the first one named stands. */
  addAuthor(id: string, author: string | undefined): void {
    if (author && !this.authors.has(id) && this.authors.size < MAX_AUTHORS_PER_REQUEST) this.authors.set(id, author);
  }

  authorOf(id: string): string | undefined {
    return this.authors.get(id);
  }

  /** Keeps the first few hints that are ws(s) URLs; the address policy is applied when dialling. */
  addHints(urls: readonly string[]): void {
    for (const raw of urls) {
      if (this.hints.length >= MAX_HINTS_PER_REQUEST) return;
      const url = parseRelayUrl(raw);
      if (url !== undefined && !this.hints.includes(url)) this.hints.push(url);
    }
  }
}
