import { nsecEncode } from 'nostr-tools/nip19';
import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { profile, pubkeyOf, secretKey, signed } from './support/events.js';
import { getJson, postGraphql, useTestServer } from './support/test-server.js';

// GET /notifications: a notifications screen in one request, by the REST routes' one mechanism (a
// fixed operation, src/http/operations/notifications.graphql), checked against
// Pubkey.notifications over GraphQL and against the rules as written out here.

const T0 = 1_700_000_000;
const reader = 'nt-reader';
const note = signed(reader, { created_at: T0, content: 'my note' });
// 24 reactions to the note, 12 of them in one second; a reply without a `p` tag; a mention; a
// muted author's reply; the reader's own reaction (never a notification).
const reactions = Array.from({ length: 24 }, (_, n) => signed(`nt-reactor-${n}`, { kind: 7, created_at: T0 + 100 + Math.max(0, n - 12), content: '+', tags: [['e', note.id]] }));
const reply = signed('nt-alice', { created_at: T0 + 500, content: 'a reply', tags: [['e', note.id, '', 'root']] });
const mention = signed('nt-bob', { created_at: T0 + 400, content: 'hi', tags: [['p', pubkeyOf(reader)]] });
const mutedReply = signed('nt-muted', { created_at: T0 + 600, content: 'muted', tags: [['e', note.id, '', 'root']] });
const own = signed(reader, { kind: 7, created_at: T0 + 700, content: '+', tags: [['e', note.id]] });
const mutes = signed(reader, { kind: 10000, created_at: T0, tags: [['p', pubkeyOf('nt-muted')]] });
const profiles = ['nt-alice', 'nt-bob', reader].map((name) => profile(name, { name }));

const context = useTestServer([note, ...reactions, reply, mention, mutedReply, own, mutes, ...profiles]);
const get = (query: string, init?: RequestInit) => getJson(`${context.server.url}/notifications${query}`, init);
const newestFirst = (a: NostrEvent, b: NostrEvent) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1);

interface Notifications {
  notifications: { type: string; event: NostrEvent; target: NostrEvent | null }[];
  profiles: Record<string, NostrEvent>;
  next: string | null;
}

describe('GET /notifications', () => {
  it('200: newest first, each with its type and target, mutes applied, the notifiers\' profiles; `next` pages to the end as GraphQL does', async () => {
    const response = await get(`?pubkey=${pubkeyOf(reader)}&limit=5`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = response.body as Notifications;
    expect(Object.keys(body)).toEqual(['notifications', 'profiles', 'next']);
    const sortedReactions = [...reactions].sort(newestFirst);
    expect(body.notifications).toEqual([
      { type: 'REPLY', event: reply, target: note },
      { type: 'MENTION', event: mention, target: null },
      ...sortedReactions.slice(0, 3).map((event) => ({ type: 'REACTION', event, target: note })),
    ]);
    // The notifiers' relevant pubkeys: the reply's and mention's authors, the mention's `p` (the reader).
    expect(Object.keys(body.profiles).sort()).toEqual(['nt-alice', 'nt-bob', reader].map((name) => pubkeyOf(name)).sort());
    const graphql = await postGraphql(context.server, `{ pubkey(pubkey: "${pubkeyOf(reader)}") { notifications(first: 5) { edges { node { type event { id } } } pageInfo { endCursor } } } }`);
    const page = (graphql.body.data?.pubkey as { notifications: { edges: { node: { type: string; event: { id: string } } }[]; pageInfo: { endCursor: string } } }).notifications;
    expect(body.notifications.map(({ type, event }) => ({ type, event: { id: event.id } }))).toEqual(page.edges.map((edge) => edge.node));
    expect(body.next).toBe(page.pageInfo.endCursor);
    const rest = (await get(`?pubkey=${pubkeyOf(reader)}&limit=50&after=${encodeURIComponent(body.next as string)}`)).body as Notifications;
    expect(rest.notifications.map(({ event }) => event)).toEqual(sortedReactions.slice(3));
    expect(rest.next).toBeNull();
  });

  it('types and since narrow it; a pubkey with none has an empty page; ETag 304 while nothing changed', async () => {
    const replies = (await get(`?pubkey=${pubkeyOf(reader)}&types=reply,MENTION`)).body as Notifications;
    expect(replies.notifications.map(({ type, event }) => [type, event.id])).toEqual([
      ['REPLY', reply.id],
      ['MENTION', mention.id],
    ]);
    const recent = (await get(`?pubkey=${pubkeyOf(reader)}&since=${T0 + 450}`)).body as Notifications;
    expect(recent.notifications.map(({ event }) => event.id)).toEqual([reply.id]);
    const empty = await get(`?pubkey=${pubkeyOf('nt-nobody')}`);
    expect([empty.status, empty.body]).toEqual([200, { notifications: [], profiles: {}, next: null }]);
    const one = await get(`?pubkey=${pubkeyOf(reader)}&limit=2`);
    const again = await get(`?pubkey=${pubkeyOf(reader)}&limit=2`, { headers: { 'if-none-match': one.headers.get('etag') as string } });
    expect(again.status).toBe(304);
  });

  it('hostile parameters: the exact error for each, never a 500, nothing echoed', async () => {
    const nsec = nsecEncode(secretKey(reader));
    const cases: [string, number, string][] = [
      ['', 400, 'missing_parameter'],
      [`?pubkey=${pubkeyOf(reader)}&pubkey=${pubkeyOf(reader)}`, 400, 'repeated_parameter'],
      ['?pubkey=npub1nope', 400, 'invalid_pubkey'],
      [`?pubkey=${nsec}`, 400, 'secret_key_refused'],
      ...['0', '51', '1.5', 'x'].map((limit): [string, number, string] => [`?pubkey=${pubkeyOf(reader)}&limit=${limit}`, 400, 'invalid_argument']),
      ...['LIKE', 'REPLY,,ZAP', ',', 'REPLY;ZAP', 'A'.repeat(5000)].map((types): [string, number, string] => [`?pubkey=${pubkeyOf(reader)}&types=${encodeURIComponent(types)}`, 400, 'invalid_argument']),
      ...['-1', '1.5', 'yesterday', '9'.repeat(20)].map((since): [string, number, string] => [`?pubkey=${pubkeyOf(reader)}&since=${since}`, 400, 'invalid_argument']),
      [`?pubkey=${pubkeyOf(reader)}&after=garbage`, 400, 'invalid_cursor'],
      [`?pubkey=${pubkeyOf(reader)}&types=REPLY&types=ZAP`, 400, 'repeated_parameter'],
    ];
    for (const [query, status, code] of cases) {
      const response = await get(query);
      expect([query, response.status, (response.body as { error: { code: string } }).error.code]).toEqual([query, status, code]);
      expect(response.text).not.toContain(nsec);
      expect(response.text).not.toContain('A'.repeat(100));
    }
  });
});
