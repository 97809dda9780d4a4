import { createHash } from 'node:crypto';
import { normalizeURL } from 'nostr-tools/utils';

/** Longest relay URL we accept, from configuration or from a hint: real ones are short. */
const MAX_RELAY_URL_LENGTH = 512;

/**
 * The one parser for relay URLs (RELAYS and nevent/nprofile hints): `ws://` or `wss://` only, with a
 * host, without credentials, no longer than 512 characters. Returns the URL normalised as nostr-tools
 * does (lowercase host, no default port, no trailing slash), so one relay has one spelling, or
 * undefined when the text is not such a URL.
 */
export function parseRelayUrl(raw: string): string | undefined {
  const text = raw.trim();
  if (text.length === 0 || text.length > MAX_RELAY_URL_LENGTH) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') return undefined;
  if (url.hostname === '' || url.username !== '' || url.password !== '') return undefined;
  const normalised = normalizeURL(url.toString());
  // Normalising can lengthen a URL (percent-encoding): the limit holds for what is used, too.
  return normalised.length > MAX_RELAY_URL_LENGTH ? undefined : normalised;
}

/**
 * A relay URL as the log and /metrics name it: scheme, host (with port) and path, without user
 * info, query or fragment, and with every path segment of PLAIN_SEGMENT characters or more shown as
 * `…` and 4 hex digits of its SHA-256. A configured relay's URL may carry an access token there
 * (`wss://relay.example/?token=…`, `wss://user:pass@relay.example/`, `wss://relay.example/<token>`),
 * and whoever reads the log or scrapes /metrics must not get it; two such relays on one host are
 * still told apart. Text that is not a URL is named by nothing of its own.
 */
export function relayUrlForLog(url: string): string {
  try {
    const { protocol, host, pathname } = new URL(url);
    const path = pathname
      .split('/')
      .map((segment) => (segment.length >= PLAIN_SEGMENT ? `…${createHash('sha256').update(segment).digest('hex').slice(0, 4)}` : segment))
      .join('/');
    return `${protocol}//${host}${path}`;
  } catch {
    return '(not a URL)';
  }
}

/** A path segment this long may be a token (8 random bytes in hex are 16; a word of a relay's path is shorter: `nostr`, `inbox`, `v1`). */
const PLAIN_SEGMENT = 12;

/** Where a ws:// or wss:// URL appears in free text: up to a space, a quote or an angle bracket. */
const RELAY_URLS_IN_TEXT = /wss?:\/\/[^\s"'<>`]+/gi;

/** Free text (a library's message, a close reason) with every ws:// or wss:// URL in it as relayUrlForLog names it. */
export function relayUrlsForLog(text: string): string {
  return text.replace(RELAY_URLS_IN_TEXT, (url) => relayUrlForLog(url));
}
