import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTIFICATION_TYPES } from '../src/nostr/notifications.js';
import { redisKeys } from '../src/store/redis/keys.js';
import { RedisCommands } from '../src/store/redis/redis-commands.js';
import { RedisNotificationIndex } from '../src/store/redis/redis-notification-index.js';
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

function index(prefix: string, targetHeld: () => boolean): RedisNotificationIndex {
  const keys = redisKeys(prefix);
  return new RedisNotificationIndex(opened.client, new RedisCommands(opened.client, 5000), keys, prefix, async (ids) => ids.map(() => (targetHeld() ? target.pubkey : undefined)));
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
