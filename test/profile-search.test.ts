import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSearchQueryLength, matchesQuery, MAX_PROFILE_WORDS, MAX_WORD_CHARS, profileWords, queryWords, rankedPrefixes, rankedPrefixOf } from '../src/nostr/profile-search.js';

/** The rule of searchProfiles (nostr/profile-search.ts), on its own: words, queries, hostile content. */

const words = (fields: Record<string, unknown>) => profileWords({ kind: 0, content: JSON.stringify(fields) });

describe('profile words and query words', () => {
  it('splits name, display_name and nip05 on what is not a letter, mark or digit, NFKC, lower case, each word once', () => {
    expect(words({ name: 'Jack', display_name: 'Jack Dorsey', nip05: 'jack@cash.app' })).toEqual(['jack', 'dorsey', 'cash', 'app']);
    expect(words({ name: 'ＪＡＣＫ_ｄｏｒｓｅｙ' })).toEqual(['jack', 'dorsey']);
    expect(words({ name: 'Jose\u0301' })).toEqual(['josé']);
    expect(words({ name: '⚡️Satoshi⚡️ 🤙' })).toEqual(['satoshi']);
    expect(words({ name: 'नमस्ते' })).toEqual(['नमस्ते']);
    expect(words({ name: '中本聪' })).toEqual(['中本聪']);
    // Lower case without context: a final sigma and a dotted capital I match as their plain letters.
    expect(words({ name: 'ΑΣ Ασπρο İstanbul' })).toEqual(['ασ', 'ασπρο', 'istanbul']);
    expect(matchesQuery(words({ name: 'ΑΣ' }), queryWords('Ασπ'))).toBe(false);
    expect(matchesQuery(words({ name: 'Ασπρο' }), queryWords('ΑΣ'))).toBe(true);
    expect(matchesQuery(words({ name: 'İstanbul' }), queryWords('ist'))).toBe(true);
    expect(words({ displayName: 'Old Spelling' })).toEqual(['old', 'spelling']);
    expect(words({ name: 42, about: 'not searched', lud16: 'not@searched.example' })).toEqual([]);
    expect(profileWords({ kind: 1, content: '{"name":"not a profile"}' })).toEqual([]);
    expect(profileWords({ kind: 0, content: 'not json' })).toEqual([]);
  });

  it('a query is split the same way; emoji and punctuation alone are no words', () => {
    expect(queryWords('jack@cash.app')).toEqual(['jack', 'cash', 'app']);
    expect(queryWords('  JACK   jack  ')).toEqual(['jack']);
    expect(queryWords('🤙')).toEqual([]);
    expect(queryWords('@.-')).toEqual([]);
    expect(isSearchQueryLength('')).toBe(false);
    expect(isSearchQueryLength('a'.repeat(64))).toBe(true);
    expect(isSearchQueryLength('🤙'.repeat(64))).toBe(true);
    expect(isSearchQueryLength('a'.repeat(65))).toBe(false);
  });

  it('a hostile profile is cut, never refused: thousands of words, a 1,000-letter word; content over 64 KiB is not read (as Profile fields)', () => {
    const many = words({ name: Array.from({ length: 5000 }, (_, index) => `w${index}`).join(' '), display_name: 'x'.repeat(30_000), nip05: `${'y'.repeat(1000)}@z.example` });
    expect(many).toHaveLength(MAX_PROFILE_WORDS);
    expect(many.slice(0, 3)).toEqual(['w0', 'w1', 'w2']);
    expect(words({ name: 'jack', about: 'x'.repeat(70_000) })).toEqual([]);
    const long = words({ name: 'y'.repeat(1000) });
    expect(long).toEqual(['y'.repeat(MAX_WORD_CHARS)]);
    // Cut by code point, never inside a surrogate pair.
    expect(words({ name: '\u{10400}'.repeat(100) })).toEqual(['\u{10428}'.repeat(MAX_WORD_CHARS)]);
  });

  it('rank prefixes are the first character and the first 3 of each word, once; a query word walks its longest', () => {
    expect(rankedPrefixes(['jack', 'jam', 'j', 'jo', '中本聪x'])).toEqual(['j', 'jac', 'jam', '中', '中本聪']);
    expect(rankedPrefixOf('satoshi')).toBe('sat');
    expect(rankedPrefixOf('sa')).toBe('s');
    expect(rankedPrefixOf('s')).toBe('s');
    expect(rankedPrefixOf('𝐚𝐛𝐜𝐝')).toBe('𝐚𝐛𝐜');
  });

  it('for any fields: words are non-empty, at most 64 characters of letters, marks and digits, at most 16, never a throw; a profile matches its own name (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.anything()), fc.oneof(fc.string({ unit: 'grapheme', maxLength: 100 }), fc.constant(null)), (name, nip05) => {
        const found = words({ name, nip05 });
        expect(found.length).toBeLessThanOrEqual(MAX_PROFILE_WORDS);
        for (const word of found) {
          expect(word.length).toBeGreaterThan(0);
          expect(Array.from(word).length).toBeLessThanOrEqual(MAX_WORD_CHARS);
          expect(word).toMatch(/^[\p{L}\p{M}\p{N}]+$/u);
        }
        if (typeof name === 'string') {
          const asked = queryWords(name).slice(0, 3);
          // Every query word of the name is a prefix of the profile's words, unless the words were cut.
          if (found.length < MAX_PROFILE_WORDS && asked.every((word) => Array.from(word).length <= MAX_WORD_CHARS)) expect(matchesQuery(found, asked)).toBe(true);
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 300), seed: Number(process.env.FUZZ_SEED ?? 28) },
    );
  });
});
