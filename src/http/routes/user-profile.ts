import {
  RestUserProfileDocument,
  type RestUserProfileQuery,
  type RestUserProfileQueryVariables,
} from '../../generated/operations.js';
import { parseProfilePointer } from '../../nostr/identifiers.js';
import { validatorsOf } from '../conditional.js';
import { parsedOrUndefined, type QueryParameter, requiredValue, type RestLookup } from './rest-lookup.js';

/** A pubkey, however named (/user-profile, /feed). */
export const PUBKEY_PARAMETER: QueryParameter = {
  name: 'pubkey',
  required: true,
  description: '64 hex characters (any case), npub1…, nprofile1… (its relays are hints), optionally prefixed nostr:, or a NIP-05 name@domain.',
  examples: ['1739d937dc8c0c7370aa27585938c119e25c41f6c441a5d34c6d38503e3136ef', 'npub1zuuajd7u3sx8xu92yav9jwxpr839cs0kc3q6t56vd5u9q033xmhsk6c2uc', '_@jeffg.fyi'],
};

/** GET /user-profile?pubkey=… → `{"profile": <latest kind-0 event>}` (spec §4.1). */
export const userProfileLookup: RestLookup<RestUserProfileQuery, RestUserProfileQueryVariables> = {
  path: '/user-profile',
  parameters: [PUBKEY_PARAMETER],
  document: RestUserProfileDocument,
  variables: (values) => ({ pubkey: requiredValue(values, 'pubkey') }),
  answerKey: (values) => {
    const pointer = parsedOrUndefined(() => parseProfilePointer(requiredValue(values, 'pubkey')));
    return pointer && 'pubkey' in pointer ? pointer.pubkey : undefined;
  },
  render: ({ profile }) =>
    profile ? { parts: ['{"profile":', profile.event.json, '}'], validators: validatorsOf([profile.event.json], { lastModified: true }) } : null,
  notFound: 'profile_not_found',
  deleted: 'profile_deleted',
};
