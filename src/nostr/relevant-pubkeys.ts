import type { NostrEvent } from './event.js';
import { isLowerHex64, pubkeyOfMention } from './identifiers.js';
import { verifyNostrEvent } from './verify-event.js';

// NIP-21/NIP-27 mentions in content, in the lowercase form NIP-19 uses (see identifiers.ts).
const CONTENT_MENTION = /nostr:((?:npub|nprofile)1[02-9ac-hj-np-z]+)/g;

const REPOST_KINDS = new Set([6, 16]); // NIP-18: repost, generic repost

/** A tag value that names a pubkey, normalised to lowercase hex, or undefined. */
function pubkeyValue(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const lower = value.toLowerCase();
  return isLowerHex64(lower) ? lower : undefined;
}

function* candidatePubkeys(event: NostrEvent): Generator<string | undefined> {
  // 1. the author
  yield event.pubkey;
  // 2. `p` tags (NIP-01) and `P` tags (NIP-22 root author)
  for (const tag of event.tags) {
    if (tag[0] === 'p' || tag[0] === 'P') yield pubkeyValue(tag[1]);
  }
  // 3. nostr:npub… / nostr:nprofile… in content (NIP-27)
  for (const match of event.content.matchAll(CONTENT_MENTION)) {
    yield pubkeyOfMention(match[1] as string);
  }
  // 4. the pubkey element of `e` tags (NIP-10, index 4) and `q` tags (NIP-18, index 3)
  for (const tag of event.tags) {
    if (tag[0] === 'e') yield pubkeyValue(tag[4]);
    else if (tag[0] === 'q') yield pubkeyValue(tag[3]);
  }
  // 5. the author of a repost's embedded event, only if it is a valid signed event (NIP-18)
  if (REPOST_KINDS.has(event.kind) && event.content.startsWith('{')) {
    yield embeddedAuthor(event.content);
  }
}

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
  const found = new Set<string>();
  if (max <= 0) return [];
  for (const pubkey of candidatePubkeys(event)) {
    if (pubkey === undefined) continue;
    found.add(pubkey);
    if (found.size >= max) break;
  }
  return [...found];
}
