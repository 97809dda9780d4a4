import {
  RestEventDocument,
  type RestEventQuery,
  type RestEventQueryVariables,
} from '../../generated/operations.js';
import { joinJson, type StringOutput } from '../../store/json-text.js';
import type { RestLookup } from './rest-lookup.js';

/**
 * GET /event?id=… → `{"event": …, "profiles": {pubkey: …}}` (spec §4.2). Events are embedded as the
 * stored wire JSON bytes, never decoded or re-encoded; profiles keep the relevant-pubkey order (author
 * first), and a pubkey without a profile is simply absent.
 */
export const eventLookup: RestLookup<RestEventQuery, RestEventQueryVariables> = {
  path: '/event',
  parameter: 'id',
  document: RestEventDocument,
  variables: (id) => ({ id }),
  render: ({ event }) => {
    if (!event) return null;
    const parts: StringOutput[] = ['{"event":', event.json, ',"profiles":{'];
    let separator = '';
    for (const { pubkey, event: profile } of event.relevantProfiles) {
      // A pubkey is 64 lowercase hex characters (read from the stored event): nothing to escape.
      parts.push(`${separator}"${pubkey}":`, profile.json);
      separator = ',';
    }
    parts.push('}}');
    return joinJson(parts);
  },
  notFound: 'event_not_found',
};
