import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { isMuted, mutesOf, NO_MUTES } from '../src/nostr/mutes.js';
import { MAX_MUTE_WORD_CHARS, MAX_MUTE_WORDS, MAX_TAGS_READ } from '../src/nostr/work-caps.js';

/** The mute rule of DESIGN "Screens" (NIP-51 kind 10000), on events made here (signatures play no part in it). */

const hex = (digit: string) => digit.repeat(64);
const event = (fields: Partial<NostrEvent>): NostrEvent => ({ id: hex('0'), pubkey: hex('1'), created_at: 1_700_000_000, kind: 1, tags: [], content: '', sig: '0'.repeat(128), ...fields });
const muteList = (tags: string[][], content = '') => event({ kind: 10_000, tags, content });

describe('mutesOf', () => {
  it('reads public tags only, hex in any case as lowercase, hashtags and words folded, each once, malformed ones skipped', () => {
    const mutes = mutesOf(
      muteList(
        [['p', hex('A')], ['p', hex('a')], ['p', 'abc'], ['e', hex('B')], ['e', `${hex('b')}0`], ['t', 'NoStr'], ['t', 'nostr'], ['t', ''], ['word', 'Ｃｏｆｆｅｅ'], ['word', 'ﬁsh'], ['word', ''], ['word'], ['x', 'y'], ['p']],
        // NIP-51's private entries: encrypted in the content; never read, even in clear.
        JSON.stringify([['p', hex('c')]]),
      ),
    );
    expect({ ...mutes, pubkeys: [...mutes.pubkeys], events: [...mutes.events], hashtags: [...mutes.hashtags] }).toEqual({
      pubkeys: [hex('a')],
      events: [hex('b')],
      hashtags: ['nostr'],
      words: ['coffee', 'fish'],
    });
  });

  it('another kind, none, or nothing public: nothing muted', () => {
    expect(mutesOf(event({ kind: 3, tags: [['p', hex('a')]] }))).toBe(NO_MUTES);
    expect(mutesOf(null)).toBe(NO_MUTES);
    expect(isMuted(event({ content: 'anything' }), mutesOf(muteList([], 'encrypted?iv=xyz')))).toBe(false);
  });

  it('bounded: the first MAX_TAGS_READ tags, the first MAX_MUTE_WORDS words, no word longer than MAX_MUTE_WORD_CHARS', () => {
    const filler = Array.from({ length: MAX_TAGS_READ }, () => ['x', '']);
    expect(mutesOf(muteList([...filler, ['p', hex('a')]])).pubkeys.size).toBe(0);
    const words = Array.from({ length: MAX_MUTE_WORDS + 5 }, (_, index) => ['word', `w${index}`]);
    expect(mutesOf(muteList(words)).words).toHaveLength(MAX_MUTE_WORDS);
    expect(mutesOf(muteList([['word', 'a'.repeat(MAX_MUTE_WORD_CHARS + 1)], ['word', 'a'.repeat(MAX_MUTE_WORD_CHARS)]])).words).toEqual(['a'.repeat(MAX_MUTE_WORD_CHARS)]);
  });
});

describe('isMuted', () => {
  const root = hex('9');
  const mutes = mutesOf(muteList([['p', hex('a')], ['e', root], ['t', 'Art'], ['word', 'ΚΑΦΕΣ']]));

  it('an author, an event and every event whose root or parent it is (NIP-10, NIP-22), a hashtag in any case, a word anywhere after NFKC and lower case', () => {
    expect(isMuted(event({ pubkey: hex('a') }), mutes)).toBe(true);
    expect(isMuted(event({ id: root }), mutes)).toBe(true);
    expect(isMuted(event({ tags: [['e', root.toUpperCase(), '', 'root'], ['e', hex('8'), '', 'reply']] }), mutes)).toBe(true);
    expect(isMuted(event({ tags: [['e', hex('7')], ['e', root]] }), mutes)).toBe(true); // positional: the last is the parent
    expect(isMuted(event({ kind: 1111, tags: [['E', root], ['e', hex('7')]] }), mutes)).toBe(true);
    expect(isMuted(event({ tags: [['e', root, '', 'mention']] }), mutes)).toBe(false); // a mention does not thread
    expect(isMuted(event({ tags: [['t', 'ART']] }), mutes)).toBe(true);
    expect(isMuted(event({ content: 'un café: καφες' }), mutes)).toBe(true); // final sigma folded as profile search folds it
    expect(isMuted(event({ content: 'nothing to see' }), mutes)).toBe(false);
  });

  it('a repost of a muted event or author is hidden; a note that mentions a muted author is not', () => {
    expect(isMuted(event({ kind: 6, tags: [['e', root]] }), mutes)).toBe(true);
    expect(isMuted(event({ kind: 16, tags: [['e', hex('7')], ['p', hex('A')]] }), mutes)).toBe(true);
    expect(isMuted(event({ kind: 6, tags: [['e', hex('7')], ['p', hex('b')], ['p', hex('a')]] }), mutes)).toBe(false);
    expect(isMuted(event({ tags: [['p', hex('a')]] }), mutes)).toBe(false);
  });

  it('threadOf is the one place a thread is read', () => {
    expect(isMuted(event({}), mutes, () => ({ parent: root }))).toBe(true);
  });
});
