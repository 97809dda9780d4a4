import { Cluster, type Result } from 'ioredis';
import type { NostrEvent } from '../../nostr/event.js';
import { NOTIFICATION_TYPES, type NotificationType, TYPE_LETTERS, typeOfTokens } from '../../nostr/notifications.js';
import {
  ANY_LETTER,
  authorPrefixOf,
  drainDelta,
  inboundValue,
  NO_NOTIFICATION_COUNTS,
  type NotificationCounts,
  type NotificationEntry,
  type NotificationIndex,
  notificationPlace,
  notificationReasonsOf,
  readInboundValue,
  reasonLetters,
  reasonsAbout,
  tokensOfInbound,
} from '../notification-index.js';
import { type ReplyPosition, replyPositionOfBytes } from '../relation-index.js';
import type { RedisKeys } from './keys.js';
import {
  INBOUND_MANY_SCRIPT,
  INBOUND_READ_MANY_SCRIPT,
  INBOUND_SCRIPT,
  NOTIFICATION_COUNTS_SCRIPT,
  NOTIFICATIONS_PAGE_SCRIPT,
  NOTIFY_FOLLOWS_SCRIPT,
  NOTIFY_MANY_SCRIPT,
  NOTIFY_SCRIPT,
} from './lua-scripts.js';
import type { RedisClient } from './mget-by-slot.js';
import type { RedisCommands } from './redis-commands.js';
import { escapeGlob, scanKeys } from './scan-keys.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    nostrInbound(inbound: string, delta: string, id: Buffer, record: string): Result<number, Context>;
    nostrInboundMany(numberOfKeys: number, ...keysThenArguments: (string | Buffer)[]): Result<number, Context>;
    nostrInboundReadManyBuffer(numberOfKeys: number, ...keys: string[]): Result<Buffer[][], Context>;
    nostrNotify(records: string, order: string, delta: string, id: Buffer, place: Buffer, look: string, ...tokens: string[]): Result<number, Context>;
    nostrNotifyMany(numberOfKeys: number, ...keysThenArguments: (string | Buffer)[]): Result<number, Context>;
    nostrNotifyFollows(prefix: string, token: string, packed: Buffer): Result<number, Context>;
    nostrNotificationsPageBuffer(order: string, limit: string, ...bounds: Buffer[]): Result<Buffer[], Context>;
    nostrNotificationCounts(order: string, ...lettersAndBounds: (string | Buffer)[]): Result<number[], Context>;
  }
}

/** A pubkey's tag in its keys (keys.ts: 43 characters of base64url). */
const tagOf = (pubkey: string) => Buffer.from(pubkey, 'hex').toString('base64url');

/** After every place of a type's range: a place's first byte is at most 0x1f (created_at below 2^53). */
const PAST_PLACES = Buffer.from([0xff]);

/** After every member of one place: a member holds at most 4 bytes after its place (NOTIFY_SCRIPT). */
const PAST_PLACE = Buffer.alloc(5, 0xff);

/** A member's letter and place (40 bytes), then, for a target's token, the target's first 4 bytes. */
const PLACE_END = 40;

/** The token a member says where the recipient holds no record of its event (NOTIFY_SCRIPT). */
function tokenOfMember(member: Buffer): string {
  const letter = String.fromCharCode(member[0] as number);
  return member.length > PLACE_END ? letter + member.toString('hex', PLACE_END, PLACE_END + 4) : letter;
}

/** Writes per INBOUND_MANY or NOTIFY_MANY call at most: a script runs alone on its node, so a long one holds it. */
const MANY_PER_CALL = 500;

/** Follows per NOTIFY_FOLLOWS call at most (their writes are a few commands each). */
const FOLLOWS_PER_CALL = 2000;

/** A follow's one token (nostr/notifications.ts reasonToken of FOLLOW). */
const FOLLOW_TOKEN = 'F';

/** Reads the authors of servable events by id (undefined where not held, deleted or replaced). */
export type AuthorsOf = (ids: readonly string[]) => Promise<(string | undefined)[]>;

/** Reads servable events by id (undefined where not held, deleted or replaced). */
export type EventsOf = (ids: readonly string[]) => Promise<(NostrEvent | undefined)[]>;

/**
 * Reads the servable events that may notify about a target (its relations: replies, quotes, reposts,
 * reactions), a part at a time, each part handed to `each` (a target with many is never held at once).
 */
export type RelatedOf = (target: string, each: (events: NostrEvent[]) => void) => Promise<void>;

/** Targets whose relations a batch reads at once (a request to vanish removes hundreds). */
const GONE_AT_ONCE = 16;

