import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { NOTIFICATION_TYPES } from '../src/nostr/notifications.js';
import { redisKeys } from '../src/store/redis/keys.js';
import { checkRelations } from '../src/store/relation-check.js';
import { RedisCommands } from '../src/store/redis/redis-commands.js';
import { type RelatedOf, RedisNotificationIndex } from '../src/store/redis/redis-notification-index.js';
import { NO_NOTIFICATION_COUNTS, notificationPlace } from '../src/store/notification-index.js';
import { deletion } from './support/deletion-conformance.js';
import { pubkeyOf, signed } from './support/events.js';
import { createTestStore, type TestStore } from './support/test-store.js';

// The two writers' races of the Redis notification index (store/notification-index.ts), played
// in the orders a cluster allows, by a writer whose reads of "whose is the target" are scripted:
// whatever the order, the figures end as the rules say.

const T = 1_700_000_000;
const target = signed('race-v', { created_at: T, content: "V's note" });
const reaction = signed('race-fan', { kind: 7, created_at: T + 1, content: '+', tags: [['e', target.id]] });

let opened: TestStore;
beforeAll(async () => {
  opened = await createTestStore();
});
afterAll(async () => {
  await opened?.cleanup();
});

/**
 * `related`: what the target's relations name (RelationIndex.relatedIds), read when a target goes;
 * `removedAuthor`: whose the target was once it is gone (its tombstone says), if it was ever stored.
 */
function index(prefix: string, targetHeld: () => boolean, related: () => NostrEvent[] = () => [], removedAuthor: () => string | undefined = () => undefined): RedisNotificationIndex {
  const keys = redisKeys(prefix);
  return new RedisNotificationIndex(
    opened.client,
    new RedisCommands(opened.client, 5000),
    keys,
    prefix,
    async (ids) => ids.map(() => (targetHeld() ? target.pubkey : undefined)),
    async (_target, each) => each(related()),
    async (ids) => ids.map(() => (targetHeld() ? target.pubkey : removedAuthor())),
  );
}

describe('Redis notifications under two writers', () => {
  it('the event and its target removed at once: each writer sees the other gone, and the reasons still go', async () => {
    let held = true;
    const notifications = index(`${opened.prefix}race1:`, () => held);
    await notifications.relate(target, 1);
    await notifications.relate(reaction, 1);
    expect((await notifications.notifications(pubkeyOf('race-v'), NOTIFICATION_TYPES, null, 10)).map((entry) => entry.type)).toEqual(['REACTION']);
    // Writer 1 removed the target (it is gone for every read from now on), writer 2 removes the
    // reaction: its side finds the target gone and sends nothing; then writer 1's side reads the
    // target's inbound records, the reaction's already marked removed.
    held = false;
    await notifications.relate(reaction, -1);
    await notifications.relate(target, -1);
    expect(await notifications.notifications(pubkeyOf('race-v'), NOTIFICATION_TYPES, null, 10)).toEqual([]);
    expect((await notifications.notificationCounts(pubkeyOf('race-v'))).REACTION).toBe(0);
  });

  it('an addition that arrives after its removal, and one sent twice, change nothing', async () => {
    let held = true;
    const notifications = index(`${opened.prefix}race2:`, () => held);
    await notifications.relate(target, 1);
    await notifications.relate(reaction, -1);
    await notifications.relate(reaction, 1);
    expect(await notifications.notifications(pubkeyOf('race-v'), NOTIFICATION_TYPES, null, 10)).toEqual([]);
    const other = signed('race-fan-2', { kind: 7, created_at: T + 2, content: '+', tags: [['e', target.id]] });
    await notifications.relate(other, 1);
    await notifications.relate(other, 1);
    held = false;
    expect((await notifications.notificationCounts(pubkeyOf('race-v'))).REACTION).toBe(1);
  });
});

