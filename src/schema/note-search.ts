import { LookupError } from '../errors.js';
import { DEFAULT_SEARCH_KINDS, isNoteQueryLength, matchesNoteQuery, type NoteQuery, noteWords, parseNoteQuery } from '../nostr/note-search.js';
import { MAX_QUERY_CHARS } from '../nostr/profile-search.js';
import { containsSecretKey } from '../nostr/secret-keys.js';
import type { StoredEvent } from '../store/event-store.js';
import { ALL_NOTES_WORD, isSearchableKind, MAX_PREFIX_WORDS, type NoteSearchQuery, SEARCHABLE_KINDS } from '../store/note-search-index.js';
import type { ReplyPosition } from '../store/relation-index.js';
import { isDeleted } from '../store/tombstones.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { type EventConnection, EventConnectionRef, type EventEdge, loadPositions } from './event-connection.js';
import { DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor, FEED_SCAN_FACTOR, MAX_PAGE_SIZE, pageSizeOf } from './paging.js';
import { pubkeyOfArgument } from './profile.js';
import { readerFilter } from './trust.js';

/**
 * Search of notes (DESIGN "Screens", NIP-50): the notes and articles whose words hold the query's
 * (nostr/note-search.ts), newest first, then by id, from the note search part of the relationship
 * index (store/note-search-index.ts), never a scan. The query is planned here: its whole words go to
 * the index as they are, its last word (a prefix of 2 characters or more) as the words the index
 * holds that start with it (at most MAX_PREFIX_WORDS; past that many, each note found is checked for
 * it by its own words, as `authors` is). `authors`
 * and a reader's web of trust and mutes (`viewer`, else TRUST_SEEDS) are applied to the events the
 * index hands back, as a filtered page is (event-connection.ts filteredEventPage): a page looks at
 * FEED_SCAN_FACTOR × `first` matches at most, and at SEARCH_READS_PER_PAGE reads of the index.
 * With SEARCH_RELAYS, a first page asks them first (NOTE_SEARCH), once per RELATIONS_TTL per query.
 */

/** The most authors `authors` names. */
export const MAX_SEARCH_AUTHORS = 20;

/** Reads of the index one page makes at most (each does up to 16 × 2,000 units of work: note-search-index.ts). */
export const SEARCH_READS_PER_PAGE = 4;

/** The distinct kinds asked, or invalid_argument: 1 or more of the kinds the index holds. */
function searchKindsOf(kinds: readonly number[] | null | undefined): number[] {
  if (!Array.isArray(kinds)) throw new LookupError('invalid_argument');
  const distinct = [...new Set(kinds)];
  if (distinct.length === 0 || !distinct.every((kind) => Number.isInteger(kind) && isSearchableKind(kind))) throw new LookupError('invalid_argument');
  return distinct.sort((a, b) => a - b);
}

/** The index's query for a parsed query, and a prefix the notes it finds must still be checked for; null when nothing can match (a prefix no word starts with). */
async function planOf(parsed: NoteQuery, context: GraphQLContext): Promise<{ query: Pick<NoteSearchQuery, 'words' | 'anyOf'>; checkPrefix: string | null } | null> {
  const { words, prefix } = parsed;
  if (prefix === null) return { query: { words, anyOf: null }, checkPrefix: null };
  const expansion = await context.loaders.noteWordsStarting(prefix, MAX_PREFIX_WORDS + 1);
  if (expansion.length === 0) return null;
  // Too many words start with it to look in all their lists: the other words alone (or every
  // note), each note found checked for the prefix by its own words. Exact, as the expansion is;
  // a page may be shorter.
  if (expansion.length > MAX_PREFIX_WORDS) return { query: { words: words.length > 0 ? words : [ALL_NOTES_WORD], anyOf: null }, checkPrefix: prefix };
  return { query: { words, anyOf: expansion }, checkPrefix: null };
}

interface SearchArguments {
  query: string;
  first?: number | null | undefined;
  after?: string | null | undefined;
  kinds?: readonly number[] | null | undefined;
  authors?: readonly string[] | null | undefined;
  since?: number | null | undefined;
  until?: number | null | undefined;
  viewer?: string | null | undefined;
}

const EMPTY: EventConnection = { edges: [], pageInfo: { hasNextPage: false, endCursor: null } };

