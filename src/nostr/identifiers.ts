import { decode } from 'nostr-tools/nip19';
import { LookupError } from '../errors.js';
import { isAddressableKind, isReplaceableKind } from './kinds.js';
import { containsSecretKey } from './secret-keys.js';

/**
 * The one parser for identifiers that reach us from outside (REST parameters, GraphQL arguments):
 * 64 hex characters in any case, or NIP-19 bech32 (`npub`/`nprofile` for pubkeys, `note`/`nevent`
 * for events, `naddr` for the latest version of a replaceable or addressable event), each optionally
 * prefixed with the NIP-21 `nostr:` scheme; surrounding whitespace is trimmed. The result is
 * lowercase hex (or a coordinate) plus any relay hints. Errors never echo the input.
 */

export interface PubkeyPointer {
  pubkey: string;
  relays: string[];
}

export interface EventPointer {
  id: string;
  relays: string[];
  author?: string;
}

/**
 * An naddr (NIP-19): the coordinate of a replaceable or addressable event, `<kind>:<pubkey>:<d>` as
 * NIP-01 writes it in `a` tags (`d` is '' for replaceable kinds), whose latest version is wanted.
 */
export interface AddressPointer {
  coordinate: string;
  kind: number;
  pubkey: string;
  identifier: string;
  relays: string[];
}

/**
 * A NIP-05 internet identifier, `<name>@<domain>`, given where a pubkey is asked for: resolved at
 * `https://<domain>/.well-known/nostr.json?name=<name>` (src/nip05/). `name` is lowercase (NIP-05:
 * `a-z0-9-_.`, case-insensitive; `_` is the domain's root identifier); `domain` is the URL host as
 * WHATWG URL writes it (lowercase, punycode, default port dropped), a `host:port` allowed.
 */
export interface Nip05Name {
  name: string;
  domain: string;
  /** `<name>@<domain>`: the one spelling, for caches and comparisons. */
  identifier: string;
}

/** Longest NIP-05 local part (as an e-mail local part, RFC 5321) and domain (DNS, RFC 1035, with a port). */
const MAX_NIP05_NAME_LENGTH = 64;
const MAX_NIP05_DOMAIN_LENGTH = 259;

/** Longest `d` identifier an naddr may carry here (a relay filter and a cache key must stay small). */
export const MAX_NADDR_IDENTIFIER_BYTES = 1024;

/** Node's hex decoder writes into this and stops at the first pair that is not hex (synchronous use only). */
const HEX_SCRATCH = Buffer.allocUnsafe(32);

/**
 * True for 64 hex characters in any case: 32 bytes decoded means 64 hex digits. Node's decoder reads
 * only the low byte of each UTF-16 unit (`\u0130` would pass as `0`), hence the UTF-8 length check:
 * 64 bytes for 64 units means all ASCII. Native decoding runs for every tag of every `/event`
 * (relevant-pubkeys.ts): ~100 ns per value, against ~240–290 ns for a regular expression and
 * ~410 ns for a per-character table lookup in JavaScript (strings from JSON.parse, 2 × AMD EPYC).
 */
export function isHex64(value: string): boolean {
  return decodeHex64(value, HEX_SCRATCH, 0);
}

/** isHex64, decoding the 32 bytes into `into` at `at` as it tests (what it writes of a value that fails is garbage). */
export function decodeHex64(value: string, into: Buffer, at: number): boolean {
  return value.length === 64 && into.write(value, at, 'hex') === 32 && Buffer.byteLength(value, 'utf8') === 64;
}

/** True for a pubkey or event id in canonical form (64 lowercase hex characters). */
export function isLowerHex64(value: string): boolean {
  // toLowerCase of a string with nothing to lower returns it unchanged, cheaply.
  return isHex64(value) && value.toLowerCase() === value;
}

