/**
 * The Redis key layout, in one place. Every command touches one key or, for reads, keys that are
 * grouped by hash slot before they are sent (see mget-by-slot.ts), so the layout works unchanged on
 * Redis Cluster. A prefix containing a `{hash tag}` pins a whole namespace to one slot if ever wanted.
 *
 * - `<prefix>e:<id>`: the event's wire JSON, or, for a replaceable/addressable event, a marker
 *   `@<address>` naming the slot below (the event is kept once, in its slot); or what a deletion
 *   left (store/tombstones.ts).
 * - `<prefix>r:<kind>:<pubkey>[:<d>]`: the latest event of a replaceable/addressable address (NIP-01),
 *   or a deletion's bar. Profiles are `r:0:<pubkey>`, so a batch of profiles is one MGET.
 * - `<prefix>v:<pubkey>`: the time of the pubkey's latest request to vanish (NIP-62).
 * - `<prefix>a:<pubkey>`: the author index, a sorted set: event ids scored by created_at, and
 *   replaceable addresses (store/tombstones.ts authorIndexMember) scored -1; read by requests to vanish.
 * - `<prefix>m:<key>`: a mark (negative cache, profile freshness), expiring by Redis TTL.
 * - `<prefix>c:<name>`: a cursor.
 */
export interface RedisKeys {
  event(id: string): string;
  replaceable(address: string): string;
  mark(key: string): string;
  cursor(name: string): string;
  vanished(pubkey: string): string;
  author(pubkey: string): string;
}

export function redisKeys(prefix: string): RedisKeys {
  return {
    event: (id) => `${prefix}e:${id}`,
    replaceable: (address) => `${prefix}r:${address}`,
    mark: (key) => `${prefix}m:${key}`,
    cursor: (name) => `${prefix}c:${name}`,
    vanished: (pubkey) => `${prefix}v:${pubkey}`,
    author: (pubkey) => `${prefix}a:${pubkey}`,
  };
}
