import type { NostrEvent } from './event.js';
import { parseProfileMetadata } from './profile-metadata.js';

/**
 * Who is called what (`Query.searchProfiles`), written once here: the stores index
 * these words (store/search-index.ts) and the recount derives the same from the events.
 *
 * A profile's words are those of its latest servable kind 0's `name`, `display_name` and `nip05`
 * (nostr/profile-metadata.ts reads them), in Unicode NFKC, lower case, split on anything that is not
 * a letter, a mark or a digit: `jack@cash.app` gives `jack`, `cash`, `app`. Marks stay with their
 * letters (a vowel sign of Devanagari or Thai, an accent NFKC cannot compose): splitting on them
 * would cut words in the middle; a word starts with a letter or a digit, never a mark. A profile matches a query when every word of the query is a prefix
 * of one of its words; results rank by followers, descending, then by pubkey.
 */

/** A query of this many characters at most (and at least 1). */
export const MAX_QUERY_CHARS = 64;

/** A profile's words beyond this many are not indexed (name, display_name and nip05 hold a few). */
export const MAX_PROFILE_WORDS = 16;

/** A word is indexed by its first this many characters (no query word can be longer). */
export const MAX_WORD_CHARS = MAX_QUERY_CHARS;

/** Each field is read up to this many characters: a 60 KB `name` indexes its start. */
const MAX_FIELD_CHARS = 256;

/** A word: a letter or digit, then letters, marks and digits (a mark alone, as the variation selector of ⚡️, is none). */
const WORD = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu;

/**
 * Lower case without its context: toLowerCase makes a word-final Σ a ς (so `ΑΣ` would not start
 * `Ασπρο`) and İ an i with a dot above (so `ist` would not start `İstanbul`); both are folded back.
 */
function lowerCase(text: string): string {
  return text.toLowerCase().replace(/ς/g, 'σ').replace(/i\u0307/g, 'i');
}

/** NFKC, then lower case without its context: how every rule that compares words folds text (profile search, word mutes). */
export function foldText(text: string): string {
  return lowerCase(text.normalize('NFKC'));
}

function wordsOf(text: string): string[] {
  return foldText(text).match(WORD) ?? [];
}

/** At most MAX_WORD_CHARS code points (a surrogate pair is never cut). */
function clip(word: string): string {
  const points = Array.from(word);
  return points.length > MAX_WORD_CHARS ? points.slice(0, MAX_WORD_CHARS).join('') : word;
}

/** The distinct words of a profile, in the order they first appear (name, display_name, nip05). Empty for any other kind. */
export function profileWords(event: Pick<NostrEvent, 'kind' | 'content'>): string[] {
  if (event.kind !== 0) return [];
  const { name, display_name, nip05 } = parseProfileMetadata(event.content);
  const words = new Set<string>();
  for (const field of [name, display_name, nip05]) {
    if (field === null) continue;
    for (const word of wordsOf(field.slice(0, MAX_FIELD_CHARS))) {
      if (words.size >= MAX_PROFILE_WORDS) break;
      words.add(clip(word));
    }
  }
  return [...words];
}

/**
 * The words of a query, normalised as profile words are. The issue splits a query on white space
 * only; a query word holding a character that separates profile words (`jack@cash`) could then never
 * match anything, so it is split the same way: `jack@cash` asks for both `jack` and `cash`. A query
 * of only such characters (an emoji, `@`) has no words and matches nothing.
 */
export function queryWords(query: string): string[] {
  return [...new Set(wordsOf(query).map(clip))];
}

/** Whether a profile with these words matches a query with those (every query word a prefix of one). */
export function matchesQuery(words: readonly string[], query: readonly string[]): boolean {
  return query.every((asked) => words.some((word) => word.startsWith(asked)));
}

/**
 * Profiles are kept in rank order per prefix of their words of these lengths (in characters): the
 * first character, and the first three (`j`, `jam`). Three narrow a walk enough for two common
 * words together (`james ka` walks `jam`, not every `j`); two more would cost a third more memory
 * for queries that a range read or the first character serves.
 */
export const RANKED_PREFIX_LENGTHS = [1, 3] as const;

/** The ranked prefixes of some words, each once. */
export function rankedPrefixes(words: readonly string[]): string[] {
  const prefixes = new Set<string>();
  for (const word of words) {
    const points = Array.from(word);
    for (const length of RANKED_PREFIX_LENGTHS) if (points.length >= length) prefixes.add(points.slice(0, length).join(''));
  }
  return [...prefixes];
}

/** The rank order a query word walks: that of its longest ranked prefix. */
export function rankedPrefixOf(word: string): string {
  const points = Array.from(word);
  const length = Math.max(...RANKED_PREFIX_LENGTHS.filter((ranked) => ranked <= points.length));
  return points.slice(0, length).join('');
}

/** Whether a query has the length searchProfiles accepts (in characters, as the issue counts them). */
export function isSearchQueryLength(query: string): boolean {
  const length = Array.from(query).length;
  return length >= 1 && length <= MAX_QUERY_CHARS;
}