describe('inbound records wait only for a target not servable yet (Redis)', () => {
  it('a reaction to a stored note notifies at once and keeps no record; the note gone, its relations say what goes', async () => {
    const prefix = `${opened.prefix}wait1:`;
    let held = true;
    const notifications = index(prefix, () => held, () => [reaction]);
    await notifications.relate(target, 1);
    await notifications.relate(reaction, 1);
    expect((await notifications.notifications(pubkeyOf('race-v'), NOTIFICATION_TYPES, null, 10)).map(({ id, type }) => [id, type])).toEqual([[reaction.id, 'REACTION']]);
    expect(await opened.client.exists(redisKeys(prefix).inbound(target.id))).toBe(0);
    held = false;
    await notifications.relate(target, -1);
    expect(await notifications.notifications(pubkeyOf('race-v'), NOTIFICATION_TYPES, null, 10)).toEqual([]);
    expect(await notifications.notificationCounts(pubkeyOf('race-v'))).toEqual(NO_NOTIFICATION_COUNTS);
    // The reaction's addition replayed by a writer that saw the note before it went: nothing comes back.
    held = true;
    await notifications.relate(reaction, 1);
    expect(await notifications.notifications(pubkeyOf('race-v'), NOTIFICATION_TYPES, null, 10)).toEqual([]);
  });

  it('a reaction that came first waits in a record, which goes once the note arrives and is told', async () => {
    const prefix = `${opened.prefix}wait2:`;
    let held = false;
    const notifications = index(prefix, () => held);
    const inbound = redisKeys(prefix).inbound(target.id);
    await notifications.relate(reaction, 1);
    expect(await opened.client.hlen(inbound)).toBe(1);
    expect(await notifications.notifications(pubkeyOf('race-v'), NOTIFICATION_TYPES, null, 10)).toEqual([]);
    held = true;
    await notifications.relate(target, 1);
    expect((await notifications.notifications(pubkeyOf('race-v'), NOTIFICATION_TYPES, null, 10)).map(({ type }) => type)).toEqual(['REACTION']);
    expect(await opened.client.exists(inbound)).toBe(0);
  });

  it('a note stored between the two looks of a reaction\'s writer: the second look tells it and the record goes', async () => {
    const prefix = `${opened.prefix}wait3:`;
    let looks = 0;
    // The first look finds no note, every later one finds it (another writer stored it meanwhile,
    // and drained the inbound records before this one was written).
    const notifications = index(prefix, () => looks++ > 0);
    await notifications.relate(reaction, 1);
    expect(looks).toBe(2);
    expect((await notifications.notifications(pubkeyOf('race-v'), NOTIFICATION_TYPES, null, 10)).map(({ type }) => type)).toEqual(['REACTION']);
    expect(await opened.client.exists(redisKeys(prefix).inbound(target.id))).toBe(0);
  });

  it("a removal's record stays (a tombstone), and a record changed since it was read is not dropped", async () => {
    const prefix = `${opened.prefix}wait4:`;
    const notifications = index(prefix, () => false);
    const inbound = redisKeys(prefix).inbound(target.id);
    await notifications.relate(reaction, -1);
    const [tombstone] = await opened.client.hvals(inbound);
    expect(tombstone?.startsWith('-')).toBe(true);
    // A drop of the live record (what a target's writer read before the removal came) leaves it.
    const id = Buffer.from(reaction.id, 'hex');
    expect(await opened.client.nostrInbound(inbound, '0', id, (tombstone as string).slice(1))).toBe(0);
    expect(await opened.client.hget(inbound, id)).toBe(tombstone);
  });
});

describe('a note and its reaction deleted at once by two writers (Redis)', () => {
  // The reaction was told at once (no inbound record). Writer A deletes the note and reads its
  // inbound records (none); writer B then deletes the reaction (its tombstone in the note's records
  // comes too late for A, and it leaves the note's relations) and finds the note gone; A then reads
  // the note's relations, which no longer name the reaction. B's side tells the note's author
  // anyway: the note's tombstone keeps whose it was (found by review).
  it('leave no notification, and relations check agrees', async () => {
    const subject = await createTestStore();
    const other = await subject.reopen();
    try {
      const note = signed('gone-v', { created_at: T, content: "V's note" });
      const like = signed('gone-fan', { kind: 7, created_at: T + 1, content: '+', tags: [['e', note.id]] });
      await subject.store.putEvents([note]);
      await subject.store.putEvents([like]);
      expect((await subject.store.relations.notifications(note.pubkey, NOTIFICATION_TYPES, null, 10)).map(({ type }) => type)).toEqual(['REACTION']);
      const notifications = (subject.store.relations as unknown as { notificationIndex: { relatedOf: RelatedOf } }).notificationIndex;
      const relatedOf = notifications.relatedOf;
      notifications.relatedOf = async (target, each) => {
        await other.putEvents([deletion('gone-fan', { ids: [like.id] })]);
        return relatedOf(target, each);
      };
      try {
        await subject.store.putEvents([deletion('gone-v', { ids: [note.id] })]);
      } finally {
        notifications.relatedOf = relatedOf;
      }
      expect(await subject.store.relations.notifications(note.pubkey, NOTIFICATION_TYPES, null, 10)).toEqual([]);
      expect((await checkRelations(subject.store)).notificationDifferences).toEqual([]);
    } finally {
      await other.close();
      await subject.cleanup();
    }
  });
});

