import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isNoteQueryLength, matchesNoteQuery, MAX_NOTE_WORDS, noteWords, parseNoteQuery } from '../src/nostr/note-search.js';
import { MAX_WORD_CHARS } from '../src/nostr/profile-search.js';

/** The rule of note search (nostr/note-search.ts; DESIGN "Screens", search of notes) on its own, against an independent reading of it. */

const note = (content: string, kind = 1, tags: string[][] = []) => ({ kind, content, tags });
const matches = (content: string, query: string, kind = 1, tags: string[][] = []) => {
  const parsed = parseNoteQuery(query);
  return parsed !== null && matchesNoteQuery(noteWords(note(content, kind, tags)), parsed);
};

/**
 * The rule read again, character by character, without the module's regular expressions: fold
 * (NFKC, lower case, final sigma and dotted i undone), then walk the code points: a letter or digit
 * starts or continues a word, a mark continues one (never starts it), anything else ends it; within
 * a word, a change between a paired script (Han, Hiragana, Katakana, Hangul, by Script_Extensions)
 * and any other ends a part; a paired part gives its overlapping pairs of characters (a mark stays
 * with the character before it), a part of one character gives itself; words are cut to 64 code points.
 */
function independentWordList(text: string): string[] {
  const folded = text.normalize('NFKC').toLowerCase().replaceAll('ς', 'σ').replaceAll('i\u0307', 'i').normalize('NFKC');
  const isLetterOrDigit = (c: string) => /^[\p{L}\p{N}]$/u.test(c);
  const isMark = (c: string) => /^\p{M}$/u.test(c);
  const isPaired = (c: string) => /^[\p{scx=Han}\p{scx=Hira}\p{scx=Kana}\p{scx=Hang}]$/u.test(c);
  const out: string[] = [];
  const cut = (word: string) => Array.from(word).slice(0, MAX_WORD_CHARS).join('');
  // The parts of the current word: each a list of characters (a character with its marks) and whether it is paired.
  let parts: { paired: boolean; characters: string[] }[] = [];
  const endWord = () => {
    for (const part of parts) {
      if (!part.paired) out.push(cut(part.characters.join('')));
      else if (part.characters.length === 1) out.push(cut(part.characters[0] as string));
      else for (let index = 0; index + 1 < part.characters.length; index++) out.push(cut((part.characters[index] as string) + (part.characters[index + 1] as string)));
    }
    parts = [];
  };
  for (const c of folded) {
    if (isLetterOrDigit(c)) {
      const paired = isPaired(c);
      const last = parts[parts.length - 1];
      if (last && last.paired === paired) last.characters.push(c);
      else parts.push({ paired, characters: [c] });
    } else if (isMark(c) && parts.length > 0) {
      const last = parts[parts.length - 1] as { characters: string[] };
      last.characters[last.characters.length - 1] += c;
    } else {
      endWord();
    }
  }
  endWord();
  return out;
}

const independentWords = (text: string) => [...new Set(independentWordList(text))];

/** The match read again: every query word held; the last, of 2 characters or more, may start a word instead. */
function independentMatch(noteText: string, queryText: string): boolean {
  const held = independentWords(noteText);
  const tokens = queryText.split(/\s+/u).filter((token) => token && !/^(include|domain|language|sentiment|nsfw):\S*$/u.test(token.normalize('NFKC').toLowerCase()));
  const asked = tokens.flatMap(independentWordList);
  const last = asked[asked.length - 1];
  if (last === undefined) return false;
  if (!asked.slice(0, -1).every((word) => held.includes(word))) return false;
  return Array.from(last).length >= 2 ? held.some((word) => word.startsWith(last)) : held.includes(last);
}

