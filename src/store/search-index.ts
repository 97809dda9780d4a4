/**
 * The search part of the relationship index (`Query.searchProfiles`; the rule in
 * nostr/profile-search.ts), kept by the store in the same write as the profiles and the follows:
 * - per pubkey, the words of its latest servable profile, with that profile's place (created_at, id);
 * - the words in lexical order with their pubkeys: the pubkeys with a word starting with a prefix are
 *   one range of it, and its size is known without reading it (Redis ZLEXCOUNT; LMDB counts a capped
 *   range);
 * - per prefix of 1 and of 3 characters of a word (nostr/profile-search.ts rankedPrefixes), its pubkeys
 *   in rank order (followers descending, then pubkey): a query with common words ("jam", "j") reads
 *   the smallest of its words' orders until it has a page, filtering by every word, and stops.
 * A query takes its rarest word: when that word's range holds at most LEX_RANGE_LIMIT entries it
 * reads them, filters and sorts by followers; otherwise it walks the smallest rank order of its
 * words' prefixes, RANK_WALK_LIMIT pubkeys at most (a page may then be short, never out of order).
 */
export interface SearchIndex {
  /**
   * The pubkeys whose profile matches every word (nostr/profile-search.ts queryWords, at least
   * one), ranked by followers descending, then by pubkey; at most `first`. One round trip.
   * `limits`: tests lower them to walk both paths, and the walk's end, on a few profiles.
   */
  searchProfiles(words: readonly string[], first: number, limits?: SearchLimits): Promise<string[]>;
  /** What the index holds of each pubkey, in the order asked (for `relations check`). */
  searchRecords(pubkeys: readonly string[]): Promise<SearchRecord[]>;
  /** Every pubkey the search index holds words or followers of (for `relations check`), in batches; some twice. */
  searchSubjects(): AsyncIterable<string[]>;
}

/** Where the range read ends and the rank walk begins, and where the walk stops. */
export interface SearchLimits {
  lexRange: number;
  rankWalk: number;
}

/** One pubkey as the search index holds it. */
export interface SearchRecord {
  /** The words of its latest servable profile (empty without one), as profileWords gives them. */
  words: string[];
  /** The followers it is ranked by (kept for every pubkey followed: its profile may come later). */
  followers: number;
  /**
   * Whether every word is in the lexical order with this pubkey and every prefix's rank order holds
   * it at `followers`: a record whose entries went missing is not served right.
   */
  indexed: boolean;
}

/** A query whose rarest word's range holds more entries than this walks a rank order. */
export const LEX_RANGE_LIMIT = 1000;

/**
 * A walk of a rank order looks at this many pubkeys at most: a query whose words are all common
 * and seldom together ("m j") would otherwise read every profile with an "m" word, one request
 * holding the Redis node for that long (review: 5,000 took 40–80 ms of Redis per search). What it
 * finds is still the best ranked, in order (nothing ranked above it was skipped); the page may be
 * short. The cost model charges a search for these reads (schema/query-cost.ts).
 */
export const RANK_WALK_LIMIT = 2000;

export const SEARCH_LIMITS: SearchLimits = { lexRange: LEX_RANGE_LIMIT, rankWalk: RANK_WALK_LIMIT };

/** Above any count of followers (a rank key holds 2^40 - 1 minus them: 10 hex digits). */
const RANK_TOP = 2 ** 40 - 1;

/** A rank as 10 hex digits that sort as ranks do (followers descending). */
export function rankKey(followers: number): string {
  return (RANK_TOP - followers).toString(16).padStart(10, '0');
}