/** A write of one inbound record (INBOUND_SCRIPT): added (1), taken away (-1), or dropped once delivered (0). */
interface InboundWrite {
  key: string;
  id: Buffer;
  record: string;
  delta: 1 | -1 | 0;
}

interface NotifyWrite {
  recipient: string;
  id: Buffer;
  place: Buffer;
  /** The letters of every reason the event has for anyone (NOTIFY_SCRIPT's look). */
  look: string;
  tokens: string[];
  delta: 1 | -1;
}

/**
 * The notification writes of a batch of events, gathered while the batch is related and sent once
 * (flush): on one Redis, a few INBOUND_MANY, INBOUND_READ_MANY and NOTIFY_MANY calls for the whole
 * batch rather than a dozen commands per note that mentions ten people (that was most of an
 * import's time); on a cluster, whose scripts keep to one slot, one call per key.
 */
export class NotificationWrites {
  readonly direct: NotifyWrite[] = [];
  /**
   * A follow list's follows (its one reason per pubkey it names, `F`), where the list has no other
   * reason (no quote: NOTIFY's fast path), kept per list: on one Redis
   * sent packed (NOTIFY_FOLLOWS: a list names a thousand pubkeys, and seven arguments each were most
   * of an import of lists), on a cluster as direct writes.
   */
  readonly follows: { id: Buffer; place: Buffer; delta: 1 | -1; recipients: string[] }[] = [];
  /** Events with target reasons: their inbound records, then their targets' authors. */
  readonly related: { event: NostrEvent; targets: Map<string, string>; id: Buffer; place: Buffer; look: string; delta: 1 | -1 }[] = [];
  /** Every event of the batch as a target: its inbound records, read after it was stored or removed. */
  readonly asTargets: { event: NostrEvent; delta: 1 | -1 }[] = [];

  add(event: NostrEvent, delta: 1 | -1): void {
    const reasons = notificationReasonsOf(event);
    const { direct, targets } = reasons;
    const id = Buffer.from(event.id, 'hex');
    const place = notificationPlace({ createdAt: event.created_at, id: event.id });
    const look = reasonLetters(reasons);
    if (look === FOLLOW_TOKEN) this.follows.push({ id, place, delta, recipients: [...direct.keys()] });
    else for (const [recipient, tokens] of direct) this.direct.push({ recipient, id, place, look, tokens, delta });
    if (targets.size > 0) this.related.push({ event, targets, id, place, look, delta });
    this.asTargets.push({ event, delta });
  }
}

/**
 * The notification index in Redis (store/notification-index.ts): an event's inbound records in its
 * targets' slots (`ni:{<id>}`), a recipient's records and page order in the recipient's slot
 * (`nr:`, `nz:`), each written by a script over one slot on a cluster (or many slots' in one call on
 * one Redis). An event's side writes its inbound records before it reads whose its targets are; a
 * target's side reads its inbound records after the target is stored or gone: whichever comes last
 * sees the other.
 */
export class RedisNotificationIndex implements NotificationIndex {
  private readonly many: boolean;

  constructor(
    private readonly client: RedisClient,
    private readonly commands: RedisCommands,
    private readonly keys: RedisKeys,
    private readonly prefix: string,
    private readonly authorsOf: AuthorsOf,
    private readonly relatedOf: RelatedOf,
    /**
     * The authors of events by id whether servable or removed (a deletion's or a vanish's tombstone,
     * a replaced version's marker keep it): whom a removal tells where its target is gone.
     */
    private readonly removedAuthorsOf: AuthorsOf,
  ) {
    this.many = !(client instanceof Cluster);
    client.defineCommand('nostrInbound', { numberOfKeys: 1, lua: INBOUND_SCRIPT });
    client.defineCommand('nostrInboundMany', { lua: INBOUND_MANY_SCRIPT });
    client.defineCommand('nostrInboundReadMany', { lua: INBOUND_READ_MANY_SCRIPT });
    client.defineCommand('nostrNotify', { numberOfKeys: 2, lua: NOTIFY_SCRIPT });
    client.defineCommand('nostrNotifyMany', { lua: NOTIFY_MANY_SCRIPT });
    client.defineCommand('nostrNotifyFollows', { numberOfKeys: 0, lua: NOTIFY_FOLLOWS_SCRIPT });
    client.defineCommand('nostrNotificationsPage', { numberOfKeys: 1, lua: NOTIFICATIONS_PAGE_SCRIPT });
    client.defineCommand('nostrNotificationCounts', { numberOfKeys: 1, lua: NOTIFICATION_COUNTS_SCRIPT });
  }

