import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nip19 } from 'nostr-tools';
import type { NostrEvent } from '../src/nostr/event.js';
import { encodeCursor } from '../src/schema/paging.js';
import type { EventStore } from '../src/store/event-store.js';
import { BOTH_STORES, type OpenedStore } from './support/both-stores.js';
import { deletion, vanish } from './support/deletion-conformance.js';
import { pubkeyOf, secretKey, signed } from './support/events.js';
import { type LoopbackRelay, startLoopbackRelay } from './support/loopback-relay.js';
import { createTestStore, type TestStore } from './support/test-store.js';
import { collectPages, postGraphql, startTestServer, type TestServer } from './support/test-server.js';
import { seeded } from '../scripts/bench/recall/network/random.js';

/**
 * The home feed and mutes of a pubkey over GraphQL (DESIGN "Screens": feed of V, mutes of V), on
 * both stores and the real app: a generated world of authors, follow lists (one replacing another),
 * notes, replies, reposts, reactions and comments, many in one second, deleted and vanished events
 * and mute lists (one replacing another), read page by page and compared with the rules as this
 * file reads them, from the events it generated (their parents known by construction, not parsed).
 */

const T = 1_700_000_000;
const VIEWER = 'feed-viewer';
const AUTHORS = Array.from({ length: 12 }, (_, index) => `feed-author-${index}`);
const pk = (name: string) => pubkeyOf(name);


interface Made {
  event: NostrEvent;
  /** By construction: the NIP-10/NIP-22 root and parent this event was written with. */
  root?: string;
  parent?: string;
  /** A repost's target and its author. */
  target?: NostrEvent;
}

interface World {
  events: Made[];
  /** Stored first, then replaced by `followList` (it drops AUTHORS[2] and adds AUTHORS[10]). */
  oldFollowList: NostrEvent;
  followList: NostrEvent;
  oldMuteList: NostrEvent;
  muteList: NostrEvent;
  /** What the store no longer serves: deleted by their author, or covered by a request to vanish. */
  gone: Set<string>;
  /** The thread root V muted (its replies and reposts vanish too). */
  mutedRoot: NostrEvent;
  deletions: NostrEvent[];
}

const CONTENTS = ['gm', 'I like COFFEE', 'ｃｏｆｆｅｅ time', 'tea please', 'coffeehouse', 'hello nostr', 'ΚΑΦΕΣ', 'plain words'];

