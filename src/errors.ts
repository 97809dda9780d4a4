import { GraphQLError } from 'graphql';

/**
 * The one error table of the service: every error a client can see, with its stable machine code,
 * its HTTP status and the message it carries. REST bodies, GraphQL `extensions.code` and logs all
 * use these codes; nothing else decides a status.
 *
 * Messages never echo client input: an identifier may be a secret key pasted by mistake.
 */
export const ERRORS = {
  bad_request: { status: 400, message: 'The request could not be understood.' },
  request_too_large: { status: 431, message: 'The request line or headers are too large.' },
  request_timeout: { status: 408, message: 'The request was not received in time.' },
  missing_parameter: { status: 400, message: 'A required query parameter is missing or empty.' },
  repeated_parameter: { status: 400, message: 'A query parameter was given more than once.' },
  invalid_pubkey: {
    status: 400,
    message:
      'The pubkey must be 64 hex characters, an npub1… or an nprofile1… (optionally prefixed "nostr:"), or, where one profile is asked for, a NIP-05 name@domain.',
  },
  invalid_id: {
    status: 400,
    message: 'The id must be 64 hex characters, a note1…, a nevent1… or an naddr1… (optionally prefixed "nostr:").',
  },
  secret_key_refused: {
    status: 400,
    message:
      'That is a secret key (nsec). Secret keys must never be sent to any service; it was not logged or stored. Treat it as compromised.',
  },
  list_too_long: { status: 400, message: 'Too many identifiers in one request.' },
  invalid_argument: {
    status: 400,
    message: 'An argument is out of range: `first` of a connection or of searchProfiles is a whole number from 1 to 100, and `notes` takes 1 to 20 distinct kinds from 0 to 65535, none of them replaceable (0, 3, 10000 to 19999), ephemeral (20000 to 29999) or zap receipts (9735).',
  },
  invalid_search: {
    status: 400,
    message: 'A search query is 1 to 64 characters (Unicode code points): words (letters, marks and digits) that each start a word of the name, display name or NIP-05 address of the profiles to find, or that the notes to find hold (the last word may start one).',
  },
  invalid_cursor: {
    status: 400,
    message: 'The `after` cursor is not one this service gave out: pass an edge\'s `cursor` or a page\'s `endCursor` as it came.',
  },
  query_too_costly: {
    status: 400,
    message:
      'The query asks for too much: its cost (each field by what it reads, multiplied through lists, pages and relevantProfiles, 4,000 for each searchProfiles and 8,000 for each searchNotes) is over the limit. Ask for fewer ids, fields or searches, or nest less.',
  },
  response_too_large: {
    status: 400,
    message: 'The answer would be larger than MAX_RESPONSE_BYTES. Ask for fewer ids or fewer fields.',
  },
  graphql_parse_failed: { status: 400, message: 'The GraphQL document does not parse.' },
  graphql_validation_failed: {
    status: 400,
    message: 'The GraphQL operation is not valid against the schema (see schema.graphql), or its variables do not fit it.',
  },
  query_too_deep: { status: 400, message: 'The query nests fields deeper than 8 levels.' },
  too_many_aliases: { status: 400, message: 'The query uses more than 15 aliases.' },
  too_many_tokens: { status: 400, message: 'The GraphQL document is longer than 2,000 tokens.' },
  too_many_directives: { status: 400, message: 'The query uses more than 50 directives.' },
  batching_not_supported: {
    status: 400,
    message: 'Send one GraphQL operation per request (a JSON object), not an array: batching is not supported. Fetch several things in one query instead.',
  },
  invalid_graphql_request: {
    status: 400,
    message: 'The GraphQL request could not be parsed: a POST body, "variables" and "extensions" must be JSON.',
  },
  body_too_large: { status: 413, message: 'The request body is too large for a GraphQL request (128 KiB at most).' },
  length_required: { status: 411, message: 'A POST to /graphql must say its length (Content-Length).' },
  unsupported_media_type: {
    status: 415,
    message: 'POST a GraphQL request as application/json (or application/graphql+json).',
  },
  not_acceptable: {
    status: 406,
    message:
      'GraphiQL is off here. Send GraphQL as JSON: POST /graphql with {"query": "…"}, or GET /graphql?query=… with accept: application/json.',
  },
  too_many_connections: { status: 503, message: 'Too many connections from this client. Try again shortly.' },
  too_many_requests: {
    status: 429,
    message:
      'Too many requests at once from this client (lookups that go to relays) or on this connection (pipelined). Try again shortly.',
  },
  rate_limited: {
    status: 429,
    message: 'Too many requests from this client (RATE_LIMIT), or too many that had to ask relays or NIP-05 domains (MISS_RATE_LIMIT). Retry after the seconds in Retry-After.',
  },
  shutting_down: { status: 503, message: 'The service is restarting. Try again shortly.' },
  note_search_off: { status: 501, message: 'Search of notes is off on this service (its operator did not set NOTE_SEARCH=true): its index is not kept.' },
  webs_busy: { status: 503, message: 'Too many webs of trust are being built at once (a viewer seen for the first time). Try again shortly.' },
  profile_not_found: { status: 404, message: 'No profile (kind 0 event) is known for this pubkey.' },
  event_not_found: { status: 404, message: 'No event with this id is known.' },
  profile_deleted: {
    status: 404,
    message: 'This profile was deleted by its author (NIP-09), or its author asked to vanish (NIP-62).',
  },
  event_deleted: {
    status: 404,
    message: 'This event was deleted by its author (NIP-09), or its author asked to vanish (NIP-62).',
  },
  nip05_not_found: {
    status: 404,
    message: 'The domain does not know this NIP-05 name (its nostr.json has no valid pubkey for it).',
  },
  nip05_unresolvable: {
    status: 404,
    message:
      'This NIP-05 name cannot be resolved: its domain could not be reached, did not answer in time, redirected, or did not answer with a valid nostr.json.',
  },
  route_not_found: { status: 404, message: 'There is no such route.' },
  method_not_allowed: { status: 405, message: 'This route answers GET and HEAD only.' },
  store_unavailable: { status: 500, message: 'The event index is unavailable. Try again shortly.' },
  relays_unavailable: {
    status: 500,
    message: 'Not in the index, and no relay could be reached or answered in time. Try again shortly.',
  },
  corrupt_data: { status: 500, message: 'Stored data could not be read.' },
  internal_error: { status: 500, message: 'An unexpected error occurred.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/**
 * An error whose code is in the table. It is a GraphQLError so that graphql-yoga's masking lets it
 * through to GraphQL clients with `extensions.code`, while anything else is masked.
 */
export class LookupError extends GraphQLError {
  readonly code: ErrorCode;
  readonly status: number;
  /** For a 429: when to try again (Retry-After on REST, `extensions.retryAfter` on GraphQL). */
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, options: { message?: string; cause?: unknown; retryAfterSeconds?: number } = {}) {
    // The cause is kept as Error.cause, not as GraphQL's originalError: yoga masks a GraphQLError
    // whose originalError is not a GraphQLError, and the client should see this table error.
    const { retryAfterSeconds } = options;
    super(options.message ?? ERRORS[code].message, { extensions: retryAfterSeconds === undefined ? { code } : { code, retryAfter: retryAfterSeconds } });
    this.retryAfterSeconds = retryAfterSeconds;
    if (options.cause !== undefined) this.cause = options.cause;
    this.name = 'LookupError';
    this.code = code;
    this.status = ERRORS[code].status;
  }
}

/** The JSON body every error response carries: `{"error": {"status", "code", "message"}}`. */
export interface ErrorBody {
  error: { status: number; code: ErrorCode; message: string };
}

export function errorBody(code: ErrorCode, message: string = ERRORS[code].message): ErrorBody {
  return { error: { status: ERRORS[code].status, code, message } };
}

/** The same error for GraphQL clients: `{"errors": [{"message", "extensions": {"code"}}]}`. */
export function graphqlErrorBody(code: ErrorCode, message: string = ERRORS[code].message) {
  return { errors: [{ message, extensions: { code } }] };
}

/** Finds the table code carried by an error, wherever GraphQL execution wrapped it. */
export function errorCodeOf(error: unknown): ErrorCode | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof LookupError) return current.code;
    const extensionCode = (current as GraphQLError).extensions?.code;
    if (typeof extensionCode === 'string' && extensionCode in ERRORS) return extensionCode as ErrorCode;
    current = (current as GraphQLError).originalError ?? current.cause;
  }
  return undefined;
}

/** The deepest cause of an error (through GraphQL wrapping and Error.cause), for the log. */
export function rootCause(error: unknown): unknown {
  let current = error;
  for (let depth = 0; depth < 10 && current instanceof Error; depth++) {
    const next = (current as GraphQLError).originalError ?? current.cause;
    if (next === undefined || next === null) break;
    current = next;
  }
  return current;
}
