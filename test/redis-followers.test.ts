import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FollowWrites } from '../src/store/follow-index.js';
import { redisKeys } from '../src/store/redis/keys.js';
import type { RedisRelationIndex } from '../src/store/redis/redis-relation-index.js';
import { createTestStore, type TestStore } from './support/test-store.js';

// The Redis followers' logs, buckets and crowded sorted sets (src/store/redis/lua-scripts.ts
// FOLLOW, FOLLOWERS_PAGE) against a plain model: each follower's changes added up per followed
// pubkey (a follower follows at 1 or more; the count is the sum of all changes). Bucket sizes of 1
// to 3 make most paths run within a few dozen followers: moves to more buckets (depth 2 past 16
// followers at size 1) and back, folds, crowded buckets (followers ground to share their first
// bytes), sums of 2 and -1, and records sent out of order (a bucket's records in several runs), as
// well as grouped as FollowWrites sends them; then followers set to follow or not, as a heal of a lost
// reply sets them (FOLLOW_SET). Depths 3 and 4 take thousands of followers: the second test. (A crowded set's odd sums beside it: redis-event-store.test.ts.)

const RUNS = Number(process.env.FUZZ_RUNS ?? 40);

const SIZES = [1, 2, 3];
/** A store per bucket size (FOLLOW_MANY takes the store's; a raw FOLLOW call is given the same). */
const stores = new Map<number, TestStore>();
let run = 0;

beforeAll(async () => {
  for (const size of SIZES) stores.set(size, await createTestStore(undefined, { followBucketSize: size }));
});

afterAll(async () => {
  for (const store of stores.values()) await store.cleanup();
});

/** Followers that share their first bytes (one bucket at every depth), the lowest and highest of all, or anywhere. */
const followerArbitrary = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(fc.constantFrom('00', 'ff', 'ab'), fc.integer({ min: 0, max: 15 })).map(([fill, index]) => `${fill.repeat(30)}${index.toString(16).padStart(4, '0')}`) },
  { weight: 1, arbitrary: fc.constantFrom('00'.repeat(32), 'ff'.repeat(32), `${'00'.repeat(31)}01`) },
  { weight: 6, arbitrary: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('hex')) },
);

/** Records of 33 bytes (the change, then the follower) in the order given. */
function recordsOf(changes: readonly { follower: string; delta: number }[]): Buffer {
  const records = Buffer.alloc(33 * changes.length);
  changes.forEach(({ follower, delta }, index) => {
    records.writeInt8(delta, 33 * index);
    records.write(follower, 33 * index + 1, 'hex');
  });
  return records;
}

