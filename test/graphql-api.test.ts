import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { npubEncode, nsecEncode } from 'nostr-tools/nip19';
import { describe, expect, it } from 'vitest';
import { serializeEvent } from '../src/nostr/event.js';
import type { EventStore } from '../src/store/event-store.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { getJson, startTestServer, useTestServer } from './support/test-server.js';

const alice = profile('alice', {
  name: 'alice',
  displayName: 'Alice (old field)',
  about: 'ünï 🤙',
  picture: 'https://a/p.png',
  banner: 'https://a/b.png',
  website: 'https://a',
  nip05: 'alice@a',
  lud06: 'lnurl1',
  lud16: 'alice@wallet',
  bot: true,
});
const broken = signed('broken', { kind: 0, content: 'this is not json' });
const note = signed('alice', {
  created_at: 2 ** 32 + 5,
  content: `hi nostr:${npubEncode(pubkeyOf('bob'))}`,
  tags: [
    ['p', pubkeyOf('broken')],
    ['t', 'nostr'],
  ],
});

const context = useTestServer([alice, broken, note]);

interface GraphQLResponse {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

async function graphql(query: string, variables?: Record<string, unknown>, url = context.server.url) {
  const response = await getJson(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query, variables }),
  });
  return { ...response, body: response.body as GraphQLResponse };
}

