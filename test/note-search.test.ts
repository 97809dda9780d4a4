import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nip19 } from 'nostr-tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { noteWords } from '../src/nostr/note-search.js';
import { encodeCursor } from '../src/schema/paging.js';
import { LmdbEventStore } from '../src/store/embedded/lmdb-event-store.js';
import { isSearchableKind, type NoteSearchQuery } from '../src/store/note-search-index.js';
import { checkRelations } from '../src/store/relation-check.js';
import { compareNotes, type ReplyPosition } from '../src/store/relation-index.js';
import { BOTH_STORES, type OpenedStore } from './support/both-stores.js';
import { deletion, vanish } from './support/deletion-conformance.js';
import { pubkeyOf, secretKey, signed } from './support/events.js';
import { shuffled } from './support/shuffle.js';
import { seeded } from '../scripts/bench/recall/network/random.js';
import { collectPages, postGraphql, startTestServer, type TestServer } from './support/test-server.js';
import { createTestStore } from './support/test-store.js';

/**
 * searchNotes (DESIGN "Screens", search of notes, NIP-50) on both stores, over GraphQL on the real
 * app: a generated world of notes and articles in many scripts, arriving shuffled, some deleted, some
 * replaced, one author vanished, many in the same second; every query paged through and compared
 * with an independent reading of the rule written here (not nostr/note-search.ts's matcher).
 */

const T = 1_700_000_000;

/** Words as people write them: accents (composed and not), full width, case, CJK without spaces, Arabic, emoji. */
const VOCABULARY = [
  'Café',
  'cafe\u0301',
  'CAFE',
  'ｎｏｓｔｒ',
  'Nostr',
  'nostrich',
  'nostalgia',
  '東京タワー',
  '東京',
  '日本語を話す',
  '한국어',
  'مرحبا',
  'بالعالم',
  'bitcoin',
  'Bitcoin⚡',
  'zap',
  'zaps',
  'Straße',
  'ﬁne',
  '🤙',
  '2024年',
  'über',
  'Über-cool',
  'naïve',
];
const SEPARATORS = [' ', ', ', '\n', ' — ', '!', '#'];

const AUTHORS = ['alice', 'bob', 'carol', 'dave', 'erin'];
const nameOf = (pubkey: string) => AUTHORS.find((name) => pubkeyOf(name) === pubkey) as string;

function content(next: () => number): string {
  const count = 1 + Math.floor(next() * 5);
  let text = '';
  for (let index = 0; index < count; index++) {
    text += VOCABULARY[Math.floor(next() * VOCABULARY.length)] as string;
    text += SEPARATORS[Math.floor(next() * SEPARATORS.length)] as string;
  }
  return text;
}

interface World {
  events: NostrEvent[];
  /** The notes and articles a store serves once all have arrived. */
  servable: NostrEvent[];
}

function world(seed: number): World {
  const next = seeded(seed);
  const notes: NostrEvent[] = [];
  for (let index = 0; index < 160; index++) {
    const author = AUTHORS[index % AUTHORS.length] as string;
    // Eight seconds only: many notes share one, ordered by id.
    notes.push(signed(author, { kind: 1, created_at: T + Math.floor(next() * 8), content: content(next) }));
  }
  const articles: NostrEvent[] = [];
  for (let index = 0; index < 12; index++) {
    const author = AUTHORS[index % 3] as string;
    const tags = [['d', `article ${index % 6}`], ['title', content(next)], ['summary', content(next)]];
    articles.push(signed(author, { kind: 30023, created_at: T + index, tags, content: content(next) }));
  }
  // Other kinds are never searched.
  const others = [signed('alice', { kind: 7, created_at: T, content: 'Nostr bitcoin', tags: [['e', (notes[0] as NostrEvent).id]] }), signed('bob', { kind: 1111, created_at: T, content: 'nostr comment' })];
  // Deleted by their authors (one deletion arrives before its note: shuffled), and every note of dave's before he vanished.
  const deleted = notes.filter((_, index) => index % 9 === 1);
  const deletions = deleted.map((note) => deletion(nameOf(note.pubkey), { ids: [note.id], at: T + 20 }));
  const vanished = vanish('dave', T + 4);
  const events = [...notes, ...articles, ...others, ...deletions, vanished];
  const gone = new Set(deleted.map((note) => note.id));
  // An article's latest version per address (created_at, then the lowest id: NIP-01).
  const latest = new Map<string, NostrEvent>();
  for (const article of articles) {
    const address = `${article.pubkey}:${article.tags[0]?.[1]}`;
    const held = latest.get(address);
    if (!held || article.created_at > held.created_at || (article.created_at === held.created_at && article.id < held.id)) latest.set(address, article);
  }
  const servable = [...notes, ...latest.values()].filter((event) => !gone.has(event.id) && !(event.pubkey === pubkeyOf('dave') && event.created_at <= T + 4));
  return { events, servable };
}

