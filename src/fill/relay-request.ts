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
  readonly signal: AbortSignal;
  readonly querySignal: AbortSignal;

  constructor(
    /** RELAY_TIMEOUT_MS: how long the request may wait for relays, all of its lookups together. */
    timeoutMs: number,
    /** The client's address: its lookups that go to relays are capped (RelayConfig.missesPerClient). */
    readonly client: string = '',
  ) {
    this.signal = AbortSignal.timeout(timeoutMs);
    this.querySignal = AbortSignal.timeout(Math.floor(timeoutMs - Math.min(100, timeoutMs / 10)));
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
