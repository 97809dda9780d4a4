import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FOLLOW_LIST_KIND, followKeysOf, followsOf, pubkeyBytes, rememberFollowKeys } from '../src/nostr/follows.js';
import { MAX_TAGS_READ } from '../src/nostr/work-caps.js';
import { FollowWrites } from '../src/store/follow-index.js';
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
    const grouped = writes.byFollowed();
    expect([...grouped.keys()].sort()).toEqual([...ground].sort());
    // Followers in pubkey order, one follower's changes in arrival order (a stable sort).
    const byFollower = [...changes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const pubkey of ground) {
      const { followers, deltas } = grouped.get(pubkey) as { followers: Uint8Array[]; deltas: number[] };
      const expected = byFollower.flatMap(([follower, followed, delta]) => (followed.includes(pubkey) ? [[follower, delta]] : []));
      expect(followers.map((follower, at) => [Buffer.from(follower).toString('hex'), deltas[at]])).toEqual(expected);
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
        const grouped = writes.byFollowed();
        expect(new Set(grouped.keys())).toEqual(new Set(expected.keys()));
        for (const [pubkey, { followers, deltas }] of grouped) {
          expect(followers.map((follower, index) => [Buffer.from(follower).toString('hex'), deltas[index]])).toEqual(expected.get(pubkey));
        }
      }),
      { numRuns: RUNS },
    );
  });
});
