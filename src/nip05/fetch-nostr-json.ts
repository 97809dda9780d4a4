import { request } from 'node:https';
import { isIP } from 'node:net';
import { isHex64, type Nip05Name } from '../nostr/identifiers.js';
import { isPublicAddress, publicOnlyLookup } from '../relays/relay-socket.js';
import { parseRelayUrl } from '../relays/relay-url.js';

/**
 * One NIP-05 resolution over HTTPS: `GET https://<domain>/.well-known/nostr.json?name=<name>`.
 * Everything about it is untrusted (the domain is chosen by whoever wrote the identifier), hence:
 * a deadline for the whole exchange (DNS, connect, TLS, body), a cap on the body, no redirects
 * followed (NIP-05: "Fetchers MUST ignore any HTTP redirects given by the /.well-known/nostr.json
 * endpoint"), and the address policy of relay hints (public addresses only, checked on the
 * resolved address, unless RELAY_ALLOW_PRIVATE).
 */

/** The largest nostr.json read: a static file may list many names, but not megabytes of them. */
export const MAX_NOSTR_JSON_BYTES = 512 * 1024;

/** Relays kept from a nostr.json for one pubkey (they become relay hints, at most 3 of them asked). */
const MAX_RELAYS_PER_NAME = 10;

const USER_AGENT = 'nostr-lookup (NIP-05 resolver)';

/** What a domain said about a name: its pubkey (and relays), that it does not know it, or nothing usable. */
export type NostrJsonAnswer =
  | { kind: 'found'; pubkey: string; relays: string[] }
  | { kind: 'not_found' }
  | { kind: 'unresolvable'; reason: string };

export interface NostrJsonOptions {
  /** The whole exchange must end within this. */
  timeoutMs: number;
  /** RELAY_ALLOW_PRIVATE: loopback, private and link-local addresses allowed (tests, local setups). */
  allowPrivate: boolean;
  /** Ends the exchange early (shutdown). */
  signal?: AbortSignal;
}

const NOT_FOUND: NostrJsonAnswer = { kind: 'not_found' };

function unresolvable(reason: string): NostrJsonAnswer {
  return { kind: 'unresolvable', reason };
}

/** Asks the domain of `name`; never throws. */
export function fetchNostrJson(name: Nip05Name, options: NostrJsonOptions): Promise<NostrJsonAnswer> {
  const url = new URL(`https://${name.domain}/.well-known/nostr.json`);
  url.searchParams.set('name', name.name);
  // An IP literal is dialled without DNS, so the lookup below never sees it: judged here.
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (!options.allowPrivate && isIP(literal) !== 0 && !isPublicAddress(literal)) {
    return Promise.resolve(unresolvable('not a public address'));
  }
  if (options.signal?.aborted) return Promise.resolve(unresolvable('aborted'));
  return new Promise((resolve) => {
    let settled = false;
    const finish = (answer: NostrJsonAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      outgoing.destroy();
      resolve(answer);
    };
    const onAbort = () => finish(unresolvable('aborted'));
    const outgoing = request(
      url,
      {
        method: 'GET',
        headers: { accept: 'application/json', 'user-agent': USER_AGENT },
        // One connection per resolution: they are rare (cached), and a pooled socket would outlive the deadline.
        agent: false,
        ...(options.allowPrivate ? {} : { lookup: publicOnlyLookup }),
        maxHeaderSize: 16 * 1024,
      },
      (response) => {
        const status = response.statusCode ?? 0;
        // A server that knows no such name may say so with 404; any other failure is no answer.
        if (status === 404) return finish(NOT_FOUND);
        if (status >= 300 && status < 400) return finish(unresolvable('redirect'));
        if (status !== 200) return finish(unresolvable(`status ${status}`));
        if (Number(response.headers['content-length']) > MAX_NOSTR_JSON_BYTES) return finish(unresolvable('too large'));
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_NOSTR_JSON_BYTES) return finish(unresolvable('too large'));
          chunks.push(chunk);
        });
        response.on('end', () => finish(readNostrJson(Buffer.concat(chunks).toString('utf8'), name.name)));
        response.on('error', () => finish(unresolvable('connection failed')));
      },
    );
    // Node's error codes (ENOTFOUND, ECONNREFUSED, ENONPUBLIC, certificate errors) say why, without client input.
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      finish(unresolvable(error.code === 'ENONPUBLIC' ? 'not a public address' : (error.code ?? 'connection failed')));
    });
    const timer = setTimeout(() => finish(unresolvable('timeout')), options.timeoutMs);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    outgoing.end();
  });
}

/**
 * Reads a nostr.json body: `{"names": {<name>: <hex pubkey>}, "relays": {<hex pubkey>: [<url>…]}}`.
 * Names are matched case-insensitively (NIP-05 local parts are). A name the document does not hold
 * is not found; a document that is not JSON, has no `names` object, or maps the name to something
 * other than a hex pubkey (an npub, say: NIP-05 requires hex) is unusable.
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
  const listed = isPlainObject(document.relays) ? ownValue(document.relays, pubkey) : undefined;
  const relays: string[] = [];
  if (Array.isArray(listed)) {
    for (const item of listed) {
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
