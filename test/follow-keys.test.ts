import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FOLLOW_LIST_KIND, followKeysOf, followsOf, pubkeyBytes, rememberFollowKeys } from '../src/nostr/follows.js';
import { MAX_TAGS_READ } from '../src/nostr/work-caps.js';
import { FollowWrites, recordDelta } from '../src/store/follow-index.js';
import { pubkeyOf } from './support/events.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 100);

/** The rule as DESIGN states it, written the plain way: `p` values of 64 hex digits, lowercase, first appearance, first MAX_TAGS_READ tags. */
function referenceFollows(kind: number, tags: string[][]): string[] {
  if (kind !== FOLLOW_LIST_KIND) return [];
  const follows: string[] = [];
  for (const tag of tags.slice(0, MAX_TAGS_READ)) {
    const value = tag[1];
    if (tag[0] !== 'p' || typeof value !== 'string' || !/^[0-9a-fA-F]{64}$/.test(value)) continue;
    if (!follows.includes(value.toLowerCase())) follows.push(value.toLowerCase());
  }
  return follows;
}

// Pubkeys that share their first bytes (FollowWrites groups by 30 bits of them) and some that differ in case only.
const close = Array.from({ length: 6 }, (_, index) => `c0ffee00${pubkeyOf(`close ${index}`).slice(8)}`);
const pubkeys = [...close, ...Array.from({ length: 6 }, (_, index) => pubkeyOf(`far ${index}`))];
const hostileValue = fc.oneof(
  fc.constantFrom(...pubkeys),
  fc.constantFrom(...pubkeys).map((pubkey) => pubkey.toUpperCase()),
  fc.constantFrom(...pubkeys).map((pubkey) => `${pubkey.slice(0, 63)}\u0130`),
  fc.constantFrom(...pubkeys).map((pubkey) => pubkey.slice(1)),
  fc.constantFrom(...pubkeys).map((pubkey) => `${pubkey}0`),
  fc.constantFrom(...pubkeys).map((pubkey) => `${pubkey.slice(0, 10)}g${pubkey.slice(11)}`),
  fc.string(),
);
const hostileTag = fc.oneof(
  hostileValue.map((value) => ['p', value]),
  hostileValue.map((value) => ['p', value, 'wss://relay.example']),
  hostileValue.map((value) => ['P', value]),
  fc.constant(['p'] as string[]),
  fc.array(fc.string(), { maxLength: 3 }),
);

describe('followKeysOf and followsOf (nostr/follows.ts)', () => {
  it('follow the rule for any tags: p values of 64 hex digits in any case, lowercased, each once, in first order; none for other kinds (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(3, 3, 1, 10002), fc.array(hostileTag, { maxLength: 60 }), (kind, tags) => {
        const expected = referenceFollows(kind, tags);
        expect(followsOf({ kind, tags })).toEqual(expected);
        expect(Buffer.from(followKeysOf({ kind, tags })).toString('hex')).toBe(expected.join(''));
      }),
      { numRuns: RUNS },
    );
  });

  it('lists whose p values all have 64 characters (decoded at once unless one is not hex or not ASCII) follow the rule too (property)', () => {
    const sixtyFour = fc.oneof(
      fc.constantFrom(...pubkeys),
      fc.constantFrom(...pubkeys).map((pubkey) => pubkey.toUpperCase()),
      fc.constantFrom(...pubkeys).map((pubkey) => `${pubkey.slice(0, 63)}\u0130`),
      fc.constantFrom(...pubkeys).map((pubkey) => `\u0130${pubkey.slice(1)}`),
      fc.constantFrom(...pubkeys).map((pubkey) => `${pubkey.slice(0, 10)}g${pubkey.slice(11)}`),
      fc.string({ minLength: 64, maxLength: 64 }),
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(sixtyFour.map((value) => ['p', value]), fc.constant(['t', 'x'] as string[])), { maxLength: 60 }), (tags) => {
        expect(Buffer.from(followKeysOf({ kind: 3, tags })).toString('hex')).toBe(referenceFollows(3, tags).join(''));
      }),
      { numRuns: RUNS },
    );
  });

  it('a list of pubkeys ground to share their first bytes, each twice, keeps each once in first order (past the table, compared as strings)', () => {
    const ground = Array.from({ length: 1000 }, (_, index) => `00000000${pubkeyOf(`shared prefix ${index}`).slice(8)}`);
    const tags = [...ground, ...[...ground].reverse(), ground[0] as string].map((pubkey, index) => ['p', index % 3 === 0 ? pubkey.toUpperCase() : pubkey]);
    expect(followsOf({ kind: 3, tags })).toEqual(ground);
    expect(followsOf({ kind: 3, tags })).toEqual(referenceFollows(3, tags));
  });

  it('read only the first MAX_TAGS_READ tags', () => {
    const tags = [...Array.from({ length: MAX_TAGS_READ }, () => ['t', 'filler']), ['p', pubkeyOf('late')]];
    expect(followsOf({ kind: 3, tags })).toEqual([]);
    tags[0] = ['p', pubkeyOf('early')];
    expect(followsOf({ kind: 3, tags })).toEqual([pubkeyOf('early')]);
  });

  it('read back what another thread made from the same event (rememberFollowKeys), and only for that event object', () => {
    const event = { kind: 3, tags: [['p', pubkeyOf('one')]] };
    const twin = { kind: 3, tags: [['p', pubkeyOf('one')]] };
    rememberFollowKeys(event, pubkeyBytes([pubkeyOf('one'), pubkeyOf('two')]));
    expect(followsOf(event)).toEqual([pubkeyOf('one'), pubkeyOf('two')]);
    expect(followsOf(twin)).toEqual([pubkeyOf('one')]);
  });
});