describe('note words and queries', () => {
  it('content is split on what is not a letter, mark or digit, NFKC, lower case, each word once, in order', () => {
    expect(noteWords(note('GM nostr! gm, NOSTR https://example.com/a-path'))).toEqual(['gm', 'nostr', 'https', 'example', 'com', 'a', 'path']);
    // Accents stay (é is not e); decomposed and composed forms are one word; full width is folded.
    expect(noteWords(note('Café cafe\u0301 cafe ＮＯＳＴＲ ｃａｆé'))).toEqual(['café', 'cafe', 'nostr']);
    expect(noteWords(note('Ελλάδα ΑΣ İstanbul'))).toEqual(['ελλάδα', 'ασ', 'istanbul']);
    // Lower case leaves i and U+0301, which NFKC composes: folded twice, a word does not change.
    expect(noteWords(note('İ\u0301'))).toEqual(['í']);
    expect(matches('İ\u0301', noteWords(note('İ\u0301')).join(' '))).toBe(true);
    expect(noteWords(note('مرحبا بالعالم'))).toEqual(['مرحبا', 'بالعالم']);
    expect(noteWords(note('🤙⚡️ gm 🫂'))).toEqual(['gm']);
    expect(noteWords(note('नमस्ते दुनिया'))).toEqual(['नमस्ते', 'दुनिया']);
  });

  it('Han, Hiragana, Katakana and Hangul runs give their overlapping pairs; a run of one stays; a script change splits a word', () => {
    expect(noteWords(note('東京タワー'))).toEqual(['東京', '京タ', 'タワ', 'ワー']);
    expect(noteWords(note('比特币'))).toEqual(['比特', '特币']);
    expect(noteWords(note('한국어 좋아요'))).toEqual(['한국', '국어', '좋아', '아요']);
    expect(noteWords(note('2024年 iPhone買った 猫'))).toEqual(['2024', '年', 'iphone', '買っ', 'った', '猫']);
    // Half-width katakana and a decomposed voiced mark are folded by NFKC first: one pair.
    expect(noteWords(note('ｶﾞｷ'))).toEqual(['ガキ']);
    expect(noteWords(note('か\u3099き'))).toEqual(['がき']);
    // Thai is written without spaces too, but is not split into pairs: a run is one word.
    expect(noteWords(note('ภาษาไทย'))).toEqual(['ภาษาไทย']);
  });

  it('a long-form article (kind 30023) is searched by its title and summary too; other kinds by their content only', () => {
    const tags = [['d', 'slug'], ['title', 'Lightning Guide'], ['summary', 'How zaps work'], ['t', 'bitcoin'], ['title', 'second title']];
    expect(noteWords(note('Body text', 30023, tags))).toEqual(['lightning', 'guide', 'how', 'zaps', 'work', 'body', 'text']);
    expect(noteWords(note('Body text', 1, tags))).toEqual(['body', 'text']);
    expect(matches('body', 'lightning guide', 30023, tags)).toBe(true);
    expect(matches('body', 'bitcoin', 30023, tags)).toBe(false);
    // An essay of more distinct words than are indexed is still found by its title and summary.
    const essay = Array.from({ length: MAX_NOTE_WORDS + 500 }, (_, index) => `word${index}`).join(' ');
    const long = noteWords(note(essay, 30023, [['title', 'Zebracorn'], ['summary', 'quokka']]));
    expect(long).toHaveLength(MAX_NOTE_WORDS);
    expect(long.slice(0, 3)).toEqual(['zebracorn', 'quokka', 'word0']);
  });

  it('every query word must be held as it is; the last may start a word when it has 2 characters or more', () => {
    expect(matches('hello nostrich world', 'hello nost')).toBe(true);
    expect(matches('hello nostrich world', 'nost hello')).toBe(false);
    expect(matches('hello nostrich world', 'WORLD hello')).toBe(true);
    expect(matches('hello nostrich world', 'hello n')).toBe(false);
    expect(matches('hello n world', 'hello n')).toBe(true);
    expect(matches('hello nostrich world', 'hello world missing')).toBe(false);
    // A word named before the last is held as it is even when it is also the last.
    expect(matches('nostrich', 'nostr nostr')).toBe(false);
    expect(matches('東京タワーに行った', '東京タワー')).toBe(true);
    expect(matches('東京タワーに行った', 'タワー東京')).toBe(false);
    expect(matches('東京', '東')).toBe(false);
    expect(matches('東 京', '東')).toBe(true);
  });

  it('NIP-50 extensions are ignored, not searched for; a query of none but them, or of emoji, has no words', () => {
    expect(parseNoteQuery('language:en include:spam Bitcoin')).toEqual({ words: [], prefix: 'bitcoin' });
    expect(parseNoteQuery('Language:EN ｎｓｆｗ:false nostr apps')).toEqual({ words: ['nostr'], prefix: 'apps' });
    // Not an extension: searched as words.
    expect(parseNoteQuery('nostr:npub1xyz')).toEqual({ words: ['nostr'], prefix: 'npub1xyz' });
    expect(parseNoteQuery('sort:top')).toEqual({ words: ['sort'], prefix: 'top' });
    expect(parseNoteQuery('include:spam')).toBeNull();
    expect(parseNoteQuery('🤙 ⚡️ @#!')).toBeNull();
    expect(parseNoteQuery('a')).toEqual({ words: ['a'], prefix: null });
    expect(isNoteQueryLength('')).toBe(false);
    expect(isNoteQueryLength('東'.repeat(64))).toBe(true);
    expect(isNoteQueryLength('🤙'.repeat(64))).toBe(true);
    expect(isNoteQueryLength('a'.repeat(65))).toBe(false);
  });

  it('a hostile note is cut, never refused: 100,000 words, a 10,000-letter word, 64 KiB of Han', () => {
    const many = noteWords(note(Array.from({ length: 100_000 }, (_, index) => `w${index}`).join(' ')));
    expect(many).toHaveLength(MAX_NOTE_WORDS);
    expect(many.slice(0, 2)).toEqual(['w0', 'w1']);
    expect(noteWords(note('y'.repeat(10_000)))).toEqual(['y'.repeat(MAX_WORD_CHARS)]);
    expect(noteWords(note('\u{10400}'.repeat(100)))).toEqual(['\u{10428}'.repeat(MAX_WORD_CHARS)]);
    const han = noteWords(note(Array.from({ length: 20_000 }, (_, index) => String.fromCodePoint(0x4e00 + ((index * 7919) % 20_000))).join('')));
    expect(han).toHaveLength(MAX_NOTE_WORDS);
    expect(han.every((word) => Array.from(word).length === 2)).toBe(true);
  });
});

