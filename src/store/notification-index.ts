import type { NostrEvent } from '../nostr/event.js';
import { directReasonsOf, NOTIFICATION_TYPES, type NotificationType, reasonToken, TYPE_LETTERS, targetReasonsOf, typeOfTokens } from '../nostr/notifications.js';
import { notePlace, type ReplyPosition, replyMemberBytes } from './relation-index.js';

/**
 * The notification index (DESIGN "Screens", notifications row; the rule in nostr/notifications.ts),
 * kept by the stores in the same writes as the relationship index, on every transition of an event
 * (stored, replaced, deleted, vanished), whatever the order events arrive in:
 *
 * - per target event T, its *inbound* records: each event E that has a target reason about T and
 *   came while T was not servable, with E's created_at, the reasons' letters and the first 8 bytes
 *   of E's author. When T is stored, its author gets the reasons of every E waiting there, and the
 *   records go: a record is kept only while it waits (and, for good, as a removal's tombstone). An
 *   E that finds T servable tells T's author at once and keeps no record. When T goes, its author
 *   loses the reasons of every E that relates to it (reasonsAbout: T's own relations, which
 *   `relations check` proves, say which events those are), and of every record still there.
 * - per recipient V, each notifying event's *tokens* (nostr/notifications.ts reasonToken): its type
 *   is the first that fits among the live ones. A token taken away stays as a tombstone (`-` before
 *   it): every reason goes for good (an event deleted or vanished, a version replaced never comes
 *   back), so an addition that arrives after its removal (two writers, any order) changes nothing,
 *   and one sent twice (a replayed write) counts once. (Redis keeps an event's one live token, with
 *   no tombstone, in its page-order member alone: lua-scripts.ts NOTIFY.)
 * - per recipient V, its notifications in page order (newest first, then id) under their type's
 *   letter: a page of some types reads one range per type, a count one range per type.
 *
 * Each store writes E's side (its relations first; then, if T is servable, its author's tokens;
 * else the inbound record, and T looked for again; a removal writes its tombstone record first)
 * and T's side (its inbound records read after T is stored or gone, and, when T goes, the events
 * its relations name): whichever of E and T comes last sees the other. On Redis, where two writers
 * may remove E and T at once and each find the other gone, a removal also tells T's author where T
 * is gone (T's tombstone names it: redis-notification-index.ts). Both stores share the encodings below.
 */

/** One notification as the index holds it. */
export interface NotificationEntry {
  id: string;
  createdAt: number;
  type: NotificationType;
  /** The reason that decides the type (nostr/notifications.ts notificationTarget reads its target). */
  token: string;
}

export type NotificationCounts = Record<NotificationType, number>;

export interface NotificationIndex {
  /**
   * Up to `first` notifications of `recipient` of the given types after `after` (exclusive), newest
   * first, then by id; one range read per type, never a scan.
   */
  notifications(recipient: string, types: readonly NotificationType[], after: ReplyPosition | null, first: number): Promise<NotificationEntry[]>;
  /** How many of each type, of those with created_at >= since (all without). */
  notificationCounts(recipient: string, since?: number): Promise<NotificationCounts>;
  /** Every recipient that has a notification (for `relations check`), in batches. */
  notificationRecipients(): AsyncIterable<string[]>;
}

/** What an event adds to recipients it names, and to its targets' inbound records. */
export interface NotificationReasons {
  /** recipient → tokens */
  direct: Map<string, string[]>;
  /** target → letters (an event may reply to and quote one target) */
  targets: Map<string, string>;
}

export function notificationReasonsOf(event: NostrEvent): NotificationReasons {
  const direct = new Map<string, string[]>();
  for (const reason of directReasonsOf(event)) direct.set(reason.recipient, [reasonToken(reason)]);
  const targets = new Map<string, string>();
  for (const reason of targetReasonsOf(event)) targets.set(reason.target, (targets.get(reason.target) ?? '') + TYPE_LETTERS[reason.type]);
  return { direct, targets };
}

/**
 * The letters of an event's reasons, each once: what it may hold for any recipient. A store looks
 * for an event's one notification (kept without a record: NOTIFY, LmdbNotificationIndex) among these.
 */
export function reasonLetters({ direct, targets }: NotificationReasons): string {
  const letters = new Set<string>();
  for (const tokens of direct.values()) for (const token of tokens) letters.add(token[0] as string);
  for (const held of targets.values()) for (const letter of held) letters.add(letter);
  return [...letters].join('');
}