/**
 * The rule as DESIGN states it, read apart: a note's words (content, an article's title and
 * summary), a query's words; every query word held, the last one (2 characters or more) possibly
 * the start of one. Tokenizing is nostr/note-search.ts's noteWords (tested apart against its own
 * independent reading: test/note-search-rule.test.ts); the matching and the query split are here.
 */
function expected(world: World, query: string, filter: { kinds?: number[]; since?: number; until?: number; authors?: string[] } = {}): string[] {
  const tokens = noteWordsInOrder(query);
  if (tokens.length === 0) return [];
  const last = tokens[tokens.length - 1] as string;
  const whole = Array.from(last).length >= 2 ? tokens.slice(0, -1) : tokens;
  const kinds = filter.kinds ?? [1, 30023];
  const authors = filter.authors?.map(pubkeyOf);
  return world.servable
    .filter((event) => {
      if (!kinds.includes(event.kind)) return false;
      if (filter.since !== undefined && event.created_at < filter.since) return false;
      if (filter.until !== undefined && event.created_at > filter.until) return false;
      if (authors && !authors.includes(event.pubkey)) return false;
      const words = noteWords(event);
      if (!whole.every((word) => words.includes(word))) return false;
      return Array.from(last).length < 2 || words.some((word) => word.startsWith(last));
    })
    .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1))
    .map((event) => event.id);
}

/** A query's words in order, each as often as it comes (noteWords keeps them distinct: each token apart). */
function noteWordsInOrder(query: string): string[] {
  return query
    .split(/\s+/u)
    .filter((token) => token !== '' && !/^(include|domain|language|sentiment|nsfw):/iu.test(token.normalize('NFKC').toLowerCase()))
    .flatMap((token) => noteWords({ kind: 1, content: token, tags: [] }));
}

const SEARCH = `query ($query: String!, $first: Int, $after: String, $kinds: [Int!], $authors: [String!], $since: Timestamp, $until: Timestamp, $viewer: String) {
  searchNotes(query: $query, first: $first, after: $after, kinds: $kinds, authors: $authors, since: $since, until: $until, viewer: $viewer) {
    edges { cursor node { id } } pageInfo { hasNextPage endCursor }
  }
}`;

