import ipaddr from 'ipaddr.js';

/**
 * Who a client is, for per-client caps (connections, lookups at the relays): its IPv4 address, or
 * its IPv6 /64. One IPv6 host is usually given a whole /64, so counting single IPv6 addresses would
 * let one client be 2^64 of them.
 */
export function clientKey(address: string | undefined): string {
  if (!address || !ipaddr.isValid(address)) return address ?? '';
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  return `${(parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`;
}
