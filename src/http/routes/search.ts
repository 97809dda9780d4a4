import { LookupError } from '../../errors.js';
import { RestSearchDocument, type RestSearchQuery, type RestSearchQueryVariables } from '../../generated/operations.js';
import type { StringOutput } from '../../store/json-text.js';
import { DEFAULT_SEARCH_KINDS } from '../../nostr/note-search.js';
import { SEARCHABLE_KINDS } from '../../store/note-search-index.js';
import { MAX_SEARCH_AUTHORS } from '../../schema/note-search.js';
import { renderedBody } from '../conditional.js';
import { pageLimit } from '../query-parameter.js';
import { type RestLookup, requiredValue } from './rest-lookup.js';
import { sinceOf } from './notifications.js';
import { nextCursor, pageParameters, pushEvents, pushProfiles } from './screen-body.js';

/**
 * Notes on a page when `limit` is left out, and at most: a search costs 8,000 in the cost model and
 * each note brings up to MAX_PROFILES profiles; a page of 40 costs about 18,900 of the 20,000 a
 * request may (50, as /feed allows, would be refused as query_too_costly).
 */
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 40;

/** `kinds`: comma-separated kinds (each one the index holds: Query.searchNotes says); absent: the field's default. */
function kindsOf(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  const kinds = value.split(',').map((kind) => (/^[0-9]{1,5}$/.test(kind.trim()) ? Number(kind.trim()) : Number.NaN));
  if (kinds.length > SEARCHABLE_KINDS.length * 2 || kinds.some((kind) => Number.isNaN(kind))) {
    throw new LookupError('invalid_argument', { message: `"kinds" is a comma-separated list of ${SEARCHABLE_KINDS.join(', ')}.` });
  }
  return kinds;
}

/** `authors`: comma-separated pubkeys (hex, npub, nprofile), each checked by the field; absent: anyone. */
function authorsOf(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const authors = value.split(',').map((author) => author.trim());
  if (authors.length > MAX_SEARCH_AUTHORS) throw new LookupError('invalid_argument', { message: `"authors" names 1 to ${MAX_SEARCH_AUTHORS} pubkeys.` });
  return authors;
}

/**
 * GET /search?q=…&limit=&after=&kinds=&authors=&since=&until=&viewer= → `{"events": [newest first],
 * "profiles": {…}, "next": <cursor or null>}`: a page of Query.searchNotes (DESIGN "Screens", search
 * of notes), with the latest profile of every relevant pubkey of every note shown, as /event's map.
 * Nothing found is an empty page (200); with NOTE_SEARCH off, 501 note_search_off. The ETag is a
 * digest of the body.
 */
export const searchLookup: RestLookup<RestSearchQuery, RestSearchQueryVariables> = {
  path: '/search',
  parameters: [
    { name: 'q', required: true, description: 'What to find: 1 to 64 characters; every word must be in the note, the last may start one.', examples: ['bitcoin light'] },
    ...pageParameters('Notes', DEFAULT_LIMIT, MAX_LIMIT),
    { name: 'kinds', required: false, description: `Comma-separated: some of ${SEARCHABLE_KINDS.join(', ')} (default both).` },
    { name: 'authors', required: false, description: `Comma-separated pubkeys (hex, npub, nprofile, or a NIP-05 name, resolved at its domain), 1 to ${MAX_SEARCH_AUTHORS}.` },
    { name: 'since', required: false, description: 'Only notes with created_at >= since (unix seconds).' },
    { name: 'until', required: false, description: 'Only notes with created_at <= until (unix seconds).' },
    { name: 'viewer', required: false, description: "A pubkey (any form, NIP-05 too): only authors in its web of trust, nothing it muted." },
  ],
  document: RestSearchDocument,
  variables: (values) => {
    const kinds = kindsOf(values.kinds);
    const authors = authorsOf(values.authors);
    return {
      query: requiredValue(values, 'q'),
      first: pageLimit(values.limit, DEFAULT_LIMIT, MAX_LIMIT),
      after: values.after ?? null,
      // Absent: the field's default (a null would be refused).
      kinds: kinds ?? DEFAULT_SEARCH_KINDS,
      authors: authors ?? null,
      since: sinceOf(values.since, 'since'),
      until: sinceOf(values.until, 'until'),
      viewer: values.viewer ?? null,
    };
  },
  sizedBy: ['first'],
  answerKey: () => undefined,
  render: ({ searchNotes }, { maxResponseBytes }) => {
    const events = searchNotes.edges.map(({ node }) => node);
    const parts: StringOutput[] = ['{"events":['];
    pushEvents(parts, events);
    parts.push('],"profiles":{');
    pushProfiles(parts, events, maxResponseBytes);
    parts.push('},"next":', nextCursor(searchNotes.pageInfo), '}');
    return renderedBody(parts);
  },
  notFound: 'event_not_found',
  deleted: 'event_deleted',
};
