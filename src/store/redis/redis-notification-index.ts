import type { Result } from 'ioredis';
import type { NostrEvent } from '../../nostr/event.js';
import { NOTIFICATION_TYPES, type NotificationType, TYPE_LETTERS, typeOfTokens } from '../../nostr/notifications.js';
import {
  authorPrefixOf,
  inboundValue,
  NO_NOTIFICATION_COUNTS,
  type NotificationCounts,
  type NotificationEntry,
  type NotificationIndex,
  notificationPlace,
  notificationReasonsOf,
  readInboundValue,
  tokensOfInbound,
} from '../notification-index.js';
import { type ReplyPosition, replyPositionOfBytes } from '../relation-index.js';
import type { RedisKeys } from './keys.js';
import { INBOUND_SCRIPT, NOTIFY_SCRIPT } from './lua-scripts.js';
import type { RedisClient } from './mget-by-slot.js';
import type { RedisCommands } from './redis-commands.js';
import { escapeGlob, scanKeys } from './scan-keys.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    nostrInbound(inbound: string, delta: string, id: Buffer, record: string): Result<number, Context>;
    nostrNotify(records: string, order: string, delta: string, id: Buffer, place: Buffer, ...tokens: string[]): Result<number, Context>;
  }
}

/** After every place of a type's range: a place's first byte is at most 0x1f (created_at below 2^53). */
const PAST_PLACES = Buffer.from([0xff]);

/** Reads the authors of servable events by id (undefined where not held, deleted or replaced). */
export type AuthorsOf = (ids: readonly string[]) => Promise<(string | undefined)[]>;

/**
 * The notification index in Redis (store/notification-index.ts): an event's inbound records in its
 * targets' slots (`ni:{<id>}`), a recipient's records and page order in the recipient's slot
 * (`nr:`, `nz:`), each written by a script over one slot, so that it works unchanged on a cluster.
 * An event's side writes its inbound records before it reads whose its targets are; a target's side
 * reads its inbound records after the target is stored or gone: whichever comes last sees the other.
 */
export class RedisNotificationIndex implements NotificationIndex {
  constructor(
    private readonly client: RedisClient,
    private readonly commands: RedisCommands,
    private readonly keys: RedisKeys,
    private readonly prefix: string,
    private readonly authorsOf: AuthorsOf,
  ) {
    client.defineCommand('nostrInbound', { numberOfKeys: 1, lua: INBOUND_SCRIPT });
    client.defineCommand('nostrNotify', { numberOfKeys: 2, lua: NOTIFY_SCRIPT });
  }

  /** An event's transition (stored +1, gone -1), as the notifying event and as a target. */
  async relate(event: NostrEvent, delta: 1 | -1): Promise<void> {
    const { direct, targets } = notificationReasonsOf(event);
    const id = Buffer.from(event.id, 'hex');
    const place = notificationPlace({ createdAt: event.created_at, id: event.id });
    const writes: Promise<unknown>[] = [];
    for (const [recipient, tokens] of direct) writes.push(this.notify(recipient, id, place, tokens, delta));
    if (targets.size > 0) writes.push(this.notifyTargetAuthors(event, targets, id, place, delta));
    writes.push(this.notifyAsTarget(event, delta));
    await Promise.all(writes);
  }

  private notify(recipient: string, id: Buffer, place: Buffer, tokens: readonly string[], delta: 1 | -1): Promise<number> {
    const { records, order } = this.keys.notifications(recipient);
    return this.client.nostrNotify(records, order, String(delta), id, place, ...tokens);
  }

  /** The event's inbound records first, then its targets' authors read: each known one gets the reasons about its event. */
  private async notifyTargetAuthors(event: NostrEvent, targets: ReadonlyMap<string, string>, id: Buffer, place: Buffer, delta: 1 | -1): Promise<void> {
    const ids = [...targets.keys()];
    await Promise.all(ids.map((target) => this.client.nostrInbound(this.keys.inbound(target), String(delta), id, inboundValue(event, targets.get(target) as string))));
    const authors = await this.authorsOf(ids);
    await Promise.all(
      ids.map((target, index) => {
        const author = authors[index];
        if (author === undefined || author === event.pubkey) return undefined;
        return this.notify(author, id, place, tokensOfInbound(targets.get(target) as string, target), delta);
      }),
    );
  }

  /** The event as a target: the reasons of every event already related to it go to (or from) its author. */
  private async notifyAsTarget(event: NostrEvent, delta: 1 | -1): Promise<void> {
    // Field names are 32 bytes of an id: read as buffers (hgetallBuffer would make them strings).
    const held = (await this.client.callBuffer('HGETALL', this.keys.inbound(event.id))) as Buffer[];
    const own = authorPrefixOf(event.pubkey);
    const writes: Promise<number>[] = [];
    for (let index = 0; index + 1 < held.length; index += 2) {
      const source = held[index] as Buffer;
      const record = readInboundValue((held[index + 1] as Buffer).toString());
      if (!record || record.authorPrefix === own || source.length !== 32) continue;
      const sourceId = source.toString('hex');
      writes.push(this.notify(event.pubkey, source, notificationPlace({ createdAt: record.createdAt, id: sourceId }), tokensOfInbound(record.letters, event.id), delta));
    }
    await Promise.all(writes);
  }

  notifications(recipient: string, types: readonly NotificationType[], after: ReplyPosition | null, first: number): Promise<NotificationEntry[]> {
    return this.commands.run(async () => {
      const { records, order } = this.keys.notifications(recipient);
      const from = after ? notificationPlace(after) : undefined;
      const letters = types.map((type) => TYPE_LETTERS[type]);
      const ranges = await Promise.all(
        letters.map((letter) => {
          const low = from ? Buffer.concat([Buffer.from(`(${letter}`), from]) : Buffer.from(`[${letter}`);
          return this.client.zrangebylexBuffer(order, low, Buffer.concat([Buffer.from(`(${letter}`), PAST_PLACES]), 'LIMIT', 0, first);
        }),
      );
      const places = ranges
        .flat()
        .map((member) => member.subarray(1))
        .sort(Buffer.compare)
        .slice(0, first);
      if (places.length === 0) return [];
      const ids = places.map((place) => place.subarray(7, 39));
      const held = await this.client.hmgetBuffer(records, ...ids);
      const entries: NotificationEntry[] = [];
      places.forEach((place, index) => {
        const tokens = (held[index]?.toString() ?? '').split(' ').filter((token) => token !== '' && !token.startsWith('-'));
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
      const bound = since === undefined ? PAST_PLACES : notificationPlace({ createdAt: Math.max(0, since - 1), id: '00'.repeat(32) }).subarray(0, 7);
      const counts = await Promise.all(
        NOTIFICATION_TYPES.map((type) => this.client.zlexcount(order, Buffer.from(`[${TYPE_LETTERS[type]}`), Buffer.concat([Buffer.from(`(${TYPE_LETTERS[type]}`), bound]))),
      );
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

  /** For `relations check`: every notification of a recipient. */
  async allNotifications(recipient: string): Promise<NotificationEntry[]> {
    const all: NotificationEntry[] = [];
    let after: ReplyPosition | null = null;
    for (;;) {
      const page = await this.notifications(recipient, NOTIFICATION_TYPES, after, 1000);
      all.push(...page);
      const last = page[page.length - 1];
      if (page.length < 1000 || !last) return all;
      after = { createdAt: last.createdAt, id: last.id };
    }
  }
}
