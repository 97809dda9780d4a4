import type { Database } from 'lmdb';
import type { NostrEvent } from '../../nostr/event.js';
import { NOTIFICATION_TYPES, type NotificationType, TYPE_LETTERS, typeOfTokens } from '../../nostr/notifications.js';
import {
  ANY_LETTER,
  applyTokens,
  authorPrefixOf,
  drainDelta,
  inboundValue,
  NO_NOTIFICATION_COUNTS,
  type NotificationCounts,
  type NotificationEntry,
  type NotificationIndex,
  notificationReasonsOf,
  readInboundValue,
  reasonLetters,
  reasonsAbout,
  tokensOfInbound,
} from '../notification-index.js';
import { notePlace, type ReplyPosition, replyMember, replyPositionOf } from '../relation-index.js';
import { inTransaction, type LmdbTransactions } from './lmdb-transactions.js';

/** The author of a servable event by id, read inside the write transaction (undefined where none). */
export type ServableAuthorOf = (id: string) => string | undefined;

/** Servable events by id, read inside the write transaction (undefined where none): the event, and its author alone (cheaper). */
export interface ServableEvents {
  authorOf: ServableAuthorOf;
  eventOf: (id: string) => NostrEvent | undefined;
}

/** The servable events that relate to a target (RelationIndex.relatedIds, then the events), in the write transaction. */
export type ServableRelatedOf = (target: string) => NostrEvent[];

/** Notifications held, all recipients (RelationIndex.totals). */
export const TOTAL_NOTIFICATIONS = 'ct:notifications';

/** Counts are kept per recipient, type and day (UTC), so that a count since any time reads one day's order at most. */
const DAY = 86_400;
const dayOf = (createdAt: number) => Math.floor(createdAt / DAY);
/** A day as 12 digits: key order is day order (2^53 seconds is below 10^11 days). */
const dayKey = (day: number) => String(Math.max(0, day)).padStart(12, '0');

/** A follow's letter: a list's one reason for each pubkey it names. */
const FOLLOW_LETTER = TYPE_LETTERS.FOLLOW;

/** The notifying event as notify needs it: its id, date, place in the page order and the letters its reasons have. */
interface NotifyingEvent {
  id: string;
  createdAt: number;
  place: string;
  look: string;
}

/** Recipients per batch of `notificationRecipients()`. */
const RECIPIENTS_PAGE = 500;

/**
 * The notification index in the `relations` database (store/notification-index.ts), written inside
 * the events' own write transaction (one writer at a time: exact without tombstone races, though
 * the rule keeps them as Redis does, so that both stores hold the same):
 * - `ni:<target>:<event>` → the inbound record while the target is not servable, `-<record>` once taken away;
 * - `nr:<recipient>:<event>` → the event's tokens for the recipient, only where it has more than
 *   one or a tombstone (one live reason is said by its entry below, as on Redis);
 * - `nz:<recipient>:<letter>:<replyMember of notePlace>` → the deciding token's target (its first 8
 *   hex digits; '' for a mention, a follow, a zap): the page order per type;
 * - `nd:<recipient>:<letter>:<day>` → how many of that type on that day (UTC): counts.
 */
export class LmdbNotificationIndex implements NotificationIndex {
  constructor(
    private readonly db: Database<string, string>,
    private readonly transactions: LmdbTransactions,
    private readonly authorOf: ServableAuthorOf,
    private readonly relatedOf: ServableRelatedOf,
  ) {}

  /** The change in notifications held by the event being applied: written once, at its end (a list's follows are a thousand). */
  private totalChange = 0;

  /** An event's transition (stored +1, gone -1), as the notifying event and as a target. Inside the write transaction. */
  apply(event: NostrEvent, delta: 1 | -1): void {
    this.totalChange = 0;
    this.applyReasons(event, delta);
    if (this.totalChange !== 0) this.count(TOTAL_NOTIFICATIONS, this.totalChange);
  }