interface Connection {
  edges: { cursor: string; node: { id: string } }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

async function search(server: TestServer, variables: Record<string, unknown>): Promise<Connection> {
  const response = await postGraphql(server, SEARCH, variables);
  expect(response.status, response.text).toBe(200);
  expect(response.body.errors, response.text).toBeUndefined();
  return response.body.data?.searchNotes as Connection;
}

async function allOf(server: TestServer, variables: Record<string, unknown>): Promise<string[]> {
  const pages = await collectPages((after) => search(server, { ...variables, after }));
  return pages.flatMap((page) => page.edges.map((edge) => edge.node.id));
}

const QUERIES = ['café', 'CAFÉ nostr', 'nost', 'no', 'n', 'nostr nostrich', '東京', '京タ', '東京タワ', 'タワー 東京', '日本', '語を', '한국', 'مرحبا', 'bitcoin zap', 'zap', 'za', 'strasse', 'straße', 'fine', 'ü', 'über cool', 'naive', 'naïve', '2024', '年', '🤙', 'include:spam nostr', 'Bitcoin⚡ zaps', 'nothing here'];

describe.each(BOTH_STORES)('searchNotes on $name', ({ open }) => {
  const generated = world(7);
  let opened: OpenedStore;
  let server: TestServer;
  beforeAll(async () => {
    opened = await open();
    // One write per event, shuffled: a deletion may come before its note, a replaced article after its replacement.
    for (const event of shuffled([...generated.events], 11)) await opened.store.putEvents([event]);
    server = await startTestServer(opened.store);
  });
  afterAll(async () => {
    await server?.close();
    await opened?.cleanup();
  });

  it('every query, paged 3 at a time, lists exactly the notes the rule finds, newest first then by id, each once', async () => {
    let found = 0;
    for (const query of QUERIES) {
      const want = expected(generated, query);
      expect(await allOf(server, { query, first: 3 }), query).toEqual(want);
      found += want.length;
    }
    // The world is not empty of matches (a test that finds nothing proves nothing).
    expect(found).toBeGreaterThan(200);
  });

  it('the store, asked directly: whole words and an expansion, whichever side drives, against the rule', async () => {
    const cases: { words: string[]; anyOf: string[] | null }[] = [
      // The expansion larger than the whole word: the word drives, the expansion's lists are walked.
      { words: ['zaps'], anyOf: ['café', 'cafe', 'bitcoin', 'nostr', 'über', '東京'] },
      // Smaller: the expansion's lists drive, merged.
      { words: ['nostr'], anyOf: ['zaps', 'naïve'] },
      { words: [], anyOf: ['nostr', 'nostrich', 'nostalgia'] },
      { words: ['café', 'bitcoin'], anyOf: null },
      { words: ['東京', 'タワ'], anyOf: ['京タ', 'ワー'] },
    ];
    for (const { words, anyOf } of cases) {
      const want = generated.servable
        .filter((event) => {
          const held = noteWords(event);
          return words.every((word) => held.includes(word)) && (anyOf === null || anyOf.some((word) => held.includes(word)));
        })
        .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1))
        .map((event) => event.id);
      expect(want.length, JSON.stringify(words)).toBeGreaterThan(0);
      const { notes, stoppedAt } = await opened.store.relations.searchNotes({ words, anyOf, kinds: [1, 30023], since: null, until: null, after: null, first: 1000 });
      expect(stoppedAt).toBeNull();
      expect(notes.map((note) => note.id), JSON.stringify({ words, anyOf })).toEqual(want);
    }
  });

  it('kinds, authors (any pubkey form), since and until narrow it', async () => {
    const cases: { query: string; filter: { kinds?: number[]; since?: number; until?: number; authors?: string[] } }[] = [
      { query: 'nostr', filter: { kinds: [30023] } },
      { query: 'café', filter: { kinds: [1] } },
      { query: 'bitcoin', filter: { since: T + 3 } },
      { query: 'bitcoin', filter: { until: T + 3 } },
      { query: 'zap', filter: { since: T + 2, until: T + 5 } },
      { query: 'nost', filter: { authors: ['alice', 'carol'] } },
      { query: '東京', filter: { authors: ['bob'], since: T + 1 } },
    ];
    for (const { query, filter } of cases) {
      const variables = { query, first: 4, ...filter, ...(filter.authors ? { authors: filter.authors.map((name, index) => (index === 0 ? nip19.npubEncode(pubkeyOf(name)) : pubkeyOf(name))) } : {}) };
      const want = expected(generated, query, filter);
      expect(want.length, query).toBeGreaterThan(0);
      expect(await allOf(server, variables), `${query} ${JSON.stringify(filter)}`).toEqual(want);
    }
    expect(await allOf(server, { query: 'nostr', since: T + 5, until: T + 4 })).toEqual([]);
  });

  it('a note deleted after it was found is gone from the next search; a new one is found at once', async () => {
    const before = await allOf(server, { query: 'bitcoin' });
    const victim = generated.servable.find((event) => event.kind === 1 && before.includes(event.id)) as NostrEvent;
    await opened.store.putEvents([deletion(nameOf(victim.pubkey), { ids: [victim.id], at: T + 30 })]);
    const fresh = signed('erin', { kind: 1, created_at: T + 40, content: 'Bitcoin is money' });
    await opened.store.putEvents([fresh]);
    expect(await allOf(server, { query: 'bitcoin' })).toEqual([fresh.id, ...before.filter((id) => id !== victim.id)]);
    expect(await allOf(server, { query: 'money bitcoin' })).toEqual([fresh.id]);
  });

