import {
  RestEventDocument,
  type RestEventQuery,
  type RestEventQueryVariables,
} from '../../generated/operations.js';
import type { RestLookup } from './rest-lookup.js';

/**
 * GET /event?id=… → `{"event": …, "profiles": {pubkey: …}}` (spec §4.2). Events are embedded as the
 * stored wire JSON, never re-encoded; profiles keep the relevant-pubkey order (author first), and a
 * pubkey without a profile is simply absent.
 */
export const eventLookup: RestLookup<RestEventQuery, RestEventQueryVariables> = {
  path: '/event',
  parameter: 'id',
  document: RestEventDocument,
  variables: (id) => ({ id }),
  render: ({ event }) => {
    if (!event) return null;
    // A pubkey is 64 lowercase hex characters (read from the stored event): nothing to escape.
    const profiles = event.relevantProfiles.map(({ pubkey, event: profile }) => `"${pubkey}":${profile.json}`);
    return `{"event":${event.json},"profiles":{${profiles.join(',')}}}`;
  },
  notFound: 'event_not_found',
};
