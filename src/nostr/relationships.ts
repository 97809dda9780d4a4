import { mayHaveTag, type NostrEvent } from './event.js';
import { isHex64 } from './identifiers.js';
import { isEphemeralKind, isReplaceableKind } from './kinds.js';
import { MAX_REACTION_CONTENT_BYTES, MAX_TAGS_READ } from './work-caps.js';
import { ZAP_RECEIPT_KIND } from './zaps.js';

/**
 * What one event says about other events, by the rules of ../shared/DESIGN.md ("Relationships"),
 * each written once, here: the store indexes these edges (store/relation-index.ts) and the recount
 * (store/relation-recount.ts) derives the same figures from the events themselves.
 */

export const NOTE_KIND = 1;
export const REPOST_KIND = 6;
export const REACTION_KIND = 7;
export const GENERIC_REPOST_KIND = 16;
export const COMMENT_KIND = 1111;

/** The kinds the relationship fill asks relays for by `#e` (fill/relation-fill.ts), and `sync` by default. */
export const RELATION_KINDS = [NOTE_KIND, REPOST_KIND, REACTION_KIND, GENERIC_REPOST_KIND, COMMENT_KIND, ZAP_RECEIPT_KIND] as const;

/** Where an event sits in a thread: its root and parent event ids, where it has them. */
export interface ThreadPosition {
  root?: string;
  parent?: string;
}

/**
 * How one event relates to one target event id. An event may relate to a target several ways (a
 * reply whose parent is also its root, and which quotes it).
 */
export interface RelationEdge {
  target: string;
  /** Its parent is the target (counts in `replies`, listed in the target's replies). */
  reply: boolean;
  /** Its root is the target (counts in `threadReplies`). */
  threadReply: boolean;
  /** It has a `q` tag with the target's id (counts in `quotes`). */
  quote: boolean;
  /** A kind 6 or 16 whose first `e` tag is the target (its author counts in `reposts`). */
  repost: boolean;
  /** A kind 7 whose last `e` tag is the target: its content as signed (its author counts in `reactions`). */
  reaction?: string;
}

/** A tag value naming an event id, lowercased; anything else undefined. */
function eventIdValue(value: string | undefined): string | undefined {
  return typeof value === 'string' && isHex64(value) ? value.toLowerCase() : undefined;
}

/** The tags a rule reads: the first MAX_TAGS_READ (nostr/work-caps.ts). */
function tagsRead(event: NostrEvent): string[][] {
  return event.tags.length > MAX_TAGS_READ ? event.tags.slice(0, MAX_TAGS_READ) : event.tags;
}

/**
 * NIP-10 for kind 1, NIP-22 for kind 1111 (DESIGN "Relationships"); other kinds are not replies.
 * An event is never its own root or parent.
 */
export function threadPositionOf(event: NostrEvent): ThreadPosition {
  const position = event.kind === NOTE_KIND ? nip10Position(tagsRead(event)) : event.kind === COMMENT_KIND ? nip22Position(tagsRead(event)) : {};
  if (position.root === event.id) delete position.root;
  if (position.parent === event.id) delete position.parent;
  return position;
}

/**
 * NIP-10: marked `e` tags (`root`, `reply`) if there are any: root = the first `root`, parent = the
 * first `reply`, else the root. Otherwise the deprecated positional form, over the `e` tags with no
 * marker or an empty one: one is root and parent; of several, the first is root, the last parent.
 * `mention` (or any other marker) never threads.
 */
function nip10Position(tags: readonly string[][]): ThreadPosition {
  let root: string | undefined;
  let reply: string | undefined;
  let marked = false;
  const positional: string[] = [];
  for (const tag of tags) {
    if (tag[0] !== 'e') continue;
    const id = eventIdValue(tag[1]);
    const marker = tag[3];
    if (marker === 'root' || marker === 'reply') {
      marked = true;
      if (id === undefined) continue;
      if (marker === 'root') root ??= id;
      else reply ??= id;
    } else if ((marker === undefined || marker === '') && id !== undefined) {
      positional.push(id);
    }
  }
  if (marked) {
    const parent = reply ?? root;
    return { ...(root ? { root } : {}), ...(parent ? { parent } : {}) };
  }
  if (positional.length === 0) return {};
  return { root: positional[0] as string, parent: positional[positional.length - 1] as string };
}

/** NIP-22: root = the first `E` tag, parent = the first `e` tag (event ids only). */
function nip22Position(tags: readonly string[][]): ThreadPosition {
  let root: string | undefined;
  let parent: string | undefined;
  for (const tag of tags) {
    if (tag[0] === 'E' && root === undefined) root = eventIdValue(tag[1]) ?? '';
    else if (tag[0] === 'e' && parent === undefined) parent = eventIdValue(tag[1]) ?? '';
    if (root !== undefined && parent !== undefined) break;
  }
  // The first tag decides: a first `E` that is not an event id means the root is not an event.
  return { ...(root ? { root } : {}), ...(parent ? { parent } : {}) };
}