  it('a store whose scan stops early still lists every match once, in order, across short pages', async () => {
    // A whole word and an expansion (a prefix's words), both sides of the script's choice of driver.
    const query: NoteSearchQuery = { words: ['nostr'], anyOf: ['café', 'cafe', 'bitcoin'], kinds: [1, 30023], since: null, until: null, after: null, first: 5 };
    const whole = await opened.store.relations.searchNotes({ ...query, first: 1000 });
    expect(whole.stoppedAt).toBeNull();
    const want = whole.notes.map((note) => note.id);
    expect(want.length).toBeGreaterThan(5);
    const seen: string[] = [];
    let after: ReplyPosition | null = null;
    let short = 0;
    for (let reads = 0; reads < 500; reads++) {
      const { notes, stoppedAt } = await opened.store.relations.searchNotes({ ...query, after }, { scanPerShard: 1 });
      seen.push(...notes.map((note) => note.id));
      if (notes.length < query.first && stoppedAt) short += 1;
      const last = notes.length === query.first ? (notes.at(-1) as ReplyPosition) : stoppedAt;
      if (!last) break;
      expect(after === null || compareNotes(after, last) < 0).toBe(true);
      after = last;
    }
    expect(short).toBeGreaterThan(0);
    expect(seen).toEqual(want);
  });

  it('viewer: only authors in its web of trust, nothing it muted (a word, a hashtag-free note of a muted author)', async () => {
    // erin follows alice and bob; she muted bob and the word "zap" (a private entry is ignored).
    const follows = signed('erin', { kind: 3, created_at: T + 50, tags: [['p', pubkeyOf('alice')], ['p', pubkeyOf('bob')]] });
    const mutes = signed('erin', { kind: 10000, created_at: T + 50, tags: [['p', pubkeyOf('bob')], ['word', 'ZAP']], content: 'private entries are encrypted here' });
    await opened.store.putEvents([follows, mutes]);
    const viewer = nip19.npubEncode(pubkeyOf('erin'));
    for (const query of ['café', 'nost', '東京']) {
      const everyone = await allOf(server, { query });
      const shown = await allOf(server, { query, viewer });
      const byId = new Map(generated.events.map((event) => [event.id, event]));
      const want = everyone.filter((id) => {
        const event = byId.get(id);
        if (!event) throw new Error(`a result that is no event of the world: ${id}`);
        const trusted = [pubkeyOf('erin'), pubkeyOf('alice')].includes(event.pubkey);
        return trusted && !/zap/iu.test(event.content.normalize('NFKC'));
      });
      expect(want.length, query).toBeGreaterThan(0);
      expect(shown, query).toEqual(want);
    }
  });

  it('hostile arguments get the error table, never a crash', async () => {
    const errorOf = async (variables: Record<string, unknown>) => {
      const response = await postGraphql(server, SEARCH, variables);
      expect(response.status).toBe(200);
      return response.body.errors?.[0]?.extensions?.code;
    };
    expect(await errorOf({ query: '' })).toBe('invalid_search');
    expect(await errorOf({ query: 'a'.repeat(65) })).toBe('invalid_search');
    expect(await errorOf({ query: 'nostr', first: 0 })).toBe('invalid_argument');
    expect(await errorOf({ query: 'nostr', first: 101 })).toBe('invalid_argument');
    expect(await errorOf({ query: 'nostr', kinds: [] })).toBe('invalid_argument');
    expect(await errorOf({ query: 'nostr', kinds: [7] })).toBe('invalid_argument');
    expect(await errorOf({ query: 'nostr', kinds: [1, 1111] })).toBe('invalid_argument');
    expect(await errorOf({ query: 'nostr', authors: [] })).toBe('invalid_argument');
    expect(await errorOf({ query: 'nostr', authors: Array.from({ length: 21 }, (_, index) => pubkeyOf(`a${index}`)) })).toBe('invalid_argument');
    expect(await errorOf({ query: 'nostr', authors: ['not a pubkey'] })).toBe('invalid_pubkey');
    expect(await errorOf({ query: 'nostr', viewer: 'npub1nope' })).toBe('invalid_pubkey');
    expect(await errorOf({ query: 'nostr', after: 'garbage' })).toBe('invalid_cursor');
    expect(await errorOf({ query: 'nostr', after: encodeCursor({ createdAt: T, id: 'ab'.repeat(32) }, 'notes') })).toBe('invalid_cursor');
    expect(await errorOf({ query: `look ${nip19.nsecEncode(secretKey('alice'))}` })).toBe('secret_key_refused');
    // Only separators, emoji or extensions: nothing to search, an empty page.
    for (const query of ['🤙🤙', '!!!', '   ', 'include:spam', '\u0000\ud800', '\u0301\u0301']) {
      expect(await search(server, { query }), JSON.stringify(query)).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
    }
  });
});

