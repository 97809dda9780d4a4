import type { NostrEvent } from './event.js';
import { isHex64, pubkeyOfMention } from './identifiers.js';
import { verifyNostrEvent } from './verify-event.js';
import { MAX_MENTIONS_READ, MAX_TAGS_READ } from './work-caps.js';

// NIP-21/NIP-27 mentions in content, in the lowercase form NIP-19 uses (see identifiers.ts).
const CONTENT_MENTION = /nostr:((?:npub|nprofile)1[02-9ac-hj-np-z]+)/g;

const REPOST_KINDS = new Set([6, 16]); // NIP-18: repost, generic repost

/** A tag value that names a pubkey, normalised to lowercase hex, or undefined. */
function pubkeyValue(value: string | undefined): string | undefined {
  // toLowerCase returns an already-lowercase value as it is: the usual case costs no copy.
  return typeof value === 'string' && isHex64(value) ? value.toLowerCase() : undefined;
}

/**
 * Collects pubkeys in first-seen order until `max`; true once full. (Plain loops, not a generator:
 * this runs for every `/event`, over every tag.)
 */
class PubkeyCollector {
  readonly found = new Set<string>();

  constructor(private readonly max: number) {}

  add(pubkey: string | undefined): boolean {
    if (pubkey !== undefined) this.found.add(pubkey);
    return this.full;
  }

  get full(): boolean {
    return this.found.size >= this.max;
  }
}

function collect(event: NostrEvent, into: PubkeyCollector): void {
  // 1. the author
  if (into.add(event.pubkey)) return;
  // Only the first MAX_TAGS_READ tags and MAX_MENTIONS_READ mentions (nostr/work-caps.ts).
  const tags = Math.min(event.tags.length, MAX_TAGS_READ);
  // 2. `p` tags (NIP-01) and `P` tags (NIP-22 root author)
  for (let index = 0; index < tags; index++) {
    const tag = event.tags[index] as string[];
    if ((tag[0] === 'p' || tag[0] === 'P') && into.add(pubkeyValue(tag[1]))) return;
  }
  // 3. nostr:npub… / nostr:nprofile… in content (NIP-27)
  if (event.content.includes('nostr:')) {
    let mentions = 0;
    for (const match of event.content.matchAll(CONTENT_MENTION)) {
      if (into.add(pubkeyOfMention(match[1] as string)) || ++mentions >= MAX_MENTIONS_READ) break;
    }
    if (into.full) return;
  }
  // 4. the pubkey element of `e` tags (NIP-10, index 4) and `q` tags (NIP-18, index 3)
  for (let index = 0; index < tags; index++) {
    const tag = event.tags[index] as string[];
    if (tag[0] === 'e' ? into.add(pubkeyValue(tag[4])) : tag[0] === 'q' && into.add(pubkeyValue(tag[3]))) return;
  }
  // 5. the author of a repost's embedded event, only if it is a valid signed event (NIP-18)
  if (REPOST_KINDS.has(event.kind) && event.content.startsWith('{')) {
    into.add(embeddedAuthor(event.content));
  }
}

/**
 * The author of a repost's embedded event if it verifies (a Schnorr check, ~100 µs): done once per
 * repost, since relevant pubkeys are derived once per event (store/derived-values.ts).
 */
function embeddedAuthor(content: string): string | undefined {
  try {
    const verdict = verifyNostrEvent(JSON.parse(content));
    return verdict.ok ? verdict.event.pubkey : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The relevant pubkeys of an event (the keys of `/event`'s profiles map): the author, then every
 * other pubkey the event names, in first-seen order, deduplicated, at most `max`. Anything malformed
 * is skipped, never an error.
 */
export function relevantPubkeys(event: NostrEvent, max: number): string[] {
  if (max <= 0) return [];
  const collector = new PubkeyCollector(max);
  collect(event, collector);
  return [...collector.found];
}