function makeWorld(seed: number): World {
  const next = seeded(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const at = () => T + Math.floor(next() * 8); // many events share a second
  const events: Made[] = [];
  const notes: Made[] = [];
  // Top-level notes first (so replies and reposts have targets), with hashtags in any case.
  for (const author of AUTHORS) {
    for (let index = 0; index < 6; index++) {
      const tags = next() < 0.3 ? [['t', pick(['nostr', 'NoStr', 'NOSTR', 'bitcoin'])]] : [];
      const made = { event: signed(author, { created_at: at(), content: `${pick(CONTENTS)} ${index}`, tags }) };
      events.push(made);
      notes.push(made);
    }
  }
  const mutedRoot = (notes.find((made) => made.event.pubkey === pk(AUTHORS[1] as string)) as Made).event;
  for (const author of AUTHORS) {
    for (let index = 0; index < 10; index++) {
      const shape = next();
      const target = next() < 0.25 ? { event: mutedRoot } : pick(notes);
      const id = target.event.id;
      // Hex in tags read in any case.
      const written = next() < 0.3 ? id.toUpperCase() : id;
      if (shape < 0.2) {
        events.push({ event: signed(author, { created_at: at(), content: `reply ${pick(CONTENTS)}`, tags: [['e', written, '', 'root'], ['p', target.event.pubkey]] }), root: id, parent: id });
      } else if (shape < 0.3) {
        // Deprecated positional form: one `e` is root and parent.
        events.push({ event: signed(author, { created_at: at(), content: 'positional reply', tags: [['e', written]] }), root: id, parent: id });
      } else if (shape < 0.4) {
        // A mention only: not a reply.
        events.push({ event: signed(author, { created_at: at(), content: `mentions ${pick(CONTENTS)}`, tags: [['e', written, '', 'mention']] }) });
      } else if (shape < 0.55) {
        events.push({ event: signed(author, { kind: 6, created_at: at(), content: JSON.stringify(target.event), tags: [['e', id], ['p', target.event.pubkey]] }), target: target.event });
      } else if (shape < 0.65) {
        events.push({ event: signed(author, { kind: 16, created_at: at(), tags: [['e', id], ['p', target.event.pubkey], ['k', '1']] }), target: target.event });
      } else if (shape < 0.75) {
        events.push({ event: signed(author, { kind: 7, created_at: at(), content: '+', tags: [['e', id], ['p', target.event.pubkey]] }) });
      } else if (shape < 0.85) {
        events.push({ event: signed(author, { kind: 1111, created_at: at(), content: 'a comment', tags: [['E', id], ['e', id], ['K', '1'], ['k', '1']] }), root: id, parent: id });
      } else {
        events.push({ event: signed(author, { created_at: at(), content: pick(CONTENTS), tags: [['t', pick(['Nostr', 'art'])]] }) });
      }
    }
  }
  const follows = (indexes: number[]) => indexes.map((index) => ['p', pk(AUTHORS[index] as string)]);
  const oldFollowList = signed(VIEWER, {
    kind: 3,
    created_at: T - 20,
    tags: [...follows([0, 1, 2, 3, 4, 5, 6, 7, 8]), ['p', pk(AUTHORS[9] as string).toUpperCase()], ['p', 'not-a-pubkey'], ['p', pk('nobody')]],
  });
  const followList = signed(VIEWER, {
    kind: 3,
    created_at: T - 10,
    tags: [...follows([0, 1, 3, 4, 5, 6, 7, 8, 10]), ['p', pk(AUTHORS[9] as string).toUpperCase()], ['p', 'not-a-pubkey'], ['p', pk('nobody')]],
  });
  const oldMuteList = signed(VIEWER, { kind: 10_000, created_at: T - 20, tags: [['p', pk(AUTHORS[0] as string)], ['word', 'gm']] });
  const muteList = signed(VIEWER, {
    kind: 10_000,
    created_at: T - 10,
    // A private entry (NIP-51: the content, encrypted; here even in clear) is never read.
    content: JSON.stringify([['p', pk(AUTHORS[5] as string)]]),
    tags: [
      ['p', pk(AUTHORS[4] as string).toUpperCase()],
      ['p', 'zz'],
      ['e', mutedRoot.id.toUpperCase()],
      ['t', 'NoStr'],
      ['word', 'Ｃｏｆｆｅｅ'],
      ['word', ''],
      ['word'],
    ],
  });
  // Author 6 deletes two of its events; author 7 asks to vanish.
  const ofSix = events.filter((made) => made.event.pubkey === pk(AUTHORS[6] as string)).slice(0, 2);
  const deletions = [deletion(AUTHORS[6] as string, { ids: ofSix.map((made) => made.event.id), at: T + 50 }), vanish(AUTHORS[7] as string, T + 60)];
  const gone = new Set([...ofSix.map((made) => made.event.id), ...events.filter((made) => made.event.pubkey === pk(AUTHORS[7] as string)).map((made) => made.event.id)]);
  return { events, oldFollowList, followList, oldMuteList, muteList, gone, mutedRoot, deletions };
}

/** The feed as this file reads the rules: every stored event, filtered, sorted. */
function expectedFeed(world: World, followList: NostrEvent, muteList: NostrEvent | null, { kinds = [1, 6, 16], replies = false } = {}): string[] {
  const follows = new Set(followList.tags.filter((tag) => tag[0] === 'p' && /^[0-9a-fA-F]{64}$/.test(tag[1] ?? '')).map((tag) => (tag[1] as string).toLowerCase()));
  const tagValues = (name: string) => (muteList?.tags ?? []).filter((tag) => tag[0] === name && typeof tag[1] === 'string' && tag[1] !== '').map((tag) => tag[1] as string);
  const mutedPubkeys = new Set(tagValues('p').map((value) => value.toLowerCase()));
  const mutedEvents = new Set(tagValues('e').map((value) => value.toLowerCase()));
  const mutedTags = new Set(tagValues('t').map((value) => value.toLowerCase()));
  const mutedWords = tagValues('word').map((value) => value.normalize('NFKC').toLowerCase());
  const muted = (made: Made): boolean =>
    mutedPubkeys.has(made.event.pubkey) ||
    [made.event.id, made.root, made.parent, made.target?.id].some((id) => id !== undefined && mutedEvents.has(id)) ||
    (made.target !== undefined && mutedPubkeys.has(made.target.pubkey)) ||
    made.event.tags.some((tag) => tag[0] === 't' && mutedTags.has((tag[1] ?? '').toLowerCase())) ||
    mutedWords.some((word) => made.event.content.normalize('NFKC').toLowerCase().includes(word));
  return world.events
    .filter((made) => !world.gone.has(made.event.id))
    .filter((made) => kinds.includes(made.event.kind) && follows.has(made.event.pubkey))
    .filter((made) => replies || made.event.kind !== 1 || made.parent === undefined)
    .filter((made) => !muted(made))
    .map((made) => made.event)
    .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1))
    .map((event) => event.id);
}