  /** An event's transition (stored +1, gone -1), as the notifying event and as a target: gathered into `writes`, else sent now. */
  async relate(event: NostrEvent, delta: 1 | -1, writes?: NotificationWrites): Promise<void> {
    const batch = writes ?? new NotificationWrites();
    batch.add(event, delta);
    if (!writes) await this.flush(batch);
  }

  /**
   * Sends a batch's writes (store/notification-index.ts has the rule). An event's side: a removal's
   * tombstones in its targets' inbound records first; then whose its targets are; an addition whose
   * target is not servable leaves an inbound record and looks again (a target stored meanwhile
   * drains it, or the second look finds it: whichever comes last sees the other), and a record the
   * second look delivers goes. The batch's events as targets: their inbound records, read once
   * they are stored or gone, delivered and dropped; a target gone takes back the reasons of the
   * events its relations name (the batch's events related before this: RedisRelationIndex). Then
   * the recipients' writes.
   */
  async flush(batch: NotificationWrites): Promise<void> {
    const recordsOf = (writes: NotificationWrites['related'], delta: 1 | -1 | 0, only?: (target: string) => boolean) =>
      writes.flatMap(({ event, targets, id }) => [...targets].filter(([target]) => !only || only(target)).map(([target, letters]) => ({ key: this.keys.inbound(target), id, record: inboundValue(event, letters), delta })));
    // The batch's own records and relations are read at once (the events are stored or gone already).
    const drained = this.readInbound(batch.asTargets.map(({ event }) => this.keys.inbound(event.id)));
    drained.catch(() => {});
    const notify: NotifyWrite[] = [...batch.direct];
    const related = this.removedTargets(
      batch.asTargets.filter(({ delta }) => delta < 0).map(({ event }) => event),
      notify,
    );
    related.catch(() => {});
    const removing = batch.related.filter(({ delta }) => delta < 0);
    await this.sendInbound(recordsOf(removing, -1));
    const authorOf = await this.authorsByTarget(batch.related);
    // A removal tells its target's author even where the target is gone: that target's writer may
    // have read the target's records before this removal's tombstone, and its relations after this
    // removal took the event out of them (both gone at once, two writers). A removal of what was
    // never told leaves a tombstone only.
    const removedAuthorOf = await this.authorsByTarget(removing, (target) => authorOf.get(target) === undefined, this.removedAuthorsOf);
    const tell = (writes: NotificationWrites['related'], authors: Map<string, string | undefined>) => {
      for (const { event, targets: reasons, id, place, look, delta } of writes) {
        for (const [target, letters] of reasons) {
          const author = authors.get(target);
          if (author !== undefined && author !== event.pubkey) notify.push({ recipient: author, id, place, look, tokens: tokensOfInbound(letters, target), delta });
        }
      }
    };
    tell(batch.related, authorOf);
    tell(removing, removedAuthorOf);
    // Additions about a target not servable yet: a record that waits for it, then a second look.
    const waiting = batch.related.filter(({ delta, targets }) => delta > 0 && [...targets.keys()].some((target) => authorOf.get(target) === undefined));
    const drops: InboundWrite[] = [];
    if (waiting.length > 0) {
      const unknown = (target: string) => authorOf.get(target) === undefined;
      await this.sendInbound(recordsOf(waiting, 1, unknown));
      const authorNow = await this.authorsByTarget(waiting, unknown);
      const found = (target: string) => unknown(target) && authorNow.get(target) !== undefined;
      tell(
        waiting.map((write) => ({ ...write, targets: new Map([...write.targets].filter(([target]) => found(target))) })),
        authorNow,
      );
      drops.push(...recordsOf(waiting, 0, found));
    }
    const [held] = await Promise.all([drained, related]);
    batch.asTargets.forEach(({ event, delta }, index) => {
      const fields = held[index] ?? [];
      const own = authorPrefixOf(event.pubkey);
      for (let at = 0; at + 1 < fields.length; at += 2) {
        const source = fields[at] as Buffer;
        const value = fields[at + 1] as Buffer;
        const record = readInboundValue(value.toString());
        if (!record || source.length !== 32) continue;
        // Delivered (or its author's own): it waits no more.
        if (delta > 0 && !record.removed) drops.push({ key: this.keys.inbound(event.id), id: source, record: value.toString(), delta: 0 });
        if (record.authorPrefix === own) continue;
        const place = notificationPlace({ createdAt: record.createdAt, id: source.toString('hex') });
        notify.push({ recipient: event.pubkey, id: source, place, look: ANY_LETTER, tokens: tokensOfInbound(record.letters, event.id), delta: drainDelta(record, delta) });
      }
    });
    await Promise.all([this.sendNotify(notify), this.sendFollows(batch.follows), this.sendInbound(drops)]);
  }

