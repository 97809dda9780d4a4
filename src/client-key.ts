import ipaddr from 'ipaddr.js';

/**
 * Who a client is, for per-client caps (connections, lookups at the relays): its IPv4 address, or
 * its IPv6 /64. One IPv6 host is usually given a whole /64, so counting single IPv6 addresses would
 * let one client be 2^64 of them.
 */
export function clientKey(address: string | undefined): string {
  if (!address) return '';
  // Asked on every request once rate limits are on: parsing an address each time cost ~2% of a
  // cached lookup's CPU, and a service sees the same few addresses again and again.
  let key = recentKeys.get(address);
  if (key === undefined) {
    key = keyOf(address);
    if (recentKeys.size >= RECENT_KEYS) recentKeys.clear();
    recentKeys.set(address, key);
  }
  return key;
}

function withoutPort(text: string): string | undefined {
  if (text.length > 64) return undefined;
  const bracketed = /^\[([0-9a-fA-F:.]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) return bracketed[1];
  const ipv4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text);
  return ipv4WithPort ? ipv4WithPort[1] : text;
}

/** Addresses seen lately and their keys (cleared whole when full: a flood of addresses costs parsing, nothing more). */
const RECENT_KEYS = 4096;
const recentKeys = new Map<string, string>();

/**
 * What is not an address (an X-Forwarded-For value written by the client, with TRUST_PROXY) is never
 * a key of its own: a new string per request would be a new allowance, and a long one a large key.
 * An address with a port (`1.2.3.4:5678`, `[2001:db8::1]:443`, as some proxies write it) is that
 * address; anything else is one shared client.
 */
export const UNKNOWN_CLIENT = 'unknown';

function keyOf(given: string): string {
  const address = withoutPort(given);
  if (address === undefined || !ipaddr.isValid(address)) return UNKNOWN_CLIENT;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  return `${(parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`;
}

/**
 * Work under way per client (keyed by clientKey), capped: lookups at the relays, NIP-05
 * resolutions. Every `enter` that returns true is paired with one `leave`.
 */
export class ClientSlots {
  private readonly held = new Map<string, number>();

  /** Takes a slot for `client` unless it holds `cap` already (0: no cap); false when full. */
  enter(client: string, cap: number): boolean {
    const running = this.held.get(client) ?? 0;
    if (cap > 0 && running >= cap) return false;
    this.held.set(client, running + 1);
    return true;
  }

  leave(client: string): void {
    const left = (this.held.get(client) ?? 1) - 1;
    if (left <= 0) this.held.delete(client);
    else this.held.set(client, left);
  }
}