/**
 * byFollowed's records read back: followed → [follower, change] in record order, and checks that
 * the runs tile the records and that each run's net and removes say what its records do.
 */
function groupedChanges(writes: FollowWrites): Map<string, [string, number][]> {
  const { records, byFollowed } = writes.byFollowed();
  const grouped = new Map<string, [string, number][]>();
  let next = 0;
  for (const [followed, { start, count, net, removes }] of byFollowed) {
    expect(start).toBe(next);
    next = start + count;
    const changes = Array.from({ length: count }, (_, index): [string, number] => [records.toString('hex', 33 * (start + index) + 1, 33 * (start + index) + 33), recordDelta(records, start + index)]);
    expect(net).toBe(changes.reduce((sum, [, delta]) => sum + delta, 0));
    expect(removes).toBe(changes.some(([, delta]) => delta < 0));
    grouped.set(followed, changes);
  }
  expect(records.length).toBe(33 * next);
  return grouped;
}

describe('FollowWrites (store/follow-index.ts)', () => {
  it('byFollowed: pubkeys ground to share their first bytes, more than a chain tells apart, are still grouped each on its own', () => {
    const ground = Array.from({ length: 300 }, (_, index) => `00000000${pubkeyOf(`ground ${index}`).slice(8)}`);
    const changes: [string, string[], number][] = [
      [pubkeyOf('b'), ground, 1],
      [pubkeyOf('a'), [...ground].reverse(), 1],
      [pubkeyOf('a'), ground.slice(0, 10), -1],
    ];
    const writes = new FollowWrites();
    for (const [follower, followed, delta] of changes) writes.change(follower, pubkeyBytes(followed), delta);
    const grouped = groupedChanges(writes);
    expect([...grouped.keys()].sort()).toEqual([...ground].sort());
    // Followers in pubkey order, one follower's changes in arrival order (a stable sort).
    const byFollower = [...changes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const pubkey of ground) {
      const expected = byFollower.flatMap(([follower, followed, delta]) => (followed.includes(pubkey) ? [[follower, delta]] : []));
      expect(grouped.get(pubkey)).toEqual(expected);
    }
  });

  const change = fc.record({
    follower: fc.constantFrom(...pubkeys),
    followed: fc.array(fc.constantFrom(...pubkeys), { maxLength: 8 }),
    delta: fc.constantFrom(1, -1),
  });

  it('byFollowed: every change, grouped by followed pubkey (those sharing their first bytes apart), followers ascending, one follower’s changes in arrival order (property)', () => {
    fc.assert(
      fc.property(fc.array(change, { maxLength: 40 }), (changes) => {
        const writes = new FollowWrites();
        for (const { follower, followed, delta } of changes) writes.change(follower, pubkeyBytes(followed), delta);
        const expected = new Map<string, [string, number][]>();
        const byFollower = changes.map((item, order) => ({ ...item, order })).sort((a, b) => (a.follower < b.follower ? -1 : a.follower > b.follower ? 1 : a.order - b.order));
        for (const { follower, followed, delta } of byFollower) {
          for (const pubkey of followed) expected.set(pubkey, [...(expected.get(pubkey) ?? []), [follower, delta]]);
        }
        const grouped = groupedChanges(writes);
        expect(new Set(grouped.keys())).toEqual(new Set(expected.keys()));
        for (const [pubkey, found] of grouped) expect(found).toEqual(expected.get(pubkey));
      }),
      { numRuns: RUNS },
    );
  });
});