  private applyReasons(event: NostrEvent, delta: 1 | -1): void {
    const reasons = notificationReasonsOf(event);
    const { direct, targets } = reasons;
    const look = reasonLetters(reasons);
    const at = { id: event.id, createdAt: event.created_at, place: replyMember(notePlace({ createdAt: event.created_at, id: event.id })), look };
    for (const [recipient, tokens] of direct) this.notify(recipient, at, tokens, delta);
    for (const [target, letters] of targets) {
      const key = `ni:${target}:${event.id}`;
      const held = this.db.get(key);
      const author = this.authorOf(target);
      // A record waits for a target not servable yet; one that finds it tells its author now.
      if (delta > 0 && author === undefined && held === undefined) inTransaction(this.db.put(key, inboundValue(event, letters)));
      if (delta > 0 && author !== undefined && held !== undefined && !held.startsWith('-')) inTransaction(this.db.remove(key));
      if (delta < 0) inTransaction(this.db.put(key, `-${inboundValue(event, letters)}`));
      if (author !== undefined && author !== event.pubkey) this.notify(author, at, tokensOfInbound(letters, target), delta);
    }
    // As a target: the events that waited for it (delivered, their records go), or, gone, what
    // relates to it and what still waited.
    const own = authorPrefixOf(event.pubkey);
    const prefix = `ni:${event.id}:`;
    for (const { key, value } of this.db.getRange({ start: prefix, end: `${prefix.slice(0, -1)};` })) {
      const record = readInboundValue(value);
      if (!record) continue;
      if (delta > 0 && !record.removed) inTransaction(this.db.remove(key));
      if (record.authorPrefix === own) continue;
      const id = key.slice(prefix.length);
      const place = replyMember(notePlace({ createdAt: record.createdAt, id }));
      this.notify(event.pubkey, { id, createdAt: record.createdAt, place, look: ANY_LETTER }, tokensOfInbound(record.letters, event.id), drainDelta(record, delta));
    }
    if (delta < 0) {
      for (const { event: source, letters, look } of reasonsAbout(event, this.relatedOf(event.id))) {
        const place = replyMember(notePlace({ createdAt: source.created_at, id: source.id }));
        this.notify(event.pubkey, { id: source.id, createdAt: source.created_at, place, look }, tokensOfInbound(letters, event.id), -1);
      }
    }
  }

  /**
   * One event's reasons (tokens) added to or taken from one recipient's notifications (the rule of
   * notification-index.ts applyTokens, as lua-scripts.ts NOTIFY on Redis). An event with one live
   * reason and no tombstone keeps no record: its page-order entry says it (the letter in its key,
   * a target's first 8 hex digits as its value), found among the letters its reasons have (`look`).
   */
  private notify(recipient: string, { id, createdAt, place, look }: NotifyingEvent, tokens: readonly string[], delta: 1 | -1): void {
    const key = `nr:${recipient}:${id}`;
    const member = (letter: string) => `nz:${recipient}:${letter}:${place}`;
    const day = dayKey(dayOf(createdAt));
    const held = this.db.get(key);
    // No record: the one live reason its entry says, if it has one.
    let said: string | undefined;
    if (held === undefined) {
      for (const letter of look) {
        const value = this.db.get(member(letter));
        if (value !== undefined) {
          said = letter + value;
          break;
        }
      }
    }
    // A follow list's one reason, where the list has no other (look) and the recipient no record:
    // added, or taken away with no tombstone (as on Redis: lua-scripts.ts NOTIFY, which says why).
    if (held === undefined && look === FOLLOW_LETTER && tokens.length === 1 && tokens[0] === FOLLOW_LETTER && (delta > 0 || said !== undefined)) {
      // Added again while held: nothing changes (taken away while not held: the general path).
      if ((delta > 0) === (said !== undefined)) return;
      inTransaction(delta > 0 ? this.db.put(member(FOLLOW_LETTER), '') : this.db.remove(member(FOLLOW_LETTER)));
      this.count(`nd:${recipient}:${FOLLOW_LETTER}:${day}`, delta);
      this.totalChange += delta;
      return;
    }
    const { record, before, after } = applyTokens(held ?? said, tokens, delta);
    // One live reason and no tombstone: no record (the entry says it).
    const single = after !== undefined && record === after;
    if (record === '' || single) {
      if (held !== undefined) inTransaction(this.db.remove(key));
    } else if (record !== held) {
      inTransaction(this.db.put(key, record));
    }
    const was = before?.[0];
    const is = after?.[0];
    if (was && was !== is) {
      inTransaction(this.db.remove(member(was)));
      this.count(`nd:${recipient}:${was}:${day}`, -1);
    }
    // The entry's value is the deciding token's target (its record gone, it says the token).
    if (is && after && (was !== is || before !== after || (held !== undefined && single))) inTransaction(this.db.put(member(is), after.slice(1)));
    if (is && was !== is) this.count(`nd:${recipient}:${is}:${day}`, 1);
    // One more notification, or one fewer (a type changed: neither).
    if (!was !== !is) this.totalChange += is ? 1 : -1;
  }

