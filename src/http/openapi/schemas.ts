import { type ErrorCode, ERRORS } from '../../errors.js';

/**
 * The JSON Schemas (2020-12, as OpenAPI 3.1 reads them) of what the REST routes answer.
 * They describe; they never validate requests (identifiers have one parser, src/nostr) nor
 * serialise answers (events go out as stored bytes): routes attach them with documentation-only
 * compilers (routes/rest-routes.ts). @fastify/swagger turns them into /openapi.json, and
 * test/openapi.test.ts checks real answers of every status against that document with Ajv.
 */

const HEX_64 = '^[0-9a-f]{64}$';

/** A real profile and note (sample/events.jsonl), as the examples of the document. */
const EXAMPLE_PROFILE = {
  id: '7c6ef79fcba840875cca82e2b3707956668024ba811dd448e84ec3b22a2db09e',
  pubkey: '1739d937dc8c0c7370aa27585938c119e25c41f6c441a5d34c6d38503e3136ef',
  created_at: 1686946756,
  kind: 0,
  tags: [],
  content: '{"display_name":"JeffG","about":"American living in the Alps.","name":"JeffG","nip05":"_@jeffg.fyi"}',
  sig: '6354892f1fab2ae947232709e4594d90717574d04a6aa0a32998cdfd67dfb272821ce26ff170d75d1063c2706ff9ac50b1d1addbaf53f0948da026bd49569d3d',
};
const EXAMPLE_NOTE = {
  id: 'd7c2b6093d9dfa3f452b871da8b3290a42159db6cd084ff17bcd6c6e25fc2a06',
  pubkey: '460c25e682fda7832b52d1f22d3d22b3176d972f60dcdc3212ed8c92ef85065c',
  created_at: 1689715846,
  kind: 1,
  tags: [['p', '1739d937dc8c0c7370aa27585938c119e25c41f6c441a5d34c6d38503e3136ef']],
  content: "nostr:npub1zuuajd7u3sx8xu92yav9jwxpr839cs0kc3q6t56vd5u9q033xmhsk6c2uc 's Facebook Marketplace NIP was merged!",
  sig: '90b8a3d9f17ba803b7b2e188a6acad31cda7179dbd9ba6fd13cc9a600d32b9330999d5718c5d34f7823457c2dba964ee46ba7dc34615b4820544d753283ea7d4',
};

const eventProperties = {
  id: { type: 'string', pattern: HEX_64, description: 'sha256 of the serialised event (NIP-01), lowercase hex.' },
  pubkey: { type: 'string', pattern: HEX_64, description: "The author's public key, lowercase hex." },
  created_at: { type: 'integer', minimum: 0, description: 'Unix seconds, as the author claims.' },
  kind: { type: 'integer', minimum: 0, maximum: 65535 },
  tags: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
  content: { type: 'string' },
  sig: { type: 'string', pattern: '^[0-9a-f]{128}$', description: 'Schnorr signature of the id (BIP-340), lowercase hex.' },
} as const;

const EVENT_FIELDS = ['id', 'pubkey', 'created_at', 'kind', 'tags', 'content', 'sig'];

/** Shared schemas, added to the app (app.addSchema) and referenced as `<$id>#`. */
export const SHARED_SCHEMAS = [
  {
    $id: 'NostrEvent',
    title: 'NostrEvent',
    description: 'A verified Nostr event exactly as signed: the seven NIP-01 fields, nothing else.',
    type: 'object',
    required: EVENT_FIELDS,
    additionalProperties: false,
    properties: eventProperties,
    examples: [EXAMPLE_NOTE],
  },
  {
    $id: 'ProfileEvent',
    title: 'ProfileEvent',
    description: "A pubkey's latest profile: a kind-0 event whose content is the author's metadata as a JSON string (NIP-01).",
    type: 'object',
    required: EVENT_FIELDS,
    additionalProperties: false,
    properties: { ...eventProperties, kind: { type: 'integer', const: 0 } },
    examples: [EXAMPLE_PROFILE],
  },
];

