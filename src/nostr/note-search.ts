import type { NostrEvent } from './event.js';
import { foldText, MAX_QUERY_CHARS, MAX_WORD_CHARS } from './profile-search.js';

/**
 * What a note says, as search reads it (DESIGN "Screens", search of notes, NIP-50), written once
 * here: a search index keeps these words per event, and the rule's tests and `relations check`
 * derive the same from the events.
 *
 * A note's words are those of its content, and for a long-form article (kind 30023, NIP-23) those
 * of its `title` and `summary` tags too: folded as every rule that compares words folds text (NFKC,
 * lower case: nostr/profile-search.ts foldText; then NFKC again), split on anything that is not a
 * letter, a mark or a digit, as profile search splits them. Chinese, Japanese and Korean are
 * written without spaces: a run of Han, Hiragana, Katakana or Hangul characters is split into its
 * overlapping pairs of characters (`東京タワー` gives `東京`, `京タ`, `タワ`, `ワー`), and a run of one stays one word; a
 * word that mixes such a run with other letters or digits (`2024年`) is split where the script
 * changes. Other scripts written without spaces (Thai, Lao, Khmer, Burmese) keep a run as one word:
 * search finds them by the run's start only.
 *
 * A note matches a query when, for every word of the query, the note has a word equal to it; the
 * query's last word may instead be the start of a note's word when it has 2 characters or more
 * (`nost` finds `nostr`, as a user types). The query is split as the note is; NIP-50's extensions
 * (`include:spam`, `domain:`, `language:`, `sentiment:`, `nsfw:`) are not supported and, as NIP-50
 * asks, ignored rather than searched for. Words are compared by their first MAX_WORD_CHARS
 * characters; a note's first MAX_NOTE_WORDS distinct words are indexed (an article's title and summary first).
 */

/** A note's distinct words past this many are not indexed (a note has far fewer; an article its first this many). */
export const MAX_NOTE_WORDS = 1000;

/** The kinds a search lists when the query does not say (DESIGN "Screens"): notes and long-form articles. */
export const DEFAULT_SEARCH_KINDS = [1, 30023];

/** NIP-23's long-form article: its title and summary are searched with its content. */
const ARTICLE_KIND = 30023;

/** NIP-50's extensions (`key:value`), none of them supported: a query token that is one is dropped. */
const EXTENSION = /^(?:include|domain|language|sentiment|nsfw):\S*$/u;

/** A word: a letter or digit, then letters, marks and digits (as profile search reads them). */
const WORD = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu;

/** One character of a script written without spaces and split into pairs, with the marks after it. */
const PAIRED = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]\p{M}*/u;

/** A word's characters, each with the marks that follow it (a mark never begins one: WORD). */
const CHARACTER = /[\p{L}\p{N}]\p{M}*|\p{M}+/gu;

/**
 * foldText, then NFKC once more: lower case can leave a letter and a mark that NFKC composes (`İ́`
 * gives `i` and U+0301, which a second fold makes `í`), and a query copied from a note's words must
 * find the note.
 */
function foldNoteText(text: string): string {
  return foldText(text).normalize('NFKC');
}

/** At most MAX_WORD_CHARS code points (a surrogate pair is never cut). */
function clip(word: string): string {
  const points = Array.from(word);
  return points.length > MAX_WORD_CHARS ? points.slice(0, MAX_WORD_CHARS).join('') : word;
}

/** Adds the words of a run of paired characters: its overlapping pairs, or the one character. */
function addPairs(run: readonly string[], add: (word: string) => void): void {
  if (run.length === 1) add(run[0] as string);
  for (let index = 0; index + 1 < run.length; index++) add((run[index] as string) + (run[index + 1] as string));
}

/** The words of some folded text, in order, each as often as it comes; `add` returns false to stop. */
function eachWord(folded: string, add: (word: string) => boolean | void): void {
  let stopped = false;
  const put = (word: string) => {
    if (!stopped && add(clip(word)) === false) stopped = true;
  };
  for (const [word] of folded.matchAll(WORD)) {
    if (stopped) return;
    // Most words have no paired character: kept whole, without looking at each character.
    if (!PAIRED.test(word)) {
      put(word);
      continue;
    }
    let run: string[] = [];
    let other = '';
    for (const [character] of word.matchAll(CHARACTER)) {
      if (PAIRED.test(character)) {
        if (other) put(other);
        other = '';
        run.push(character);
      } else {
        if (run.length > 0) addPairs(run, put);
        run = [];
        other += character;
      }
    }
    if (other) put(other);
    if (run.length > 0) addPairs(run, put);
  }
}

/**
 * The text a note is searched by: an article's first `title` and `summary`, then its content. The
 * title and summary come first: an essay of more than MAX_NOTE_WORDS distinct words is still found
 * by its title (found by review).
 */
function searchedTexts(event: Pick<NostrEvent, 'kind' | 'content' | 'tags'>): string[] {
  const texts: string[] = [];
  if (event.kind === ARTICLE_KIND) {
    for (const name of ['title', 'summary']) {
      const tag = event.tags.find((candidate) => candidate[0] === name && typeof candidate[1] === 'string');
      if (tag) texts.push(tag[1] as string);
    }
  }
  texts.push(event.content);
  return texts;
}

/** The distinct words of a note, in the order they first appear (an article's title and summary, then the content), MAX_NOTE_WORDS at most. */
export function noteWords(event: Pick<NostrEvent, 'kind' | 'content' | 'tags'>): string[] {
  const words = new Set<string>();
  for (const text of searchedTexts(event)) {
    eachWord(foldNoteText(text), (word) => {
      words.add(word);
      return words.size < MAX_NOTE_WORDS;
    });
    if (words.size >= MAX_NOTE_WORDS) break;
  }
  return [...words];
}

/** A query as the rule reads it: words a note must hold, and the last word, which may start one. */
export interface NoteQuery {
  /** Words a note must hold as they are (distinct). */
  words: string[];
  /** A word a note must hold or start a word with (2 characters or more), or null. */
  prefix: string | null;
}

/** Whether a query has the length searchNotes accepts: 1 to MAX_QUERY_CHARS code points, as profile search. */
export function isNoteQueryLength(query: string): boolean {
  const length = Array.from(query).length;
  return length >= 1 && length <= MAX_QUERY_CHARS;
}

/** The words of a query (see the module comment); null when it has none (only separators, emoji or extensions): it matches nothing. */
export function parseNoteQuery(query: string): NoteQuery | null {
  const kept = query
    .split(/\s+/u)
    .filter((token) => token !== '' && !EXTENSION.test(foldNoteText(token)))
    .join(' ');
  const all: string[] = [];
  eachWord(foldNoteText(kept), (word) => {
    all.push(word);
  });
  if (all.length === 0) return null;
  const last = all[all.length - 1] as string;
  const prefix = Array.from(last).length >= 2 ? last : null;
  // A word the query names before its last must be held as it is, even when it is the last word too.
  return { words: [...new Set(prefix === null ? all : all.slice(0, -1))], prefix };
}

/** Whether a note with these words (noteWords) matches a query. */
export function matchesNoteQuery(words: readonly string[], query: NoteQuery): boolean {
  const held = new Set(words);
  if (!query.words.every((word) => held.has(word))) return false;
  const { prefix } = query;
  return prefix === null || held.has(prefix) || words.some((word) => word.startsWith(prefix));
}
