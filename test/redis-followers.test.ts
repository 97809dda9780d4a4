import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FollowWrites } from '../src/store/follow-index.js';
import { redisKeys } from '../src/store/redis/keys.js';
import type { RedisRelationIndex } from '../src/store/redis/redis-relation-index.js';
import { createTestStore, type TestStore } from './support/test-store.js';

// The Redis followers' logs, buckets and crowded sorted sets (src/store/redis/lua-scripts.ts
// FOLLOW, FOLLOWERS_PAGE) against a plain model: a set of followers per followed pubkey. Bucket
// sizes of 1 to 3 make every path run within a few dozen followers: moves to more buckets (depth 2
// past 16 followers at size 1) and back, folds, crowded buckets (followers ground to share their
// first bytes), and records sent out of order (a bucket's records in several runs), as well as
// grouped as FollowWrites sends them.

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
            toggles: fc.array(fc.tuple(fc.integer({ min: 0, max: 1 }), followerArbitrary, fc.integer()), { maxLength: 40 }),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        fc.array(fc.tuple(fc.option(followerArbitrary, { nil: null }), fc.integer({ min: 1, max: 9 })), { minLength: 3, maxLength: 3 }),
        async (size, batches, pages) => {
          run++;
          const test = stores.get(size) as TestStore;
          const relations = test.store.relations as unknown as RedisRelationIndex;
          const keys = redisKeys(test.prefix);
          const followed = [0, 1].map((which) => createHash('sha256').update(`followers model ${run} ${which}`).digest('hex'));
          const model = followed.map(() => new Set<string>());
          for (const { grouped, toggles } of batches) {
            const changes = followed.map(() => [] as { follower: string; delta: number; order: number }[]);
            for (const [which, follower, order] of toggles) {
              const set = model[which] as Set<string>;
              const delta = set.has(follower) ? -1 : 1;
              if (delta > 0) set.add(follower);
              else set.delete(follower);
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
            for (const [which, pubkey] of followed.entries()) {
              const expected = [...(model[which] as Set<string>)].sort();
              expect(await relations.followers(pubkey, null, 10_000)).toEqual(expected);
              expect((await relations.followCounts([pubkey]))[0]?.followers).toBe(expected.length);
              for (const [after, first] of pages) {
                const from = after === null ? expected : expected.filter((pubkey) => pubkey > after);
                expect(await relations.followers(pubkey, after, first)).toEqual(from.slice(0, first));
              }
            }
          }
        },
      ),
      { numRuns: RUNS },
    );
  });
});
