import { createHash } from 'node:crypto';
import { nip19 } from 'nostr-tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { checkRelations } from '../src/store/relation-check.js';
import { BOTH_STORES, type OpenedStore } from './support/both-stores.js';
import { deletion, vanish } from './support/deletion-conformance.js';
import { pubkeyOf, secretKey, signed } from './support/events.js';
import { type LoopbackRelay, startLoopbackRelay } from './support/loopback-relay.js';
import { collectPages, postGraphql, startTestServer, type TestServer } from './support/test-server.js';
import { createTestStore, type TestStore } from './support/test-store.js';
import { zapReceipt } from './support/zaps.js';
import { zapProviderMarkKey } from '../src/zaps/zap-providers.js';

/**
 * Notifications over GraphQL (DESIGN "Screens": notifications of V), on both stores and the real
 * app: every type and its precedence, a reply stored before its parent, a target deleted, a
 * notifier vanished, a follow list replaced, mutes, paging with many in one second, counts, and
 * hostile arguments. What each read must answer is written out here by hand, from the events.
 */

const T = 1_700_000_000;
const V = 'notified-v';
const pk = pubkeyOf;

const PAGE = `query ($pubkey: String!, $first: Int, $after: String, $types: [NotificationType!], $since: Timestamp) {
  pubkey(pubkey: $pubkey) {
    notifications(first: $first, after: $after, types: $types, since: $since) {
      edges { cursor node { type createdAt event { id } target { id } } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

interface Row {
  type: string;
  event: string;
  target: string | null;
}

type Page = { edges: { cursor: string; node: { type: string; createdAt: number; event: { id: string }; target: { id: string } | null } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };

async function page(server: TestServer, variables: Record<string, unknown>): Promise<Page> {
  const response = await postGraphql(server, PAGE, { pubkey: pk(V), ...variables });
  expect(response.body.errors).toBeUndefined();
  expect(response.status).toBe(200);
  return (response.body.data?.pubkey as { notifications: Page }).notifications;
}

async function rows(server: TestServer, variables: Record<string, unknown> = {}): Promise<Row[]> {
  const pages = await collectPages((after) => page(server, { first: 3, ...variables, after }));
  return pages.flatMap((read) => read.edges.map(({ node }) => ({ type: node.type, event: node.event.id, target: node.target?.id ?? null })));
}

async function counts(server: TestServer, since?: number) {
  const response = await postGraphql(server, `query ($pubkey: String!, $since: Timestamp) { pubkey(pubkey: $pubkey) { notificationCounts(since: $since) { total zap reply quote repost reaction mention follow } } }`, { pubkey: pk(V), since });
  expect(response.body.errors).toBeUndefined();
  return (response.body.data?.pubkey as { notificationCounts: Record<string, number> }).notificationCounts;
}

describe.each(BOTH_STORES)('notifications over GraphQL ($name)', ({ open }) => {
  const context = {} as { opened: OpenedStore; server: TestServer };
  const note1 = signed(V, { created_at: T, content: 'first note' });
  const note2 = signed(V, { created_at: T + 1, content: 'second note' });
  const lateParent = signed(V, { created_at: T + 2, content: 'stored after its reply' });
  const other = signed('notified-other', { created_at: T, content: "someone else's note" });
  // One of each type, newest first by construction (created_at T + 10 … T + 20).
  const replyNoP = signed('n-reply', { created_at: T + 20, content: 'reply, no p tag', tags: [['e', note1.id, '', 'root']] });
  const replyWithP = signed('n-reply-p', { created_at: T + 19, content: 'reply that also mentions', tags: [['e', note1.id.toUpperCase(), '', 'root'], ['p', pk(V)]] });
  const quote = signed('n-quote', { created_at: T + 18, content: 'look', tags: [['q', note2.id]] });
  const repost = signed('n-repost', { kind: 6, created_at: T + 17, content: '', tags: [['e', note1.id], ['p', pk(V)]] });
  const reaction = signed('n-react', { kind: 7, created_at: T + 16, content: '+', tags: [['e', note2.id], ['p', pk(V)]] });
  const mention = signed('n-mention', { created_at: T + 15, content: `hello nostr:${nip19.npubEncode(pk(V))}`, tags: [] });
  const mentionOfOther = signed('n-mention-2', { created_at: T + 14, content: 'replying elsewhere', tags: [['e', other.id, '', 'root'], ['p', pk(V)]] });
  const oldFollows = signed('n-follow', { kind: 3, created_at: T + 5, content: '', tags: [['p', pk(V)]] });
  const follows = signed('n-follow', { kind: 3, created_at: T + 13, content: '', tags: [['p', pk('someone')], ['p', pk(V)]] });
  const zap = zapReceipt({ sender: 'n-zapper', recipient: V, provider: 'n-wallet', target: note2.id, at: T + 12 });
  // Signed by anyone but V's provider: passes every check but that one, so it is never shown.
  const forged = zapReceipt({ sender: 'n-forger', recipient: V, provider: 'n-not-the-wallet', target: note2.id, at: T + 12 });
  // V's profile names its lightning address, whose provider (as last checked) signs with n-wallet's key.
  const vProfile = signed(V, { kind: 0, created_at: T, content: JSON.stringify({ name: 'v', lud16: 'v@wallet.example' }) });
  const providerNote = `${createHash('sha256').update('lud16:v@wallet.example').digest('hex').slice(0, 16)} ${Math.floor(Date.now() / 1000)} k ${pk('n-wallet')}`;
  const lateReply = signed('n-late', { created_at: T + 11, content: 'reply before its parent', tags: [['e', lateParent.id, '', 'root']] });
  const ownReaction = signed(V, { kind: 7, created_at: T + 21, content: '+', tags: [['e', note1.id]] });
  const vanisher = signed('n-vanisher', { kind: 7, created_at: T + 10, content: '🤙', tags: [['e', note1.id]] });

  beforeAll(async () => {
    context.opened = await open();
    context.server = await startTestServer(context.opened.store);
  });

  afterAll(async () => {
    await context.server?.close();
    await context.opened?.cleanup();
  });

  it('each event once, with the first type that fits; a reply before its parent notifies once the parent is here; self never', async () => {
    const { store } = context.opened;
    // The reply first, alone: its parent is not known, so it notifies nobody yet.
    await store.putEvents([lateReply]);
    expect(await rows(context.server)).toEqual([]);
    await store.putEvents([note1, note2, other, oldFollows, vProfile]);
    await store.marks.set([zapProviderMarkKey(pk(V))], 3600, [providerNote]);
    await store.putEvents([replyNoP, replyWithP, quote, repost, reaction, mention, mentionOfOther, follows, zap, forged, ownReaction, vanisher]);
    await store.putEvents([lateParent]);
    expect(await rows(context.server)).toEqual([
      { type: 'REPLY', event: replyNoP.id, target: note1.id },
      { type: 'REPLY', event: replyWithP.id, target: note1.id },
      { type: 'QUOTE', event: quote.id, target: note2.id },
      { type: 'REPOST', event: repost.id, target: note1.id },
      { type: 'REACTION', event: reaction.id, target: note2.id },
      { type: 'MENTION', event: mention.id, target: null },
      { type: 'MENTION', event: mentionOfOther.id, target: null },
      // Dated by the list that replaced the one of T + 5.
      { type: 'FOLLOW', event: follows.id, target: null },
      { type: 'ZAP', event: zap.id, target: note2.id },
      { type: 'REPLY', event: lateReply.id, target: lateParent.id },
      { type: 'REACTION', event: vanisher.id, target: note1.id },
    ]);
    // Counts are the index's: the forged receipt counts there (every check but the provider's).
    expect(await counts(context.server)).toEqual({ total: 12, zap: 2, reply: 3, quote: 1, repost: 1, reaction: 2, mention: 2, follow: 1 });
    expect(await counts(context.server, T + 16)).toEqual({ total: 5, zap: 0, reply: 2, quote: 1, repost: 1, reaction: 1, mention: 0, follow: 0 });
    // Types and since narrow it.
    expect((await rows(context.server, { types: ['REPLY', 'ZAP'] })).map((row) => row.event)).toEqual([replyNoP.id, replyWithP.id, zap.id, lateReply.id]);
    expect((await rows(context.server, { since: T + 17 })).map((row) => row.event)).toEqual([replyNoP.id, replyWithP.id, quote.id, repost.id]);
    const check = await checkRelations(store);
    expect(check.notificationDifferences).toEqual([]);
    expect(check.notificationRecipients).toBeGreaterThanOrEqual(1);
  });

  it('a deleted target takes its reasons with it (a p-tagged reply becomes a mention); a vanished notifier is gone', async () => {
    const { store } = context.opened;
    await store.putEvents([deletion(V, { ids: [note1.id], at: T + 30 }), vanish('n-vanisher', T + 31)]);
    expect(await rows(context.server)).toEqual([
      { type: 'MENTION', event: replyWithP.id, target: null },
      { type: 'QUOTE', event: quote.id, target: note2.id },
      { type: 'REACTION', event: reaction.id, target: note2.id },
      { type: 'MENTION', event: mention.id, target: null },
      { type: 'MENTION', event: mentionOfOther.id, target: null },
      { type: 'FOLLOW', event: follows.id, target: null },
      { type: 'ZAP', event: zap.id, target: note2.id },
      { type: 'REPLY', event: lateReply.id, target: lateParent.id },
    ]);
    expect(await counts(context.server)).toEqual({ total: 9, zap: 2, reply: 1, quote: 1, repost: 0, reaction: 1, mention: 3, follow: 1 });
    // A notifier deleting its own event: gone too.
    await store.putEvents([deletion('n-quote', { ids: [quote.id], at: T + 32 })]);
    expect((await rows(context.server)).map((row) => row.event)).not.toContain(quote.id);
    expect((await checkRelations(store)).notificationDifferences).toEqual([]);
  });

  it("the pubkey's public mutes apply to the list (an author, a word, a zap by its sender); a private entry is ignored", async () => {
    const { store } = context.opened;
    const mutes = signed(V, { kind: 10000, created_at: T + 40, content: 'encrypted-looking private entries', tags: [['p', pk('n-reply-p')], ['word', 'HELLO'], ['p', pk('n-zapper')]] });
    await store.putEvents([mutes]);
    expect((await rows(context.server)).map((row) => row.event)).toEqual([reaction.id, mentionOfOther.id, follows.id, lateReply.id]);
    // Counts are the index's, mutes not applied.
    expect((await counts(context.server)).total).toBe(8);
  });

  it('hostile arguments: a clear error, nothing read', async () => {
    for (const variables of [{ first: 0 }, { first: 101 }, { types: [] }]) {
      const response = await postGraphql(context.server, PAGE, { pubkey: pk(V), ...variables });
      expect(response.status).toBe(200);
      expect(response.body.errors?.[0]?.extensions?.code).toBe('invalid_argument');
    }
    for (const after of ['', 'x', Buffer.from(`n1:${T}:${'a'.repeat(64)}`).toString('base64url'), 'A'.repeat(500)]) {
      const response = await postGraphql(context.server, PAGE, { pubkey: pk(V), after });
      expect(response.body.errors?.[0]?.extensions?.code).toBe('invalid_cursor');
    }
    const unknownType = await postGraphql(context.server, PAGE, { pubkey: pk(V), types: ['LIKE'] });
    expect(unknownType.status).toBe(400);
    const nsec = await postGraphql(context.server, PAGE, { pubkey: nip19.nsecEncode(secretKey(V)) });
    expect(nsec.body.errors?.[0]?.extensions?.code).toBe('secret_key_refused');
    expect(nsec.text).not.toContain(nip19.nsecEncode(secretKey(V)));
  });
});

describe.each(BOTH_STORES)('notification pages with many in one second ($name)', ({ open }) => {
  const context = {} as { opened: OpenedStore; server: TestServer };
  const target = signed(V, { created_at: T, content: 'popular' });
  // 60 reactions and 25 mentions over 3 seconds: pages split seconds many times.
  const notifiers: NostrEvent[] = [
    ...Array.from({ length: 60 }, (_, index) => signed(`n-many-${index}`, { kind: 7, created_at: T + 1 + (index % 3), content: '+', tags: [['e', target.id]] })),
    ...Array.from({ length: 25 }, (_, index) => signed(`n-many-m-${index}`, { created_at: T + 1 + (index % 3), content: 'hi', tags: [['p', pk(V)]] })),
  ];

  beforeAll(async () => {
    context.opened = await open();
    context.server = await startTestServer(context.opened.store);
    // Notifiers first, in two batches, the target last.
    await context.opened.store.putEvents(notifiers.slice(0, 40));
    await context.opened.store.putEvents([...notifiers.slice(40), target]);
  });

  afterAll(async () => {
    await context.server?.close();
    await context.opened?.cleanup();
  });

  it('pages of every size concatenate to the whole list, newest first then by id, never a repeat or a gap', async () => {
    const expected = [...notifiers].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1)).map((event) => event.id);
    for (const first of [1, 7, 20, 100]) {
      const pages = await collectPages((after) => page(context.server, { first, after }));
      expect(pages.flatMap((read) => read.edges.map(({ node }) => node.event.id))).toEqual(expected);
    }
    expect(await counts(context.server)).toMatchObject({ total: 85, reaction: 60, mention: 25 });
    expect(await counts(context.server, T + 3)).toMatchObject({ total: 28, reaction: 20, mention: 8 });
  });
});

describe.each(BOTH_STORES)('notification counts since any time, over many days ($name)', ({ open }) => {
  const context = {} as { opened: OpenedStore };
  const DAY = 86_400;
  // Mentions over ten days, three a day at its first, a middle and its last second.
  const mentions = Array.from({ length: 30 }, (_, index) => {
    const at = T + Math.floor(index / 3) * DAY + [0, DAY / 2, DAY - 1][index % 3]!;
    return signed(`n-days-${index}`, { created_at: at, content: 'hi', tags: [['p', pk(V)]] });
  });

  beforeAll(async () => {
    context.opened = await open();
    await context.opened.store.putEvents(mentions);
  });

  afterAll(async () => {
    await context.opened?.cleanup();
  });

  it('equal the notifications with created_at >= since, for since on and around every boundary', async () => {
    const times = [0, 1, T - 1, ...mentions.flatMap((event) => [event.created_at - 1, event.created_at, event.created_at + 1]), T + 20 * DAY];
    for (const since of times) {
      const counts = await context.opened.store.relations.notificationCounts(pk(V), since);
      expect([since, counts.MENTION]).toEqual([since, mentions.filter((event) => event.created_at >= since).length]);
    }
    expect((await context.opened.store.relations.notificationCounts(pk(V))).MENTION).toBe(30);
  });
});

describe('notifications with relays: what names the pubkey, and what relates to its recent events', () => {
  const context = {} as { relay: LoopbackRelay; store: TestStore; server: TestServer };
  const note = signed(V, { created_at: T, content: 'in the index' });
  // On the relay only: a mention, a reaction that tags V, and a reply that does not (found by `#e` of V's note).
  const onRelay = [
    signed('nr-mention', { created_at: T + 3, content: 'hi', tags: [['p', pk(V)]] }),
    signed('nr-react', { kind: 7, created_at: T + 2, content: '+', tags: [['e', note.id], ['p', pk(V)]] }),
    signed('nr-reply', { created_at: T + 1, content: 'no p tag', tags: [['e', note.id, '', 'root']] }),
  ];
  beforeAll(async () => {
    context.relay = await startLoopbackRelay({ events: [note, ...onRelay] });
    context.store = await createTestStore();
    await context.store.store.putEvents([note]);
    context.server = await startTestServer(context.store.store, { relays: { urls: [context.relay.url], outbox: { enabled: false, relaysPerPubkey: 3, maxRelays: 8 } } });
  });
  afterAll(async () => {
    await context.server?.close();
    await context.store?.cleanup();
    await context.relay?.stop();
  });

  it('a first page asks the relays for `#p` of the pubkey and the relationships of its recent events, once per RELATIONS_TTL', async () => {
    expect(await rows(context.server)).toEqual([
      { type: 'MENTION', event: onRelay[0]!.id, target: null },
      { type: 'REACTION', event: onRelay[1]!.id, target: note.id },
      { type: 'REPLY', event: onRelay[2]!.id, target: note.id },
    ]);
    const asked = context.relay.requests.flat();
    expect(asked).toContainEqual({ '#p': [pk(V)], kinds: [1, 3, 6, 7, 16, 1111, 9735, 30023], limit: 500 });
    expect(asked.some((filter) => filter['#e']?.includes(note.id))).toBe(true);
    const before = context.relay.requests.length;
    await rows(context.server);
    expect(context.relay.requests.length).toBe(before);
    expect((await checkRelations(context.store.store)).notificationDifferences).toEqual([]);
  });
});