/** A page of a note search (see the module comment and the field's description). */
export async function searchNotesPage(args: SearchArguments, context: GraphQLContext): Promise<EventConnection> {
  const { loaders, budget } = context;
  if (!context.store.relations.noteSearchEnabled) throw new LookupError('note_search_off');
  // A secret key pasted into the search box is refused, never searched for (as searchProfiles).
  if (containsSecretKey(args.query)) throw new LookupError('secret_key_refused');
  const size = pageSizeOf(args.first);
  if (!isNoteQueryLength(args.query)) throw new LookupError('invalid_search');
  const kinds = searchKindsOf(args.kinds);
  const from = args.after === null || args.after === undefined ? null : decodeCursor(args.after, 'search');
  if (args.authors && (args.authors.length === 0 || args.authors.length > MAX_SEARCH_AUTHORS)) throw new LookupError('invalid_argument');
  const authors = args.authors ? new Set(await Promise.all(args.authors.map((author) => pubkeyOfArgument(context, author)))) : undefined;
  budget.charge(1);
  const parsed = parseNoteQuery(args.query);
  if (parsed === null) return EMPTY;
  const since = args.since ?? null;
  const until = args.until ?? null;
  if (since !== null && until !== null && since > until) return EMPTY;
  const reader = await readerFilter(context, args.viewer);
  // With SEARCH_RELAYS, a first page asks them first (fill/relation-fill.ts NOTE_SEARCH): what they
  // answer is verified, stored and indexed before the index is read.
  if (from === null) await loaders.fillNoteSearch([...parsed.words, ...(parsed.prefix === null ? [] : [parsed.prefix])].join(' '));
  const plan = await planOf(parsed, context);
  if (plan === null) return EMPTY;
  const { checkPrefix } = plan;
  const hasPrefix = (held: StoredEvent) => checkPrefix === null || matchesNoteQuery(noteWords(held.event), { words: [], prefix: checkPrefix });
  const shows = (held: StoredEvent) => (!authors || authors.has(held.event.pubkey)) && (!reader || reader.shows(held.event)) && hasPrefix(held);
  const filtered = authors !== undefined || reader !== undefined || checkPrefix !== null;
  const limit = filtered ? FEED_SCAN_FACTOR * size : size;
  const edges: EventEdge[] = [];
  let examined = 0;
  let last: ReplyPosition | null = from;
  let more = true;
  for (let reads = 0; reads < SEARCH_READS_PER_PAGE && edges.length < size && examined < limit && more; reads++) {
    const want = Math.min(size - edges.length, limit - examined);
    const { notes, stoppedAt } = await loaders.searchNotes({ ...plan.query, kinds, since, until, after: last, first: want + 1 });
    more = notes.length > want || stoppedAt !== null;
    const page = notes.slice(0, want);
    if (page.length > 0) {
      const found = await loadPositions(page, context);
      if (found.length === 0 && examined === 0) throw new LookupError('response_too_large');
      let cut = found.length < page.length;
      for (const [index, position] of page.entries()) {
        // The page is full, or the read bound stopped the read here: the rest is the next page's.
        if (edges.length >= size || index >= found.length) {
          more = true;
          cut = true;
          break;
        }
        examined += 1;
        last = position;
        const held = found[index];
        if (held && !isDeleted(held) && shows(held)) edges.push({ cursor: encodeCursor(position, 'search'), node: held });
      }
      if (cut) break;
    }
    // Every match the index found was taken, and it stopped looking further on: go on from there.
    if (notes.length <= want && stoppedAt !== null) last = stoppedAt;
  }
  budget.charge(edges.length);
  return { edges, pageInfo: { hasNextPage: more, endCursor: last && last !== from ? encodeCursor(last, 'search') : null } };
}

builder.queryFields((t) => ({
  searchNotes: t.field({
    type: EventConnectionRef,
    description: `Notes and long-form articles whose words hold the query's (DESIGN "Screens", NIP-50), newest first, then by id. Words: the content (and an article's title and summary), Unicode NFKC and lower case, split on anything that is not a letter, a mark or a digit; Chinese, Japanese and Korean runs as overlapping pairs of characters. A note matches when it holds every word of the query; the last word, of 2 characters or more, may instead start one of its words. NIP-50 extensions (\`include:spam\`, \`domain:\`, \`language:\`, \`sentiment:\`, \`nsfw:\`) are ignored. \`query\`: 1 to ${MAX_QUERY_CHARS} Unicode code points (else invalid_search); one of only emoji or punctuation finds nothing. \`kinds\`: some of ${SEARCHABLE_KINDS.join(' and ')} (else invalid_argument). \`authors\`: 1 to ${MAX_SEARCH_AUTHORS} pubkeys in any form \`pubkey(...)\` takes. \`since\`, \`until\`: created_at bounds, inclusive. \`viewer\` (any pubkey form; else TRUST_SEEDS where the operator set them): only authors in the viewer's web of trust, nothing it muted. A page looks at a bounded number of matches and of index postings: when words are common and seldom together, or \`authors\` and \`viewer\` leave many out, or the last word starts more than ${MAX_PREFIX_WORDS} indexed words (each note found is then checked for it), a page may hold fewer than \`first\` (even none) with \`hasNextPage\` true and \`endCursor\` past what it looked at. \`first\`: 1 to ${MAX_PAGE_SIZE} (else invalid_argument); \`after\`: a cursor from an earlier page of the same search (else invalid_cursor).`,
    args: {
      query: t.arg.string({ required: true }),
      first: t.arg.int({ defaultValue: DEFAULT_PAGE_SIZE }),
      after: t.arg.string(),
      kinds: t.arg.intList({ defaultValue: DEFAULT_SEARCH_KINDS }),
      authors: t.arg.stringList(),
      since: t.arg({ type: 'Timestamp' }),
      until: t.arg({ type: 'Timestamp' }),
      viewer: t.arg.string(),
    },
    resolve: (_root, args, context) => searchNotesPage(args, context),
  }),
}));
