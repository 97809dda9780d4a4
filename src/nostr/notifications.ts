import type { NostrEvent } from './event.js';
import { FOLLOW_LIST_KIND, followsOf } from './follows.js';
import { isHex64, pubkeyOfMention } from './identifiers.js';
import { COMMENT_KIND, NOTE_KIND, relationEdgesOf } from './relationships.js';
import { MAX_MENTIONS_READ, MAX_TAGS_READ } from './work-caps.js';
import { isZapReceipt, readZapReceipt } from './zaps.js';

/**
 * Notifications of a pubkey V (DESIGN "Screens", notifications row), the rule written once: the
 * stores keep them as events arrive (store/notification-index.ts) and the recount derives the same
 * from the events themselves (store/notification-recount.ts).
 *
 * An event notifies V for *reasons*, each a type and, for the four types that are about one of V's
 * events, that event's id: a reply's parent, a quoted event, a reposted one, the one reacted to. A
 * reason of the first kind names V itself (a zap receipt's first `p`, a mention, a follow); one of
 * the second kind names V only once the target event is known to be V's. Of all the reasons an
 * event has for V, the first type in NOTIFICATION_TYPES is its type, its target the reason's.
 */

/** The types, first that fits first (DESIGN). */
export const NOTIFICATION_TYPES = ['ZAP', 'REPLY', 'QUOTE', 'REPOST', 'REACTION', 'MENTION', 'FOLLOW'] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** One letter per type, in precedence order: what the stores keep. */
export const TYPE_LETTERS: Record<NotificationType, string> = { ZAP: 'Z', REPLY: 'R', QUOTE: 'Q', REPOST: 'O', REACTION: 'K', MENTION: 'M', FOLLOW: 'F' };
export const LETTER_TYPES: Record<string, NotificationType> = Object.fromEntries(NOTIFICATION_TYPES.map((type) => [TYPE_LETTERS[type], type]));

/** The kinds a mention notifies from (DESIGN). */
const MENTION_KINDS = new Set([NOTE_KIND, COMMENT_KIND, 30023]);
/** The kinds a reply notifies from (DESIGN): a kind 1 by NIP-10, a kind 1111 by NIP-22. */
const REPLY_KINDS = new Set([NOTE_KIND, COMMENT_KIND]);

/** A reason that names its recipient: ZAP, MENTION, FOLLOW. */
export interface DirectReason {
  type: 'ZAP' | 'MENTION' | 'FOLLOW';
  recipient: string;
}

/** A reason about a target event: REPLY, QUOTE, REPOST, REACTION; it notifies the target's author. */
export interface TargetReason {
  type: 'REPLY' | 'QUOTE' | 'REPOST' | 'REACTION';
  target: string;
}

// NIP-27 mentions in content, as relevant-pubkeys.ts reads them.
const CONTENT_MENTION = /nostr:((?:npub|nprofile)1[02-9ac-hj-np-z]+)/g;

/**
 * The reasons that name their recipient, each recipient once with its first type (a receipt's
 * recipient is zapped, not mentioned). Never the author itself (DESIGN: events by others).
 * Mentions: the `p` tags among the first MAX_TAGS_READ tags and the content's first
 * MAX_MENTIONS_READ NIP-27 mentions, at most MAX_MENTIONS_READ recipients in all (nostr/work-caps.ts):
 * a note that names 2,000 pubkeys notifies the first 200 of them.
 */
export function directReasonsOf(event: NostrEvent): DirectReason[] {
  const reasons = new Map<string, DirectReason>();
  const add = (type: DirectReason['type'], recipient: string | undefined) => {
    if (recipient !== undefined && recipient !== event.pubkey && !reasons.has(recipient)) reasons.set(recipient, { type, recipient });
  };
  if (event.kind === 9735) {
    const receipt = readZapReceipt(event);
    if (isZapReceipt(receipt)) add('ZAP', receipt.recipient);
  }
  if (MENTION_KINDS.has(event.kind)) {
    let mentions = 0;
    const tags = Math.min(event.tags.length, MAX_TAGS_READ);
    for (let index = 0; index < tags && mentions < MAX_MENTIONS_READ; index++) {
      const tag = event.tags[index] as string[];
      const value = tag[1];
      if (tag[0] === 'p' && typeof value === 'string' && isHex64(value)) {
        add('MENTION', value.toLowerCase());
        mentions++;
      }
    }
    if (event.content.includes('nostr:')) {
      for (const match of event.content.matchAll(CONTENT_MENTION)) {
        if (mentions++ >= MAX_MENTIONS_READ) break;
        add('MENTION', pubkeyOfMention(match[1] as string));
      }
    }
  }
  if (event.kind === FOLLOW_LIST_KIND) for (const followed of followsOf(event)) add('FOLLOW', followed);
  return [...reasons.values()];
}

/**
 * Quoted events an event notifies about, at most: those of its first 8 `q` tags. A recipient's record
 * of one event holds a reason per quoted event of its own, rewritten at each change: without a cap,
 * a note quoting 2,000 of someone's events would make each change rewrite 2,000 of them.
 */
export const MAX_QUOTES_NOTIFIED = 8;

/** The reasons about target events (nostr/relationships.ts edges): whose they are is for the store to know. */
export function targetReasonsOf(event: NostrEvent): TargetReason[] {
  const reasons: TargetReason[] = [];
  let quotes = 0;
  for (const edge of relationEdgesOf(event)) {
    if (edge.reply && REPLY_KINDS.has(event.kind)) reasons.push({ type: 'REPLY', target: edge.target });
    if (edge.quote && quotes++ < MAX_QUOTES_NOTIFIED) reasons.push({ type: 'QUOTE', target: edge.target });
    if (edge.repost) reasons.push({ type: 'REPOST', target: edge.target });
    if (edge.reaction !== undefined) reasons.push({ type: 'REACTION', target: edge.target });
  }
  return reasons;
}

/**
 * A reason as the stores keep it: its type's letter, then for a target reason the first 8 hex
 * digits of the target (enough to tell an event's few targets apart; the target itself is read
 * back from the event, notificationTarget).
 */
export function reasonToken(reason: DirectReason | TargetReason): string {
  return 'target' in reason ? TYPE_LETTERS[reason.type] + reason.target.slice(0, 8) : TYPE_LETTERS[reason.type];
}

/** The type of a set of live reasons (tokens): the first that fits, or undefined when none is left. */
export function typeOfTokens(tokens: Iterable<string>): { type: NotificationType; token: string } | undefined {
  let best: { type: NotificationType; token: string; rank: number } | undefined;
  for (const token of tokens) {
    const type = LETTER_TYPES[token[0] as string];
    if (type === undefined) continue;
    const rank = NOTIFICATION_TYPES.indexOf(type);
    if (!best || rank < best.rank || (rank === best.rank && token < best.token)) best = { type, token, rank };
  }
  return best && { type: best.type, token: best.token };
}

/**
 * The event a notification is about, from the event and its deciding token: a target reason's
 * target, a zap's zapped event; none for a mention, a follow or a zap of a profile.
 */
export function notificationTarget(event: NostrEvent, token: string): string | undefined {
  if (token[0] === 'Z') {
    const receipt = readZapReceipt(event);
    return isZapReceipt(receipt) ? receipt.target : undefined;
  }
  if (token.length === 1) return undefined;
  const prefix = token.slice(1);
  const type = LETTER_TYPES[token[0] as string];
  return targetReasonsOf(event).find((reason) => reason.type === type && reason.target.startsWith(prefix))?.target;
}
