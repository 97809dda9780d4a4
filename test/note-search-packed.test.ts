import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { LmdbEventStore } from '../src/store/embedded/lmdb-event-store.js';
import { type HeldNote, LmdbNoteSearch } from '../src/store/embedded/lmdb-note-search.js';
import { addToBlock, comparePostings, decodeBlock, encodeBlock, type Posting, postingKeyBytes, postingOfKeyBytes, POSTINGS_PER_BLOCK, searchBlock } from '../src/store/note-postings.js';
import { indexedWordsOf, type NoteSearchQuery } from '../src/store/note-search-index.js';
import { checkRelations, rebuildRelations } from '../src/store/relation-check.js';
import { compareNotes, notePlace, type ReplyPosition, replyMember, storedSizeOf } from '../src/store/relation-index.js';
import { shuffled } from './support/shuffle.js';

/**
 * The packed postings of the note search index (store/note-postings.ts) and the LMDB store that
 * keeps them (embedded/lmdb-note-search.ts): the block format against its own reading; notes that
 * share a posting (the same second, kind and first 3 bytes of the id: anyone can grind 24 bits)
 * each found only by their own words, and kept when the other goes; a list of many blocks in any
 * order of writes and removals; an earlier version's keys moved into it on open.
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);

const posting = fc.record({
  createdAt: fc.oneof(fc.integer({ min: 0, max: 2_000_000_000 }), fc.constantFrom(0, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER - 1)),
  prefix: fc.integer({ min: 0, max: 0xffffff }),
  kindBit: fc.integer({ min: 0, max: 1 }),
});

/** Postings in page order, each once. */
const orderedPostings = fc.array(posting, { maxLength: 300 }).map((postings) => {
  const sorted = [...postings].sort(comparePostings);
  return sorted.filter((item, index) => index === 0 || comparePostings(sorted[index - 1] as Posting, item) !== 0);
});

