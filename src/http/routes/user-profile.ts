import {
  RestUserProfileDocument,
  type RestUserProfileQuery,
  type RestUserProfileQueryVariables,
} from '../../generated/operations.js';
import { parseProfilePointer } from '../../nostr/identifiers.js';
import { validatorsOf } from '../conditional.js';
import { parsedOrUndefined, type RestLookup } from './rest-lookup.js';

/** GET /user-profile?pubkey=… → `{"profile": <latest kind-0 event>}` (spec §4.1). */
export const userProfileLookup: RestLookup<RestUserProfileQuery, RestUserProfileQueryVariables> = {
  path: '/user-profile',
  parameter: 'pubkey',
  document: RestUserProfileDocument,
  variables: (pubkey) => ({ pubkey }),
  answerKey: (parameter) => {
    const pointer = parsedOrUndefined(() => parseProfilePointer(parameter));
    return pointer && 'pubkey' in pointer ? pointer.pubkey : undefined;
  },
  render: ({ profile }) =>
    profile ? { parts: ['{"profile":', profile.event.json, '}'], validators: validatorsOf([profile.event.json], { lastModified: true }) } : null,
  notFound: 'profile_not_found',
  deleted: 'profile_deleted',
};