describe('an addition replayed after the removal (Redis)', () => {
  // Writer A stores a note's reply and reaction; writer B deletes them; writer A (or a third that
  // put them again and got `duplicate`) sends their additions after B's removals. An event once
  // removed never comes back, so the late additions must count nothing anywhere: the figures, the
  // reply list, the author's list and the notifications (lua-scripts.ts RELATE, ZAP, NOTE).
  it('a deleted reply and reaction, related again after their deletion, count nowhere', async () => {
    const subject = await createTestStore();
    try {
      const { store } = subject;
      const note = signed('replay-v', { created_at: T, content: 'note' });
      const reply = signed('replay-fan', { created_at: T + 1, content: 'reply', tags: [['e', note.id, '', 'root'], ['p', note.pubkey]] });
      const like = signed('replay-fan', { kind: 7, created_at: T + 2, content: '+', tags: [['e', note.id], ['p', note.pubkey]] });
      await store.putEvents([note, reply, like]);
      expect((await store.relations.stats([note.id]))[0]).toMatchObject({ replies: 1, reactions: { likes: 1 } });
      await store.putEvents([deletion('replay-fan', { ids: [reply.id, like.id] })]);
      await store.relations.relate(reply, 1);
      await store.relations.relate(like, 1);
      expect((await store.relations.stats([note.id]))[0]).toMatchObject({ replies: 0, threadReplies: 0, reactions: { likes: 0, pubkeys: 0 } });
      expect(await store.relations.allReplies(note.id)).toEqual([]);
      expect(Object.values(await store.relations.notificationCounts(note.pubkey)).reduce((sum, count) => sum + count, 0)).toBe(0);
      expect((await checkRelations(store)).differences).toEqual([]);
    } finally {
      await subject.cleanup();
    }
  });

  it("an event removed before its target arrives, then added by a writer that saw the target, notifies no one", async () => {
    // Writer B removes the reaction while the target is not stored yet (it tells no recipient);
    // the target arrives; writer A, which stored the reaction before B removed it, then finds the
    // target and adds the notification. The target's arrival leaves a removal with its author for
    // the removed record (notification-index.ts drainDelta), so A's addition comes too late.
    let held = false;
    const notifications = index(`${opened.prefix}race3:`, () => held);
    await notifications.relate(reaction, -1);
    held = true;
    await notifications.relate(target, 1);
    await notifications.relate(reaction, 1);
    expect(await notifications.notifications(pubkeyOf('race-v'), NOTIFICATION_TYPES, null, 10)).toEqual([]);
    expect((await notifications.notificationCounts(pubkeyOf('race-v'))).REACTION).toBe(0);
  });
});

describe('how Redis keeps a notification of one reason', () => {
  it('in its member alone (a target token: its letter, place and 4 bytes of the target); one written in the earlier form is read the same and rewritten', async () => {
    const prefix = `${opened.prefix}form1:`;
    const notifications = index(prefix, () => true);
    const { records, order } = redisKeys(prefix).notifications(pubkeyOf('race-v'));
    await notifications.relate(target, 1);
    await notifications.relate(reaction, 1);
    expect(await opened.client.hlen(records)).toBe(0);
    const members = await opened.client.zrangeBuffer(order, '0', '-1');
    expect(members.map((member) => member.toString('hex'))).toEqual([
      Buffer.concat([Buffer.from('K'), notificationPlace({ createdAt: reaction.created_at, id: reaction.id }), Buffer.from(target.id.slice(0, 8), 'hex')]).toString('hex'),
    ]);
    const read = await notifications.notifications(pubkeyOf('race-v'), NOTIFICATION_TYPES, null, 10);
    expect(read).toEqual([{ id: reaction.id, createdAt: reaction.created_at, type: 'REACTION', token: `K${target.id.slice(0, 8)}` }]);

    // The earlier form: a record of the token, and a member of the letter and place alone.
    const earlier = signed('race-fan-3', { kind: 7, created_at: T + 3, content: '+', tags: [['e', target.id]] });
    await opened.client.hset(records, Buffer.from(earlier.id, 'hex'), `K${target.id.slice(0, 8)}`);
    await opened.client.zadd(order, '0', Buffer.concat([Buffer.from('K'), notificationPlace({ createdAt: earlier.created_at, id: earlier.id })]));
    expect((await notifications.notifications(pubkeyOf('race-v'), NOTIFICATION_TYPES, null, 10)).map(({ id, type, token }) => [id, type, token])).toEqual([
      [earlier.id, 'REACTION', `K${target.id.slice(0, 8)}`],
      [reaction.id, 'REACTION', `K${target.id.slice(0, 8)}`],
    ]);
    // Taken away: its member goes whatever its form, and a tombstone stays.
    await notifications.relate(earlier, -1);
    await notifications.relate(reaction, -1);
    expect(await opened.client.zcard(order)).toBe(0);
    const tombstone = `-K${target.id.slice(0, 8)}`;
    expect(await opened.client.hmget(records, Buffer.from(earlier.id, 'hex'), Buffer.from(reaction.id, 'hex'))).toEqual([tombstone, tombstone]);
    expect(await notifications.notificationCounts(pubkeyOf('race-v'))).toEqual(NO_NOTIFICATION_COUNTS);
  });
});