  /** The authors of the targets of `writes` (those `only` keeps), by target, as `read` reads them: undefined where not servable. */
  private async authorsByTarget(writes: NotificationWrites['related'], only?: (target: string) => boolean, read = this.authorsOf): Promise<Map<string, string | undefined>> {
    const targets = [...new Set(writes.flatMap(({ targets }) => [...targets.keys()]))].filter((target) => !only || only(target));
    const authors = targets.length > 0 ? await read(targets) : [];
    return new Map(targets.map((target, index) => [target, authors[index]]));
  }

  /** Targets gone: the reasons about each of the events its relations name, taken back from its author (GONE_AT_ONCE targets at a time). */
  private async removedTargets(gone: readonly NostrEvent[], notify: NotifyWrite[]): Promise<void> {
    for (let start = 0; start < gone.length; start += GONE_AT_ONCE) {
      await Promise.all(
        gone.slice(start, start + GONE_AT_ONCE).map((target) =>
          this.relatedOf(target.id, (events) => {
            for (const { event, letters, look } of reasonsAbout(target, events)) {
              const place = notificationPlace({ createdAt: event.created_at, id: event.id });
              notify.push({ recipient: target.pubkey, id: Buffer.from(event.id, 'hex'), place, look, tokens: tokensOfInbound(letters, target.id), delta: -1 });
            }
          }),
        ),
      );
    }
  }

  /**
   * A batch's follow lists' follows: on one Redis packed into NOTIFY_FOLLOWS calls (per list its
   * change, id and place, then the recipients' key tags), on a cluster one NOTIFY each.
   */
  private async sendFollows(lists: NotificationWrites['follows']): Promise<void> {
    if (lists.length === 0) return;
    if (!this.many) {
      await this.sendNotify(lists.flatMap(({ id, place, delta, recipients }) => recipients.map((recipient) => ({ recipient, id, place, look: FOLLOW_TOKEN, tokens: [FOLLOW_TOKEN], delta }))));
      return;
    }
    const calls: Promise<number>[] = [];
    let parts: Buffer[] = [];
    let follows = 0;
    const send = () => {
      if (parts.length > 0) calls.push(this.client.nostrNotifyFollows(this.prefix, FOLLOW_TOKEN, Buffer.concat(parts)));
      parts = [];
      follows = 0;
    };
    for (const { id, place, delta, recipients } of lists) {
      for (let start = 0; start < recipients.length; start += FOLLOWS_PER_CALL) {
        const part = recipients.slice(start, start + FOLLOWS_PER_CALL);
        if (follows + part.length > FOLLOWS_PER_CALL) send();
        const head = Buffer.alloc(76);
        head.writeInt8(delta, 0);
        id.copy(head, 1);
        place.copy(head, 33);
        head.writeUInt32BE(part.length, 72);
        parts.push(head, Buffer.from(part.map(tagOf).join('')));
        follows += part.length;
      }
    }
    send();
    await this.countNotifications(calls);
  }

  private async sendInbound(writes: InboundWrite[]): Promise<void> {
    if (writes.length === 0) return;
    if (!this.many) {
      await Promise.all(writes.map(({ key, id, record, delta }) => this.client.nostrInbound(key, String(delta), id, record)));
      return;
    }
    const calls: Promise<number>[] = [];
    for (let start = 0; start < writes.length; start += MANY_PER_CALL) {
      const part = writes.slice(start, start + MANY_PER_CALL);
      calls.push(this.client.nostrInboundMany(part.length, ...part.map(({ key }) => key), ...part.flatMap(({ id, record, delta }) => [String(delta), id, record])));
    }
    await Promise.all(calls);
  }

  /** Each key's fields and values, alternating (field names are 32 bytes of an id: read as buffers). */
  private async readInbound(keys: string[]): Promise<Buffer[][]> {
    if (keys.length === 0) return [];
    if (!this.many) return Promise.all(keys.map((key) => this.client.callBuffer('HGETALL', key) as Promise<Buffer[]>));
    const parts: Promise<Buffer[][]>[] = [];
    for (let start = 0; start < keys.length; start += MANY_PER_CALL) parts.push(this.client.nostrInboundReadManyBuffer(Math.min(MANY_PER_CALL, keys.length - start), ...keys.slice(start, start + MANY_PER_CALL)));
    return (await Promise.all(parts)).flat();
  }

