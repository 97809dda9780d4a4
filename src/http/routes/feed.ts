import { RestFeedDocument, type RestFeedQuery, type RestFeedQueryVariables } from '../../generated/operations.js';
import type { StringOutput } from '../../store/json-text.js';
import { renderedBody } from '../conditional.js';
import { pageLimit } from '../query-parameter.js';
import { type RestLookup, requiredValue } from './rest-lookup.js';
import { nextCursor, pageParameters, pushEvents, pushProfiles } from './screen-body.js';
import { PUBKEY_PARAMETER } from './user-profile.js';

/**
 * Events on a page when `limit` is left out, and at most: a feed page reads every followed
 * author's timeline (Pubkey.feed), and each event brings up to MAX_PROFILES profiles; a page of 50
 * costs about 14,000 in the cost model.
 */
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 50;

/**
 * GET /feed?pubkey=…&limit=&after= → `{"events": [newest first], "profiles": {…}, "next": <cursor
 * or null>}`: a page of the pubkey's home feed (Pubkey.feed's defaults: notes and reposts of the
 * authors its latest follow list names, no replies, its own public mutes applied), with the latest
 * profile of every relevant pubkey of every event shown, as /event's map. A pubkey without a follow
 * list has an empty feed (200). The ETag is a digest of the body.
 */
export const feedLookup: RestLookup<RestFeedQuery, RestFeedQueryVariables> = {
  path: '/feed',
  parameters: [PUBKEY_PARAMETER, ...pageParameters('Events', DEFAULT_LIMIT, MAX_LIMIT)],
  document: RestFeedDocument,
  variables: (values) => ({ pubkey: requiredValue(values, 'pubkey'), first: pageLimit(values.limit, DEFAULT_LIMIT, MAX_LIMIT), after: values.after ?? null }),
  sizedBy: ['first'],
  answerKey: () => undefined,
  render: ({ pubkey }, { maxResponseBytes }) => {
    if (!pubkey) return null;
    const events = pubkey.feed.edges.map(({ node }) => node);
    const parts: StringOutput[] = ['{"events":['];
    pushEvents(parts, events);
    parts.push('],"profiles":{');
    pushProfiles(parts, events, maxResponseBytes);
    parts.push('},"next":', nextCursor(pubkey.feed.pageInfo), '}');
    return renderedBody(parts);
  },
  notFound: 'profile_not_found',
  deleted: 'profile_deleted',
};
