import { LookupError } from '../../errors.js';
import { RestNotificationsDocument, type NotificationType, type RestNotificationsQuery, type RestNotificationsQueryVariables } from '../../generated/operations.js';
import { NOTIFICATION_TYPES } from '../../nostr/notifications.js';
import type { StringOutput } from '../../store/json-text.js';
import { renderedBody } from '../conditional.js';
import { pageLimit } from '../query-parameter.js';
import { type RestLookup, requiredValue } from './rest-lookup.js';
import { nextCursor, pageParameters, pushEvents, pushProfiles } from './screen-body.js';
import { PUBKEY_PARAMETER } from './user-profile.js';

/** Notifications on a page when `limit` is left out, and at most (as /feed). */
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 50;

/** `types`: comma-separated NotificationType names (any case), each known (else invalid_argument); absent: all. */
export function notificationTypesOf(value: string | undefined): NotificationType[] | null {
  if (value === undefined) return null;
  const names = value.split(',').map((name) => name.trim().toUpperCase());
  if (names.length > NOTIFICATION_TYPES.length * 2 || names.some((name) => !(NOTIFICATION_TYPES as readonly string[]).includes(name))) {
    throw new LookupError('invalid_argument', { message: `"types" is a comma-separated list of ${NOTIFICATION_TYPES.join(', ')}.` });
  }
  return [...new Set(names)] as NotificationType[];
}

/** `since` (or another time bound, `name`): unix seconds, a whole number (else invalid_argument); absent: no bound. */
export function sinceOf(value: string | undefined, name = 'since'): number | null {
  if (value === undefined) return null;
  if (!/^[0-9]{1,15}$/.test(value)) throw new LookupError('invalid_argument', { message: `"${name}" is a time in unix seconds.` });
  return Number(value);
}

/**
 * GET /notifications?pubkey=…&limit=&after=&since=&types= → `{"notifications": [{"type", "event",
 * "target"}], "profiles": {…}, "next": <cursor or null>}`: a page of Pubkey.notifications, newest
 * first, the pubkey's own public mutes applied; `target` is the pubkey's event it is about, or null;
 * `profiles` holds the latest profile of every relevant pubkey of every notifying event, as /event's
 * map. A pubkey with none has an empty page (200). The ETag is a digest of the body.
 */
export const notificationsLookup: RestLookup<RestNotificationsQuery, RestNotificationsQueryVariables> = {
  path: '/notifications',
  parameters: [
    PUBKEY_PARAMETER,
    ...pageParameters('Notifications', DEFAULT_LIMIT, MAX_LIMIT),
    { name: 'since', required: false, description: 'Only notifications with created_at >= since (unix seconds).' },
    { name: 'types', required: false, description: `Comma-separated: ${NOTIFICATION_TYPES.join(', ')} (default all).`, examples: ['REPLY,ZAP'] },
  ],
  document: RestNotificationsDocument,
  variables: (values) => ({
    pubkey: requiredValue(values, 'pubkey'),
    first: pageLimit(values.limit, DEFAULT_LIMIT, MAX_LIMIT),
    after: values.after ?? null,
    types: notificationTypesOf(values.types),
    since: sinceOf(values.since),
  }),
  sizedBy: ['first'],
  answerKey: () => undefined,
  render: ({ pubkey }, { maxResponseBytes }) => {
    if (!pubkey) return null;
    const nodes = pubkey.notifications.edges.map(({ node }) => node);
    const parts: StringOutput[] = ['{"notifications":['];
    nodes.forEach((node, index) => {
      parts.push(`${index > 0 ? ',' : ''}{"type":"${node.type}","event":`);
      pushEvents(parts, [node.event]);
      parts.push(',"target":', node.target ? node.target.json : 'null', '}');
    });
    parts.push('],"profiles":{');
    pushProfiles(
      parts,
      nodes.map((node) => node.event),
      maxResponseBytes,
    );
    parts.push('},"next":', nextCursor(pubkey.notifications.pageInfo), '}');
    return renderedBody(parts);
  },
  notFound: 'profile_not_found',
  deleted: 'profile_deleted',
};
