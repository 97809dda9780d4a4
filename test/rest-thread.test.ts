import { readFileSync } from 'node:fs';
import { nsecEncode } from 'nostr-tools/nip19';
import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { profile, pubkeyOf, secretKey, signed } from './support/events.js';
import { getJson, postGraphql, startTestServer, useTestServer } from './support/test-server.js';

// GET /thread: one request for a thread screen, by the same mechanism as /event (a fixed operation,
// src/http/operations/thread.graphql), checked against what GraphQL answers and against the rules.

const T0 = 1_700_000_000;
const names = ['root', 'alice', 'bob', 'carol', 'mentioned', 'replier'] as const;
const profiles = names.filter((name) => name !== 'replier').map((name) => profile(`th-${name}`, { name }));
const root = signed('th-root', { created_at: T0, content: 'the root' });
const reply = (author: string, parent: NostrEvent, created_at: number, extra: string[][] = [], content = `re ${parent.id.slice(0, 6)}`) =>
  signed(author, { created_at, content, tags: [['e', root.id, '', 'root'], ['e', parent.id, '', 'reply'], ['p', parent.pubkey], ...extra] });
const first = signed('th-alice', { created_at: T0 + 1, content: 'first', tags: [['e', root.id, '', 'root']] });
const second = reply('th-bob', first, T0 + 2, [['p', pubkeyOf('th-mentioned')]]);
// Seven levels below `second`: the deepest's parents are the root and the four nearest.
const deep: NostrEvent[] = [];
for (let level = 0, parent = second; level < 7; level++) {
  parent = reply('th-carol', parent, T0 + 3 + level);
  deep.push(parent);
}
// 25 direct replies of `second`, ten of them in one second: paged oldest first, then by id.
const replies = Array.from({ length: 25 }, (_, n) => reply(`th-replier-${n % 3}`, second, T0 + 100 + Math.max(0, n - 10), [], `reply ${n}`));
const reactions = ['+', '+', '🤙'].map((content, n) => signed(`th-reactor-${n}`, { kind: 7, created_at: T0 + 50, content, tags: [['e', second.id], ['p', second.pubkey]] }));

const context = useTestServer([root, first, second, ...deep, ...replies, ...reactions, ...profiles]);
const get = (query: string, init?: RequestInit) => getJson(`${context.server.url}/thread${query}`, init);
const byThreadOrder = (a: NostrEvent, b: NostrEvent) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1);

interface Thread {
  event: NostrEvent;
  parents: NostrEvent[];
  replies: NostrEvent[];
  stats: unknown;
  profiles: Record<string, NostrEvent>;
  next: string | null;
}

const STATS = '{ replies threadReplies quotes reposts reactions { pubkeys likes dislikes byContent { content pubkeys } } zaps { count msats senders pending } trusted }';

