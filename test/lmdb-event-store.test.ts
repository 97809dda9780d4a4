import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { serializeEvent } from '../src/nostr/event.js';
import { LmdbEventStore } from '../src/store/embedded/lmdb-event-store.js';
import { StoreUnavailableError } from '../src/store/event-store.js';
import { checkRelations, rebuildRelations } from '../src/store/relation-check.js';
import { notePlace, replyMember } from '../src/store/relation-index.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { describeEventStoreConformance } from './support/event-store-conformance.js';
import type { StoreOptions } from './support/store-under-test.js';

function openTemporary(options: StoreOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-lmdb-'));
  const store = new LmdbEventStore(dir, { noteSearch: true, ...options });
  return {
    store,
    dir,
    reopen: () => new LmdbEventStore(dir, { noteSearch: true, ...options }),
    cleanup: async () => {
      await store.close().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describeEventStoreConformance('LMDB (embedded)', async (options) => openTemporary(options));

describe('LMDB specifics', () => {
  it('a closed store reports itself unavailable', async () => {
    const { store, cleanup } = openTemporary();
    await store.close();
    await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
    // Every read and write, never reaching lmdb-js (a read of a closed environment could kill the
    // process: a background refresh that outlived the server did, found by review).
    const pubkey = 'ab'.repeat(32);
    await expect(store.getEvents([pubkey])).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.getProfilesWithMarks([pubkey])).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.getReplaceableWithMarks(10002, [pubkey], (key) => `relays:${key}`)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.marks.claim([`profile:${pubkey}`], 60)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.putEvents([signed('closed')])).rejects.toBeInstanceOf(StoreUnavailableError);
    await cleanup();
  });

  it('two handles on one directory (as serve and import in two processes) see each other’s writes', async () => {
    const first = openTemporary();
    const second = first.reopen();
    try {
      const event = profile('shared', { name: 'shared' });
      await first.store.putEvents([event]);
      expect((await second.getProfiles([event.pubkey]))[0]?.event).toEqual(event);
    } finally {
      await second.close();
      await first.cleanup();
    }
  });
});

describe('LMDB followers', () => {
  it('a batch writes one log per followed pubkey in a database of its own, without reading its followers; pages read the logs with the chunks', async () => {
    const { store, dir, cleanup } = openTemporary();
    try {
      const star = pubkeyOf('lmdb star');
      const lists = Array.from({ length: 30 }, (_, index) => signed(`lmdb fan ${index}`, { kind: 3, tags: [['p', star]] }));
      await store.putEvents(lists);
      // Half of them replaced by lists that no longer name it: a second log takes them away.
      await store.putEvents(lists.slice(0, 15).map((list, index) => signed(`lmdb fan ${index}`, { kind: 3, created_at: list.created_at + 1, tags: [] })));
      const kept = lists.slice(15).map((list) => list.pubkey).sort();
      const reader = open({ path: dir, readOnly: true });
      try {
        const entries = [...reader.openDB<Buffer, Buffer>({ name: 'follower-logs', keyEncoding: 'binary', encoding: 'binary' }).getRange()];
        // The star's two logs (numbers 0 and 1), then their state: next 2, 2 logs, 45 records.
        expect(entries.map(({ key }) => key.toString('hex'))).toEqual([`${star}0100000000`, `${star}0100000001`, `${star}02`]);
        const [first, second, state] = entries.map(({ value }) => value) as [Buffer, Buffer, Buffer];
        const records = (log: Buffer) => Array.from({ length: log.length / 33 }, (_, index) => `${log.readInt8(33 * index)} ${log.toString('hex', 33 * index + 1, 33 * index + 33)}`);
        expect(records(first)).toEqual(lists.map((list) => `1 ${list.pubkey}`).sort((a, b) => (a.slice(2) < b.slice(2) ? -1 : 1)));
        expect(records(second)).toEqual(lists.slice(0, 15).map((list) => `-1 ${list.pubkey}`).sort((a, b) => (a.slice(3) < b.slice(3) ? -1 : 1)));
        expect([state.readUInt32LE(0), state.readUInt32LE(4), state.readUInt32LE(8)]).toEqual([2, 2, 45]);
        // Nothing of them in the relations database but the counts, nor in the earlier version's database.
        expect([...reader.openDB<string, string>({ name: 'relations', encoding: 'string' }).getKeys({ start: 'F:', end: 'F;' })]).toEqual([]);
        // A new directory holds no database of the earlier version's (read-only: undefined where none).
        expect(reader.openDB<Buffer, Buffer>({ name: 'followers', keyEncoding: 'binary', encoding: 'binary' })).toBeUndefined();
      } finally {
        await reader.close();
      }
      expect((await store.relations.followCounts([star]))[0]?.followers).toBe(15);
      expect(await store.relations.followers(star, null, 100)).toEqual(kept);
      expect(await store.relations.followers(star, kept[6] as string, 3)).toEqual(kept.slice(7, 10));
      expect(await store.relations.followers(star, kept.at(-1) as string, 3)).toEqual([]);
    } finally {
      await cleanup();
    }
  });

  it('a directory whose followers earlier versions kept (`F:` keys, then a 64-byte key per follow): read as none until `relations rebuild` writes them again and empties the old keys', async () => {
    const { store: first, dir, reopen, cleanup } = openTemporary();
    let store = first;
    try {
      const star = pubkeyOf('upgraded star');
      const lists = Array.from({ length: 5 }, (_, index) => signed(`upgraded fan ${index}`, { kind: 3, tags: [['p', star]] }));
      await store.putEvents(lists);
      // As earlier versions left them: `F:<followed>:<follower>` → '1' in relations, or a 64-byte key per follow in `followers`.
      const writer = open({ path: dir });
      const followerLogs = writer.openDB<Buffer, Buffer>({ name: 'follower-logs', keyEncoding: 'binary', encoding: 'binary' });
      const followerKeys = writer.openDB<Buffer, Buffer>({ name: 'followers', keyEncoding: 'binary', encoding: 'binary' });
      const relations = writer.openDB<string, string>({ name: 'relations', encoding: 'string' });
      await writer.transaction(() => {
        for (const key of followerLogs.getKeys()) void followerLogs.remove(key);
        for (const list of lists.slice(0, 2)) void relations.put(`F:${star}:${list.pubkey}`, '1');
        for (const list of lists.slice(2)) void followerKeys.put(Buffer.from(`${star}${list.pubkey}`, 'hex'), Buffer.alloc(0));
      });
      await writer.close();
      // Opened again, as an upgraded directory is (the earlier version's database is opened only where it exists).
      await first.close();
      store = reopen();
      expect(await store.relations.followers(star, null, 10)).toEqual([]);
      expect((await store.relations.followCounts([star]))[0]?.followers).toBe(5);
      await rebuildRelations(store);
      expect(await store.relations.followers(star, null, 10)).toEqual(lists.map((list) => list.pubkey).sort());
      const reader = open({ path: dir, readOnly: true });
      try {
        expect([...reader.openDB<string, string>({ name: 'relations', encoding: 'string' }).getKeys({ start: 'F:', end: 'F;' })]).toEqual([]);
        expect([...reader.openDB<Buffer, Buffer>({ name: 'followers', keyEncoding: 'binary', encoding: 'binary' }).getKeys()]).toEqual([]);
      } finally {
        await reader.close();
      }
    } finally {
      if (store !== first) await store.close();
      await cleanup();
    }
  });
});

describe('LMDB notifications: how one of one reason is kept', () => {
  it('as its page-order entry alone (a target\'s first 8 hex digits as its value); one written in the earlier form (a record, an empty value) is read the same and rewritten', async () => {
    const { store: first, dir, reopen, cleanup } = openTemporary();
    let store = first;
    try {
      const note = signed('form owner', { created_at: 1_700_000_000, content: 'a note' });
      const like = signed('form fan', { kind: 7, created_at: 1_700_000_001, content: '+', tags: [['e', note.id]] });
      const mention = signed('form fan', { created_at: 1_700_000_002, content: 'hi', tags: [['p', note.pubkey]] });
      const earlier = signed('form fan 2', { kind: 7, created_at: 1_700_000_003, content: '+', tags: [['e', note.id]] });
      await store.putEvents([note, like, mention]);
      const owner = note.pubkey;
      const entry = (event: { id: string; created_at: number }, letter: string) => `nz:${owner}:${letter}:${replyMember(notePlace({ createdAt: event.created_at, id: event.id }))}`;
      const readRaw = async (read: (relations: import('lmdb').Database<string, string>) => unknown) => {
        const reader = open({ path: dir, readOnly: true });
        try {
          return read(reader.openDB<string, string>({ name: 'relations', encoding: 'string' }));
        } finally {
          await reader.close();
        }
      };
      expect(await readRaw((relations) => ({ records: [...relations.getKeys({ start: `nr:${owner}:`, end: `nr:${owner};` })], like: relations.get(entry(like, 'K')), mention: relations.get(entry(mention, 'M')) }))).toEqual({
        records: [],
        like: note.id.slice(0, 8),
        mention: '',
      });
      const tokens = async () => (await store.relations.notifications(owner, ['ZAP', 'REPLY', 'QUOTE', 'REPOST', 'REACTION', 'MENTION', 'FOLLOW'], null, 10)).map(({ id, type, token }) => [id, type, token]);
      expect(await tokens()).toEqual([
        [mention.id, 'MENTION', 'M'],
        [like.id, 'REACTION', `K${note.id.slice(0, 8)}`],
      ]);
      // The earlier form, for a reaction stored with it: a record of its token, an empty entry.
      await store.putEvents([earlier]);
      await first.close();
      const writer = open({ path: dir });
      const relations = writer.openDB<string, string>({ name: 'relations', encoding: 'string' });
      await writer.transaction(() => {
        void relations.put(`nr:${owner}:${earlier.id}`, `K${note.id.slice(0, 8)}`);
        void relations.put(entry(earlier, 'K'), '');
      });
      await writer.close();
      store = reopen();
      expect((await tokens())[0]).toEqual([earlier.id, 'REACTION', `K${note.id.slice(0, 8)}`]);
      // The note deleted: every reaction's notification goes, whatever its form; the mention stays.
      await store.putEvents([signed('form owner', { kind: 5, created_at: 1_700_000_010, content: '', tags: [['e', note.id]] })]);
      expect(await tokens()).toEqual([[mention.id, 'MENTION', 'M']]);
      expect((await checkRelations(store)).differences).toEqual([]);
    } finally {
      if (store !== first) await store.close();
      await cleanup();
    }
  });
});

describe('LMDB home timelines (h:)', () => {
  // One author's notes of the default feed kinds (1, 6, 16), merged, and a kind they do not hold.
  const author = 'home author';
  const events = [
    signed(author, { kind: 1, created_at: 1_700_000_005, content: 'a note' }),
    signed(author, { kind: 6, created_at: 1_700_000_004, content: '' }),
    signed(author, { kind: 16, created_at: 1_700_000_006, content: '' }),
    signed(author, { kind: 1, created_at: 1_700_000_005, content: 'same second' }),
    signed(author, { kind: 30023, created_at: 1_700_000_007, content: 'an article', tags: [['d', 'x']] }),
  ];
  const feedKinds = [16, 6, 1];
  const expected = () =>
    events
      .filter((event) => event.kind !== 30023)
      .map((event) => ({ createdAt: event.created_at, id: event.id }))
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1));
  const idsOf = (positions: { createdAt: number; id: string }[]) => positions.map(({ createdAt, id }) => ({ createdAt, id }));

  it('a feed of the default kinds reads one merged list per author, in the note lists’ order, paged; other kinds read their lists', async () => {
    const { store, cleanup } = openTemporary();
    try {
      await store.putEvents(events);
      expect(store.relations.keepsHomeTimelines).toBe(true);
      expect(idsOf(await store.relations.notes(pubkeyOf(author), feedKinds, null, 10))).toEqual(expected());
      const [first, second] = await store.relations.timelines([
        { author: pubkeyOf(author), kinds: [1, 6, 16], after: null, first: 2 },
        { author: pubkeyOf(author), kinds: [1, 6, 16], after: expected()[1]!, first: 10 },
      ]);
      expect(idsOf(first!)).toEqual(expected().slice(0, 2));
      expect(idsOf(second!)).toEqual(expected().slice(2));
      expect((await store.relations.notes(pubkeyOf(author), [1, 30023], null, 10)).map(({ id }) => id)).toEqual([events[4]!.id, ...[events[0]!, events[3]!].map((e) => e.id).sort()]);
      // A deletion takes the note out of both.
      await store.putEvents([signed(author, { kind: 5, created_at: 1_700_000_010, tags: [['e', events[2]!.id]] })]);
      expect(idsOf(await store.relations.notes(pubkeyOf(author), feedKinds, null, 10))).toEqual(expected().filter(({ id }) => id !== events[2]!.id));
      const check = await checkRelations(store);
      expect(check.noteDifferences).toEqual([]);
    } finally {
      await cleanup();
    }
  });

  it('relations check finds a home timeline entry missing or one too many, and a rebuild writes them again', async () => {
    const { store: first, dir, reopen, cleanup } = openTemporary();
    let store = first;
    try {
      await store.putEvents(events);
      await first.close();
      const stray = pubkeyOf('home stray');
      const writer = open({ path: dir });
      const relations = writer.openDB<string, string>({ name: 'relations', encoding: 'string' });
      await writer.transaction(() => {
        void relations.remove(`h:${pubkeyOf(author)}:${replyMember(notePlace({ createdAt: events[0]!.created_at, id: events[0]!.id }))}`);
        void relations.put(`h:${stray}:${replyMember(notePlace({ createdAt: 1_700_000_000, id: 'ab'.repeat(32) }))}`, '1 100');
      });
      await writer.close();
      store = reopen();
      const check = await checkRelations(store);
      expect(check.noteDifferences.map(({ author: who, kind, maintained, recounted }) => [who, kind, maintained.length, recounted.length]).sort()).toEqual(
        [
          [pubkeyOf(author), 'home', 3, 4],
          [stray, 'home', 1, 0],
        ].sort(),
      );
      await rebuildRelations(store);
      expect((await checkRelations(store)).noteDifferences).toEqual([]);
      expect(idsOf(await store.relations.notes(pubkeyOf(author), feedKinds, null, 10))).toEqual(expected());
    } finally {
      if (store !== first) await store.close();
      await cleanup();
    }
  });

  it('a directory written before them has them built from the note lists when opened for writing', async () => {
    const { store: first, dir, reopen, cleanup } = openTemporary();
    let store = first;
    try {
      await store.putEvents(events);
      await first.close();
      // As an earlier version left it: note lists, no home timelines and no mark.
      const writer = open({ path: dir });
      const relations = writer.openDB<string, string>({ name: 'relations', encoding: 'string' });
      await writer.transaction(() => {
        for (const key of relations.getKeys({ start: 'h:', end: 'h;' })) void relations.remove(key);
        void relations.remove('hv');
      });
      await writer.close();
      store = reopen();
      expect(store.relations.keepsHomeTimelines).toBe(true);
      expect(idsOf(await store.relations.notes(pubkeyOf(author), feedKinds, null, 10))).toEqual(expected());
      expect((await checkRelations(store)).noteDifferences).toEqual([]);
    } finally {
      if (store !== first) await store.close();
      await cleanup();
    }
  });
});

