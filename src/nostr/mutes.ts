import type { NostrEvent } from './event.js';
import { isHex64 } from './identifiers.js';
import { foldText } from './profile-search.js';
import { GENERIC_REPOST_KIND, REPOST_KIND, repostTargetOf, threadPositionOf, type ThreadPosition } from './relationships.js';
import { MAX_MUTE_WORD_CHARS, MAX_MUTE_WORDS, MAX_TAGS_READ } from './work-caps.js';

/**
 * What a pubkey muted (NIP-51 kind 10000; DESIGN "Screens", mutes of V), written once here: its
 * latest servable mute list's public tags. `p` hides an author, `e` an event and every event whose
 * root or parent it is, `t` a hashtag (case-insensitive), `word` any event whose content holds it
 * (NFKC, lower case, substring). The list's content holds its private (NIP-44/NIP-04 encrypted)
 * entries: they cannot be read and are ignored.
 */

export const MUTE_LIST_KIND = 10_000;

/** A mute list's public entries, each once, in the order they first appear. */
export interface Mutes {
  pubkeys: ReadonlySet<string>;
  events: ReadonlySet<string>;
  /** Lower case (nostr/profile-search.ts foldText, as words). */
  hashtags: ReadonlySet<string>;
  /** NFKC and lower case (foldText). */
  words: readonly string[];
}

export const NO_MUTES: Mutes = Object.freeze({ pubkeys: new Set<string>(), events: new Set<string>(), hashtags: new Set<string>(), words: [] });

/**
 * The public mutes of a mute list; NO_MUTES for any other kind. Hex (`p`, `e`) is read in any case
 * as lowercase; a value that is not 64 hex digits, an empty hashtag or word, or a word longer than
 * MAX_MUTE_WORD_CHARS once folded is skipped. Reads the first MAX_TAGS_READ tags and the first
 * MAX_MUTE_WORDS words (nostr/work-caps.ts).
 */
export function mutesOf(event: Pick<NostrEvent, 'kind' | 'tags'> | null | undefined): Mutes {
  if (!event || event.kind !== MUTE_LIST_KIND) return NO_MUTES;
  let mutes = known.get(event);
  if (!mutes) {
    mutes = readMutes(event);
    known.set(event, mutes);
  }
  return mutes;
}

/** mutesOf made already, by event: a request reads V's list for its feed, `muted` and every alias of them. */
const known = new WeakMap<Pick<NostrEvent, 'kind' | 'tags'>, Mutes>();

function readMutes(event: Pick<NostrEvent, 'kind' | 'tags'>): Mutes {
  const pubkeys = new Set<string>();
  const events = new Set<string>();
  const hashtags = new Set<string>();
  const words = new Set<string>();
  const { tags } = event;
  const read = Math.min(tags.length, MAX_TAGS_READ);
  for (let index = 0; index < read; index++) {
    const tag = tags[index];
    if (!Array.isArray(tag)) continue;
    const [name, value] = tag;
    if (typeof value !== 'string' || value === '') continue;
    if (name === 'p' && isHex64(value)) pubkeys.add(value.toLowerCase());
    else if (name === 'e' && isHex64(value)) events.add(value.toLowerCase());
    else if (name === 't') hashtags.add(foldText(value));
    else if (name === 'word' && words.size < MAX_MUTE_WORDS) {
      const word = foldText(value);
      if (word !== '' && word.length <= MAX_MUTE_WORD_CHARS) words.add(word);
    }
  }
  return { pubkeys, events, hashtags, words: [...words] };
}

/** Whether nothing is muted (a feed then need not read events' tags for it). */
export function mutesNothing(mutes: Mutes): boolean {
  return mutes.pubkeys.size === 0 && mutes.events.size === 0 && mutes.hashtags.size === 0 && mutes.words.length === 0;
}

/**
 * Whether `mutes` hide `event`: its author is muted; it is a muted event or its root or parent
 * (`threadOf`, NIP-10/NIP-22: nostr/relationships.ts threadPositionOf) is; one of its `t` tags is
 * a muted hashtag; its content, folded, holds a muted word. A repost (kind 6, 16) of a muted event
 * (its first `e`) or of a muted author (NIP-18: its first `p` tag names the reposted author) is hidden
 * too: what it shows is that event. Reads the first MAX_TAGS_READ tags.
 */
export function isMuted(event: NostrEvent, mutes: Mutes, threadOf: (event: NostrEvent) => ThreadPosition = threadPositionOf): boolean {
  if (mutes.pubkeys.has(event.pubkey)) return true;
  if (mutes.events.size > 0) {
    if (mutes.events.has(event.id)) return true;
    const { root, parent } = threadOf(event);
    if ((root !== undefined && mutes.events.has(root)) || (parent !== undefined && mutes.events.has(parent))) return true;
  }
  const repost = event.kind === REPOST_KIND || event.kind === GENERIC_REPOST_KIND;
  if (repost && mutes.events.size > 0) {
    const target = repostTargetOf(event);
    if (target !== undefined && mutes.events.has(target)) return true;
  }
  if (mutes.hashtags.size > 0 || (repost && mutes.pubkeys.size > 0)) {
    const { tags } = event;
    const read = Math.min(tags.length, MAX_TAGS_READ);
    let firstPubkey = repost;
    for (let index = 0; index < read; index++) {
      const [name, value] = tags[index] as string[];
      if (typeof value !== 'string') continue;
      if (name === 't' && mutes.hashtags.size > 0 && mutes.hashtags.has(foldText(value))) return true;
      if (name === 'p' && firstPubkey) {
        firstPubkey = false;
        if (isHex64(value) && mutes.pubkeys.has(value.toLowerCase())) return true;
      }
    }
  }
  if (mutes.words.length > 0 && event.content.length > 0) {
    const content = foldText(event.content);
    for (const word of mutes.words) if (content.includes(word)) return true;
  }
  return false;
}