/** The error shape of one status, its code one of `codes` (from the one error table, src/errors.ts). */
function errorSchema(status: number, codes: readonly ErrorCode[], description: string) {
  return {
    description,
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['status', 'code', 'message'],
        additionalProperties: false,
        properties: {
          status: { type: 'integer', const: status },
          code: { type: 'string', enum: codes },
          message: { type: 'string', description: 'What went wrong, in words; never the input echoed.' },
        },
      },
    },
    examples: [{ error: { status, code: codes[0], message: ERRORS[codes[0] as ErrorCode].message } }],
  };
}

const header = (description: string) => ({ type: 'string', description });
const COMMON_HEADERS = {
  'x-request-id': header('The id of this request in the service log (yours, if you sent a short, plain X-Request-Id).'),
  'access-control-allow-origin': header('Always `*`: any origin may read, never with credentials.'),
};
const RATE_HEADERS = {
  'x-ratelimit-limit': header('The requests a client may send per window.'),
  'x-ratelimit-remaining': header('What is left of this window: 0.'),
  'x-ratelimit-reset': header('Seconds until the window starts again.'),
};

/** The errors each REST route may answer, by status (every code from the table that applies). */
function restErrors(notFound: readonly ErrorCode[], invalid: ErrorCode, alsoInvalid: readonly ErrorCode[] = []) {
  return {
    400: errorSchema(400, [invalid, 'missing_parameter', 'repeated_parameter', 'secret_key_refused', 'bad_request', ...alsoInvalid], 'A query parameter is missing, repeated or out of range, or not an identifier.'),
    404: errorSchema(404, notFound, 'Not known here nor (with relays) at the relays asked, or deleted by its author (NIP-09, NIP-62).'),
    405: errorSchema(405, ['method_not_allowed'], 'Only GET and HEAD (and CORS preflights).'),
    429: {
      ...errorSchema(429, ['rate_limited', 'too_many_requests'], 'Past a per-client limit: RATE_LIMIT, MISS_RATE_LIMIT (lookups that must ask relays), MISS_CONCURRENCY_PER_CLIENT or MAX_REQUESTS_PER_CONNECTION.'),
      headers: { 'retry-after': header('Seconds to wait before trying again.'), ...RATE_HEADERS, ...COMMON_HEADERS },
    },
    500: errorSchema(500, ['store_unavailable', 'relays_unavailable', 'corrupt_data', 'internal_error'], 'The index or the relays could not be read; try again shortly.'),
    503: { ...errorSchema(503, ['too_many_connections', 'shutting_down'], 'Too many connections from this client, or the service is stopping.'), headers: { 'retry-after': header('Seconds to wait.') } },
  };
}

const SUCCESS_HEADERS = {
  etag: header('Strong validator from the ids of every event in the body: send it back in If-None-Match.'),
  'cache-control': header('`public, max-age=60`.'),
  ...COMMON_HEADERS,
};
const LAST_MODIFIED = { 'last-modified': header("The profile's created_at (never later than now).") };
const notModified = (headers: Record<string, unknown>) => ({
  description: "Not Modified: the client's copy (If-None-Match, else If-Modified-Since where there is a Last-Modified) is current. No body.",
  type: 'null',
  headers,
});
const CONDITIONAL_HEADERS = {
  type: 'object',
  properties: {
    'if-none-match': { type: 'string', description: 'ETags (or `*`) the client holds: 304 if one is current.' },
    'if-modified-since': { type: 'string', description: 'An HTTP date: 304 if nothing in the answer is newer (ignored with If-None-Match).' },
  },
};

export const USER_PROFILE_SCHEMA = {
  operationId: 'getUserProfile',
  summary: 'The latest profile of a pubkey',
  description:
    "The pubkey's latest kind-0 event (NIP-01: newest created_at, ties to the lowest id), from the index or, on a miss, from the relays (configured, indexers, the author's NIP-65 write relays, an nprofile's hints).",
  tags: ['lookup'],
  headers: CONDITIONAL_HEADERS,
  response: {
    200: {
      description: 'The profile.',
      type: 'object',
      required: ['profile'],
      additionalProperties: false,
      properties: { profile: { $ref: 'ProfileEvent#' } },
      headers: { ...SUCCESS_HEADERS, ...LAST_MODIFIED },
      examples: [{ profile: EXAMPLE_PROFILE }],
    },
    304: notModified({ etag: SUCCESS_HEADERS.etag, ...LAST_MODIFIED, 'cache-control': SUCCESS_HEADERS['cache-control'] }),
    ...restErrors(['profile_not_found', 'profile_deleted', 'nip05_not_found', 'nip05_unresolvable'], 'invalid_pubkey'),
  },
};