describe.each(BOTH_STORES)('searchNotes on $name: long lists on every side of the driving word', ({ open }) => {
  it('lists every match once, in order, whichever lists drive, are read in pieces beside it, or are looked up', async () => {
    const opened = await open();
    const server = await startTestServer(opened.store);
    try {
      // About 75 notes a shard, five to a second: every list but the rarest holds more than one
      // piece of a walk (16 members) in each shard, so a walk must read on from where a posting is.
      const next = seeded(99);
      const tokens = (n: number) => {
        const held: string[] = [];
        for (const [word, share] of [['drive', 0.5], ['common', 0.95], ['rare', 0.05], ['prefill', 0.9], ['preone', 0.3], ['pretwo', 0.6], ['prethree', 0.05]] as const) {
          if (next() < share) held.push(word);
        }
        return held.length > 0 ? held : [`solo${n}`];
      };
      const notes = Array.from({ length: 1200 }, (_, n) => {
        const words = tokens(n);
        return { words, event: signed(AUTHORS[n % 5] as string, { created_at: T + Math.floor(n / 5), content: `${words.join(' ')} n${n}` }) };
      });
      for (let start = 0; start < notes.length; start += 200) await opened.store.putEvents(notes.slice(start, start + 200).map(({ event }) => event));
      const expected = (whole: string[], prefix: string) =>
        notes
          .filter(({ words }) => whole.every((word) => words.includes(word)) && words.some((word) => word.startsWith(prefix)))
          .map(({ event }) => event)
          .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1))
          .map((event) => event.id);
      // The whole word drives, the expansion's lists walked; the expansion drives (a rare whole
      // word's list then longer); a rare word drives and a long list is looked up.
      for (const [query, whole, prefix] of [
        ['drive pre', ['drive'], 'pre'],
        ['common prethr', ['common'], 'prethr'],
        ['rare pre', ['rare'], 'pre'],
        ['drive common pretw', ['drive', 'common'], 'pretw'],
      ] as const) {
        const want = expected([...whole], prefix);
        expect(want.length, query).toBeGreaterThan(0);
        expect(await allOf(server, { query, first: 7 }), query).toEqual(want);
        expect(await allOf(server, { query, first: 100 }), query).toEqual(want);
      }
    } finally {
      await server.close();
      await opened.cleanup();
    }
  });
});

