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
