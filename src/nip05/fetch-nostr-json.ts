import { isHex64, type Nip05Name } from '../nostr/identifiers.js';
import type { Deadline, GuardedFetcher } from '../net/guarded-fetch.js';
import { parseRelayUrl } from '../relays/relay-url.js';

export type { Deadline } from '../net/guarded-fetch.js';

/**
 * NIP-05 resolutions over HTTPS: `GET https://<domain>/.well-known/nostr.json?name=<name>`, by the
 * service's guarded fetcher (net/guarded-fetch.ts), the one LNURL pay endpoints are asked through
 * too: a deadline for the whole exchange, a cap on the body, no redirects followed (NIP-05:
 * "Fetchers MUST ignore any HTTP redirects given by the /.well-known/nostr.json endpoint"), the
 * address policy of relay hints, and caps on exchanges at once, in all and per address.
 */

/** The largest nostr.json read: a static file may list many names, but not megabytes of them. */
export const MAX_NOSTR_JSON_BYTES = 512 * 1024;

/** Relays kept from a nostr.json for one pubkey (they become relay hints, at most 3 of them asked). */
const MAX_RELAYS_PER_NAME = 10;

/**
 * Entries of the pubkey's `relays` list looked at, at most: reading a URL costs microseconds, and a
 * document may list 120,000 junk strings (780 ms of CPU per lookup).
 */
const MAX_RELAY_ENTRIES_READ = 20;

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

const NOT_FOUND: NostrJsonAnswer = { kind: 'not_found' };

function unresolvable(reason: string): NostrJsonAnswer {
  return { kind: 'unresolvable', reason };
}

/**
 * Asks the domain of `name` within `deadline` (whose signal also ends it at shutdown), through
 * `fetcher`; never throws. `background` (a verification nobody waits for): only within its share
 * of the slots, never in line.
 */
export async function fetchNostrJson(fetcher: GuardedFetcher, name: Nip05Name, deadline: Deadline, background = false): Promise<NostrJsonAnswer> {
  const url = new URL(`https://${name.domain}/.well-known/nostr.json`);
  url.searchParams.set('name', name.name);
  // A server that knows no such name may say so with 404 (answered at once); any other failure is no answer.
  const result = await fetcher.get(url, deadline, {
    maxBodyBytes: MAX_NOSTR_JSON_BYTES,
    userAgent: USER_AGENT,
    background,
    bodyStatuses: [200],
    headerStatuses: [404],
  });
  if (result.kind === 'failed') return unresolvable(result.reason);
  return result.status === 200 ? readNostrJson(result.text, name.name) : NOT_FOUND;
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
