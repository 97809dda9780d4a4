import { clientKey } from '../client-key.js';
import { parseRelayUrl } from '../relays/relay-url.js';
import type { FetchRequest } from './relay-fill.js';

/** At most this many relay hints are followed per request (untrusted input: each is a new connection). */
export const MAX_HINTS_PER_REQUEST = 3;

/**
 * The relay side of one request: its deadline, fixed when the request starts, and the relay hints
 * its identifiers carried (nevent/nprofile), collected by the resolvers as they parse them.
 */
export class RelayRequest implements FetchRequest {
  readonly hints: string[] = [];
  keysAsked = 0;
  private readonly startedAt = performance.now();
  #signal: AbortSignal | undefined;
  #querySignal: AbortSignal | undefined;
  #client: string | undefined;

  constructor(
    /** RELAY_TIMEOUT_MS: how long the request may wait for relays, all of its lookups together. */
    private readonly timeoutMs: number,
    /** The client's address (request.ip): its lookups that go to relays are capped per client. */
    private readonly address: string = '',
  ) {}

  // The signals and the client key are made when the first lookup goes to the relays, not per
  // request: most requests are answered by the index, and two timers each cost a cached lookup
  // several times its CPU (found by review). The deadline still runs from the request's start.

  /** Aborts at the request's deadline, RELAY_TIMEOUT_MS after it started. */
  get signal(): AbortSignal {
    this.#signal ??= AbortSignal.timeout(this.remaining(this.timeoutMs));
    return this.#signal;
  }

  /** Aborts a little before the deadline, so that what arrived can still be stored and returned. */
  get querySignal(): AbortSignal {
    this.#querySignal ??= AbortSignal.timeout(this.remaining(this.timeoutMs - Math.min(100, this.timeoutMs / 10)));
    return this.#querySignal;
  }

  /** Who asks, for per-client caps: an IPv4 address or an IPv6 /64. */
  get client(): string {
    this.#client ??= clientKey(this.address);
    return this.#client;
  }

  private remaining(afterStartMs: number): number {
    return Math.max(0, Math.floor(afterStartMs - (performance.now() - this.startedAt)));
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
