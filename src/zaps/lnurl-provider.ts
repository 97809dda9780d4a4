import { bech32 } from '@scure/base';
import type { Deadline, GuardedFetcher, GuardedFetchResult } from '../net/guarded-fetch.js';
import { isLowerHex64, parseDomain } from '../nostr/identifiers.js';
import type { ZapReceipt } from '../nostr/zaps.js';

/**
 * The provider check of NIP-57 zaps (../shared/DESIGN.md, "Relationships", zaps row): a receipt
 * counts only if it is signed by the `nostrPubkey` that the zapped pubkey's LNURL pay endpoint
 * declares with `allowsNostr: true`. The endpoint is named by the pubkey's profile (`lud16`, else
 * `lud06`) and fetched by the service's one guarded fetcher, NIP-05's (net/guarded-fetch.ts): HTTPS
 * only, public addresses only unless RELAY_ALLOW_PRIVATE, no redirects, a body cap, a deadline, and
 * the same slots (a pay endpoint and a NIP-05 domain on one address share its cap).
 */

/**
 * The largest pay endpoint answer read. LUD-06 answers are small (a callback, limits, a metadata
 * string) but the metadata may carry the payee's picture as base64 (`image/png;base64`): NIP-05's
 * cap, which real documents stay far below.
 */
export const MAX_LNURL_PAY_BYTES = 512 * 1024;

/** LUD-16 usernames longer than this are refused (NIP-05 names have the same cap). */
const MAX_LUD16_NAME_LENGTH = 64;

/** A `lud06` longer than this is refused: a bech32 LNURL of a URL of 1,000 characters is about 1,650. */
const MAX_LUD06_CHARS = 2048;

const USER_AGENT = 'nostr-lookup (zap provider check)';

/** Where a profile's zaps are paid: the field that named it, its value as written, and the pay endpoint's URL. */
export interface LnurlPayEndpoint {
  field: 'lud16' | 'lud06';
  value: string;
  url: URL;
}

/** What the provider check knows of a pay endpoint: the key that signs its receipts, a definite no, or no answer yet (ask again later). */
export type LnurlProviderAnswer = { nostrPubkey: string } | { refused: string } | { unavailable: string };

/**
 * LUD-16: `name@domain` → `https://domain/.well-known/lnurlp/name`, or undefined if it is not a
 * lightning address. Usernames are `a-z0-9-_.` and `+` (tags); written in capitals they are
 * lowercased (LUD-16 allows lowercase only, and wallets send them so). The domain follows NIP-05's
 * rules (identifiers.ts parseDomain).
 */
export function lud16Url(address: string): URL | undefined {
  const text = address.trim();
  const at = text.lastIndexOf('@');
  if (at <= 0) return undefined;
  const name = text.slice(0, at).toLowerCase();
  // `.` and `..` would be path segments (`/.well-known/lnurlp/..` is `/.well-known/`), not a name.
  if (name.length > MAX_LUD16_NAME_LENGTH || !/^[a-z0-9._+-]+$/.test(name) || /^\.+$/.test(name)) return undefined;
  const domain = parseDomain(text.slice(at + 1));
  return domain === undefined ? undefined : new URL(`https://${domain}/.well-known/lnurlp/${name}`);
}

/**
 * LUD-01: a bech32 `lnurl1…` (a `lightning:` prefix allowed) → the HTTPS URL it encodes, or why not.
 * Plain `http://` URLs are refused (LUD-01 allows them for onion services only, which we do not reach).
 */
export function lud06Url(lnurl: string): URL | { refused: string } {
  let text = lnurl.trim();
  if (/^lightning:/i.test(text)) text = text.slice('lightning:'.length);
  if (text.length > MAX_LUD06_CHARS) return { refused: 'lud06 is too long' };
  const decoded = bech32.decodeUnsafe(text, MAX_LUD06_CHARS);
  if (!decoded || decoded.prefix !== 'lnurl') return { refused: 'lud06 is not an LNURL' };
  const bytes = bech32.fromWordsUnsafe(decoded.words);
  let href: string;
  try {
    if (!bytes) throw new Error('padding');
    href = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { refused: 'lud06 is not an LNURL' };
  }
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return { refused: 'lud06 is not a URL' };
  }
  if (url.protocol !== 'https:') return { refused: 'lud06 is not https' };
  if (url.username !== '' || url.password !== '') return { refused: 'lud06 has credentials' };
  return url;
}