export const EVENT_SCHEMA = {
  operationId: 'getEvent',
  summary: 'An event with the profiles of its people',
  description:
    'The event, and the latest profile of each relevant pubkey: the author, then every pubkey the event names (p/P tags, nostr: mentions, authors of e/q-tagged events, a repost’s embedded author), at most MAX_PROFILES; a pubkey without a known profile is left out of the map, which stops before MAX_RESPONSE_BYTES.',
  tags: ['lookup'],
  headers: CONDITIONAL_HEADERS,
  response: {
    200: {
      description: 'The event and the profiles map (pubkey → its latest profile).',
      type: 'object',
      required: ['event', 'profiles'],
      additionalProperties: false,
      properties: {
        event: { $ref: 'NostrEvent#' },
        profiles: { type: 'object', propertyNames: { pattern: HEX_64 }, additionalProperties: { $ref: 'ProfileEvent#' } },
      },
      headers: SUCCESS_HEADERS,
      examples: [{ event: EXAMPLE_NOTE, profiles: { [EXAMPLE_PROFILE.pubkey]: EXAMPLE_PROFILE } }],
    },
    304: notModified({ etag: SUCCESS_HEADERS.etag, 'cache-control': SUCCESS_HEADERS['cache-control'] }),
    ...restErrors(['event_not_found', 'event_deleted'], 'invalid_id'),
  },
};

const count = { type: 'integer', minimum: 0 };
const PROFILES_MAP = { type: 'object', propertyNames: { pattern: HEX_64 }, additionalProperties: { $ref: 'ProfileEvent#' } };

export const THREAD_SCHEMA = {
  operationId: 'getThread',
  summary: 'A note and its conversation: what a thread screen draws',
  description:
    'The event; the events above it (the root first, then down to its parent, NIP-10/NIP-22, at most four up from the event besides the root); a page of its direct replies, oldest first; its stats (DESIGN "Relationships"); and the latest profile of every relevant pubkey of every event shown, as /event\'s map. `next` is the cursor of the next page of replies (null after the last). The fixed operation is src/http/operations/thread.graphql: the same answer as GraphQL gives.',
  tags: ['screens'],
  headers: CONDITIONAL_HEADERS,
  response: {
    200: {
      description: 'The thread.',
      type: 'object',
      required: ['event', 'parents', 'replies', 'stats', 'profiles', 'next'],
      additionalProperties: false,
      properties: {
        event: { $ref: 'NostrEvent#' },
        parents: { type: 'array', items: { $ref: 'NostrEvent#' }, description: 'The root, then down to the parent.' },
        replies: { type: 'array', items: { $ref: 'NostrEvent#' }, description: 'Direct replies, oldest first (by created_at, then id).' },
        stats: {
          type: 'object',
          required: ['replies', 'threadReplies', 'quotes', 'reposts', 'reactions', 'zaps', 'trusted'],
          additionalProperties: false,
          properties: {
            replies: count,
            threadReplies: count,
            quotes: count,
            reposts: count,
            reactions: {
              type: 'object',
              required: ['pubkeys', 'likes', 'dislikes', 'byContent'],
              additionalProperties: false,
              properties: {
                pubkeys: count,
                likes: count,
                dislikes: count,
                byContent: {
                  type: 'array',
                  items: { type: 'object', required: ['content', 'pubkeys'], additionalProperties: false, properties: { content: { type: 'string' }, pubkeys: count } },
                },
              },
            },
            zaps: {
              type: 'object',
              required: ['count', 'msats', 'senders', 'pending'],
              additionalProperties: false,
              properties: { count, msats: count, senders: count, pending: count },
            },
            trusted: {
              type: 'boolean',
              description: "Whether the figures are the viewer's web of trust's (`viewer`, else TRUST_SEEDS): false without one, and for an event with more than 2,000 relating events (then the index's figures for everyone).",
            },
          },
        },
        profiles: PROFILES_MAP,
        next: { type: ['string', 'null'], description: 'Pass as `after` for the next page of replies; null after the last.' },
      },
      headers: { ...SUCCESS_HEADERS, etag: header('Strong validator: a digest of the body (its counts change under the same events). Send it back in If-None-Match.') },
    },
    304: notModified({ etag: SUCCESS_HEADERS.etag, 'cache-control': SUCCESS_HEADERS['cache-control'] }),
    ...restErrors(['event_not_found', 'event_deleted'], 'invalid_id', ['invalid_argument', 'invalid_cursor']),
  },
};