const PAGE = `query ($pubkey: String!, $first: Int, $after: String, $kinds: [Int!], $replies: Boolean, $trusted: Boolean) {
  pubkey(pubkey: $pubkey) { feed(first: $first, after: $after, kinds: $kinds, replies: $replies, trusted: $trusted) { edges { cursor node { id kind createdAt } } pageInfo { hasNextPage endCursor } } }
}`;

interface Connection {
  edges: { cursor: string; node: { id: string; kind: number; createdAt: number } }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

async function page(server: TestServer, variables: Record<string, unknown>, pubkey = pk(VIEWER)): Promise<Connection> {
  const response = await postGraphql(server, PAGE, { pubkey, ...variables });
  expect(response.body.errors, response.text).toBeUndefined();
  return (response.body.data?.pubkey as { feed: Connection }).feed;
}

async function wholeFeed(server: TestServer, variables: Record<string, unknown>): Promise<{ ids: string[]; pages: Connection[] }> {
  const pages = await collectPages((after) => page(server, { ...variables, after }));
  return { ids: pages.flatMap((connection) => connection.edges.map((edge) => edge.node.id)), pages };
}

async function putEach(store: EventStore, events: readonly NostrEvent[]): Promise<void> {
  for (const event of events) await store.putEvents([event]);
}

describe.each(BOTH_STORES)('the home feed and mutes over GraphQL ($name)', ({ open }) => {
  const world = makeWorld(47);
  const context = {} as { opened: OpenedStore; server: TestServer };
  beforeAll(async () => {
    context.opened = await open();
    const { store } = context.opened;
    // Shuffled by the generator's order; lists older first, so that the newer replaces them.
    await store.putEvents(world.events.map((made) => made.event));
    await putEach(store, [world.oldFollowList, world.followList, world.oldMuteList, world.muteList, ...world.deletions]);
    context.server = await startTestServer(store);
  }, 60_000);
  afterAll(async () => {
    await context.server?.close();
    await context.opened?.cleanup();
  });

  it('muted: the latest list, its public tags only, hex lowercased, malformed entries skipped', async () => {
    const response = await postGraphql(context.server, `query ($pubkey: String!) { pubkey(pubkey: $pubkey) { muted { pubkeys events hashtags words } } profile(pubkey: $pubkey) { pubkey } }`, { pubkey: pk(VIEWER) });
    expect(response.body.errors, response.text).toBeUndefined();
    expect((response.body.data?.pubkey as { muted: unknown }).muted).toEqual({ pubkeys: [pk(AUTHORS[4] as string)], events: [world.mutedRoot.id], hashtags: ['nostr'], words: ['coffee'] });
    const none = await postGraphql(context.server, `{ pubkey(pubkey: "${pk(AUTHORS[3] as string)}") { muted { pubkeys events hashtags words } } }`);
    expect((none.body.data?.pubkey as { muted: unknown }).muted).toEqual({ pubkeys: [], events: [], hashtags: [], words: [] });
  });

  it('every page size and argument: the followed authors’ events, newest first then id, each once, as the rules say', async () => {
    const runs: { first: number; kinds?: number[]; replies?: boolean }[] = [
      { first: 1 },
      { first: 3 },
      { first: 7, replies: true },
      { first: 20 },
      { first: 100 },
      { first: 4, kinds: [1] },
      { first: 9, kinds: [1, 1111, 7], replies: true },
      { first: 5, kinds: [6, 16] },
    ];
    for (const run of runs) {
      const { ids, pages } = await wholeFeed(context.server, run);
      const expected = expectedFeed(world, world.followList, world.muteList, run);
      expect(expected.length, JSON.stringify(run)).toBeGreaterThan(run.first === 100 ? 10 : 3);
      expect(ids, JSON.stringify(run)).toEqual(expected);
      for (const connection of pages) expect(connection.edges.length).toBeLessThanOrEqual(run.first);
      // A page is full unless more than 5 × first events in a row were filtered out, or it is the last.
      const short = pages.slice(0, -1).filter((connection) => connection.edges.length < run.first);
      if (run.first >= 20) expect(short).toEqual([]);
      // Pages of one examine five events at most: runs of filtered ones leave pages empty, which go on after them.
      if (run.first === 1) expect(short.length, 'empty pages before the end').toBeGreaterThan(0);
    }
  });

  it('`trusted: true` filters nothing: every followed author is in the pubkey’s own web', async () => {
    const { ids } = await wholeFeed(context.server, { first: 20, trusted: true });
    expect(ids).toEqual(expectedFeed(world, world.followList, world.muteList));
  });

  it('a Profile has the same feed and mutes; a pubkey with no follow list an empty feed', async () => {
    const response = await postGraphql(context.server, `{ profile(pubkey: "${pk(VIEWER)}") { feed(first: 5) { edges { node { id } } } muted { words } } }`);
    // V has no kind 0: profile is null, as profile(pubkey:) is.
    expect(response.body.data?.profile).toBeNull();
    const empty = await page(context.server, { first: 5 }, pk(AUTHORS[3] as string));
    expect(empty).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
  });

  it('hostile arguments: first 0/101/-1 and kinds out of rule are invalid_argument, a float is refused by validation, cursors not a feed’s invalid_cursor, an nsec secret_key_refused', async () => {
    for (const variables of [{ first: 0 }, { first: 101 }, { first: -1 }, { kinds: [] }, { kinds: [-1] }, { kinds: [65_536] }, { kinds: [3] }, { kinds: [10_000] }, { kinds: [20_001] }, { kinds: [9735] }, { kinds: null }]) {
      const response = await postGraphql(context.server, PAGE, { pubkey: pk(VIEWER), ...variables });
      expect(response.body.errors?.[0]?.extensions?.code, JSON.stringify(variables)).toBe('invalid_argument');
      expect(response.body.data?.pubkey ?? null).toBeNull();
    }
    const float = await postGraphql(context.server, PAGE, { pubkey: pk(VIEWER), first: 1.5 });
    expect(float.status).toBe(400);
    expect(float.body.data ?? null).toBeNull();
    // Twenty-one kinds read twenty-one lists per followed author: refused before it runs.
    const many = await postGraphql(context.server, PAGE, { pubkey: pk(VIEWER), kinds: Array.from({ length: 21 }, (_, index) => 40_000 + index) });
    expect(many.body.errors?.[0]?.extensions?.code).toBe('query_too_costly');
    const position = { createdAt: T + 5, id: world.mutedRoot.id };
    for (const after of ['', 'garbage', encodeCursor(position, 'notes'), encodeCursor(position, 'replies'), `${encodeCursor(position, 'feed')}A`, Buffer.from(`h1:${T}:${'A'.repeat(64)}`).toString('base64url'), 'x'.repeat(10_000)]) {
      const response = await postGraphql(context.server, PAGE, { pubkey: pk(VIEWER), after });
      expect(response.body.errors?.[0]?.extensions?.code, after.slice(0, 40)).toBe('invalid_cursor');
    }
    // A forged but well-formed feed cursor is a position like any other: the page after it.
    const forged = await page(context.server, { first: 100, after: encodeCursor(position, 'feed') });
    const expected = expectedFeed(world, world.followList, world.muteList);
    const made = new Map(world.events.map((one) => [one.event.id, one.event]));
    expect(forged.edges.map((edge) => edge.node.id)).toEqual(
      expected.filter((id) => {
        const event = made.get(id) as NostrEvent;
        return event.created_at < position.createdAt || (event.created_at === position.createdAt && id > position.id);
      }),
    );
    const nsec = nip19.nsecEncode(secretKey(VIEWER));
    const refused = await postGraphql(context.server, PAGE, { pubkey: nsec });
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('secret_key_refused');
    expect(refused.text).not.toContain(nsec);
  });
});

describe.each(BOTH_STORES)('the feed as lists change between pages ($name)', ({ open }) => {
  const world = makeWorld(4711);
  const context = {} as { opened: OpenedStore; server: TestServer };
  beforeAll(async () => {
    context.opened = await open();
    await context.opened.store.putEvents(world.events.map((made) => made.event));
    await putEach(context.opened.store, [world.oldFollowList, world.oldMuteList]);
    context.server = await startTestServer(context.opened.store);
  }, 60_000);
  afterAll(async () => {
    await context.server?.close();
    await context.opened?.cleanup();
  });

  it('a replaced follow list drops an author from the next page on; a replaced mute list applies from the next page; a deletion and a vanish remove at once', async () => {
    const before = expectedFeed({ ...world, gone: new Set() }, world.oldFollowList, world.oldMuteList);
    const first = await page(context.server, { first: 10 });
    expect(first.edges.map((edge) => edge.node.id)).toEqual(before.slice(0, 10));
    await putEach(context.opened.store, [world.followList, world.muteList, ...world.deletions]);
    const rest = await collectPages((after) => page(context.server, { first: 10, after: after ?? first.pageInfo.endCursor }));
    const last = first.edges.at(-1)?.node as { id: string; createdAt: number };
    const after = expectedFeed(world, world.followList, world.muteList);
    const made = new Map(world.events.map((one) => [one.event.id, one.event]));
    const pastCursor = after.filter((id) => {
      const event = made.get(id) as NostrEvent;
      return event.created_at < last.createdAt || (event.created_at === last.createdAt && id > last.id);
    });
    const ids = rest.flatMap((connection) => connection.edges.map((edge) => edge.node.id));
    expect(ids).toEqual(pastCursor);
    expect(ids.some((id) => made.get(id)?.pubkey === pk(AUTHORS[2] as string))).toBe(false);
    expect(before.some((id) => made.get(id)?.pubkey === pk(AUTHORS[2] as string))).toBe(true);
  });
});

describe('the lists a feed reads come from relays when the index has none (Redis)', () => {
  const world = makeWorld(99);
  const context = {} as { relay: LoopbackRelay; store: TestStore; server: TestServer };
  beforeAll(async () => {
    // The relay holds V's follow and mute lists; the index only the authors' events.
    context.relay = await startLoopbackRelay({ events: [world.followList, world.muteList] });
    context.store = await createTestStore();
    await context.store.store.putEvents(world.events.map((made) => made.event));
    context.server = await startTestServer(context.store.store, { relays: { urls: [context.relay.url], outbox: { enabled: false, relaysPerPubkey: 3, maxRelays: 8 } } });
  });
  afterAll(async () => {
    await context.server?.close();
    await context.store?.cleanup();
    await context.relay?.stop();
  });

  it('muted and feed read the kind 10000 and kind 3 as any replaceable event is read: asked of the relays, stored, applied', async () => {
    const response = await postGraphql(context.server, `{ pubkey(pubkey: "${pk(VIEWER)}") { muted { words } } }`);
    expect(response.body.data).toEqual({ pubkey: { muted: { words: ['coffee'] } } });
    const { ids } = await wholeFeed(context.server, { first: 20 });
    expect(ids).toEqual(expectedFeed({ ...world, gone: new Set() }, world.followList, world.muteList));
    const [held] = await context.store.store.getByCoordinates([`10000:${pk(VIEWER)}:`]);
    expect(held && 'event' in held ? held.event?.id : null).toBe(world.muteList.id);
  });
});

/**
 * The feed from the relays (fill/relation-fill.ts FEED): a first page asks RELAYS and each followed
 * author's write relays (NIP-65) what the authors wrote lately, stores it (deletions included), and
 * merges; within RELATIONS_TTL the relays are not asked again; a refresh past half of it asks only
 * what came `since` the last fill.
 */
describe.each(BOTH_STORES)('the feed from the relays on the $name store', ({ open }) => {
  const viewer = 'feed-fill-viewer';
  const [onRelays, onOutbox, offline] = ['feed-fill-a', 'feed-fill-b', 'feed-fill-c'];
  const note = (author: string, at: number, content: string) => signed(author, { created_at: at, content });
  const aNotes = [note(onRelays, T + 10, 'a on RELAYS'), note(onRelays, T + 11, 'a deleted on RELAYS')];
  const aDeletion = signed(onRelays, { kind: 5, created_at: T + 12, content: '', tags: [['e', (aNotes[1] as NostrEvent).id]] });
  const bNotes = [note(onOutbox, T + 20, 'b on its own write relay'), note(onOutbox, T + 21, 'b again')];
  const cHeld = note(offline, T + 5, 'c held by the index alone');
  const context = {} as { configured: LoopbackRelay; outbox: LoopbackRelay; opened: OpenedStore; server: TestServer };
  beforeAll(async () => {
    context.outbox = await startLoopbackRelay({ events: bNotes });
    context.configured = await startLoopbackRelay({ events: [...aNotes, aDeletion, note(offline, T + 30, 'c on RELAYS')] });
    context.opened = await open();
    const followList = signed(viewer, { kind: 3, created_at: T, content: '', tags: [onRelays, onOutbox, offline].map((name) => ['p', pk(name)]) });
    // B writes to its own relay only (NIP-65: a bare `r` tag is read and write).
    const bRelays = signed(onOutbox, { kind: 10002, created_at: T, content: '', tags: [['r', context.outbox.url]] });
    await context.opened.store.putEvents([followList, bRelays, cHeld]);
    context.server = await startTestServer(context.opened.store, {
      relays: { urls: [context.configured.url], allowPrivateHints: true, outbox: { enabled: true, relaysPerPubkey: 3, maxRelays: 8 }, relations: { ttlSeconds: 4, maxEvents: 100 } },
    });
  });
  afterAll(async () => {
    await context.server?.close();
    await context.opened?.cleanup();
    await context.configured?.stop();
    await context.outbox?.stop();
  });

  const FEED = `query ($v: String!) { pubkey(pubkey: $v) { feed(first: 20) { edges { node { content } } } } }`;
  const feedContents = async () => {
    const { status, body } = await postGraphql(context.server, FEED, { v: pk(viewer) });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    return (body.data?.pubkey as { feed: { edges: { node: { content: string } }[] } }).feed.edges.map((edge) => edge.node.content);
  };
  const feedRequests = (relay: LoopbackRelay) => relay.requests.filter((filters) => filters.some((filter) => filter.authors !== undefined && filter.kinds?.includes(1)));

  it('a first page holds what the authors wrote on RELAYS and on their write relays, a deleted note left out', async () => {
    expect(await feedContents()).toEqual(['c on RELAYS', 'b again', 'b on its own write relay', 'a on RELAYS', 'c held by the index alone']);
    // One REQ on each relay for the authors it serves, a filter an author.
    const configured = feedRequests(context.configured);
    expect(configured).toHaveLength(1);
    expect(configured[0]?.map((filter) => filter.authors).sort()).toEqual([[pk(onRelays)], [pk(onOutbox)], [pk(offline)]].sort());
    expect(configured[0]?.every((filter) => filter.since === undefined && filter.limit === 20)).toBe(true);
    expect(feedRequests(context.outbox).map((filters) => filters.map((filter) => filter.authors))).toEqual([[[pk(onOutbox)]]]);
  });

  it('within RELATIONS_TTL the relays are not asked again; past half of it, a refresh asks since the last fill', async () => {
    const before = feedRequests(context.configured).length;
    await feedContents();
    expect(feedRequests(context.configured)).toHaveLength(before);
    context.configured.add(note(onRelays, Math.floor(Date.now() / 1000), 'a, new since'));
    await new Promise((resolve) => setTimeout(resolve, 2100));
    // This read answers from the index and refreshes in the background.
    await feedContents();
    await expect.poll(() => feedRequests(context.configured).length, { timeout: 3000 }).toBeGreaterThan(before);
    const refresh = feedRequests(context.configured).at(-1) as { since?: number }[];
    expect(refresh.every((filter) => typeof filter.since === 'number' && (filter.since as number) > T + 1000)).toBe(true);
    await expect.poll(async () => (await feedContents())[0], { timeout: 3000 }).toBe('a, new since');
  });

  it('the authors are covered with few relays: one relay all of them write to is asked for all, once, and no other', async () => {
    const relays = await Promise.all([0, 1, 2].map(() => startLoopbackRelay({ events: [] })));
    const [r1, r2, r3] = relays.map((relay) => relay.url) as [string, string, string];
    const [x, y, z, reader] = ['cover-x', 'cover-y', 'cover-z', 'cover-viewer'];
    await context.opened.store.putEvents([
      signed(reader, { kind: 3, created_at: T, content: '', tags: [x, y, z].map((name) => ['p', pk(name)]) }),
      signed(x, { kind: 10002, created_at: T, content: '', tags: [['r', r1, 'write'], ['r', r2, 'write']] }),
      signed(y, { kind: 10002, created_at: T, content: '', tags: [['r', r3], ['r', r2]] }),
      signed(z, { kind: 10002, created_at: T, content: '', tags: [['r', r2]] }),
    ]);
    const covering = await startTestServer(context.opened.store, {
      relays: { urls: [context.configured.url], allowPrivateHints: true, outbox: { enabled: true, relaysPerPubkey: 1, maxRelays: 8 }, relations: { ttlSeconds: 300, maxEvents: 100 } },
    });
    try {
      expect((await postGraphql(covering, `{ pubkey(pubkey: "${pk(reader)}") { feed { edges { cursor } } } }`)).status).toBe(200);
      const [one, two, three] = relays.map((relay) => feedRequests(relay).map((filters) => filters.map((filter) => filter.authors?.[0]).sort()));
      expect(two).toEqual([[x, y, z].map(pk).sort()]);
      expect([one, three]).toEqual([[], []]);
    } finally {
      await covering.close();
      await Promise.all(relays.map((relay) => relay.stop()));
    }
  });

  it('a request asks for half of RELAY_MAX_KEYS_PER_REQUEST authors at most, cold or stale; the next asks for the others', async () => {
    const small = await startTestServer(context.opened.store, {
      relays: { urls: [context.configured.url], allowPrivateHints: true, maxKeysPerRequest: 4, outbox: { enabled: false, relaysPerPubkey: 3, maxRelays: 8 }, relations: { ttlSeconds: 4, maxEvents: 100 } },
    });
    try {
      // Kinds of their own: targets no earlier fill marked.
      const query = `query ($v: String!) { pubkey(pubkey: $v) { feed(first: 20, kinds: [1]) { edges { node { content } } } } }`;
      const asked = () => feedRequests(context.configured).filter((filters) => filters.every((filter) => filter.kinds?.join() === '1')).flatMap((filters) => filters.map((filter) => filter.authors?.[0]));
      expect((await postGraphql(small, query, { v: pk(viewer) })).status).toBe(200);
      expect(asked()).toHaveLength(2);
      expect((await postGraphql(small, query, { v: pk(viewer) })).status).toBe(200);
      expect(asked().sort()).toEqual([onRelays, onOutbox, offline].map(pk).sort());
      // All three stale: a read refreshes two in the background (those asked first), the next the third.
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const before = asked().length;
      expect((await postGraphql(small, query, { v: pk(viewer) })).status).toBe(200);
      await expect.poll(() => asked().length, { timeout: 3000 }).toBe(before + 2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(asked()).toHaveLength(before + 2);
      expect((await postGraphql(small, query, { v: pk(viewer) })).status).toBe(200);
      await expect.poll(() => asked().length, { timeout: 3000 }).toBe(before + 3);
      expect(asked().slice(before).sort()).toEqual([onRelays, onOutbox, offline].map(pk).sort());
    } finally {
      await small.close();
    }
  });
});