describe('LMDB data written by earlier versions', () => {
  it("reads events stored with the 'string' encoding (UTF-8) as the same bytes", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-lmdb-'));
    try {
      const note = signed('old', { content: 'written as a string 🌅' });
      const kind0 = profile('old', { name: 'old ✨' });
      const legacy = open<string, string>({ path: dir, encoding: 'string', compression: false });
      await legacy.openDB<string, string>({ name: 'events', encoding: 'string' }).put(note.id, serializeEvent(note));
      await legacy.openDB<string, string>({ name: 'events', encoding: 'string' }).put(kind0.id, `@0:${kind0.pubkey}`);
      await legacy.openDB<string, string>({ name: 'replaceable', encoding: 'string' }).put(`0:${kind0.pubkey}`, serializeEvent(kind0));
      await legacy.close();
      const store = new LmdbEventStore(dir);
      try {
        const [readNote, readProfile] = await store.getEvents([note.id, kind0.id]);
        expect(String(readNote?.json)).toBe(serializeEvent(note));
        expect(readProfile?.event).toEqual(kind0);
        expect((await store.getProfiles([kind0.pubkey]))[0]?.json?.bytes.equals(Buffer.from(serializeEvent(kind0)))).toBe(true);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('LMDB negative cache', () => {
  it('clean-up of an expired miss never removes a miss remembered again meanwhile', async () => {
    const { store, cleanup } = openTemporary();
    try {
      await store.marks.set(['event:x'], 0); // expires at once
      const reading = store.marks.has(['event:x']); // finds it expired, schedules clean-up
      await store.marks.set(['event:x'], 60); // remembered again before the clean-up runs
      expect(await reading).toEqual([false]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await store.marks.has(['event:x'])).toEqual([true]);
    } finally {
      await cleanup();
    }
  });
});

describe('LMDB housekeeping', () => {
  it('expired marks are swept without being read again, in bounded runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-lmdb-'));
    const store = new LmdbEventStore(dir, { sweepIntervalMs: 100, sweepBatch: 50 });
    try {
      const keys = Array.from({ length: 200 }, (_, index) => `event:${index.toString(16).padStart(64, '0')}`);
      await store.marks.set(keys, 1);
      await store.marks.set(['event:kept'], 60);
      expect(store.marks.count()).toBe(201);
      // Never read again: after the TTL, the sweeper (50 per run, every 100 ms) removes them all.
      await expect.poll(() => store.marks.count(), { timeout: 3000, interval: 100 }).toBe(1);
      expect(await store.marks.has(['event:kept'])).toEqual([true]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a lap goes on run after run until it has looked at every mark: a flood of misses does not outrun it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-lmdb-'));
    const store = new LmdbEventStore(dir, { sweepIntervalMs: 200, sweepBatch: 100 });
    try {
      await store.marks.set(Array.from({ length: 20_000 }, (_, index) => `event:${index}`), 1);
      expect(store.marks.count()).toBe(20_000);
      // 200 runs of 100 are needed; at one run per 200 ms that would take 40 s.
      await expect.poll(() => store.marks.count(), { timeout: 5000, interval: 200 }).toBe(0);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('one sweep run looks at no more than its batch', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-lmdb-'));
    const store = new LmdbEventStore(dir, { sweepIntervalMs: 60_000 });
    try {
      await store.marks.set(Array.from({ length: 30 }, (_, index) => `event:${index}`), 1);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect(await store.marks.sweep(10)).toBe(10);
      expect(store.marks.count()).toBe(20);
      expect(await store.marks.sweep(100)).toBe(20);
      expect(store.marks.count()).toBe(0);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a DATA_DIR whose name has a dot (mktemp gives tmp.XXXX) opens as a directory', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'nostr-lookup-lmdb-'));
    const dir = join(parent, 'tmp.Ab3dE');
    try {
      const event = signed('dotted', { content: 'in a dotted directory' });
      const store = new LmdbEventStore(dir);
      expect(await store.putEvents([event])).toEqual(['stored']);
      await store.close();
      const again = new LmdbEventStore(dir);
      expect((await again.getEvents([event.id]))[0]?.event).toEqual(event);
      await again.close();
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
