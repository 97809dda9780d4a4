import { parseRelayUrl } from '../relays/relay-url.js';
import type { NostrEvent } from './event.js';
import { MAX_RELAY_LIST_TAGS_READ, MAX_TAGS_READ } from './work-caps.js';

/** NIP-65 relay list metadata: a replaceable event naming the relays a user reads from and writes to. */
export const RELAY_LIST_KIND = 10002;

/**
 * Write relays (or read relays) read from one list, at most: a list is untrusted input (anyone can
 * sign one with a thousand entries), and an author publishes to a handful.
 */
export const MAX_WRITE_RELAYS_PER_LIST = 12;

/**
 * The author's write relays from their kind 10002 (NIP-65): `r` tags without a marker (read and
 * write) or marked `write`, in the author's order, each normalised by the one relay URL parser
 * (relays/relay-url.ts); entries that are not ws(s) URLs are skipped, duplicates kept once. Only
 * the first MAX_RELAY_LIST_TAGS_READ `r` tags (among the first MAX_TAGS_READ tags) are read.
 * Where an author publishes, so where their notes and profile are to be found ("outbox model").
 */
export function writeRelaysOf(event: Pick<NostrEvent, 'kind' | 'tags'>): string[] {
  return relaysMarked(event, 'write');
}

/**
 * The author's read relays (their inbox) from their kind 10002 (NIP-65): `r` tags without a marker
 * or marked `read`, under the same rules and caps as writeRelaysOf. Where others publish what is
 * addressed to the author: replies, reactions, reposts and quotes of their events.
 */
export function readRelaysOf(event: Pick<NostrEvent, 'kind' | 'tags'>): string[] {
  return relaysMarked(event, 'read');
}

function relaysMarked(event: Pick<NostrEvent, 'kind' | 'tags'>, wanted: 'read' | 'write'): string[] {
  if (event.kind !== RELAY_LIST_KIND) return [];
  const relays: string[] = [];
  // Bounded work whatever the list holds (nostr/work-caps.ts): each entry is a URL parse.
  const tags = Math.min(event.tags.length, MAX_TAGS_READ);
  let read = 0;
  for (let index = 0; index < tags && relays.length < MAX_WRITE_RELAYS_PER_LIST && read < MAX_RELAY_LIST_TAGS_READ; index++) {
    const tag = event.tags[index] as string[];
    if (tag[0] !== 'r' || typeof tag[1] !== 'string') continue;
    read += 1;
    const marker = tag[2];
    if (marker !== undefined && marker !== '' && marker !== wanted) continue;
    const url = parseRelayUrl(tag[1]);
    if (url !== undefined && !relays.includes(url)) relays.push(url);
  }
  return relays;
}