describe('packed postings (note-postings.ts)', () => {
  it('a block reads back as the postings written, in order, for any created_at a note may have', () => {
    fc.assert(
      fc.property(orderedPostings, (postings) => {
        expect(decodeBlock(encodeBlock(postings))).toEqual(postings);
      }),
      { numRuns: RUNS },
    );
  });

  it('a common word is a few bytes a posting: notes a minute apart take 4 bytes each', () => {
    const postings = Array.from({ length: 100 }, (_, index) => ({ createdAt: 1_700_000_000 - 60 * index, prefix: ((index * 2_654_435_761) >>> 0) % 2 ** 24, kindBit: 0 }));
    // The first posting's header holds the whole created_at (5 bytes), each other one the minute (1).
    expect(encodeBlock(postings).length).toBe(5 + 3 + 99 * 4);
  });

  it('the bytes of a key sort as the postings do, and a block is searched by that order', () => {
    fc.assert(
      fc.property(posting, posting, (a, b) => {
        expect(Math.sign(Buffer.compare(postingKeyBytes(a), postingKeyBytes(b)))).toBe(Math.sign(comparePostings(a, b)));
        expect(postingOfKeyBytes(postingKeyBytes(a))).toEqual(a);
      }),
      { numRuns: RUNS * 5 },
    );
    fc.assert(
      fc.property(orderedPostings, posting, (postings, asked) => {
        const { at, found } = searchBlock(postings, asked);
        expect(found).toBe(postings.some((held) => comparePostings(held, asked) === 0));
        // Where it is, or where it would go: everything before is before it, everything from there is not.
        expect(postings.slice(0, at).every((held) => comparePostings(held, asked) < 0)).toBe(true);
        expect(postings.slice(at).every((held) => comparePostings(held, asked) >= 0)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it('postings added to a block byte by byte make the block that encoding them all makes, and say when it would be too long', () => {
    fc.assert(
      fc.property(orderedPostings, orderedPostings, fc.integer({ min: 0, max: 600 }), (held, adds, most) => {
        const merged = [...held, ...adds].sort(comparePostings).filter((item, index, all) => index === 0 || comparePostings(all[index - 1] as Posting, item) !== 0);
        const result = addToBlock(encodeBlock(held), adds, most);
        if (merged.length > most) expect(result).toBeUndefined();
        else expect(result).toEqual({ block: encodeBlock(merged), count: merged.length });
      }),
      { numRuns: RUNS * 5 },
    );
    // Postings the block holds, added again, change nothing.
    const held = [{ createdAt: 9, prefix: 1, kindBit: 0 }, { createdAt: 5, prefix: 2, kindBit: 1 }];
    expect(addToBlock(encodeBlock(held), held, 128)).toEqual({ block: encodeBlock(held), count: 2 });
  });

  it('postings out of order, or a block cut inside a posting, are refused rather than misread', () => {
    expect(() => encodeBlock([{ createdAt: 1, prefix: 0, kindBit: 0 }, { createdAt: 2, prefix: 0, kindBit: 0 }])).toThrow('out of order');
    const block = encodeBlock([{ createdAt: 1_700_000_000, prefix: 7, kindBit: 1 }]);
    expect(() => decodeBlock(block.subarray(0, block.length - 1))).toThrow('ends inside a posting');
  });
});

const T = 1_700_000_000;
const AUTHOR = 'a'.repeat(64);

/** A note with the id asked (the store trusts its callers: no signature is checked here). */
function note(id: string, content: string, { kind = 1, at = T, pubkey = AUTHOR, tags = [] as string[][] } = {}): NostrEvent {
  return { id, pubkey, created_at: at, kind, tags, content, sig: '0'.repeat(128) };
}

const idOf = (prefix: string, text: string) => prefix + createHash('sha256').update(text).digest('hex').slice(prefix.length);

/** A head's first varint: the list's count of postings. */
function readVarint(bytes: Uint8Array): number {
  let value = 0;
  let scale = 1;
  for (const byte of bytes) {
    value += (byte & 0x7f) * scale;
    if (!(byte & 0x80)) break;
    scale *= 0x80;
  }
  return value;
}

const query = (words: string[], more: Partial<NoteSearchQuery> = {}): NoteSearchQuery => ({ words, anyOf: null, kinds: [1, 30023], since: null, until: null, after: null, first: 100, ...more });

describe('the LMDB note search index (packed postings)', () => {
  const dirs: string[] = [];
  const stores: LmdbEventStore[] = [];
  const openStore = (dir = mkdtempSync(join(tmpdir(), 'note-search-packed-')), noteSearch = true) => {
    if (!dirs.includes(dir)) dirs.push(dir);
    const store = new LmdbEventStore(dir, { noteSearch });
    stores.push(store);
    return { store, dir };
  };
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close().catch(() => {});
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const ids = async (store: LmdbEventStore, asked: NoteSearchQuery) => (await store.relations.searchNotes(asked)).notes.map((found) => found.id);

  it('notes sharing a posting (second, kind, first 3 bytes of the id) are each found by their own words only, and stay when another goes', async () => {
    const { store } = openStore();
    const apple = note(idOf('deadbe', 'apple'), 'apple banana');
    const cherry = note(idOf('deadbe', 'cherry'), 'banana cherry');
    const article = note(idOf('deadbe', 'article'), 'apple pie', { kind: 30023, tags: [['d', 'pie']] });
    const elsewhere = note(idOf('0badca', 'elsewhere'), 'apple', { at: T - 1 });
    // The same 3 bytes a second earlier: another posting (its event told by its bytes, unparsed, when the others are read).
    const earlier = note(idOf('deadbe', 'earlier'), 'apple', { at: T - 2 });
    await store.putEvents([apple, cherry, article, elsewhere, earlier]);
    const inOrder = (...notes: NostrEvent[]) => notes.map((held) => ({ createdAt: held.created_at, id: held.id })).sort(compareNotes).map((held) => held.id);
    expect(await ids(store, query(['apple']))).toEqual(inOrder(apple, article, elsewhere, earlier));
    expect(await ids(store, query(['cherry']))).toEqual([cherry.id]);
    expect(await ids(store, query(['banana']))).toEqual(inOrder(apple, cherry));
    expect(await ids(store, query(['apple', 'banana']))).toEqual([apple.id]);
    expect(await ids(store, query(['apple'], { kinds: [30023] }))).toEqual([article.id]);
    expect(await ids(store, query(['banana'], { anyOf: ['cherry', 'pie'] }))).toEqual([cherry.id]);
    // One at a time: the second note of the shared posting comes on the next page, once.
    const first = await store.relations.searchNotes(query(['banana'], { first: 1 }));
    const second = await store.relations.searchNotes(query(['banana'], { first: 1, after: first.notes[0] as ReplyPosition }));
    expect([...first.notes, ...second.notes].map((found) => found.id)).toEqual(inOrder(apple, cherry));
    // And across the two kinds' postings of one place and prefix, by id, one at a time.
    const paged: string[] = [];
    let after: ReplyPosition | null = null;
    for (let page = 0; page < 6; page++) {
      const { notes } = await store.relations.searchNotes(query(['apple'], { first: 1, after }));
      if (notes.length === 0) break;
      paged.push(...notes.map((found) => found.id));
      after = notes[0] as ReplyPosition;
    }
    expect(paged).toEqual(inOrder(apple, article, elsewhere, earlier));
    // `apple` goes (its author deletes it): `banana` stays for `cherry`, `apple` for the article.
    await store.putEvents([note(idOf('', 'deletion'), '', { kind: 5, at: T + 1, tags: [['e', apple.id]] })]);
    expect(await ids(store, query(['apple']))).toEqual(inOrder(article, elsewhere, earlier));
    expect(await ids(store, query(['banana']))).toEqual([cherry.id]);
    const check = await checkRelations(store);
    expect(check.noteSearchDifferences).toEqual([]);
    expect(check.noteSearchWords).toBeGreaterThan(4);
  });

  it('a word of many blocks, written and removed in any order, many notes a second: every page as the notes say', async () => {
    const { store } = openStore();
    const notes = Array.from({ length: 700 }, (_, index) => note(idOf('', `many ${index}`), index % 3 === 0 ? 'common rare' : 'common', { at: T + Math.floor(index / 40) }));
    for (let start = 0, order = shuffled(notes, 3); start < order.length; start += 50) await store.putEvents(order.slice(start, start + 50));
    const gone = new Set(shuffled(notes, 5).slice(0, 300).map((held) => held.id));
    for (const id of gone) await store.putEvents([note(idOf('', `deletes ${id}`), '', { kind: 5, at: T + 100, tags: [['e', id]] })]);
    const want = (word: string) =>
      notes
        .filter((held) => !gone.has(held.id) && held.content.split(' ').includes(word))
        .map((held) => ({ createdAt: held.created_at, id: held.id }))
        .sort(compareNotes)
        .map((held) => held.id);
    for (const words of [['common'], ['rare'], ['common', 'rare']]) {
      const seen: string[] = [];
      let after: ReplyPosition | null = null;
      for (let page = 0; page < 100; page++) {
        const { notes: found } = await store.relations.searchNotes(query(words, { first: 7, after }));
        seen.push(...found.map((held) => held.id));
        if (found.length < 7) break;
        after = found.at(-1) as ReplyPosition;
      }
      expect(seen, words.join(' ')).toEqual(want(words.at(-1) as string));
    }
    // since and until bound it by the second, inclusive.
    const bounded = await ids(store, query(['common'], { since: T + 3, until: T + 5 }));
    expect(bounded).toEqual(want('common').filter((id) => [3, 4, 5].map((second) => T + second).includes(notes.find((held) => held.id === id)?.created_at as number)));
    expect((await checkRelations(store)).noteSearchDifferences).toEqual([]);
  });

  it("an earlier version's postings (a key each in the relationship database) are moved into it on open", async () => {
    const { store, dir } = openStore(undefined, false);
    const notes = [note(idOf('', 'old one'), 'upgraded words'), note(idOf('', 'old two'), 'upgraded', { at: T + 5 })];
    await store.putEvents(notes);
    await store.close();
    // As the earlier version kept them: `Q:<word> <place>` → `<kind> <size>`, `Qv:<word>` → the count.
    const writer = open({ path: dir });
    const relations = writer.openDB<string, string>({ name: 'relations', encoding: 'string' });
    await writer.transaction(() => {
      for (const held of notes) {
        for (const word of indexedWordsOf(held)) void relations.put(`Q:${word} ${replyMember(notePlace({ createdAt: held.created_at, id: held.id }))}`, `1 ${storedSizeOf(held)}`);
      }
      void relations.put('Qv:*', '2');
      void relations.put('Qv:upgraded', '2');
      void relations.put('Qv:words', '1');
    });
    await writer.close();
    const { store: reopened } = openStore(dir);
    expect(await ids(reopened, query(['upgraded']))).toEqual([notes[1]?.id, notes[0]?.id]);
    expect(await reopened.relations.noteWordsStarting('up', 10)).toEqual(['upgraded']);
    expect((await checkRelations(reopened)).noteSearchDifferences).toEqual([]);
    await reopened.close();
    const reader = open({ path: dir, readOnly: true });
    try {
      expect([...reader.openDB<string, string>({ name: 'relations', encoding: 'string' }).getKeys({ start: 'Q', end: 'R' })]).toEqual([]);
    } finally {
      await reader.close();
    }
    // And a rebuild writes the same again.
    const { store: rebuilt } = openStore(dir);
    await rebuildRelations(rebuilt);
    expect(await ids(rebuilt, query(['upgraded']))).toEqual([notes[1]?.id, notes[0]?.id]);
  });

  it('relations check shows a posting that stands for no note (found by review: it was left out unseen)', async () => {
    const { store, dir } = openStore();
    const kept = note(idOf('', 'kept'), 'stale words');
    const lost = note(idOf('', 'lost'), 'stale', { at: T + 1 });
    await store.putEvents([kept, lost]);
    expect((await checkRelations(store)).noteSearchDifferences).toEqual([]);
    await store.close();
    // The event goes from under the index (as a damaged store might lose it).
    const writer = open({ path: dir });
    const events = writer.openDB<Buffer, string>({ name: 'events', encoding: 'binary' });
    await writer.transaction(() => void events.remove(lost.id));
    await writer.close();
    const { store: reopened } = openStore(dir);
    const differences = (await checkRelations(reopened)).noteSearchDifferences;
    expect(differences.map(({ word }) => word).sort()).toEqual(['*', 'stale']);
    expect(differences.find(({ word }) => word === 'stale')?.maintained.map(({ id }) => id)).toEqual([`${lost.id.slice(0, 6)}${'?'.repeat(58)}`, kept.id]);
  });

  it("a word's newer notes all deleted while older ones wait in runs: the list keeps one block, finds every note and leaves nothing stale (found by review)", async () => {
    const { store } = openStore();
    const author = 'b'.repeat(64);
    // A head and a block of newer notes, then older ones (a run), then every newer one deleted.
    const recent = Array.from({ length: 200 }, (_, at) => note(idOf('', `recent ${at}`), 'w', { at: T + 1_000 + at, pubkey: author }));
    await store.putEvents(recent);
    const older = Array.from({ length: 5 }, (_, at) => note(idOf('', `older ${at}`), 'w', { at: T + at }));
    await store.putEvents(older);
    await store.putEvents(recent.map((held, at) => note(idOf('', `deletes ${at}`), '', { kind: 5, at: T + 2_000, pubkey: author, tags: [['e', held.id]] })));
    // Then many more, older still: past one block again.
    const oldest = Array.from({ length: 200 }, (_, at) => note(idOf('', `oldest ${at}`), at % 10 === 0 ? 'w z' : 'w', { at: T - 1_000 + at }));
    await store.putEvents(oldest);
    const newestFirst = (notes: NostrEvent[]) => notes.map((held) => ({ createdAt: held.created_at, id: held.id })).sort(compareNotes).map((held) => held.id);
    expect(await ids(store, query(['w', 'z']))).toEqual(newestFirst(oldest.filter((held) => held.content === 'w z')));
    expect(await ids(store, query(['w'], { first: 300 }))).toEqual(newestFirst([...older, ...oldest]));
    await store.putEvents(oldest.slice(0, 10).map((held, at) => note(idOf('', `deletes oldest ${at}`), '', { kind: 5, at: T + 3_000, tags: [['e', held.id]] })));
    expect(await ids(store, query(['w', 'z']))).toEqual(newestFirst(oldest.slice(10).filter((held) => held.content === 'w z')));
    expect((await checkRelations(store)).noteSearchDifferences).toEqual([]);
  });

  it('a search cut by its work bound and resumed from where it stopped gets further every time (found by review)', async () => {
    const { store } = openStore();
    const words = ['w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7', 'w8'];
    const notes = Array.from({ length: 50 }, (_, index) => note(idOf('', `bound ${index}`), words.join(' '), { at: T - index }));
    await store.putEvents(notes);
    const seen: string[] = [];
    let after: ReplyPosition | null = null;
    for (let page = 0; page < 200; page++) {
      const { notes: found, stoppedAt } = await store.relations.searchNotes(query(words, { first: 5, after }), { scanPerShard: 1 });
      seen.push(...found.map((held) => held.id));
      const next: ReplyPosition | null = found.length >= 5 ? (found.at(-1) as ReplyPosition) : stoppedAt;
      if (next === null) break;
      expect(after === null || compareNotes(after, next) < 0, `page ${page}`).toBe(true);
      after = next;
    }
    expect(seen).toEqual(notes.map((held) => held.id));
  });
});

describe('the LMDB note search index, its reads and writes (LmdbNoteSearch alone)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const openIndex = (notesWithPrefix: (prefix: string, createdAt: number) => HeldNote[] = () => []) => {
    const dir = mkdtempSync(join(tmpdir(), 'note-search-index-'));
    dirs.push(dir);
    const root = open({ path: dir });
    const db = root.openDB<Buffer, Buffer>({ name: 'note-search', keyEncoding: 'binary', encoding: 'binary' });
    // Keys read, counted as they are read (a read stops where its caller stops).
    let keysRead = 0;
    const getKeys = db.getKeys.bind(db);
    const counting = (options: Parameters<typeof getKeys>[0]) => {
      const keys = getKeys(options);
      return {
        *[Symbol.iterator]() {
          for (const key of keys) {
            keysRead++;
            yield key;
          }
        },
      };
    };
    (db as unknown as { getKeys: typeof counting }).getKeys = counting;
    const index = new LmdbNoteSearch(db, { read: async <T>(run: () => T) => run() } as never, notesWithPrefix);
    const keysOf = (word: string) => [...getKeys({ start: Buffer.from(`${word}\0`), end: Buffer.from(`${word}\u0001`) })];
    const write = (changes: (index: LmdbNoteSearch) => void) => root.transactionSync(() => index.batch(() => changes(index)));
    return { root, index, keysOf, write, keysRead: () => keysRead };
  };
  const notesAt = (count: number, at: (index: number) => number, content: (index: number) => string) =>
    Array.from({ length: count }, (_, index) => note(idOf('', `alone ${index}`), content(index), { at: at(index) }));

  it('notes arriving newest first fill their blocks, and a batch of the newest reads a few keys of a long list, not all of them', () => {
    const { root, keysOf, write, keysRead } = openIndex();
    try {
      const notes = notesAt(20_000, (at) => T + at, () => 'long');
      for (let start = 0; start < notes.length; start += 2_000) write((held) => notes.slice(start, start + 2_000).forEach((event) => held.apply(event, 1)));
      // Every block full but the head: 20,000 postings in 157 keys (the head and 156 blocks of 128).
      expect(keysOf('long').length).toBe(Math.ceil(20_000 / POSTINGS_PER_BLOCK));
      const before = keysRead();
      for (let batch = 0; batch < 10; batch++) write((held) => held.apply(note(idOf('', `newest ${batch}`), 'long', { at: T + 30_000 + batch }), 1));
      // Two long lists (the word, and every note's `*`), a few keys each a batch: 3,140 when every key of both was read.
      expect(keysRead() - before).toBeLessThan(100);
    } finally {
      void root.close();
    }
  });

  it('a long list written out of order keeps additions in runs, merged as they grow: every page, count and check as the notes say at every batch', async () => {
    const live = new Map<string, NostrEvent>();
    const { root, index, keysOf, write } = openIndex((prefix, createdAt) =>
      [...live.values()].filter((held) => held.id.startsWith(prefix) && held.created_at === createdAt).map((event) => ({ event, bytes: storedSizeOf(event) })),
    );
    try {
      // Many notes a second, out of order; `common` in all, `rare` in a fifth, and removals among the additions.
      const notes = shuffled(
        notesAt(3_000, (at) => T + ((at * 7_919) % 400), (at) => (at % 5 === 0 ? 'common rare' : 'common')),
        11,
      );
      const isRun = (key: Buffer) => key[key.indexOf(0) + 1] === 0xff;
      const countOf = (word: string) => {
        const head = root.openDB<Buffer, Buffer>({ name: 'note-search', keyEncoding: 'binary', encoding: 'binary' }).get(Buffer.from(`${word}\0`));
        return head === undefined ? 0 : readVarint(head);
      };
      const want = (words: string[]) =>
        [...live.values()]
          .filter((held) => words.every((word) => held.content.split(' ').includes(word)))
          .map((held) => ({ createdAt: held.created_at, id: held.id }))
          .sort(compareNotes)
          .map((held) => held.id);
      const pages = async (words: string[]) => {
        const seen: string[] = [];
        let after: ReplyPosition | null = null;
        for (let page = 0; page < 1_000; page++) {
          const { notes: found } = await index.searchNotes(query(words, { first: 50, after }));
          seen.push(...found.map((held) => held.id));
          if (found.length < 50) break;
          after = found.at(-1) as ReplyPosition;
        }
        return seen;
      };
      let mostRuns = 0;
      for (let batch = 0; batch < 40; batch++) {
        const added = notes.slice(batch * 75, batch * 75 + 75);
        const removed = batch % 4 === 3 ? shuffled([...live.values()], batch).slice(0, 40) : [];
        // The notes as the store holds them once the batch is written (a removal is judged then).
        for (const event of added) live.set(event.id, event);
        for (const event of removed) live.delete(event.id);
        write((held) => {
          for (const event of added) held.apply(event, 1);
          for (const event of removed) held.apply(event, -1);
        });
        const runs = keysOf('common').filter(isRun);
        // The directory and at most MAX_RUNS runs (16).
        expect(runs.length, `batch ${batch}`).toBeLessThanOrEqual(17);
        mostRuns = Math.max(mostRuns, runs.length - 1);
        expect(countOf('common'), `batch ${batch}`).toBe(want(['common']).length);
        if (batch % 5 === 4) {
          for (const words of [['common'], ['rare'], ['common', 'rare']]) expect(await pages(words), `${words.join(' ')} at batch ${batch}`).toEqual(want(words));
          expect(await index.searchNotes(query(['common'], { anyOf: ['rare'] })).then(({ notes: found }) => found.map((held) => held.id))).toEqual(want(['common', 'rare']).slice(0, 100));
        }
      }
      // Runs were written and merged (more than one at once, never more than sixteen).
      expect(mostRuns).toBeGreaterThan(1);
      for await (const lists of index.noteSearchLists()) {
        for (const { word, notes: held } of lists) expect(held.map((found) => found.id), word).toEqual(word === '*' ? want([]) : want([word]));
      }
      // Every note removed: no key left.
      const all = [...live.values()];
      live.clear();
      write((held) => all.forEach((event) => held.apply(event, -1)));
      expect(keysOf('common')).toEqual([]);
      expect(keysOf('rare')).toEqual([]);
    } finally {
      void root.close();
    }
  });

  it('a batch removing many notes that share a posting reads their notes once, not once a removal (found by review)', () => {
    let reads = 0;
    const { root, keysOf, write } = openIndex(() => {
      reads++;
      return [];
    });
    try {
      // 300 notes of one second, kind and 3 bytes of id: one posting in every list they share.
      const notes = Array.from({ length: 300 }, (_, at) => note(idOf('abcdef', `ground ${at}`), `shared own${at}`));
      write((held) => notes.forEach((event) => held.apply(event, 1)));
      expect(keysOf('shared').length).toBe(1);
      reads = 0;
      write((held) => notes.forEach((event) => held.apply(event, -1)));
      expect(reads).toBe(1);
      expect(keysOf('shared')).toEqual([]);
      expect(keysOf('own7')).toEqual([]);
    } finally {
      void root.close();
    }
  });
});
