import {
  RestEventDocument,
  type RestEventQuery,
  type RestEventQueryVariables,
} from '../../generated/operations.js';
import { byteLengthOf, type StringOutput } from '../../store/json-text.js';
import { parseEventPointer } from '../../nostr/identifiers.js';
import { validatorsOf } from '../conditional.js';
import { parsedOrUndefined, type RestLookup } from './rest-lookup.js';

/**
 * GET /event?id=… → `{"event": …, "profiles": {pubkey: …}}` (spec §4.2). Events are embedded as the
 * stored wire JSON bytes, never decoded or re-encoded; profiles keep the relevant-pubkey order (author
 * first), and a pubkey without a profile is simply absent. The map stops before the profile that
 * would take it past MAX_RESPONSE_BYTES (profiles of ~800 KB made an 87-byte request a 79 MB
 * answer); the event itself is always there, whatever its size.
 */
export const eventLookup: RestLookup<RestEventQuery, RestEventQueryVariables> = {
  path: '/event',
  parameter: 'id',
  document: RestEventDocument,
  variables: (id) => ({ id }),
  answerKey: (parameter) => {
    const pointer = parsedOrUndefined(() => parseEventPointer(parameter));
    return pointer && 'id' in pointer ? pointer.id : undefined;
  },
  render: ({ event }, { maxResponseBytes }) => {
    if (!event) return null;
    const parts: StringOutput[] = ['{"event":', event.json, ',"profiles":{'];
    const included = [event.json];
    let bytes = 0;
    let separator = '';
    for (const { pubkey, event: profile } of event.relevantProfiles) {
      bytes += byteLengthOf(profile.json) + 70;
      if (bytes > maxResponseBytes) break;
      // A pubkey is 64 lowercase hex characters (read from the stored event): nothing to escape.
      parts.push(`${separator}"${pubkey}":`, profile.json);
      included.push(profile.json);
      separator = ',';
    }
    parts.push('}}');
    return { parts, validators: validatorsOf(included, { lastModified: false }) };
  },
  notFound: 'event_not_found',
  deleted: 'event_deleted',
};