/** NIP-18: the event a kind 6 or 16 reposts, its first `e` tag; else undefined. */
export function repostTargetOf(event: NostrEvent): string | undefined {
  if (event.kind !== REPOST_KIND && event.kind !== GENERIC_REPOST_KIND) return undefined;
  const first = tagsRead(event).find((tag) => tag[0] === 'e');
  return first ? eventIdValue(first[1]) : undefined;
}

/** NIP-25: the event a kind 7 reacts to, its last `e` tag; else undefined. */
export function reactionTargetOf(event: NostrEvent): string | undefined {
  if (event.kind !== REACTION_KIND) return undefined;
  const tags = tagsRead(event);
  for (let index = tags.length - 1; index >= 0; index--) {
    const tag = tags[index] as string[];
    if (tag[0] === 'e') return eventIdValue(tag[1]);
  }
  return undefined;
}

/** NIP-18 quotes: the distinct event ids of `q` tags (an address in a `q` tag is not an event id). */
export function quoteTargetsOf(event: NostrEvent): string[] {
  // Any kind may quote: a follow list's tags are read only if its wire form has a `q` tag.
  if (!mayHaveTag(event, 'q')) return [];
  const ids = new Set<string>();
  for (const tag of tagsRead(event)) {
    if (tag[0] !== 'q') continue;
    const id = eventIdValue(tag[1]);
    if (id !== undefined && id !== event.id) ids.add(id);
  }
  return [...ids];
}

/** Whether a reaction's content has a `byContent` entry (nostr/work-caps.ts MAX_REACTION_CONTENT_BYTES). */
export function hasContentEntry(content: string): boolean {
  // Each UTF-16 unit is at most 6 bytes of JSON (`\u0001`): most contents are decided by length alone.
  if (content.length * 6 + 2 <= MAX_REACTION_CONTENT_BYTES) return true;
  return content.length <= MAX_REACTION_CONTENT_BYTES && Buffer.byteLength(JSON.stringify(content)) <= MAX_REACTION_CONTENT_BYTES;
}

/** A reaction's kind (DESIGN: likes are `+` or empty, dislikes `-`). */
export function isLike(content: string): boolean {
  return content === '+' || content === '';
}

export function isDislike(content: string): boolean {
  return content === '-';
}

/**
 * What someone wrote (`Profile.notes`; DESIGN: an author's notes newest first): every servable event
 * of a regular or addressable kind is in its author's notes of its kind. Not listed: replaceable
 * kinds (0, 3, 10000–19999: one event per author, read as `profile`, `following`, an naddr),
 * ephemeral ones (20000–29999: never stored), and zap receipts (9735: signed by the recipient's
 * wallet service, not written by a person; a large service signs millions, which its list would
 * hold for nobody to read).
 */
export function isNoteKind(kind: number): boolean {
  return !isReplaceableKind(kind) && !isEphemeralKind(kind) && kind !== ZAP_RECEIPT_KIND;
}

/** The kinds a home feed lists when its reader does not say (DESIGN "Screens"): notes and reposts (NIP-18's kind 6 and 16). */
export const DEFAULT_FEED_KINDS: readonly number[] = [1, 6, 16];

/** Whether `kinds` are exactly the default feed's, in any order (a store may keep these merged per author). */
export function areDefaultFeedKinds(kinds: readonly number[]): boolean {
  return kinds.length === DEFAULT_FEED_KINDS.length && DEFAULT_FEED_KINDS.every((kind) => kinds.includes(kind));
}

/** Every relation of one event, one edge per target, in a fixed order; empty for most events. */
export function relationEdgesOf(event: NostrEvent): RelationEdge[] {
  const edges = new Map<string, RelationEdge>();
  const edge = (target: string): RelationEdge => {
    let found = edges.get(target);
    if (!found) {
      found = { target, reply: false, threadReply: false, quote: false, repost: false };
      edges.set(target, found);
    }
    return found;
  };
  const { root, parent } = threadPositionOf(event);
  if (parent) edge(parent).reply = true;
  if (root) edge(root).threadReply = true;
  for (const id of quoteTargetsOf(event)) edge(id).quote = true;
  const reposted = repostTargetOf(event);
  if (reposted && reposted !== event.id) edge(reposted).repost = true;
  const reactedTo = reactionTargetOf(event);
  if (reactedTo && reactedTo !== event.id) edge(reactedTo).reaction = event.content;
  return [...edges.values()];
}
