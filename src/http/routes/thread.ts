import { RestThreadDocument, type RestThreadQuery, type RestThreadQueryVariables } from '../../generated/operations.js';
import type { StringOutput } from '../../store/json-text.js';
import { renderedBody } from '../conditional.js';
import { pageLimit } from '../query-parameter.js';
import type { RenderLimits, RestLookup } from './rest-lookup.js';
import { ID_PARAMETER } from './event.js';
import { nextCursor, pageParameters, pushEvents, pushProfiles, type Shown } from './screen-body.js';
import { requiredValue } from './rest-lookup.js';

type Ancestor = Shown & { id: StringOutput; parent?: Ancestor | null };

/**
 * Replies on a page when `limit` is left out, and at most: a page of 50 replies, each with up to
 * MAX_PROFILES profiles, costs about 14,800 in the cost model (GRAPHQL_MAX_COST 20,000 by default;
 * under a lower one, larger pages are refused as query_too_costly).
 */
const DEFAULT_LIMIT = 20;

/** Whose web of trust filters the replies (schema/trust.ts). */
const VIEWER_PARAMETER = {
  name: 'viewer',
  required: false,
  description: "A pubkey as /user-profile takes it: only replies by authors in its web of trust (itself, whom it follows, whom they follow), none it muted; a page may then be short. Without it, TRUST_SEEDS where the operator set them.",
};
const MAX_LIMIT = 50;

/**
 * GET /thread?id=…&limit=&after= → `{"event", "parents": [root … parent], "replies": [a page,
 * oldest first], "stats": {…}, "profiles": {…}, "next": <cursor or null>}`: what a client draws for
 * a note and its conversation, in one request.
 * - `parents`: the thread's root, then the events between it and the event, then its parent (NIP-10,
 *   NIP-22), as far as four events up from the event (the operation's depth): deeper threads show
 *   the root and the four nearest; an event not held (or deleted) ends the walk up.
 * - `replies`: the event's direct replies (kind 1 and 1111) oldest first, `limit` (1–100, 20) a
 *   page; `next` is the cursor to pass as `after` for the next page, null after the last. With
 *   `viewer`, only replies by authors in its web of trust, none it muted (Event.replies(viewer:)).
 * - `stats`: as `Event.stats` (DESIGN "Relationships").
 * - `profiles`: the latest kind-0 of every relevant pubkey of every event shown (author first), as
 *   /event's map: absent where none is known, stopping before MAX_RESPONSE_BYTES.
 * The ETag is a digest of the body (its counts change under the same events).
 */
export const threadLookup: RestLookup<RestThreadQuery, RestThreadQueryVariables> = {
  path: '/thread',
  parameters: [ID_PARAMETER, ...pageParameters('Replies', DEFAULT_LIMIT, MAX_LIMIT), VIEWER_PARAMETER],
  document: RestThreadDocument,
  variables: (values) => ({ id: requiredValue(values, 'id'), first: pageLimit(values.limit, DEFAULT_LIMIT, MAX_LIMIT), after: values.after ?? null, viewer: values.viewer ?? null }),
  sizedBy: ['first'],
  answerKey: () => undefined,
  render: ({ event }, limits) => (event ? renderThread(event, limits) : null),
  notFound: 'event_not_found',
  deleted: 'event_deleted',
};

function renderThread(event: NonNullable<RestThreadQuery['event']>, { maxResponseBytes }: RenderLimits) {
  const parents = ancestors(event.parent, event.root);
  const replies = event.replies.edges.map(({ node }) => node);
  const parts: StringOutput[] = ['{"event":', event.json, ',"parents":['];
  pushEvents(parts, parents);
  parts.push('],"replies":[');
  pushEvents(parts, replies);
  parts.push('],"stats":', JSON.stringify(event.stats), ',"profiles":{');
  pushProfiles(parts, [event, ...parents, ...replies], maxResponseBytes);
  parts.push('},"next":', nextCursor(event.replies.pageInfo), '}');
  return renderedBody(parts);
}

/** The root, then the parents from the farthest up to the nearest, each once. */
function ancestors(parent: Ancestor | null | undefined, root: (Shown & { id: StringOutput }) | null): Shown[] {
  const chain: (Shown & { id: StringOutput })[] = [];
  for (let at = parent; at; at = at.parent) chain.unshift(at);
  if (root && !chain.some((shown) => String(shown.id) === String(root.id))) chain.unshift(root);
  return chain;
}
