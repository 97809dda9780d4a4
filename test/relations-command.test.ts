import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LmdbEventStore } from '../src/store/embedded/lmdb-event-store.js';
import { redisKeys } from '../src/store/redis/keys.js';
import type { EventStore } from '../src/store/event-store.js';
import { spawnCli } from './support/cli.js';
import { DEFAULT_FEED_KINDS, isNoteKind } from '../src/nostr/relationships.js';
import { pubkeyOf, signed } from './support/events.js';
import { createTestStore, storeEnv } from './support/test-store.js';

const T = 1_700_000_000;
const target = signed('alice', { content: 'the note', created_at: T });
const events = [
  target,
  signed('bob', { kind: 7, tags: [['e', target.id]], content: '+', created_at: T + 1 }),
  signed('carol', { kind: 1, tags: [['e', target.id, '', 'root']], content: 'a reply', created_at: T + 2 }),
  signed('dave', { kind: 6, tags: [['e', target.id], ['p', pubkeyOf('alice')]], content: '', created_at: T + 3 }),
  signed('alice', { kind: 0, content: '{"name":"Alice Liddell"}', created_at: T + 4 }),
];

interface Subject {
  store: EventStore;
  env: Record<string, string | undefined>;
  /** Loses the whole index: clear(), and on Redis the authors' lists, which clear() keeps (they are the author index too). */
  lose(): Promise<void>;
  cleanup(): Promise<void>;
}

const STORES: { name: string; open(): Promise<Subject> }[] = [
  {
    name: 'Redis',
    async open() {
      const opened = await createTestStore();
      const lose = async () => {
        await opened.store.relations.clear();
        const authors = [...new Set(events.map((event) => event.pubkey))];
        await Promise.all(authors.map((pubkey) => opened.client.del(redisKeys(opened.prefix).author(pubkey).list)));
      };
      // NOTE_SEARCH on, as the store was written: the check covers the note search index too.
      return { store: opened.store, env: { ...storeEnv(opened.prefix), DATA_DIR: undefined, NOTE_SEARCH: 'true' }, lose, cleanup: opened.cleanup };
    },
  },
  {
    name: 'embedded (LMDB)',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-relations-'));
      const store = new LmdbEventStore(dir, { noteSearch: true });
      return {
        store,
        env: { DATA_DIR: dir, REDIS_URL: undefined, REDIS_CLUSTER_NODES: undefined, NOTE_SEARCH: 'true' },
        lose: () => store.relations.clear(),
        cleanup: async () => {
          await store.close().catch(() => {});
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

async function run(args: string[], env: Record<string, string | undefined>) {
  const cli = spawnCli(['relations', ...args], env);
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

describe.each(STORES)('nostr-lookup relations check | rebuild ($name)', ({ open }) => {
  it('check finds no difference on a maintained index, finds the lost figures after the index is emptied (exit 2), and rebuild restores them', async () => {
    const subject = await open();
    try {
      await subject.store.putEvents(events);
      const before = (await subject.store.relations.stats([target.id]))[0];
      const ok = await run(['check', '--json'], subject.env);
      expect(ok).toMatchObject({ code: 0, stderr: '' });
      // Each author's events of each listed kind are one note list.
      const noteLists = new Set(events.filter((event) => isNoteKind(event.kind)).map((event) => `${event.pubkey}:${event.kind}`)).size;
      expect(noteLists).toBe(4);
      // LMDB also keeps each author's notes of the default feed kinds merged (its home timeline), and checks it.
      const homes = subject.store.relations.keepsHomeTimelines ? new Set(events.filter((event) => DEFAULT_FEED_KINDS.includes(event.kind)).map((event) => event.pubkey)).size : 0;
      expect(homes).toBe(subject.store instanceof LmdbEventStore ? 3 : 0);
      const clean = { differences: 0, shown: { differences: [], zapDifferences: [], followDifferences: [], noteDifferences: [], searchDifferences: [], noteSearchDifferences: [], notificationDifferences: [], kindDifferences: [], totalDifferences: [] } };
      expect(JSON.parse(ok.stdout)).toEqual({ action: 'check', events: 5, targets: 1, zapped: 0, follows: 0, notes: noteLists + homes, search: 1, words: 5, notified: 1, ...clean });

      await subject.lose();
      const lost = await run(['check'], subject.env);
      expect(lost.code).toBe(2);
      // The counts of events by kind go with the index: one difference per kind held.
      const kinds = new Set(events.map((event) => event.kind));
      // The note search index too: the words of the note and of the reply ("the", "note", "a", "reply") and the list of every note ("*").
      expect(lost.stdout).toContain(`differences ${1 + noteLists + homes + 1 + 5 + 1 + kinds.size + 1}\n`);
      expect(lost.stdout).toContain('  notes with the word "note": 0 indexed, 1 recounted\n');
      // Alice's three notifications go with the index too (no follow list: no follows to lose).
      expect(lost.stdout).toContain('  notifications: 0 counted, 3 held\n');
      expect(lost.stdout).toContain(`  events of kind ${target.kind}: 0 counted, ${events.filter((event) => event.kind === target.kind).length} held\n`);
      // Alice's notifications: the reaction, the reply and the repost.
      expect(lost.stdout).toContain(`  notifications of ${pubkeyOf('alice')}: 0 kept, 3 recounted (`);
      expect(lost.stdout).toContain(`  search of ${pubkeyOf('alice')}\n    maintained {"words":[],"followers":0,"indexed":true}\n    recounted  {"words":["alice","liddell"],"followers":0,"indexed":true}\n`);
      expect(lost.stdout).toContain(`  notes of ${target.pubkey} kind ${target.kind}\n    maintained 0 events\n    recounted  1 events\n`);
      if (homes) expect(lost.stdout).toContain(`  the home timeline of ${target.pubkey} (kinds 1, 6, 16)\n    maintained 0 events\n    recounted  1 events\n`);
      expect(lost.stdout).toContain(`  ${target.id}\n`);
      expect(lost.stdout).toContain('    maintained {"replies":0,"threadReplies":0,"quotes":0,"reposts":0,');

      const rebuilt = await run(['rebuild', '--json'], subject.env);
      expect(rebuilt).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(rebuilt.stdout)).toEqual({ action: 'rebuild', events: 5, targets: 1, zapped: 0, follows: 0, notes: noteLists + homes, search: 1, words: 5, notified: 1, ...clean });
      expect((await subject.store.relations.stats([target.id]))[0]).toEqual(before);
    } finally {
      await subject.cleanup();
    }
  }, 60_000);
});

describe('nostr-lookup relations: bad input', () => {
  it('an unknown action or option is refused with exit 1 and a message, before the store is opened', async () => {
    const unknown = await run(['count'], { DATA_DIR: '/nonexistent/never-created', REDIS_URL: undefined });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("unknown command 'count'");
    const option = await run(['check', '--fix'], { DATA_DIR: '/nonexistent/never-created', REDIS_URL: undefined });
    expect(option.code).toBe(1);
    expect(option.stderr).toContain("unknown option '--fix'");
  });

  it('an unreachable store: exit 1 and one line saying so', async () => {
    const result = await run(['check'], { REDIS_URL: 'redis://127.0.0.1:1', DATA_DIR: undefined, REDIS_CLUSTER_NODES: undefined });
    expect(result.code).toBe(1);
    // Before it: the connection's own warnings, as JSON log lines (as `import` prints them).
    expect(result.stderr.split('\n').at(-2)).toBe('nostr-lookup relations check: cannot reach Redis at redis://127.0.0.1:1 (key prefix "nostr:")');
    expect(result.stdout).toBe('');
  }, 30_000);
});
