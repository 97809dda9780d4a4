import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { quoteTargetsOf, reactionTargetOf, relationEdgesOf, repostTargetOf, threadPositionOf } from '../src/nostr/relationships.js';
import { MAX_TAGS_READ } from '../src/nostr/work-caps.js';
import { contentKey, decodeCounts, LONG_CONTENT_KEY, replyMember, replyMemberBytes, replyPositionOf, replyPositionOfBytes } from '../src/store/relation-index.js';

const [A, B, C, D] = ['a', 'b', 'c', 'd'].map((letter) => letter.repeat(64)) as [string, string, string, string];
const SELF = '5'.repeat(64);

function event(kind: number, tags: string[][], content = ''): NostrEvent {
  return { id: SELF, pubkey: '1'.repeat(64), created_at: 1, kind, tags, content, sig: '0'.repeat(128) };
}

describe('the relationship rules (DESIGN "Relationships")', () => {
  it.each([
    ['marked root and reply', [['e', A, '', 'root'], ['e', B, '', 'reply']], { root: A, parent: B }],
    ['marked root only: parent is the root', [['e', A, 'wss://r', 'root']], { root: A, parent: A }],
    ['marked reply only: no root', [['e', B, '', 'reply']], { parent: B }],
    ['the first root and the first reply win', [['e', A, '', 'root'], ['e', C, '', 'root'], ['e', B, '', 'reply'], ['e', D, '', 'reply']], { root: A, parent: B }],
    ['marked wins over positional', [['e', C], ['e', A, '', 'root']], { root: A, parent: A }],
    ['positional, one', [['e', A]], { root: A, parent: A }],
    ['positional, several: first and last', [['e', A], ['e', B, 'wss://x'], ['e', C, '']], { root: A, parent: C }],
    ['mention never threads', [['e', A, '', 'mention']], {}],
    ['mention beside positional', [['e', A, '', 'mention'], ['e', B]], { root: B, parent: B }],
    ['uppercase hex is read lowercased', [['e', A.toUpperCase()]], { root: A, parent: A }],
    ['not an id', [['e', 'xyz'], ['e', `${A}00`]], {}],
    ['no tags', [], {}],
    ['itself is never its root or parent', [['e', SELF, '', 'root']], {}],
  ])('kind 1, %s', (_name, tags, expected) => {
    expect(threadPositionOf(event(1, tags))).toEqual(expected);
  });

  it.each([
    ['E root, e parent', [['E', A], ['e', B]], { root: A, parent: B }],
    ['first E and first e', [['E', A], ['E', C], ['e', B], ['e', D]], { root: A, parent: B }],
    ['an address root is not an event', [['A', '30023:x:y'], ['a', '30023:x:y']], {}],
    ['a first E that is not an id means no event root', [['E', 'nope'], ['E', A], ['e', B]], { parent: B }],
  ])('kind 1111, %s', (_name, tags, expected) => {
    expect(threadPositionOf(event(1111, tags))).toEqual(expected);
  });

  it('other kinds are not replies; reposts take the first `e`, reactions the last, quotes every distinct `q` id', () => {
    expect(threadPositionOf(event(7, [['e', A]]))).toEqual({});
    expect(repostTargetOf(event(6, [['e', A], ['e', B]]))).toBe(A);
    expect(repostTargetOf(event(16, [['p', C], ['e', B]]))).toBe(B);
    expect(repostTargetOf(event(1, [['e', A]]))).toBeUndefined();
    expect(reactionTargetOf(event(7, [['e', A], ['e', B], ['p', C]]))).toBe(B);
    expect(reactionTargetOf(event(7, [['e', A], ['e', 'bad']]))).toBeUndefined();
    expect(quoteTargetsOf(event(30023, [['q', A], ['q', A, 'wss://x'], ['q', '30023:x:y'], ['q', B]]))).toEqual([A, B]);
  });

  it('one edge per target, with every role it plays', () => {
    const reply = event(1, [['e', A, '', 'root'], ['q', A]]);
    expect(relationEdgesOf(reply)).toEqual([{ target: A, reply: true, threadReply: true, quote: true, repost: false }]);
    expect(relationEdgesOf(event(7, [['e', B]], '🤙'))).toEqual([{ target: B, reply: false, threadReply: false, quote: false, repost: false, reaction: '🤙' }]);
  });

  it('reads at most MAX_TAGS_READ tags', () => {
    const tags = Array.from({ length: MAX_TAGS_READ }, () => ['t', 'x']);
    expect(threadPositionOf(event(1, [...tags, ['e', A]]))).toEqual({});
    expect(threadPositionOf(event(1, [...tags.slice(1), ['e', A]]))).toEqual({ root: A, parent: A });
  });

  it('never throws on hostile tags, and only ever names lowercase ids other than its own (property)', () => {
    const value = fc.oneof(fc.constantFrom(A, B, A.toUpperCase(), SELF, '', 'root', 'reply', 'mention'), fc.string());
    const tag = fc.array(value, { maxLength: 5 });
    const named = fc.tuple(fc.constantFrom('e', 'E', 'q', 'p', 'a'), fc.array(value, { maxLength: 4 })).map(([name, rest]) => [name, ...rest]);
    fc.assert(
      fc.property(fc.constantFrom(1, 6, 7, 16, 1111, 30023), fc.array(fc.oneof(tag, named), { maxLength: 12 }), fc.string(), (kind, tags, content) => {
        for (const edge of relationEdgesOf(event(kind, tags, content))) {
          expect(edge.target).toMatch(/^[0-9a-f]{64}$/);
          expect(edge.target).not.toBe(SELF);
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 300) },
    );
  });
});

describe('the index encodings', () => {
  it('reply positions: the string and byte forms sort as (created_at, id) do, and read back (property)', () => {
    const position = fc.record({
      createdAt: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      id: fc.stringMatching(/^[0-9a-f]{64}$/),
      bytes: fc.integer({ min: 0, max: 0xfffffffe }),
    });
    fc.assert(
      fc.property(position, position, (a, b) => {
        expect(replyPositionOf(replyMember(a))).toEqual({ createdAt: a.createdAt, id: a.id });
        expect(replyPositionOfBytes(replyMemberBytes(a))).toEqual(a);
        const order = a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
        if (order !== 0) expect(Math.sign(Buffer.compare(replyMemberBytes(a), replyMemberBytes(b)))).toBe(Math.sign(order));
        // The bound of a place (no size) sorts after that place whatever its size.
        expect(Buffer.compare(replyMemberBytes({ createdAt: a.createdAt, id: a.id }), replyMemberBytes(a))).toBe(1);
        const [x, y] = [replyMember(a), replyMember(b)];
        expect(x < y ? -1 : x > y ? 1 : 0).toBe(Math.sign(order));
        if (order === 0) expect(x).toBe(y);
      }),
    );
  });

  it('content keys never hold a tab or a newline, so count lines round-trip any content, lone surrogates included (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ unit: 'binary' }), fc.integer({ min: -3, max: 3 }).filter((n) => n !== 0))), (entries) => {
        const counts = new Map(entries.map(([content, count]) => [contentKey(content), count]));
        const lines = [...counts].map(([key, count]) => `${count}\t${key}\n`).join('');
        expect(decodeCounts(lines)).toEqual(counts);
        for (const key of counts.keys()) if (key !== LONG_CONTENT_KEY) expect(JSON.parse(key)).toBeTypeOf('string');
      }),
    );
  });
});