/** Trims and removes the NIP-21 scheme (URI schemes are case-insensitive). */
function stripScheme(raw: string): string {
  const trimmed = raw.trim();
  return /^nostr:/i.test(trimmed) ? trimmed.slice('nostr:'.length) : trimmed;
}

/** Secret keys are refused on sight, whether or not their checksum is valid, in any spelling. */
function refuseSecretKey(candidate: string): void {
  if (containsSecretKey(candidate)) throw new LookupError('secret_key_refused');
}

type Decoded = ReturnType<typeof decode>;

/** nostr-tools' bech32 limit (Bech32MaxSize): nothing longer decodes. */
const MAX_BECH32_LENGTH = 5000;

/**
 * NIP-19 entities are written in lowercase; BIP-173 would also allow all-uppercase, but DESIGN §1
 * grants "any case" to hex only, and the project's NIP-19 vectors list an uppercase npub among the
 * strings that must not decode. So bech32 is accepted in lowercase only.
 */
function decodeBech32(candidate: string): Decoded | undefined {
  if (candidate !== candidate.toLowerCase()) return undefined;
  try {
    return decode(candidate);
  } catch {
    return undefined;
  }
}

/** Parses a pubkey given as hex, npub or nprofile. Throws LookupError('invalid_pubkey'). */
export function parsePubkey(raw: string): PubkeyPointer {
  // 64 hex digits as given, the common spelling, first: nothing to trim or strip, and no secret key
  // can hide in hex (`n`, `s` are no hex digits). A cached lookup parses one per request.
  if (isHex64(raw)) return { pubkey: raw.toLowerCase(), relays: [] };
  const candidate = stripScheme(raw);
  refuseSecretKey(candidate);
  if (isHex64(candidate)) return { pubkey: candidate.toLowerCase(), relays: [] };
  const decoded = decodeBech32(candidate);
  // nostr-tools does not check the length of npub/note payloads: we do.
  if (decoded?.type === 'npub' && isLowerHex64(decoded.data)) return { pubkey: decoded.data, relays: [] };
  if (decoded?.type === 'nprofile' && isLowerHex64(decoded.data.pubkey)) {
    return { pubkey: decoded.data.pubkey, relays: decoded.data.relays ?? [] };
  }
  throw new LookupError('invalid_pubkey');
}

/**
 * Parses what names a profile: a pubkey (hex, npub, nprofile) or a NIP-05 identifier
 * (`name@domain`, `_@domain`). Throws LookupError('invalid_pubkey').
 */
export function parseProfilePointer(raw: string): PubkeyPointer | Nip05Name {
  // As parsePubkey: hex as given first.
  if (isHex64(raw)) return { pubkey: raw.toLowerCase(), relays: [] };
  const candidate = stripScheme(raw);
  refuseSecretKey(candidate);
  if (candidate.includes('@')) {
    const name = parseNip05Name(candidate);
    if (name) return name;
    throw new LookupError('invalid_pubkey');
  }
  return parsePubkey(raw);
}

/**
 * Parses a NIP-05 identifier, or returns undefined. `bareDomain`: a lone domain counts as
 * `_@domain` (NIP-05 lets clients show `_@bob.com` as `bob.com`, and some profiles write it so);
 * as input a pubkey parameter must hold an `@`, so that a typo is a 400, not a web request.
 */
export function parseNip05Name(raw: string, { bareDomain = false } = {}): Nip05Name | undefined {
  const text = raw.trim();
  const at = text.lastIndexOf('@');
  if (at < 0 && !bareDomain) return undefined;
  const name = (at < 0 ? '_' : text.slice(0, at)).toLowerCase();
  const host = text.slice(at + 1).toLowerCase();
  // A lone word (`bob`) is a name without a domain, not a domain: a bare domain has a dot.
  if (at < 0 && !host.includes('.')) return undefined;
  if (name.length === 0 || name.length > MAX_NIP05_NAME_LENGTH || !/^[a-z0-9._-]+$/.test(name)) return undefined;
  const domain = parseDomain(host);
  return domain === undefined ? undefined : { name, domain, identifier: `${name}@${domain}` };
}