describe('a follow list that also quotes (Redis)', () => {
  it('its follow, arriving after its quote (two writers), finds the quote alone in its member', async () => {
    const prefix = `${opened.prefix}listq0:`;
    index(prefix, () => true);
    const { records, order } = redisKeys(prefix).notifications(pubkeyOf('race-v'));
    const list = signed('race-lister', { kind: 3, created_at: T + 5, content: '', tags: [['p', target.pubkey], ['q', target.id]] });
    const id = Buffer.from(list.id, 'hex');
    const place = notificationPlace({ createdAt: list.created_at, id: list.id });
    // The target's writer drains the list's inbound record first (it cannot know the list's other
    // reasons: every letter), then the list's writer sends its follow.
    expect(await opened.client.nostrNotify(records, order, '1', id, place, 'ZRQOKMF', `Q${target.id.slice(0, 8)}`)).toBe(1);
    expect(await opened.client.nostrNotify(records, order, '1', id, place, 'FQ', 'F')).toBe(0);
    expect(await opened.client.zcard(order)).toBe(1);
    expect(await opened.client.hget(records, id)).toBe(`F Q${target.id.slice(0, 8)}`);
  });

  // A kind 3 may quote (a `q` tag): its follow and its quote of the same recipient's note are one
  // notification, the quote (first that fits), whichever side writes first; the note deleted, the
  // follow is left.
  for (const targetFirst of [true, false]) {
    it(`is one notification, a QUOTE, then a FOLLOW once the note is gone (the note stored ${targetFirst ? 'before' : 'after'} the list)`, async () => {
      let held = targetFirst;
      // The note's relations name the list (its quote), as the relation index would say once the note goes.
      const notifications = index(`${opened.prefix}listq${targetFirst ? 1 : 2}:`, () => held, () => [list]);
      const list = signed('race-lister', { kind: 3, created_at: T + 5, content: '', tags: [['p', target.pubkey], ['p', pubkeyOf('race-other')], ['q', target.id]] });
      if (targetFirst) await notifications.relate(target, 1);
      await notifications.relate(list, 1);
      if (!targetFirst) {
        held = true;
        await notifications.relate(target, 1);
      }
      // Sent again (a replayed write): its follow finds the quote's member.
      await notifications.relate(list, 1);
      const read = await notifications.notifications(pubkeyOf('race-v'), NOTIFICATION_TYPES, null, 10);
      expect(read.map(({ id, type }) => [id, type])).toEqual([[list.id, 'QUOTE']]);
      expect(await notifications.notificationCounts(pubkeyOf('race-v'))).toEqual({ ...NO_NOTIFICATION_COUNTS, QUOTE: 1 });
      expect((await notifications.notifications(pubkeyOf('race-other'), NOTIFICATION_TYPES, null, 10)).map(({ type }) => type)).toEqual(['FOLLOW']);
      held = false;
      await notifications.relate(target, -1);
      expect((await notifications.notifications(pubkeyOf('race-v'), NOTIFICATION_TYPES, null, 10)).map(({ id, type }) => [id, type])).toEqual([[list.id, 'FOLLOW']]);
      expect(await notifications.notificationCounts(pubkeyOf('race-v'))).toEqual({ ...NO_NOTIFICATION_COUNTS, FOLLOW: 1 });
    });
  }
});