describe('Redis followers: logs, buckets and crowded sets', () => {
  it('pages and counts of every followed pubkey equal the model after every batch, records sent grouped or in any order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SIZES),
        // Batches of toggles: each names a followed pubkey, a follower whose following flips (a pair
        // may flip twice in one batch: a list and its replacement) and where its record goes when the
        // batch is sent out of order; and whether the batch is sent as FollowWrites groups it.
        fc.array(
          fc.record({
            grouped: fc.boolean(),
            // Mostly a list's toggle; sometimes a change on its own (a list added twice before its
            // replacement's removal: 2; a removal ahead of its addition: -1).
            toggles: fc.array(fc.tuple(fc.integer({ min: 0, max: 1 }), followerArbitrary, fc.integer(), fc.constantFrom('toggle', 'toggle', 'toggle', 'toggle', 'toggle', 'toggle', 'plus', 'minus')), {
              maxLength: 40,
            }),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        fc.array(fc.tuple(fc.option(followerArbitrary, { nil: null }), fc.integer({ min: 1, max: 9 })), { minLength: 3, maxLength: 3 }),
        // Then followers set to follow (1) or not (0), as a heal sets them (FOLLOW_SET): a follower
        // of the batches (whatever its sum: 2, -1) or a new one, each set sent twice.
        fc.array(fc.tuple(fc.integer({ min: 0, max: 1 }), fc.option(followerArbitrary, { nil: null }), fc.nat(), fc.constantFrom<0 | 1>(0, 1)), { maxLength: 12 }),
        async (size, batches, pages, sets) => {
          run++;
          const test = stores.get(size) as TestStore;
          const relations = test.store.relations as unknown as RedisRelationIndex;
          const keys = redisKeys(test.prefix);
          const followed = [0, 1].map((which) => createHash('sha256').update(`followers model ${run} ${which}`).digest('hex'));
          const model = followed.map(() => new Map<string, number>());
          const check = async () => {
            for (const [which, pubkey] of followed.entries()) {
              const nets = model[which] as Map<string, number>;
              const expected = [...nets].filter(([, net]) => net >= 1).map(([follower]) => follower).sort();
              expect(await relations.followers(pubkey, null, 10_000)).toEqual(expected);
              expect((await relations.followCounts([pubkey]))[0]?.followers).toBe([...nets.values()].reduce((sum, net) => sum + net, 0));
              for (const [after, first] of pages) {
                const from = after === null ? expected : expected.filter((pubkey) => pubkey > after);
                expect(await relations.followers(pubkey, after, first)).toEqual(from.slice(0, first));
              }
            }
          };
          for (const { grouped, toggles } of batches) {
            const changes = followed.map(() => [] as { follower: string; delta: number; order: number }[]);
            for (const [which, follower, order, kind] of toggles) {
              const nets = model[which] as Map<string, number>;
              const held = nets.get(follower) ?? 0;
              const delta = kind === 'plus' ? 1 : kind === 'minus' ? -1 : held >= 1 ? -1 : 1;
              nets.set(follower, held + delta);
              changes[which]?.push({ follower, delta, order });
            }
            if (grouped) {
              const writes = new FollowWrites();
              followed.forEach((pubkey, which) => changes[which]?.forEach(({ follower, delta }) => writes.follow(pubkey, follower, delta)));
              await relations.flushFollows(writes);
            } else {
              for (const [which, pubkey] of followed.entries()) {
                const own = (changes[which] ?? []).sort((a, b) => a.order - b.order);
                if (own.length === 0) continue;
                const net = own.reduce((sum, { delta }) => sum + delta, 0);
                const { followers, depth, buckets } = keys.follows(pubkey);
                await test.client.nostrFollow(followers, depth, recordsOf(own), buckets, String(size), String(net));
              }
            }
            await check();
          }
          for (const [which, named, pick, wanted] of sets) {
            const nets = model[which] as Map<string, number>;
            const known = [...nets.keys()];
            const follower = named ?? known[pick % Math.max(1, known.length)] ?? '11'.repeat(32);
            const held = nets.get(follower) ?? 0;
            const { followers, depth, buckets } = keys.follows(followed[which] as string);
            const set = () => test.client.nostrFollowSet(followers, depth, Buffer.from(follower, 'hex'), wanted === 1 ? '1' : '0', buckets, String(size));
            expect(await set()).toBe(wanted - held);
            expect(await set()).toBe(0);
            nets.set(follower, wanted);
          }
          await check();
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('depths 3 and 4 (past 256 and 4,096 followers at bucket size 1): records in order or not, sums of 2 and -1, removals and moves back down keep pages and counts equal to the model', async () => {
    const test = stores.get(1) as TestStore;
    const relations = test.store.relations as unknown as RedisRelationIndex;
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    const pubkey = sha256('followers model, deep');
    const { followers, depth, buckets } = redisKeys(test.prefix).follows(pubkey);
    const fans = Array.from({ length: 4300 }, (_, index) => sha256(`deep fan ${index}`));
    const nets = new Map<string, number>();
    // One FOLLOW call with these changes, records in the order given.
    const send = async (changes: [string, number][]) => {
      for (const [follower, delta] of changes) nets.set(follower, (nets.get(follower) ?? 0) + delta);
      const net = changes.reduce((sum, [, delta]) => sum + delta, 0);
      await test.client.nostrFollow(followers, depth, recordsOf(changes.map(([follower, delta]) => ({ follower, delta }))), buckets, '1', String(net));
    };
    const depthHeld = async () => Number((await test.client.get(depth))?.split(' ')[0] ?? 0);
    const check = async () => {
      const expected = [...nets].filter(([, net]) => net >= 1).map(([follower]) => follower).sort();
      expect(await relations.followers(pubkey, null, 10_000)).toEqual(expected);
      expect((await relations.followCounts([pubkey]))[0]?.followers).toBe([...nets.values()].reduce((sum, net) => sum + net, 0));
      for (const at of [0, 1, 17, Math.floor(expected.length / 2), expected.length - 2]) {
        if (at >= 0 && at < expected.length) expect(await relations.followers(pubkey, expected[at] as string, 7)).toEqual(expected.slice(at + 1, at + 8));
      }
    };
    // 300 followers in pubkey order (as FollowWrites sends them): depth 3.
    await send(fans.slice(0, 300).sort().map((fan) => [fan, 1]));
    expect(await depthHeld()).toBe(3);
    await check();
    // 4,000 more in reverse order, and 100 of the first taken away: depth 4.
    await send([...fans.slice(300, 4300).sort().reverse().map((fan): [string, number] => [fan, 1]), ...fans.slice(0, 100).map((fan): [string, number] => [fan, -1])]);
    expect(await depthHeld()).toBe(4);
    await check();
    // Out of order at depth 4: 50 counted twice (2), 50 owed a removal (-1: not followers yet).
    const strangers = Array.from({ length: 50 }, (_, index) => sha256(`deep stranger ${index}`));
    await send([...fans.slice(200, 250).map((fan): [string, number] => [fan, 1]), ...strangers.map((stranger): [string, number] => [stranger, -1])].reverse());
    expect(await depthHeld()).toBe(4);
    await check();
    // Most go, out of order: fewer buckets again, depth by depth as the count falls.
    const staying = new Set(fans.slice(4000));
    await send([...nets].filter(([fan, net]) => net >= 1 && !staying.has(fan)).map(([fan, net]): [string, number] => [fan, -net]).reverse());
    expect(await depthHeld()).toBeLessThan(4);
    await check();
    // The rest go, the strangers' additions come: nobody follows, the count is 0.
    await send([...[...nets].filter(([, net]) => net >= 1).map(([fan, net]): [string, number] => [fan, -net]), ...strangers.map((stranger): [string, number] => [stranger, 1])]);
    expect(await depthHeld()).toBe(0);
    await check();
  });
});