/**
 * The domain part of a `name@domain` identifier (NIP-05 names, LUD-16 lightning addresses) in one
 * spelling (lowercase, the default port dropped), or undefined: a host name, an IPv4 address or a
 * bracketed IPv6 address, optionally with a port, and nothing that would make `https://<domain>/…`
 * mean something else (credentials, a path, a query).
 */
export function parseDomain(raw: string): string | undefined {
  const host = raw.toLowerCase();
  if (host.length === 0 || host.length > MAX_NIP05_DOMAIN_LENGTH) return undefined;
  if (!/^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/.test(host)) return undefined;
  let url: URL;
  try {
    url = new URL(`https://${host}/`);
  } catch {
    return undefined;
  }
  if (url.hostname === '' || url.hostname.startsWith('.') || url.hostname.endsWith('.') || url.hostname.includes('..')) return undefined;
  return url.host;
}

/** Parses an event id given as hex, note or nevent. Throws LookupError('invalid_id'). */
export function parseEventId(raw: string): EventPointer {
  const pointer = parseEventPointer(raw);
  if ('id' in pointer) return pointer;
  throw new LookupError('invalid_id');
}

/**
 * Parses what names an event: an id (hex, note, nevent) or a coordinate (naddr, of a replaceable or
 * addressable kind, with a valid pubkey). Throws LookupError('invalid_id').
 */
export function parseEventPointer(raw: string): EventPointer | AddressPointer {
  // As parsePubkey: hex as given first.
  if (isHex64(raw)) return { id: raw.toLowerCase(), relays: [] };
  const candidate = stripScheme(raw);
  refuseSecretKey(candidate);
  if (isHex64(candidate)) return { id: candidate.toLowerCase(), relays: [] };
  const decoded = decodeBech32(candidate);
  if (decoded?.type === 'note' && isLowerHex64(decoded.data)) return { id: decoded.data, relays: [] };
  if (decoded?.type === 'nevent' && isLowerHex64(decoded.data.id)) {
    const { id, relays = [], author } = decoded.data;
    return author && isLowerHex64(author) ? { id, relays, author } : { id, relays };
  }
  if (decoded?.type === 'naddr') {
    const { kind, pubkey, identifier, relays = [] } = decoded.data;
    // The d identifier goes to relays in a filter: a secret key pasted there is refused, like anywhere else.
    if (typeof identifier === 'string') refuseSecretKey(identifier);
    const addressable = Number.isInteger(kind) && (isAddressableKind(kind) || isReplaceableKind(kind));
    // A replaceable kind has no d tag: its coordinate's d is '' (NIP-01).
    const d = isReplaceableKind(kind) ? '' : identifier;
    if (addressable && isLowerHex64(pubkey) && typeof identifier === 'string' && Buffer.byteLength(identifier) <= MAX_NADDR_IDENTIFIER_BYTES) {
      return { coordinate: `${kind}:${pubkey}:${d}`, kind, pubkey, identifier: d, relays };
    }
  }
  throw new LookupError('invalid_id');
}

/**
 * Decodes the pubkey of an `npub1…`/`nprofile1…` found in event content (NIP-27), or undefined.
 * Never throws: content is untrusted and malformed mentions are simply skipped.
 */
export function pubkeyOfMention(bech32: string): string | undefined {
  // nostr-tools refuses bech32 over 5000 characters anyway: not worth lowercasing a megabyte to learn it.
  if (bech32.length > MAX_BECH32_LENGTH) return undefined;
  const decoded = decodeBech32(bech32);
  if (decoded?.type === 'npub') return isLowerHex64(decoded.data) ? decoded.data : undefined;
  if (decoded?.type === 'nprofile') {
    return isLowerHex64(decoded.data.pubkey) ? decoded.data.pubkey : undefined;
  }
  return undefined;
}