  private count(key: string, delta: number): void {
    const after = Number(this.db.get(key) ?? 0) + delta;
    inTransaction(after === 0 ? this.db.remove(key) : this.db.put(key, String(after)));
  }

  notifications(recipient: string, types: readonly NotificationType[], after: ReplyPosition | null, first: number): Promise<NotificationEntry[]> {
    return this.transactions.read(() => {
      const places: { place: string; said: string }[] = [];
      for (const type of types) {
        const range = `nz:${recipient}:${TYPE_LETTERS[type]}:`;
        const start = after ? `${range}${replyMember(notePlace(after))}` : range;
        for (const { key, value } of this.db.getRange({ start, end: `${range.slice(0, -1)};`, limit: first + 1 })) {
          if (after && key === start) continue;
          places.push({ place: key.slice(range.length), said: TYPE_LETTERS[type] + value });
          if (places.length > first * types.length) break;
        }
      }
      places.sort((a, b) => (a.place < b.place ? -1 : a.place > b.place ? 1 : 0));
      const entries: NotificationEntry[] = [];
      for (const { place, said } of places.slice(0, first)) {
        const position = replyPositionOf(place);
        const createdAt = 2 ** 53 - 1 - position.createdAt;
        // No record: the one reason its entry says (notify).
        const tokens = (this.db.get(`nr:${recipient}:${position.id}`) ?? said).split(' ').filter((token) => token !== '' && !token.startsWith('-'));
        const decided = typeOfTokens(tokens);
        if (decided) entries.push({ id: position.id, createdAt, type: decided.type, token: decided.token });
      }
      return entries;
    });
  }

  notificationCounts(recipient: string, asked?: number): Promise<NotificationCounts> {
    // Every created_at is at least 0: since 0 is all of them.
    const since = asked !== undefined && asked > 0 ? asked : undefined;
    return this.transactions.read(() => {
      const counts = { ...NO_NOTIFICATION_COUNTS };
      for (const type of NOTIFICATION_TYPES) {
        const letter = TYPE_LETTERS[type];
        // The days after since's, summed from their counters; since's own day, counted in the order.
        const days = `nd:${recipient}:${letter}:`;
        const sinceDay = since === undefined ? -1 : dayOf(since);
        let count = 0;
        for (const { value } of this.db.getRange({ start: `${days}${dayKey(sinceDay + 1)}`, end: `${days.slice(0, -1)};` })) count += Number(value);
        if (since !== undefined) {
          const range = `nz:${recipient}:${letter}:`;
          // Newest first: since's day from its last second down to since.
          const start = `${range}${replyMember(notePlace({ createdAt: (sinceDay + 1) * DAY - 1, id: '' }))}`;
          const end = `${range}${replyMember(notePlace({ createdAt: Math.max(0, since - 1), id: '' }))}`;
          count += this.db.getKeysCount({ start, end });
        }
        counts[type] = count;
      }
      return counts;
    });
  }

  async *notificationRecipients(): AsyncIterable<string[]> {
    let batch: string[] = [];
    let last = '';
    for (const key of this.db.getKeys({ start: 'nz:', end: 'nz;' })) {
      const recipient = key.slice(3, 67);
      if (recipient === last) continue;
      last = recipient;
      batch.push(recipient);
      if (batch.length >= RECIPIENTS_PAGE) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }
}
