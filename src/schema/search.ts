import { LookupError } from '../errors.js';
import { isSearchQueryLength, MAX_QUERY_CHARS, queryWords } from '../nostr/profile-search.js';
import { containsSecretKey } from '../nostr/secret-keys.js';
import { builder } from './builder.js';
import { MAX_PROFILE_BYTES } from '../nostr/work-caps.js';
import { loadWithinReadBound } from './loaders.js';
import { FEED_SCAN_FACTOR, MAX_PAGE_SIZE, pageSizeOf } from './paging.js';
import { readerFilter } from './trust.js';
import { isDeleted } from '../store/tombstones.js';
import { ProfileRef, toProfile } from './profile.js';

/**
 * Who is called what: profiles whose name, display name or NIP-05 address has a word
 * starting with each word asked (nostr/profile-search.ts), ranked by followers, from the search part
 * of the relationship index (store/search-index.ts), never a scan. Costed as a list of `first`
 * profiles plus 1 for the search (query-cost.ts).
 */

/** The most profiles ranked for a search with a reader, of which those in its web are kept. */
const MAX_SEARCH_CANDIDATES = 500;

/** `first` of searchProfiles when the query does not say. */
export const DEFAULT_SEARCH_SIZE = 20;

builder.queryFields((t) => ({
  searchProfiles: t.field({
    type: [ProfileRef],
    description: `Profiles whose name, display_name or nip05 has, for every word of the query, a word that starts with it (Unicode NFKC, lower case; words are split on anything that is not a letter, a mark or a digit, in the query too, so \`jack@cash\` asks for \`jack\` and \`cash\`), ranked by the followers the index holds, descending, then by pubkey. A search looks at 2,000 profiles at most: a page may be short. \`viewer\` (any form \`pubkey(...)\` takes; else TRUST_SEEDS where the operator set them): only profiles in the viewer's web of trust, none it muted, from the first ${FEED_SCAN_FACTOR} × \`first\` ranked (at most ${MAX_SEARCH_CANDIDATES}). \`query\`: 1 to ${MAX_QUERY_CHARS} Unicode code points (else invalid_search); one of only emoji, punctuation or white space finds nothing. \`first\`: 1 to ${MAX_PAGE_SIZE} (else invalid_argument). Costs 4,000 plus its profiles in the cost model.`,
    args: { query: t.arg.string({ required: true }), first: t.arg.int({ defaultValue: DEFAULT_SEARCH_SIZE }), viewer: t.arg.string() },
    resolve: async (_root, { query, first, viewer }, context) => {
      const { loaders, budget } = context;
      // A secret key pasted into the search box (as a variable: one in the document is refused
      // whole before this) is refused as the identifier parser refuses one, never searched for:
      // with SEARCH_RELAYS it would otherwise be sent to them.
      if (containsSecretKey(query)) throw new LookupError('secret_key_refused');
      const size = pageSizeOf(first);
      if (!isSearchQueryLength(query)) throw new LookupError('invalid_search');
      const words = queryWords(query);
      budget.charge(1);
      if (words.length === 0) return [];
      // With a reader (viewer, else TRUST_SEEDS): FEED_SCAN_FACTOR times as many ranked, those in its web kept.
      const reader = await readerFilter(context, viewer);
      const ranked = await loaders.searchProfiles(words, reader ? Math.min(FEED_SCAN_FACTOR * size, MAX_SEARCH_CANDIDATES) : size);
      const pubkeys = reader ? ranked.filter((pubkey) => reader.web.has(pubkey)).slice(0, size) : ranked;
      budget.charge(pubkeys.length);
      // Within the request's read bound (a hundred large profiles stop short, as relevantProfiles
      // do); a profile deleted since the index answered is left out, never null.
      const found = await loadWithinReadBound(loaders.profiles, pubkeys, budget, MAX_PROFILE_BYTES);
      return found.flatMap((held) => {
        if (reader && held && !isDeleted(held) && !reader.shows(held.event)) return [];
        const profile = toProfile(held ?? null, budget.derivedCharger);
        return profile ? [profile] : [];
      });
    },
  }),
}));
