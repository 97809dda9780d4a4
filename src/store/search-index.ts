/**
 * The search part of the relationship index (issue 28 §2, `Query.searchProfiles`; the rule in
 * nostr/profile-search.ts), kept by the store in the same write as the profiles and the follows:
 * - per pubkey, the words of its latest servable profile, with that profile's place (created_at, id);
 * - the words in lexical order with their pubkeys: the pubkeys with a word starting with a prefix are
 *   one range of it, and its size is known without reading it (Redis ZLEXCOUNT; LMDB counts a capped
 *   range);
 * - per first character of a word, its pubkeys in rank order (followers descending, then pubkey):
 *   a query with a common word ("j") reads that order until it has a page, filtering by the other
 *   words, and stops.
 * A query takes its rarest word: when that word's range holds at most LEX_RANGE_LIMIT entries it
 * reads them, filters and sorts by followers; otherwise it walks its first character's rank order.
 * Either way no profile outside the answer's ranks is read past what it takes to fill a page.
 */
export interface SearchIndex {
  /**
   * The pubkeys whose profile matches every word (nostr/profile-search.ts queryWords, at least
   * one), ranked by followers descending, then by pubkey; at most `first`. One round trip.
   * `lexRangeLimit` (LEX_RANGE_LIMIT): where one path ends and the other begins; tests lower it to
   * walk both on a few profiles.
   */
  searchProfiles(words: readonly string[], first: number, lexRangeLimit?: number): Promise<string[]>;
  /** What the index holds of each pubkey, in the order asked (for `relations check`). */
  searchRecords(pubkeys: readonly string[]): Promise<SearchRecord[]>;
  /** Every pubkey the search index holds words or followers of (for `relations check`), in batches; some twice. */
  searchSubjects(): AsyncIterable<string[]>;
}

/** One pubkey as the search index holds it. */
export interface SearchRecord {
  /** The words of its latest servable profile (empty without one), as profileWords gives them. */
  words: string[];
  /** The followers it is ranked by (kept for every pubkey followed: its profile may come later). */
  followers: number;
  /**
   * Whether every word is in the lexical order with this pubkey and every first character's rank
   * order holds it at `followers`: a record whose entries went missing is not served right.
   */
  indexed: boolean;
}

/** A query word whose range holds more entries than this walks the rank order of its first character. */
export const LEX_RANGE_LIMIT = 2000;

/** Above any count of followers (a rank key holds 2^40 - 1 minus them: 10 hex digits). */
const RANK_TOP = 2 ** 40 - 1;

/** A rank as 10 hex digits that sort as ranks do (followers descending). */
export function rankKey(followers: number): string {
  return (RANK_TOP - followers).toString(16).padStart(10, '0');
}