  private async sendNotify(writes: NotifyWrite[]): Promise<void> {
    if (writes.length === 0) return;
    const calls: Promise<number>[] = [];
    if (!this.many) {
      for (const { recipient, id, place, look, tokens, delta } of writes) {
        const { records, order } = this.keys.notifications(recipient);
        calls.push(this.client.nostrNotify(records, order, String(delta), id, place, look, ...tokens));
      }
    } else {
      // One call per MANY_PER_CALL writes (one Redis: their keys are in many slots).
      for (let start = 0; start < writes.length; start += MANY_PER_CALL) {
        const part = writes.slice(start, start + MANY_PER_CALL);
        const keys = part.flatMap(({ recipient }) => {
          const { records, order } = this.keys.notifications(recipient);
          return [records, order];
        });
        calls.push(this.client.nostrNotifyMany(keys.length, ...keys, ...part.flatMap(({ id, place, look, tokens, delta }) => [String(delta), id, place, look, String(tokens.length), ...tokens])));
      }
    }
    await this.countNotifications(calls);
  }

  /**
   * The notifications held (relation-index.ts totals), changed by what the scripts that ran
   * changed; a failed one fails the batch after (its events are written again).
   */
  private async countNotifications(calls: Promise<number>[]): Promise<void> {
    const outcomes = await Promise.allSettled(calls);
    const changed = outcomes.reduce((sum, outcome) => sum + (outcome.status === 'fulfilled' ? Number(outcome.value) : 0), 0);
    if (changed !== 0) await this.client.hincrby(this.keys.totals, 'notifications', changed);
    for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
  }

  notifications(recipient: string, types: readonly NotificationType[], after: ReplyPosition | null, first: number): Promise<NotificationEntry[]> {
    return this.commands.run(async () => {
      const { records, order } = this.keys.notifications(recipient);
      const from = after ? notificationPlace(after) : undefined;
      const letters = types.map((type) => TYPE_LETTERS[type]);
      // Each type's range, through the order's buckets (lua-scripts.ts ORDER_FUNCTIONS).
      const bounds = letters.flatMap((letter) => [from ? Buffer.concat([Buffer.from(`(${letter}`), from, PAST_PLACE]) : Buffer.from(`[${letter}`), Buffer.concat([Buffer.from(`(${letter}`), PAST_PLACES])]);
      const ranges = await this.client.nostrNotificationsPageBuffer(order, String(Math.min(first, 2 ** 31 - 1)), ...bounds);
      const members = ranges
        .sort((a, b) => Buffer.compare(a.subarray(1, PLACE_END), b.subarray(1, PLACE_END)))
        .slice(0, first);
      if (members.length === 0) return [];
      const ids = members.map((member) => member.subarray(8, PLACE_END));
      const held = await this.client.hmgetBuffer(records, ...ids);
      const entries: NotificationEntry[] = [];
      members.forEach((member, index) => {
        const place = member.subarray(1, PLACE_END);
        // No record: its one token is what the member says (NOTIFY_SCRIPT).
        const record = held[index]?.toString() ?? tokenOfMember(member);
        const tokens = record.split(' ').filter((token) => token !== '' && !token.startsWith('-'));
        const decided = typeOfTokens(tokens);
        if (!decided) return;
        const position = replyPositionOfBytes(Buffer.concat([place, Buffer.alloc(4)]));
        entries.push({ id: position.id, createdAt: 2 ** 53 - 1 - position.createdAt, type: decided.type, token: decided.token });
      });
      return entries;
    });
  }

  notificationCounts(recipient: string, since?: number): Promise<NotificationCounts> {
    return this.commands.run(async () => {
      const { order } = this.keys.notifications(recipient);
      // created_at >= since: places before (since - 1)'s, whose first 7 bytes are its mirrored time.
      // Every created_at is at least 0: since 0 (or none) is all of them.
      const bound = since === undefined || since <= 0 ? '' : notificationPlace({ createdAt: since - 1, id: '00'.repeat(32) }).subarray(0, 7);
      const counts = await this.client.nostrNotificationCounts(order, ...NOTIFICATION_TYPES.flatMap((type) => [TYPE_LETTERS[type], bound]));
      const result = { ...NO_NOTIFICATION_COUNTS };
      NOTIFICATION_TYPES.forEach((type, index) => {
        result[type] = Number(counts[index]);
      });
      return result;
    });
  }

  async *notificationRecipients(): AsyncIterable<string[]> {
    const start = `${this.prefix}nz:{`.length;
    for await (const keys of scanKeys(this.client, this.commands, `${escapeGlob(this.prefix)}nz:{*}`)) {
      yield keys.map((key) => Buffer.from(key.slice(start, -1), 'base64url').toString('hex'));
    }
  }
}
