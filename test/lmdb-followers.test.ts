import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { type Database, open } from 'lmdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FOLLOWER_LIMITS, type FollowerLimits, LmdbFollowers } from '../src/store/embedded/lmdb-followers.js';

// The LMDB followers' logs and chunks (src/store/embedded/lmdb-followers.ts) against a plain model:
// a set of followers per followed pubkey. Small limits make every path run: folds by records and by
// logs, chunks split, emptied and re-made below the lowest bound, pages starting anywhere.

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

let dir: string;
let root: ReturnType<typeof open>;
let db: Database<Buffer, Buffer>;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-followers-'));
  root = open({ path: dir, compression: false });
  db = root.openDB<Buffer, Buffer>({ name: 'followers', keyEncoding: 'binary', encoding: 'binary' });
});

afterAll(async () => {
  await root.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The database emptied, for each run. */
async function fresh(limits: FollowerLimits): Promise<LmdbFollowers> {
  await db.clearAsync();
  return new LmdbFollowers(db, limits);
}

/** Pubkeys that share prefixes, and the lowest and highest of all: a hex digit pattern repeated, then an index. */
const pubkeyArbitrary = fc.oneof(
  { weight: 9, arbitrary: fc.tuple(fc.constantFrom('00', 'ff', '7f', '80', 'ab'), fc.integer({ min: 0, max: 9 })).map(([fill, index]) => `${fill.repeat(30)}${index.toString(16).padStart(4, '0')}`) },
  { weight: 1, arbitrary: fc.constantFrom('00'.repeat(32), 'ff'.repeat(32), `${'00'.repeat(31)}01`) },
);

/** One batch's records for one followed pubkey: each change in order, sorted by follower (a stable sort, as FollowWrites). */
function recordsOf(changes: readonly [string, number][]): Buffer {
  const sorted = changes.map((change, order) => ({ change, order })).sort((a, b) => (a.change[0] < b.change[0] ? -1 : a.change[0] > b.change[0] ? 1 : a.order - b.order));
  const records = Buffer.alloc(33 * sorted.length);
  sorted.forEach(({ change: [follower, delta] }, index) => {
    records.writeInt8(delta, 33 * index);
    records.write(follower, 33 * index + 1, 'hex');
  });
  return records;
}

const followedPubkeys = ['00'.repeat(32), '5a'.repeat(32), 'ff'.repeat(32)];

describe('LMDB followers: logs folded into chunks', () => {
  it('pages of every followed pubkey equal the model, after every batch, whatever the limits', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          foldRecords: fc.integer({ min: 1, max: 12 }),
          foldLogs: fc.integer({ min: 1, max: 5 }),
          chunkFollowers: fc.integer({ min: 1, max: 6 }),
        }),
        // Batches of toggles: each names a followed pubkey and a follower whose following flips (a
        // pair may flip twice in one batch: a list and its replacement).
        fc.array(fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), pubkeyArbitrary), { maxLength: 25 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.tuple(fc.option(pubkeyArbitrary, { nil: null }), fc.integer({ min: 1, max: 9 })), { minLength: 3, maxLength: 3 }),
        async (limits, batches, pages) => {
          const followers = await fresh(limits);
          const model = followedPubkeys.map(() => new Set<string>());
          for (const batch of batches) {
            const changes = followedPubkeys.map(() => [] as [string, number][]);
            for (const [which, follower] of batch) {
              const set = model[which] as Set<string>;
              const delta = set.has(follower) ? -1 : 1;
              if (delta > 0) set.add(follower);
              else set.delete(follower);
              (changes[which] as [string, number][]).push([follower, delta]);
            }
            await root.transaction(() => {
              followedPubkeys.forEach((followed, which) => followers.write(Buffer.from(followed, 'hex'), recordsOf(changes[which] as [string, number][])));
            });
            followedPubkeys.forEach((followed, which) => {
              const expected = [...(model[which] as Set<string>)].sort();
              expect(followers.page(Buffer.from(followed, 'hex'), null, Number.MAX_SAFE_INTEGER)).toEqual(expected);
              for (const [after, first] of pages) {
                const from = after === null ? expected : expected.filter((pubkey) => pubkey > after);
                expect(followers.page(Buffer.from(followed, 'hex'), after === null ? null : Buffer.from(after, 'hex'), first)).toEqual(from.slice(0, first));
              }
            });
          }
          // Every chunk within the limit, ascending, and in its range (at or above its bound, below
          // the next chunk's of the same pubkey); logs and state only below the limits.
          const entries = [...db.getRange()];
          entries.forEach(({ key, value }, index) => {
            if (key[32] !== 0) return;
            expect(value.length % 32).toBe(0);
            expect(value.length).toBeGreaterThan(0);
            expect(value.length / 32).toBeLessThanOrEqual(limits.chunkFollowers);
            expect(Buffer.compare(value.subarray(0, 32), key.subarray(33))).toBeGreaterThanOrEqual(0);
            for (let at = 32; at < value.length; at += 32) expect(Buffer.compare(value.subarray(at - 32, at), value.subarray(at, at + 32))).toBe(-1);
            const next = entries[index + 1]?.key;
            if (next && next[32] === 0 && next.subarray(0, 32).equals(key.subarray(0, 32))) expect(Buffer.compare(value.subarray(-32), next.subarray(33))).toBe(-1);
          });
          const logs = entries.filter(({ key }) => key[32] === 1);
          for (const followed of followedPubkeys) {
            const own = logs.filter(({ key }) => key.toString('hex', 0, 32) === followed);
            expect(own.length).toBeLessThan(limits.foldLogs);
            expect(own.reduce((sum, { value }) => sum + value.length / 33, 0)).toBeLessThan(limits.foldRecords);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('a chunk over the limit is split: 3,000 followers in batches of 1,000 fold at the third (2,048 records) into six chunks of 500', async () => {
    const followers = await fresh(FOLLOWER_LIMITS);
    const all = Array.from({ length: 3000 }, (_, index) => index.toString(16).padStart(64, '0'));
    const followed = Buffer.from('11'.repeat(32), 'hex');
    const logsHeld = () => [...db.getKeys()].filter((key) => key[32] === 1).length;
    for (let from = 0; from < all.length; from += 1000) {
      await root.transaction(() => followers.write(followed, recordsOf(all.slice(from, from + 1000).map((pubkey) => [pubkey, 1]))));
      expect(logsHeld()).toBe(from < 2000 ? from / 1000 + 1 : 0);
    }
    const chunks = () => [...db.getRange()].filter(({ key }) => key[32] === 0);
    expect(chunks().map(({ value }) => value.length / 32)).toEqual([500, 500, 500, 500, 500, 500]);
    // Bounds: zero, then each chunk's first follower.
    expect(chunks().map(({ key }) => key.toString('hex', 33))).toEqual(['0'.repeat(64), ...[500, 1000, 1500, 2000, 2500].map((index) => all[index])]);
    expect(followers.page(followed, null, 5000)).toEqual(all);
    expect(followers.page(followed, Buffer.from(all[499] as string, 'hex'), 2)).toEqual(all.slice(500, 502));
    expect(followers.page(followed, Buffer.from(all[2998] as string, 'hex'), 5)).toEqual(all.slice(2999));
    // One follower leaves: a log of one record, read over the chunks.
    await root.transaction(() => followers.write(followed, recordsOf([[all[500] as string, -1]])));
    expect(logsHeld()).toBe(1);
    expect(followers.page(followed, Buffer.from(all[498] as string, 'hex'), 3)).toEqual([all[499], all[501], all[502]]);
    expect(followers.page(followed, null, 5000)).toEqual(all.filter((_, index) => index !== 500));
  });
});
