import {
  RestEventDocument,
  type RestEventQuery,
  type RestEventQueryVariables,
} from '../../generated/operations.js';
import { byteLengthOf, type StringOutput } from '../../store/json-text.js';
import { parseEventPointer } from '../../nostr/identifiers.js';
import { validatorsOf } from '../conditional.js';
import { parsedOrUndefined, type QueryParameter, requiredValue, type RestLookup } from './rest-lookup.js';

/** An event named by id (/event, /thread). */
export const ID_PARAMETER: QueryParameter = {
  name: 'id',
  required: true,
  description: '64 hex characters (any case), note1…, nevent1… (its relays are hints, its author asked), or naddr1… (the latest version at that address), optionally prefixed nostr:.',
  examples: ['d7c2b6093d9dfa3f452b871da8b3290a42159db6cd084ff17bcd6c6e25fc2a06'],
};

/**
 * GET /event?id=… → `{"event": …, "profiles": {pubkey: …}}` (spec §4.2). Events are embedded as the
 * stored wire JSON bytes, never decoded or re-encoded; profiles keep the relevant-pubkey order (author
 * first), and a pubkey without a profile is simply absent. The map stops before the profile that
 * would take it past MAX_RESPONSE_BYTES (profiles of ~800 KB made an 87-byte request a 79 MB
 * answer); the event itself is always there, whatever its size.
 */
export const eventLookup: RestLookup<RestEventQuery, RestEventQueryVariables> = {
  path: '/event',
  parameters: [ID_PARAMETER],
  document: RestEventDocument,
  variables: (values) => ({ id: requiredValue(values, 'id') }),
  answerKey: (values) => {
    const pointer = parsedOrUndefined(() => parseEventPointer(requiredValue(values, 'id')));
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