/**
 * The pay endpoint a profile names: its `lud16`, else its `lud06` (DESIGN). A `lud16` that is not a
 * lightning address counts as absent (its `lud06` is tried); with neither usable, why not.
 */
export function lnurlPayEndpoint(metadata: { lud16?: string | null; lud06?: string | null }): LnurlPayEndpoint | { refused: string } {
  const { lud16, lud06 } = metadata;
  const fromLud16 = typeof lud16 === 'string' ? lud16Url(lud16) : undefined;
  if (fromLud16) return { field: 'lud16', value: lud16 as string, url: fromLud16 };
  if (typeof lud06 === 'string') {
    const fromLud06 = lud06Url(lud06);
    return fromLud06 instanceof URL ? { field: 'lud06', value: lud06, url: fromLud06 } : fromLud06;
  }
  return { refused: typeof lud16 === 'string' ? 'lud16 is not a lightning address' : 'no lud16 or lud06' };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads a pay endpoint's answer (LUD-06 step 3, NIP-57 appendix C): `allowsNostr` must be `true`
 * and `nostrPubkey` 64 lowercase hex digits. A LUD-06 error (`{"status": "ERROR"}`), anything not
 * JSON or not an object is a refusal. Never throws.
 */
export function readLnurlPayResponse(text: string): { nostrPubkey: string } | { refused: string } {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return { refused: 'not JSON' };
  }
  if (!isPlainObject(document)) return { refused: 'not an object' };
  if (typeof document.status === 'string' && document.status.toUpperCase() === 'ERROR') return { refused: 'provider error' };
  if (document.allowsNostr !== true) return { refused: 'allowsNostr is not true' };
  const { nostrPubkey } = document;
  if (typeof nostrPubkey !== 'string' || !isLowerHex64(nostrPubkey)) return { refused: 'nostrPubkey is not a lowercase hex pubkey' };
  return { nostrPubkey };
}

/**
 * What an exchange says about the endpoint. Refused (definite, worth keeping for ZAP_PROVIDER_TTL):
 * an answer that does not allow zaps, our policy (not HTTPS, not a public address, a redirect, a
 * body over the cap), a 4xx other than 408 and 429. Unavailable (ask again later): no slot or
 * shutdown, timeout, DNS, connection or TLS failures, other statuses (5xx, 408, 429).
 */
export function readPayEndpointResult(result: GuardedFetchResult): LnurlProviderAnswer {
  if (result.kind === 'answered') return readLnurlPayResponse(result.text);
  switch (result.cause) {
    case 'policy':
      return { refused: result.reason };
    case 'status': {
      const status = result.status ?? 0;
      return status >= 400 && status < 500 && status !== 408 && status !== 429 ? { refused: result.reason } : { unavailable: result.reason };
    }
    default:
      return { unavailable: result.reason };
  }
}

/**
 * Asks the pay endpoint at `endpoint` (an {@link LnurlPayEndpoint}'s url) for the key that signs its
 * zap receipts, through `fetcher`, within `deadline` (whose signal also ends it at shutdown); never
 * throws. `background` (a check nobody waits for): only within its share of the slots, never in line.
 */
export async function askPayEndpoint(fetcher: GuardedFetcher, endpoint: URL, deadline: Deadline, background = false): Promise<LnurlProviderAnswer> {
  return readPayEndpointResult(await fetcher.get(endpoint, deadline, { maxBodyBytes: MAX_LNURL_PAY_BYTES, userAgent: USER_AGENT, background }));
}

/**
 * Where a receipt stands once its recipient's provider has (or has not) answered: `allowed` (its
 * signer is the provider's `nostrPubkey`: it counts), `refused` (another signer, or an endpoint that
 * does not allow zaps: it never counts while that answer holds), `pending` (no answer yet).
 */
export function providerVerdict(receipt: Pick<ZapReceipt, 'provider'>, answer: LnurlProviderAnswer): 'allowed' | 'refused' | 'pending' {
  if ('unavailable' in answer) return 'pending';
  if ('refused' in answer) return 'refused';
  return receipt.provider === answer.nostrPubkey ? 'allowed' : 'refused';
}

/** Whether the provider signed this receipt: its signer is the `nostrPubkey` its recipient's pay endpoint declares. */
export function providerAllows(receipt: Pick<ZapReceipt, 'provider'>, answer: LnurlProviderAnswer): boolean {
  return providerVerdict(receipt, answer) === 'allowed';
}
