import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { type Database, open } from 'lmdb';
import { expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { LmdbNoteSearch } from '../src/store/embedded/lmdb-note-search.js';
import { comparePostings, decodeBlock, type Posting, postingOfKeyBytes, postingOfNote } from '../src/store/note-postings.js';
import { indexedWordsOf, type NoteSearchQuery } from '../src/store/note-search-index.js';
import { compareNotes, type ReplyPosition, storedSizeOf } from '../src/store/relation-index.js';

/**
 * The LMDB note search index (embedded/lmdb-note-search.ts) against a model of the notes, batch by
 * batch: notes added in order or drifting older (runs), notes that share a posting (the same second,
 * kind and 3 bytes of id), removals and purges of the newest (as a request to vanish), created_at 0
 * and 2^53 - 1. After every batch: the blocks' structure (the head's count of blocks, no runs on a
 * list of one block, postings in order, a block's key its first posting), the counts, pages of
 * several sizes with since, until, a work bound of 1 and a prefix's expansion; at the end, the
 * lists `relations check` reads, and no key left once every note goes. (From an outside review;
 * the list it found left counting no block has its own test in note-search-packed.test.ts.
 * FUZZ_RUNS for a longer run.)
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 15);
const T = 1_700_000_000;
const WORDS = ['a', 'b', 'c', '*'];
const idOf = (prefix: string, text: string) => prefix + createHash('sha256').update(text).digest('hex').slice(prefix.length);
const note = (id: string, content: string, at: number, kind = 1): NostrEvent => ({ id, pubkey: 'a'.repeat(64), created_at: at, kind, tags: [], content, sig: '0'.repeat(128) });
const query = (words: string[], more: Partial<NoteSearchQuery> = {}): NoteSearchQuery => ({ words, anyOf: null, kinds: [1, 30023], since: null, until: null, after: null, first: 100, ...more });

function varints(value: Uint8Array, count: number): { values: number[]; at: number } {
  const values: number[] = [];
  let at = 0;
  while (values.length < count) {
    let result = 0;
    let scale = 1;
    for (;;) {
      const byte = value[at++] as number;
      result += (byte & 0x7f) * scale;
      if (!(byte & 0x80)) break;
      scale *= 0x80;
    }
    values.push(result);
  }
  return { values, at };
}

function openIndex() {
  const dir = mkdtempSync(join(tmpdir(), 'note-search-model-'));
  const root = open({ path: dir });
  const db: Database<Buffer, Buffer> = root.openDB<Buffer, Buffer>({ name: 'note-search', keyEncoding: 'binary', encoding: 'binary' });
  const live = new Map<string, NostrEvent>();
  const index = new LmdbNoteSearch(db, { read: async <R>(run: () => R) => run() } as never, (prefix, createdAt) =>
    [...live.values()].filter((event) => event.id.startsWith(prefix) && event.created_at === createdAt).map((event) => ({ event, bytes: storedSizeOf(event) })),
  );
  /** A batch as the store writes it: the notes as the batch leaves them when it ends. */
  const write = (adds: NostrEvent[], removes: NostrEvent[] = []) => {
    for (const event of adds) live.set(event.id, event);
    for (const event of removes) live.delete(event.id);
    root.transactionSync(() =>
      index.batch(() => {
        for (const event of adds) index.apply(event, 1);
        for (const event of removes) index.apply(event, -1);
      }),
    );
  };
  const keysOf = (word: string) => [...db.getKeys({ start: Buffer.from(`${word}\0`), end: Buffer.from(`${word}\u0001`) })];
  const headOf = (word: string) => {
    const value = db.get(Buffer.from(`${word}\0`));
    if (!value) return undefined;
    const [count, blocks] = varints(value, 2).values as [number, number];
    return { count, blocks };
  };
  const structure = (word: string): string[] => {
    const problems: string[] = [];
    const head = Buffer.from(`${word}\0`);
    const keys = keysOf(word);
    const blockKeys = keys.filter((key) => key.length > head.length && key[head.length] !== 0xff);
    const runKeys = keys.filter((key) => key.length > head.length && key[head.length] === 0xff);
    const counts = headOf(word);
    if (!counts) return keys.length > 0 ? [`no head but ${keys.length} keys`] : [];
    if (counts.blocks !== blockKeys.length + 1) problems.push(`head says ${counts.blocks} blocks, has ${blockKeys.length + 1}`);
    if (runKeys.length > 0 && blockKeys.length === 0) problems.push(`runs (${runKeys.length}) with one block`);
    const headValue = db.get(head) as Buffer;
    const all: Posting[] = decodeBlock(headValue.subarray(varints(headValue, 2).at));
    for (const key of blockKeys) {
      const postings = decodeBlock(db.get(key) as Buffer);
      if (comparePostings(postings[0] as Posting, postingOfKeyBytes(key.subarray(head.length))) !== 0) problems.push('a block key is not its first posting');
      all.push(...postings);
    }
    if (all.some((posting, at) => at > 0 && comparePostings(all[at - 1] as Posting, posting) >= 0)) problems.push('blocks out of order');
    return problems;
  };
  /** Distinct postings of the live notes holding the word. */
  const modelCount = (word: string) => new Set([...live.values()].filter((event) => indexedWordsOf(event).includes(word)).map((event) => JSON.stringify(postingOfNote(event.created_at, event.id, event.kind)))).size;
  const want = (words: string[]) =>
    [...live.values()]
      .filter((event) => words.every((word) => indexedWordsOf(event).includes(word)))
      .map((event) => ({ createdAt: event.created_at, id: event.id }))
      .sort(compareNotes)
      .map((event) => event.id);
  const pages = async (words: string[], first: number, more: Partial<NoteSearchQuery> = {}, scanPerShard?: number) => {
    const seen: string[] = [];
    let after: ReplyPosition | null = null;
    for (let page = 0; page < 100_000; page++) {
      const { notes, stoppedAt } = await index.searchNotes(query(words, { first, after, ...more }), scanPerShard === undefined ? undefined : { scanPerShard });
      seen.push(...notes.map((found) => found.id));
      const next: ReplyPosition | null = notes.length >= first ? (notes.at(-1) as ReplyPosition) : stoppedAt;
      if (!next) break;
      after = next;
    }
    return seen;
  };
  const close = async () => {
    await root.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { index, live, write, keysOf, headOf, structure, modelCount, want, pages, close };
}

const operation = fc.oneof(
  { weight: 6, arbitrary: fc.record({ type: fc.constant('add' as const), at: fc.integer({ min: 0, max: 400 }), words: fc.subarray(['b', 'c']), prefix: fc.constantFrom('', '000000', 'abcdef'), kind: fc.constantFrom(1, 1, 1, 30023) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('remove' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('twin' as const), pick: fc.nat(), words: fc.subarray(['b', 'c']) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('purge' as const), share: fc.integer({ min: 1, max: 100 }), go: fc.integer({ min: 0, max: 60 }) }) },
);
const batch = fc.array(operation, { minLength: 1, maxLength: 150, size: 'max' });

it('the LMDB note search index against a model of the notes, batch by batch', async () => {
  let made = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 25, size: 'max' }), fc.boolean(), async (batches, drift) => {
      const model = openIndex();
      try {
        for (const [number, operations] of batches.entries()) {
          const adds: NostrEvent[] = [];
          const removes: NostrEvent[] = [];
          const liveIds = [...model.live.keys()];
          for (const step of operations) {
            if (step.type === 'add') {
              // Drifting: each batch older than the last (out of order: runs); else at random. Now and then the ends of created_at.
              const at = step.at % 7 === 0 ? ([0, 1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER - 1][step.at % 4] as number) : drift ? T - number * 50 + step.at : T + step.at;
              adds.push(note(idOf(step.prefix, `note ${made++}`), ['a', ...step.words].join(' '), at, step.kind));
            } else if (step.type === 'twin') {
              // A note sharing a live note's posting.
              if (liveIds.length === 0) continue;
              const held = model.live.get(liveIds[step.pick % liveIds.length] as string) as NostrEvent;
              adds.push(note(idOf(held.id.slice(0, 6), `note ${made++}`), ['a', ...step.words].join(' '), held.created_at, held.kind));
            } else if (step.type === 'purge') {
              if (step.go !== 0) continue;
              const newest = [...model.live.values()].sort((one, other) => other.created_at - one.created_at);
              for (const event of newest.slice(0, Math.ceil((newest.length * step.share) / 100))) if (!removes.includes(event)) removes.push(event);
            } else if (liveIds.length > 0) {
              const event = model.live.get(liveIds[step.pick % liveIds.length] as string) as NostrEvent;
              if (!removes.includes(event)) removes.push(event);
            }
          }
          model.write(adds, removes);
          for (const word of WORDS) {
            expect(model.structure(word), `${word} at batch ${number}`).toEqual([]);
            // At least the notes' postings (a new note sharing a posting a block holds counts until the runs merge), none where none.
            const count = model.headOf(word)?.count ?? 0;
            const held = model.modelCount(word);
            expect(count >= held && (count === 0) === (held === 0), `count of ${word} at batch ${number}: ${count} for ${held}`).toBe(true);
          }
          for (const words of [['a'], ['c'], ['a', 'c'], ['b', 'c'], ['a', 'b']]) expect(await model.pages(words, 37), `${words.join(' ')} at batch ${number}`).toEqual(model.want(words));
          const live = [...model.live.values()];
          if (live.length > 0) {
            const pivot = (live[number % live.length] as NostrEvent).created_at;
            const bounded = (words: string[], since: number | null, until: number | null) =>
              model.want(words).filter((id) => {
                const at = (model.live.get(id) as NostrEvent).created_at;
                return (since === null || at >= since) && (until === null || at <= until);
              });
            expect(await model.pages(['a', 'c'], 7, { until: pivot }), `until at batch ${number}`).toEqual(bounded(['a', 'c'], null, pivot));
            expect(await model.pages(['b'], 13, { since: pivot }), `since at batch ${number}`).toEqual(bounded(['b'], pivot, null));
            expect(await model.pages(['a', 'b'], 11, {}, 1), `a work bound of 1 at batch ${number}`).toEqual(model.want(['a', 'b']));
          }
          const either = model.want(['a']).filter((id) => /\b[bc]\b/.test((model.live.get(id) as NostrEvent).content));
          expect(await model.pages(['a'], 1000, { anyOf: ['c', 'b'] }), `a prefix's expansion at batch ${number}`).toEqual(either);
        }
        const lists: Record<string, string[]> = {};
        for await (const found of model.index.noteSearchLists()) for (const { word, notes } of found) lists[word] = notes.map((held) => held.id);
        for (const word of ['a', 'b', 'c']) expect(lists[word] ?? [], `list ${word}`).toEqual(model.want([word]));
        model.write([], [...model.live.values()]);
        for (const word of WORDS) expect(model.keysOf(word), `keys of ${word} left`).toEqual([]);
      } finally {
        await model.close();
      }
    }),
    { numRuns: RUNS, endOnFailure: true },
  );
}, 600_000);
