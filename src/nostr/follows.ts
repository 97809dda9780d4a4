import type { NostrEvent } from './event.js';
import { isHex64 } from './identifiers.js';
import { MAX_TAGS_READ } from './work-caps.js';

/**
 * Who follows whom (NIP-02; DESIGN "Relationships", following and followers rows), written once
 * here: the store indexes these follows (store/follow-index.ts) and the recount
 * (store/relation-recount.ts) derives the same figures from the events themselves. Only an
 * author's latest servable kind 3 counts: the store keeps no other (an older list arriving later is
 * superseded and never stored), and relates a list when it is stored and unrelates it when it is
 * replaced, deleted or vanished.
 */

export const FOLLOW_LIST_KIND = 3;

/**
 * The pubkeys a follow list follows: its `p` tags' values that are pubkeys (64 hex digits, read in
 * any case, kept lowercase), each once, in the order they first appear; anything else is skipped.
 * A list naming its own author follows its author. Empty for any other kind. Reads the first
 * MAX_TAGS_READ tags (stored events have no more: nostr/work-caps.ts MAX_TAGS).
 */
export function followsOf(event: Pick<NostrEvent, 'kind' | 'tags'>): string[] {
  if (event.kind !== FOLLOW_LIST_KIND) return [];
  const follows = new Set<string>();
  const { tags } = event;
  for (let index = 0; index < tags.length && index < MAX_TAGS_READ; index++) {
    const tag = tags[index] as string[];
    if (tag[0] === 'p' && typeof tag[1] === 'string' && isHex64(tag[1])) follows.add(tag[1].toLowerCase());
  }
  return [...follows];
}

/** What a follow list changes when it replaces another of its author: the pubkeys it adds and drops. */
export interface FollowChanges {
  added: string[];
  removed: string[];
  /** The change in how many pubkeys the author follows. */
  following: number;
}

/**
 * The difference between two follow lists of one author (the list a newer one replaces): most
 * replacements add or drop one pubkey of hundreds, and writing only that keeps a replacement's
 * cost to its change. Undefined unless both are follow lists.
 */
export function followChanges(previous: Pick<NostrEvent, 'kind' | 'tags'>, next: Pick<NostrEvent, 'kind' | 'tags'>): FollowChanges | undefined {
  if (previous.kind !== FOLLOW_LIST_KIND || next.kind !== FOLLOW_LIST_KIND) return undefined;
  const before = followsOf(previous);
  const after = followsOf(next);
  const had = new Set(before);
  const has = new Set(after);
  return { added: after.filter((pubkey) => !had.has(pubkey)), removed: before.filter((pubkey) => !has.has(pubkey)), following: after.length - before.length };
}