describe('GET /thread', () => {
  it('200: the event, its root and parent, the first page of replies oldest first, its stats and every shown author\'s profile; `next` pages to the end', async () => {
    const response = await get(`?id=${second.id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const body = response.body as Thread;
    expect(Object.keys(body)).toEqual(['event', 'parents', 'replies', 'stats', 'profiles', 'next']);
    expect(body.event).toEqual(second);
    expect(body.parents).toEqual([root, first]);
    // Its direct replies: the 25, and the first of the deep chain.
    const ordered = [...replies, deep[0] as NostrEvent].sort(byThreadOrder);
    expect(body.replies).toEqual(ordered.slice(0, 20));
    // As GraphQL counts them (Event.stats): the same rule, the same answer.
    const graphql = await postGraphql(context.server, `{ event(id: "${second.id}") { stats ${STATS} } }`);
    expect(body.stats).toEqual((graphql.body.data?.event as { stats: unknown }).stats);
    expect(body.stats).toMatchObject({ replies: 26, reactions: { pubkeys: 3, likes: 2, byContent: [{ content: '+', pubkeys: 2 }, { content: '🤙', pubkeys: 1 }] } });
    // Authors of what is shown, and who they name, each with their latest profile; no profile, no key.
    // (th-carol wrote the first of the deep chain, a reply on this page; the repliers have no profile.)
    const expected = ['th-bob', 'th-alice', 'th-mentioned', 'th-root', 'th-carol'].map((name) => pubkeyOf(name));
    expect(Object.keys(body.profiles).sort()).toEqual(expected.sort());
    for (const key of expected) expect(body.profiles[key]).toEqual(profiles.find((event) => event.pubkey === key));
    expect(typeof body.next).toBe('string');

    const rest = await get(`?id=${second.id}&after=${encodeURIComponent(body.next as string)}&limit=50`);
    expect(rest.status).toBe(200);
    const last = rest.body as Thread;
    // The 10 in one second, and the rest: each once across the pages, in order.
    expect([...body.replies, ...last.replies]).toEqual(ordered);
    expect(last.next).toBeNull();
  });

  it('a deep reply shows the root and the four nearest events above it, in thread order', async () => {
    const deepest = deep.at(-1) as NostrEvent;
    const body = (await get(`?id=${deepest.id}&limit=1`)).body as Thread;
    expect(body.parents.map((event) => event.id)).toEqual([root, ...deep.slice(-5, -1)].map((event) => event.id));
    expect(body.replies).toEqual([]);
    expect(body.next).toBeNull();
    // The root itself has no parents; its direct reply is `first`.
    const top = (await get(`?id=${root.id}`)).body as Thread;
    expect(top.parents).toEqual([]);
    expect(top.replies).toEqual([first]);
  });

  it('ETag from the body: 304 while nothing changed, 200 with a new tag once a reaction arrives', async () => {
    const one = await get(`?id=${first.id}`);
    const etag = one.headers.get('etag') as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    const again = await get(`?id=${first.id}`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    await context.store.store.putEvents([signed('th-late', { kind: 7, created_at: T0 + 60, content: '+', tags: [['e', first.id]] })]);
    const changed = await get(`?id=${first.id}`, { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect((changed.body as Thread).stats).toMatchObject({ reactions: { pubkeys: 1 } });
  });

  it('hostile parameters: the exact error for each, never a 500, nothing echoed', async () => {
    const nsec = nsecEncode(secretKey('th-root'));
    const cases: [string, number, string][] = [
      ['', 400, 'missing_parameter'],
      ['?id=', 400, 'missing_parameter'],
      [`?id=${second.id}&id=${first.id}`, 400, 'repeated_parameter'],
      ['?id=nonsense', 400, 'invalid_id'],
      [`?id=${nsec}`, 400, 'secret_key_refused'],
      [`?id=${'f'.repeat(64)}`, 404, 'event_not_found'],
      ...['0', '51', '101', '-1', '1.5', 'abc', '1e2', '0x10', ' 20x'].map((limit): [string, number, string] => [`?id=${second.id}&limit=${encodeURIComponent(limit)}`, 400, 'invalid_argument']),
      [`?id=${second.id}&limit=5&limit=6`, 400, 'repeated_parameter'],
      [`?id=${second.id}&after=not-a-cursor`, 400, 'invalid_cursor'],
      [`?id=${second.id}&after=${encodeURIComponent(nsec)}`, 400, 'invalid_cursor'],
    ];
    for (const [query, status, code] of cases) {
      const response = await get(query);
      expect([query, response.status, (response.body as { error: { code: string } }).error.code]).toEqual([query, status, code]);
      expect(response.text).not.toContain(nsec);
    }
    const post = await getJson(`${context.server.url}/thread?id=${second.id}`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });

  it('is costed as GraphQL is: under a lower GRAPHQL_MAX_COST a large page is query_too_costly before it runs, a small one answers', async () => {
    const strict = await startTestServer(context.store.store, { graphql: { maxCost: 5_000 } });
    try {
      const large = await getJson(`${strict.url}/thread?id=${second.id}&limit=50`);
      expect([large.status, (large.body as { error: { code: string } }).error.code]).toEqual([400, 'query_too_costly']);
      expect((await getJson(`${strict.url}/thread?id=${second.id}&limit=5`)).status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('the profiles map stops where the body, its events included, would pass MAX_RESPONSE_BYTES', async () => {
    const small = await startTestServer(context.store.store, { graphql: { maxResponseBytes: 3_000 } });
    try {
      const body = (await getJson(`${small.url}/thread?id=${second.id}`)).body as Thread;
      // The event, its parents and 20 replies are more than 3,000 bytes already: no profile fits.
      expect(body.replies).toHaveLength(20);
      expect(body.profiles).toEqual({});
    } finally {
      await small.close();
    }
  });

  it('is documented in /openapi.json with its parameters', async () => {
    const document = (await getJson(`${context.server.url}/openapi.json`)).body as { paths: Record<string, { get: { parameters: { name: string; in: string; required?: boolean }[] } }> };
    const query = document.paths['/thread']?.get.parameters.filter((parameter) => parameter.in === 'query');
    expect(query?.map(({ name, required }) => [name, required ?? false])).toEqual([['id', true], ['limit', false], ['after', false], ['viewer', false]]);
  });
});

// The README names the operation file: keep it where it says.
readFileSync(new URL('../src/http/operations/thread.graphql', import.meta.url), 'utf8');
