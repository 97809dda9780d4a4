import {
  RestUserProfileDocument,
  type RestUserProfileQuery,
  type RestUserProfileQueryVariables,
} from '../../generated/operations.js';
import { validatorsOf } from '../conditional.js';
import type { RestLookup } from './rest-lookup.js';

/** GET /user-profile?pubkey=… → `{"profile": <latest kind-0 event>}` (spec §4.1). */
export const userProfileLookup: RestLookup<RestUserProfileQuery, RestUserProfileQueryVariables> = {
  path: '/user-profile',
  parameter: 'pubkey',
  document: RestUserProfileDocument,
  variables: (pubkey) => ({ pubkey }),
  render: ({ profile }) =>
    profile ? { parts: ['{"profile":', profile.event.json, '}'], validators: validatorsOf([profile.event.json], { lastModified: true }) } : null,
  notFound: 'profile_not_found',
  deleted: 'profile_deleted',
};