describe.each(BOTH_STORES)('searchNotes on $name: a last word that starts more than 64 indexed words', ({ open }) => {
  it('is still a prefix: each note found is checked for it (found by review: it was searched as a whole word)', async () => {
    const opened = await open();
    const server = await startTestServer(opened.store);
    try {
      // 70 words starting with "ab", one note each (ten to a second), and the notes the queries are about.
      const many = Array.from({ length: 70 }, (_, n) => signed(AUTHORS[n % 5] as string, { created_at: T + Math.floor(n / 10), content: `ab${String(n).padStart(2, '0')}x filler` }));
      const about = signed('alice', { created_at: T + 3, content: 'Bitcoin is about money' });
      const bare = signed('bob', { created_at: T + 9, content: 'Bitcoin ab' });
      const other = signed('carol', { created_at: T + 9, content: 'bitcoin only' });
      await opened.store.putEvents([...many, about, bare, other]);
      expect(await opened.store.relations.noteWordsStarting('ab', 65)).toHaveLength(65);
      const newest = (events: NostrEvent[]) => [...events].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1)).map((event) => event.id);
      expect(await allOf(server, { query: 'bitcoin ab', first: 2 })).toEqual(newest([about, bare]));
      // Alone: every note is read, newest first, and checked; pages may be short, never wrong.
      expect(await allOf(server, { query: 'ab', first: 7 })).toEqual(newest([...many, about, bare]));
      expect(await allOf(server, { query: 'filler ab00', first: 3 })).toEqual(newest([many[0] as NostrEvent]));
      // Beside a whole-word plan the index's own word lists stay exact.
      expect((await checkRelations(opened.store)).noteSearchDifferences).toEqual([]);
    } finally {
      await server.close();
      await opened.cleanup();
    }
  });

  it('a query of many words does bounded work per read, and still lists every match across pages', async () => {
    const opened = await open();
    try {
      const words = Array.from({ length: 40 }, (_, n) => `w${n}`);
      // Note n holds every word but the n-th (from the 10th on): each word is as common as the others, and a note fails only at its missing word.
      const almost = Array.from({ length: 30 }, (_, n) => signed(AUTHORS[n % 5] as string, { created_at: T + n, content: words.filter((_, index) => index !== n + 10).join(' ') }));
      const all = signed('alice', { created_at: T + 100, content: words.join(' ') });
      await opened.store.putEvents([...almost, all]);
      const query: NoteSearchQuery = { words, anyOf: null, kinds: [1, 30023], since: null, until: null, after: null, first: 5 };
      const found: string[] = [];
      let after: ReplyPosition | null = null;
      let reads = 0;
      for (; reads < 1000; reads++) {
        const { notes, stoppedAt } = await opened.store.relations.searchNotes({ ...query, after }, { scanPerShard: 20 });
        found.push(...notes.map((note) => note.id));
        const last = notes.length === query.first ? (notes.at(-1) as ReplyPosition) : stoppedAt;
        if (!last) break;
        after = last;
      }
      expect(found).toEqual([all.id]);
      // 20 units a shard: a posting and its 39 lookups do not fit, so reads stop early and go on.
      expect(reads).toBeGreaterThan(1);
    } finally {
      await opened.cleanup();
    }
  });
});

describe('searchNotes with NOTE_SEARCH off', () => {
  const offStores: { name: string; open(): Promise<OpenedStore> }[] = [
    {
      name: 'Redis',
      async open() {
        const opened = await createTestStore(undefined, { noteSearch: false });
        return { store: opened.store, cleanup: opened.cleanup };
      },
    },
    {
      name: 'embedded (LMDB)',
      async open() {
        const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-search-off-'));
        const store = new LmdbEventStore(dir, { noteSearch: false });
        return {
          store,
          cleanup: async () => {
            await store.close().catch(() => {});
            rmSync(dir, { recursive: true, force: true });
          },
        };
      },
    },
  ];
  it.each(offStores)('$name: nothing is indexed, the field answers note_search_off, relations check compares nothing', async ({ open }) => {
    const opened = await open();
    const server = await startTestServer(opened.store);
    try {
      await opened.store.putEvents([signed('alice', { content: 'nostr bitcoin', created_at: T })]);
      const response = await postGraphql(server, SEARCH, { query: 'nostr' });
      expect(response.status).toBe(200);
      expect(response.body.data ?? null).toBeNull();
      expect(response.body.errors?.[0]?.extensions?.code).toBe('note_search_off');
      expect(response.body.errors?.[0]?.message).toContain('NOTE_SEARCH=true');
      const lists = [];
      for await (const batch of opened.store.relations.noteSearchLists()) lists.push(...batch);
      expect(lists).toEqual([]);
      const check = await checkRelations(opened.store);
      expect(check).toMatchObject({ noteSearchWords: 0, noteSearchDifferences: [] });
    } finally {
      await server.close();
      await opened.cleanup();
    }
  });
});

/** Kept so that a searchable kind's set is what the field accepts (a kind added to one but not the other fails here). */
describe('searchable kinds', () => {
  it('are notes and long-form articles', () => {
    expect([0, 1, 6, 7, 1111, 30023, 30024].filter(isSearchableKind)).toEqual([1, 30023]);
  });
});
