import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { FollowWrites } from '../src/store/follow-index.js';
import type { NoteSearchQuery } from '../src/store/note-search-index.js';
import { checkRelations } from '../src/store/relation-check.js';
import { createTestStore, type TestStore } from './support/test-store.js';

// The note search index written a batch at a time on Redis (redis-note-search.ts indexMany,
// lua-scripts.ts NOTE_INDEX_MANY): a script a shard, each bounded in postings, a note's changes
// applied in their order; on one Redis and on a cluster (a shard's keys share one slot).

let test: TestStore;
beforeAll(async () => {
  test = await createTestStore(undefined, { noteSearch: true });
});
afterAll(async () => {
  await test.cleanup();
});

const T = 1_700_000_000;
const hex = (text: string) => createHash('sha256').update(text).digest('hex');
/** A note whose id starts with `digit` (its shard), signed by no one (the store trusts its callers here). */
const note = (digit: string, n: number, content: string): NostrEvent => ({ id: digit + hex(`batch ${n}`).slice(1), pubkey: 'b'.repeat(64), created_at: T + n, kind: 1, tags: [], content, sig: '0'.repeat(128) });
const query = (words: string[]): NoteSearchQuery => ({ words, anyOf: null, kinds: [1, 30023], since: null, until: null, after: null, first: 100 });

describe('the note search index, a batch at a time (Redis)', () => {
  it('notes of a thousand words in one shard go in calls of at most 4,096 postings, and every one is found', async () => {
    const client = test.client as unknown as { nostrNoteIndexMany: (...args: unknown[]) => Promise<number> };
    const original = client.nostrNoteIndexMany.bind(client);
    const calls: number[] = [];
    client.nostrNoteIndexMany = (keys: unknown, ...rest: unknown[]) => {
      calls.push(Number(keys) - 2);
      return original(keys, ...rest);
    };
    try {
      // 12 notes of 999 words of their own and one they share: 12,000 postings in shard `a`.
      const notes = Array.from({ length: 12 }, (_, n) => note('a', n, ['shared', ...Array.from({ length: 999 }, (_, word) => `own${n}x${word}`)].join(' ')));
      await test.store.putEvents(notes);
      expect(calls.length).toBeGreaterThanOrEqual(3);
      expect(Math.max(...calls)).toBeLessThanOrEqual(4_096);
      const found = await test.store.relations.searchNotes(query(['shared']));
      expect(found.notes.map((held) => held.id)).toEqual([...notes].reverse().map((held) => held.id));
      expect((await test.store.relations.searchNotes(query(['own7x998']))).notes.map((held) => held.id)).toEqual([notes[7]?.id]);
      expect((await checkRelations(test.store)).noteSearchDifferences).toEqual([]);
    } finally {
      client.nostrNoteIndexMany = original;
    }
  });

  it("a note added and taken away in one batch ends taken away, and a later addition (another writer's replay) does not bring it back", async () => {
    const gone = note('c', 100, 'ephemeral words');
    const kept = note('c', 101, 'ephemeral stays');
    const batch = new FollowWrites();
    await Promise.all([test.store.relations.relate(gone, 1, undefined, true, batch), test.store.relations.relate(kept, 1, undefined, true, batch)]);
    await test.store.relations.relate(gone, -1, undefined, true, batch);
    await test.store.relations.flushFollows(batch);
    expect((await test.store.relations.searchNotes(query(['ephemeral']))).notes.map((held) => held.id)).toEqual([kept.id]);
    const replay = new FollowWrites();
    await test.store.relations.relate(gone, 1, undefined, true, replay);
    await test.store.relations.flushFollows(replay);
    expect((await test.store.relations.searchNotes(query(['ephemeral']))).notes.map((held) => held.id)).toEqual([kept.id]);
  });
});