/** Where the event is not at hand (a target's side reads only its inbound records): any letter. */
export const ANY_LETTER = NOTIFICATION_TYPES.map((type) => TYPE_LETTERS[type]).join('');

/** The tokens one inbound record gives its target's author: a letter each, with the target's first 8 hex digits. */
export function tokensOfInbound(letters: string, target: string): string[] {
  return [...letters].map((letter) => letter + target.slice(0, 8));
}

/** The first 8 bytes of an author, in hex, as inbound records keep it (only to leave out the target's own author). */
export const authorPrefixOf = (pubkey: string) => pubkey.slice(0, 16);

/** An inbound record: `<created_at> <letters> <author prefix>`. */
export function inboundValue(event: NostrEvent, letters: string): string {
  return `${event.created_at} ${letters} ${authorPrefixOf(event.pubkey)}`;
}

/**
 * An inbound record, or a removed one (`-` before it): a removal keeps what the record said, so
 * that a target removed while the event is removed too (two writers, either order) still takes the
 * reasons back (the target's side sends a removal for every record, removed or not; tombstones
 * make the second removal a no-op). See drainDelta for a target's addition.
 */
export function readInboundValue(value: string): { createdAt: number; letters: string; authorPrefix: string; removed: boolean } | undefined {
  const removed = value.startsWith('-');
  const [createdAt, letters, authorPrefix] = (removed ? value.slice(1) : value).split(' ');
  if (!createdAt || !letters || !authorPrefix) return undefined;
  return { createdAt: Number(createdAt), letters, authorPrefix, removed };
}

/**
 * What a target's transition (delta) sends for one inbound record: its reasons with the target's
 * delta for a live record, and a removal for a removed one whatever the target did. The removal on
 * the target's addition closes a race between two writers: the event's writer removes it while the
 * target is not stored yet (so it tells no recipient), and another writer, which stored the event
 * and then saw the target, adds the notification after that. A removal leaves a tombstone with the
 * recipient, so the late addition changes nothing, in either order.
 */
export function drainDelta(record: { removed: boolean }, delta: 1 | -1): 1 | -1 {
  return record.removed ? -1 : delta;
}

/**
 * The reasons a target's removal takes back from its author: each of `related` (the servable
 * events that relate to it: RelationIndex.relatedIds) that has a target reason about it, with the
 * letters of those reasons and of all its reasons (where a store looks for its notification). The
 * target's author's own events notify no one.
 */
export function reasonsAbout(target: NostrEvent, related: readonly NostrEvent[]): { event: NostrEvent; letters: string; look: string }[] {
  const found: { event: NostrEvent; letters: string; look: string }[] = [];
  for (const event of related) {
    if (event.pubkey === target.pubkey) continue;
    const reasons = notificationReasonsOf(event);
    const letters = reasons.targets.get(target.id);
    if (letters !== undefined) found.push({ event, letters, look: reasonLetters(reasons) });
  }
  return found;
}

/**
 * A notification's place in the page order: created_at mirrored (newest first), then the id, as
 * 39 bytes (relation-index.ts replyMemberBytes without the size): binary order is page order.
 */
export function notificationPlace(position: ReplyPosition): Buffer {
  return replyMemberBytes(notePlace({ createdAt: position.createdAt, id: position.id })).subarray(0, 39);
}

/** Applies tokens to a recipient's record of one event (`tok -tok …`): the record after, and the type before and after. */
export function applyTokens(record: string | undefined, tokens: readonly string[], delta: 1 | -1): { record: string; before: string | undefined; after: string | undefined } {
  const held = record ? record.split(' ') : [];
  const live = new Set(held.filter((token) => !token.startsWith('-')));
  const dead = new Set(held.filter((token) => token.startsWith('-')).map((token) => token.slice(1)));
  const before = typeOfTokens(live)?.token;
  for (const token of tokens) {
    if (delta > 0) {
      if (!dead.has(token)) live.add(token);
    } else {
      live.delete(token);
      dead.add(token);
    }
  }
  return { record: [...live, ...[...dead].map((token) => `-${token}`)].join(' '), before, after: typeOfTokens(live)?.token };
}

export const NO_NOTIFICATION_COUNTS: NotificationCounts = Object.freeze(Object.fromEntries(NOTIFICATION_TYPES.map((type) => [type, 0])) as NotificationCounts);