describe('GraphQL API', () => {
  it('an event with every field; createdAt beyond 2^32 is exact; json is the wire form', async () => {
    const { status, body } = await graphql(
      'query ($id: String!) { event(id: $id) { id pubkey createdAt kind tags content sig json relevantPubkeys author { name } relevantProfiles { pubkey } } }',
      { id: `nostr:${note.id.toUpperCase()}` },
    );
    expect(status).toBe(200);
    expect(body).toEqual({
      data: {
        event: {
          id: note.id,
          pubkey: note.pubkey,
          createdAt: 2 ** 32 + 5,
          kind: 1,
          tags: note.tags,
          content: note.content,
          sig: note.sig,
          json: serializeEvent(note),
          relevantPubkeys: [pubkeyOf('alice'), pubkeyOf('broken'), pubkeyOf('bob')],
          author: { name: 'alice' },
          relevantProfiles: [{ pubkey: pubkeyOf('alice') }, { pubkey: pubkeyOf('broken') }],
        },
      },
    });
  });

  it('raw is the event as its JSON object, its stored bytes in the answer as they are, made or kept, POST or GET', async () => {
    const query = 'query ($id: String!) { event(id: $id) { raw relevantProfiles { event { raw } } } }';
    const expected = { data: { event: { raw: note, relevantProfiles: [{ event: { raw: alice } }, { event: { raw: broken } }] } } };
    const texts: string[] = [];
    // Made, then prepared, then kept (answer-cache.ts): the same bytes each time.
    for (let ask = 0; ask < 4; ask++) {
      const response = await fetch(`${context.server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query, variables: { id: note.id } }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      texts.push(await response.text());
    }
    expect(new Set(texts).size).toBe(1);
    const text = texts[0] as string;
    expect(JSON.parse(text)).toEqual(expected);
    expect(text).toBe(`{"data":{"event":{"raw":${serializeEvent(note)},"relevantProfiles":[{"event":{"raw":${serializeEvent(alice)}}},{"event":{"raw":${serializeEvent(broken)}}}]}}}`);
    // Yoga's own path (GET) writes the parsed object.
    const viaGet = await getJson(`${context.server.url}/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify({ id: note.id }))}`, {
      headers: { accept: 'application/json' },
    });
    expect(viaGet.status).toBe(200);
    expect(viaGet.body).toEqual(expected);
  });

  it('RawEvent is output only: no argument takes one, so a variable of that type is refused', async () => {
    const { status, body } = await graphql('query ($x: RawEvent) { profile(pubkey: "x") { name } }', { x: { id: 'a' } });
    expect(status).toBe(400);
    expect(body).toEqual({
      errors: [{ message: 'Variable "$x" is never used.', locations: [{ line: 1, column: 8 }], extensions: { code: 'graphql_validation_failed' } }],
    });
  });

  it('a profile with its parsed metadata; content that is not JSON gives nulls, not an error', async () => {
    const fields =
      'pubkey name displayName about picture banner website nip05 lud06 lud16 bot event { kind }';
    const { body } = await graphql(
      `query ($a: String!, $b: String!) { a: profile(pubkey: $a) { ${fields} } b: profile(pubkey: $b) { ${fields} } }`,
      {
        a: npubEncode(pubkeyOf('alice')),
        b: pubkeyOf('broken'),
      },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.a).toEqual({
      pubkey: pubkeyOf('alice'),
      name: 'alice',
      displayName: 'Alice (old field)',
      about: 'ünï 🤙',
      picture: 'https://a/p.png',
      banner: 'https://a/b.png',
      website: 'https://a',
      nip05: 'alice@a',
      lud06: 'lnurl1',
      lud16: 'alice@wallet',
      bot: true,
      event: { kind: 0 },
    });
    expect(body.data?.b).toMatchObject({
      pubkey: pubkeyOf('broken'),
      name: null,
      about: null,
      bot: null,
      event: { kind: 0 },
    });
  });

  it('unknown ids and pubkeys are null; lists keep order with nulls', async () => {
    const { body } = await graphql(
      'query ($ids: [String!]!, $pks: [String!]!) { event(id: "' +
        'd'.repeat(64) +
        '") { id } events(ids: $ids) { id } profiles(pubkeys: $pks) { name } }',
      { ids: ['d'.repeat(64), note.id], pks: [pubkeyOf('nobody'), pubkeyOf('alice')] },
    );
    expect(body).toEqual({
      data: { event: null, events: [null, { id: note.id }], profiles: [null, { name: 'alice' }] },
    });
  });

  it('invalid identifiers are errors with the table code, never echoing the input', async () => {
    const nsec = nsecEncode(new Uint8Array(32).fill(3));
    // Field errors come with their data (200); a document naming an nsec is refused whole before
    // execution, a request error (400).
    const cases = [
      ['{ event(id: "nope") { id } }', 'invalid_id', 200],
      ['{ profile(pubkey: "npub1nope") { name } }', 'invalid_pubkey', 200],
      [`{ profile(pubkey: "${nsec}") { name } }`, 'secret_key_refused', 400],
      [`{ events(ids: ["${'a'.repeat(64)}", "bad"]) { id } }`, 'invalid_id', 200],
    ] as const;
    for (const [query, code, expected] of cases) {
      const { status, body, text } = await graphql(query);
      expect(status).toBe(expected);
      expect(body.errors?.[0]?.extensions?.code).toBe(code);
      expect(text).not.toContain(nsec);
    }
  });

  it('lists are capped at MAX_LIST_LENGTH', async () => {
    const ids = Array.from({ length: 101 }, () => note.id);
    const { body } = await graphql('query ($ids: [String!]!) { events(ids: $ids) { id } }', { ids });
    expect(body.errors?.[0]?.extensions?.code).toBe('list_too_long');
    // The cap counts ids as given; the answer has one entry per distinct id.
    const ok = await graphql('query ($ids: [String!]!) { events(ids: $ids) { id } }', { ids: ids.slice(1) });
    expect(ok.body.data?.events).toEqual([{ id: note.id }]);
  });

  it('wrong argument types are validation errors (400)', async () => {
    const { status, body } = await graphql('{ event(id: 42) { id } }');
    expect(status).toBe(400);
    expect(body.errors?.length).toBeGreaterThan(0);
  });

  it('graphql-armor refuses deep, aliased and oversized queries', async () => {
    let deep = 'id';
    for (let n = 0; n < 6; n++) deep = `event { author { ${deep} } }`;
    const depth = await graphql(`{ profile(pubkey: "${pubkeyOf('alice')}") { ${deep} } }`);
    expect(depth.body.errors?.[0]?.message).toMatch(/depth/i);
    const aliases = Array.from(
      { length: 20 },
      (_, n) => `a${n}: profile(pubkey: "${pubkeyOf('alice')}") { name }`,
    ).join(' ');
    expect((await graphql(`{ ${aliases} }`)).body.errors?.[0]?.message).toMatch(/aliases/i);
    const tokens = `{ ${'__typename '.repeat(3000)} }`;
    expect((await graphql(tokens)).body.errors?.[0]?.message).toMatch(/token/i);
  });

  it('field suggestions are not leaked', async () => {
    const { body } = await graphql('{ evnt(id: "x") { id } }');
    expect(body.errors?.[0]?.message).not.toMatch(/did you mean/i);
  });

  it('GET queries work (GraphQL over HTTP)', async () => {
    const response = await getJson(
      `${context.server.url}/graphql?query=${encodeURIComponent(`{ profile(pubkey: "${pubkeyOf('alice')}") { name } }`)}`,
      {
        headers: { accept: 'application/json' },
      },
    );
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { profile: { name: 'alice' } } });
  });

  it('GraphiQL is served when enabled, and not when disabled', async () => {
    const html = { headers: { accept: 'text/html' } };
    const withGraphiql = await startTestServer(context.store.store, { graphql: { graphiql: true } });
    try {
      const on = await fetch(`${withGraphiql.url}/graphql`, html);
      expect(on.status).toBe(200);
      const page = await on.text();
      expect(page).toContain('<title>Nostr lookup — GraphiQL</title>');
      expect(page).toContain('# Nostr lookup: events with the profiles of their people, and profiles.');
      // Everything is in the page: no script or style from a CDN.
      expect(page).not.toMatch(/<script[^>]+src=["']https?:|<link[^>]+href=["']https?:/);
      expect(page).not.toContain('unpkg.com');
    } finally {
      await withGraphiql.close();
    }
    const off = await fetch(`${context.server.url}/graphql`, html);
    expect(await off.text()).not.toContain('<html');
  });

  it('GraphiQL goes compressed (brotli under 2 MB, else gzip) and is revalidated by its ETag: a reload is a 304 with no body', async () => {
    const withGraphiql = await startTestServer(context.store.store, { graphql: { graphiql: true } });
    /** The raw answer, bytes as sent (fetch would decompress them). */
    const get = (headers: Record<string, string>) =>
      new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        httpGet(`${withGraphiql.url}/graphql`, { headers: { accept: 'text/html', ...headers } }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
        }).on('error', reject);
      });
    try {
      const plain = await get({});
      expect(plain.status).toBe(200);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body.length).toBeGreaterThan(5_000_000);
      const gzip = await get({ 'accept-encoding': 'gzip, deflate' });
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true);
      expect(gzip.body.length).toBeLessThan(2_600_000);
      // Brotli once it is made (in the background): gzip until then.
      let browser = await get({ 'accept-encoding': 'gzip, deflate, br' });
      for (let attempt = 0; browser.headers['content-encoding'] !== 'br' && attempt < 100; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        browser = await get({ 'accept-encoding': 'gzip, deflate, br' });
      }
      expect(browser.headers['content-encoding']).toBe('br');
      expect(browser.body.length).toBeLessThan(2_000_000);
      expect(brotliDecompressSync(browser.body).equals(plain.body)).toBe(true);
      expect(browser.headers.vary).toBe('accept, accept-encoding');
      expect(browser.headers['cache-control']).toBe('no-cache');
      const etag = browser.headers.etag as string;
      expect(etag).toMatch(/^"graphiql-[0-9a-f]{32}-br"$/);
      // Each encoding is its own representation: gzip's ETag does not revalidate brotli bytes.
      expect(gzip.headers.etag).toBe(etag.replace('-br"', '-gzip"'));
      expect((await get({ 'accept-encoding': 'gzip, deflate, br', 'if-none-match': gzip.headers.etag as string })).status).toBe(200);
      const reload = await get({ 'accept-encoding': 'gzip, deflate, br', 'if-none-match': etag });
      expect(reload.status).toBe(304);
      expect(reload.body.length).toBe(0);
    } finally {
      await withGraphiql.close();
    }
  });
});

describe('unexpected failures are masked', () => {
  it('a store bug becomes "Unexpected error." on GraphQL and internal_error on REST, with no detail', async () => {
    const secret = 'secret-internal-detail 10.0.0.7:6379';
    const failing: EventStore = {
      getEvents: async () => {
        throw new TypeError(secret);
      },
      getProfiles: async () => {
        throw new TypeError(secret);
      },
      getReplaceable: async () => {
        throw new TypeError(secret);
      },
      getByCoordinates: async () => {
        throw new TypeError(secret);
      },
      putEvents: async () => [],
      marks: { set: async () => {}, has: async () => [], notes: async () => [], renote: async () => {}, claim: async () => [], clear: async () => {} },
      cursors: { get: async () => undefined, set: async () => {} },
      relations: {
        stats: async () => {
          throw new TypeError(secret);
        },
        replies: async () => [],
        relatedIds: async () => ({ events: [], complete: true }),
        allReplies: async () => [],
        eventCounts: async () => new Map(),
        listChanges: async () => ({ cursor: '0', pubkeys: [] }),
        totals: async () => ({ follows: 0, notifications: 0 }),
        setEventCounts: async () => {},
        notifications: async () => [],
        timelines: async () => [],
        notificationCounts: async () => {
          throw new TypeError(secret);
        },
        notificationRecipients: async function* () {},
        targets: async function* () {},
        clear: async () => {},
        zapTotals: async () => {
          throw new TypeError(secret);
        },
        zapGroups: async () => [],
        zapSenders: async () => new Set(),
        zapSubjects: async function* () {},
        followCounts: async () => {
          throw new TypeError(secret);
        },
        followers: async () => [],
        followSubjects: async function* () {},
        notes: async () => {
          throw new TypeError(secret);
        },
        noteFeeds: async function* () {},
        keepsHomeTimelines: false,
        homeTimelineAuthors: async function* () {},
        noteSearchEnabled: true,
        noteWordsStarting: async () => [],
        searchNotes: async () => {
          throw new TypeError(secret);
        },
        noteSearchLists: async function* () {},
        searchProfiles: async () => {
          throw new TypeError(secret);
        },
        searchRecords: async () => [],
        searchSubjects: async function* () {},
      },
      servableEvents: async function* () {},
      relateStored: async () => {},
      finishRebuild: async () => {},
      writesFailing: () => false,
      getProfilesWithMarks: async () => {
        throw new TypeError(secret);
      },
      getReplaceableWithMarks: async () => {
        throw new TypeError(secret);
      },
      ping: async () => {},
      storedBytes: async () => 0,
      close: async () => {},
    };
    const broken = await startTestServer(failing);
    try {
      const gql = await graphql(`{ event(id: "${note.id}") { id } }`, undefined, broken.url);
      expect(gql.body.errors?.[0]?.message).toBe('Unexpected error.');
      expect(gql.text).not.toContain('secret-internal');
      const rest = await getJson(`${broken.url}/user-profile?pubkey=${pubkeyOf('alice')}`);
      expect(rest.status).toBe(500);
      expect(rest.body).toEqual({
        error: { status: 500, code: 'internal_error', message: 'An unexpected error occurred.' },
      });
      expect(broken.logs.join('')).toContain('secret-internal-detail');
    } finally {
      await broken.close();
    }
  });
});