/** A screen's page of events (`{events, profiles, next}`, /feed and /search): its 200 and 304. */
function eventPageResponses(what: string) {
  return {
    200: {
      description: `A page of the ${what}.`,
      type: 'object',
      required: ['events', 'profiles', 'next'],
      additionalProperties: false,
      properties: {
        events: { type: 'array', items: { $ref: 'NostrEvent#' }, description: 'Newest first (by created_at, then id).' },
        profiles: PROFILES_MAP,
        next: { type: ['string', 'null'], description: 'Pass as `after` for the next page; null after the last.' },
      },
      headers: { ...SUCCESS_HEADERS, etag: header('Strong validator: a digest of the body. Send it back in If-None-Match.') },
    },
    304: notModified({ etag: SUCCESS_HEADERS.etag, 'cache-control': SUCCESS_HEADERS['cache-control'] }),
  };
}

export const FEED_SCHEMA = {
  operationId: 'getFeed',
  summary: "A page of a pubkey's home feed: what a home screen draws",
  description:
    'Notes and reposts (kinds 1, 6, 16; no replies) by the authors of the pubkey\'s latest follow list (NIP-02), newest first, then by id, its own public mutes (NIP-51) applied, as `Pubkey.feed` answers with its defaults; with the latest profile of every relevant pubkey of every event shown, as /event\'s map. A pubkey without a follow list has an empty feed. `next` is the cursor of the next page (null after the last). The fixed operation is src/http/operations/feed.graphql.',
  tags: ['screens'],
  headers: CONDITIONAL_HEADERS,
  response: {
    ...eventPageResponses('feed'),
    ...restErrors(['nip05_not_found', 'nip05_unresolvable'], 'invalid_pubkey', ['invalid_argument', 'invalid_cursor']),
  },
};

export const SEARCH_SCHEMA = {
  operationId: 'searchNotes',
  summary: 'A page of a search of notes and articles: what a search screen draws',
  description:
    "Notes (kind 1) and long-form articles (kind 30023) whose words hold the query's (every word, the last may start one; NFKC, lower case; Chinese, Japanese and Korean as pairs of characters), newest first, then by id, as `Query.searchNotes` answers; with the latest profile of every relevant pubkey of every note shown, as /event's map. A page looks at a bounded number of matches: it may hold fewer than `limit`, even none, with `next` set. Off unless the operator set NOTE_SEARCH=true (501 note_search_off). The fixed operation is src/http/operations/search.graphql.",
  tags: ['screens'],
  headers: CONDITIONAL_HEADERS,
  response: {
    ...eventPageResponses('search'),
    ...restErrors(['nip05_not_found', 'nip05_unresolvable'], 'invalid_search', ['invalid_argument', 'invalid_cursor', 'invalid_pubkey']),
    501: errorSchema(501, ['note_search_off'], 'The operator did not turn search of notes on (NOTE_SEARCH).'),
  },
};