/** Text made of pieces of many scripts, separators and marks, as notes mix them. */
const piece = fc.constantFrom('gm', 'Nostr', 'café', 'cafe\u0301', 'ＮＯＳＴＲ', '東京', 'タワー', 'に', '行った', '한국어', 'مرحبا', 'नमस्ते', 'ภาษา', '2024', '年', '🤙', '⚡️', ' ', ' ', '. ', '#', '@', '\n', 'İ', 'Σ', 'ς', '\u0301', 'ｶﾞ');
const text = fc.array(piece, { maxLength: 30 }).map((pieces) => pieces.join(''));

describe('note search against an independent reading of the rule (property)', () => {
  it('for any text: the words are those of the independent reading, in order, each a non-empty run of at most 64 characters', () => {
    fc.assert(
      fc.property(text, (content) => {
        const words = noteWords(note(content));
        expect(words).toEqual(independentWords(content));
        for (const word of words) {
          expect(word.length).toBeGreaterThan(0);
          expect(Array.from(word).length).toBeLessThanOrEqual(MAX_WORD_CHARS);
        }
      }),
    );
  });

  it('for any note and query: the match is the independent reading’s; a note matches any query made of its own words', () => {
    fc.assert(
      fc.property(text, text, fc.string({ unit: 'grapheme', maxLength: 20 }), (content, other, noise) => {
        for (const query of [other, noise, `${other} ${noise}`]) expect(matches(content, query)).toBe(independentMatch(content, query));
        const own = independentWords(content);
        if (own.length > 0) expect(matches(content, own.join(' '))).toBe(true);
      }),
    );
  });

  it('for any input, hostile or not: never a throw, and a query of the 64 characters accepted parses in bounded words', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (query) => {
        const parsed = parseNoteQuery(query);
        if (parsed) expect(parsed.words.length + (parsed.prefix ? 1 : 0)).toBeLessThanOrEqual(64);
        expect(() => noteWords(note(query, 30023, [['title', query], ['summary']]))).not.toThrow();
      }),
    );
  });
});