export const NOTIFICATIONS_SCHEMA = {
  operationId: 'getNotifications',
  summary: 'A page of what happened to a pubkey: what a notifications screen draws',
  description:
    "Events by others that zap, reply to, quote, repost or react to the pubkey's events, mention it, or follow it (DESIGN \"Screens\"), each once with the first type that fits, newest first, then by id, the pubkey's own public mutes (NIP-51) applied, as `Pubkey.notifications` answers; `target` is the pubkey's event it is about (null for a mention, a follow, a zap of the profile). With the latest profile of every relevant pubkey of every notifying event, as /event's map. `next` is the cursor of the next page (null after the last). The fixed operation is src/http/operations/notifications.graphql.",
  tags: ['screens'],
  headers: CONDITIONAL_HEADERS,
  response: {
    200: {
      description: 'A page of notifications.',
      type: 'object',
      required: ['notifications', 'profiles', 'next'],
      additionalProperties: false,
      properties: {
        notifications: {
          type: 'array',
          description: 'Newest first (by created_at, then id).',
          items: {
            type: 'object',
            required: ['type', 'event', 'target'],
            additionalProperties: false,
            properties: {
              type: { type: 'string', enum: ['ZAP', 'REPLY', 'QUOTE', 'REPOST', 'REACTION', 'MENTION', 'FOLLOW'] },
              event: { $ref: 'NostrEvent#' },
              target: { anyOf: [{ $ref: 'NostrEvent#' }, { type: 'null' }] },
            },
          },
        },
        profiles: PROFILES_MAP,
        next: { type: ['string', 'null'], description: 'Pass as `after` for the next page; null after the last.' },
      },
      headers: { ...SUCCESS_HEADERS, etag: header('Strong validator: a digest of the body. Send it back in If-None-Match.') },
    },
    304: notModified({ etag: SUCCESS_HEADERS.etag, 'cache-control': SUCCESS_HEADERS['cache-control'] }),
    ...restErrors(['nip05_not_found', 'nip05_unresolvable'], 'invalid_pubkey', ['invalid_argument', 'invalid_cursor']),
  },
};

const status = (value: string) => ({ type: 'object', required: ['status'], properties: { status: { type: 'string', const: value } } });

export const HOME_SCHEMA = {
  summary: 'Where to start: what the index holds and the routes this service answers, one line on each (an HTML page for a browser; LANDING=false: 404)',
  tags: ['operations'],
  response: {
    200: {
      description: 'The service, its version, its routes, and how full its index is (null while the store does not answer). A client whose Accept prefers text/html gets the same as a page.',
      type: 'object',
      required: ['service', 'version', 'routes', 'index'],
      properties: {
        service: { type: 'string', const: 'nostr-lookup' },
        version: { type: 'string' },
        routes: { type: 'object', additionalProperties: { type: 'string' } },
        index: {
          type: ['object', 'null'],
          required: ['events', 'kinds', 'profiles', 'followLists', 'storedBytes'],
          properties: {
            events: { type: 'integer', description: 'Servable events held.' },
            kinds: { type: 'object', additionalProperties: { type: 'integer' }, description: 'Of them, by kind.' },
            profiles: { type: 'integer', description: 'Pubkeys with a profile (kind 0).' },
            followLists: { type: 'integer', description: 'Pubkeys with a follow list (kind 3).' },
            storedBytes: { type: ['integer', 'null'], description: "The store's size: the embedded store's data file, or Redis's used_memory (null where Redis refuses INFO)." },
          },
        },
      },
    },
  },
};

export const HEALTHZ_SCHEMA = {
  summary: 'Liveness: 200 while the process serves',
  tags: ['operations'],
  response: { 200: { description: 'Serving.', ...status('ok') } },
};

export const READYZ_SCHEMA = {
  summary: 'Readiness: 200 while the store answers',
  tags: ['operations'],
  response: {
    200: {
      description: 'The store answers (`writes: failing` while writes fail: reads go on).',
      type: 'object',
      required: ['status'],
      properties: { status: { type: 'string', const: 'ready' }, writes: { type: 'string', const: 'failing' } },
    },
    503: { description: 'The store does not answer.', ...status('unavailable') },
  },
};

export const METRICS_SCHEMA = {
  summary: 'Prometheus metrics (text format)',
  tags: ['operations'],
  response: { 200: { description: 'The metrics, in the Prometheus text format 0.0.4.', content: { 'text/plain': { schema: { type: 'string' } } } } },
};

/**
 * Route options for documented routes: the schemas are for the document only. Requests are read by
 * the routes' own parsers (one identifier parser, one error table), answers are stored bytes.
 */
export const DOCUMENTATION_ONLY = {
  validatorCompiler: () => () => true,
  serializerCompiler: () => (data: unknown) => JSON.stringify(data),
} as const;
