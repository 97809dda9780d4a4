import type { Result } from 'ioredis';
import type { NostrEvent } from '../../nostr/event.js';
import {
  indexedWordsOf,
  mergeShardResults,
  NOTE_SEARCH_LIMITS,
  NOTE_SEARCH_SHARDS,
  type NoteSearchIndex,
  type NoteSearchLimits,
  type NoteSearchList,
  type NoteSearchQuery,
  type NoteSearchResult,
  type NotePosting,
  noteShardOf,
} from '../note-search-index.js';
import { compareNotes, notePlace, type ReplyPosition, replyMemberBytes, replyPositionOfBytes, storedSizeOf } from '../relation-index.js';
import type { RedisKeys } from './keys.js';
import { NOTE_INDEX_SCRIPT, NOTE_SEARCH_SCRIPT } from './lua-scripts.js';
import type { RedisClient } from './mget-by-slot.js';
import type { RedisCommands } from './redis-commands.js';
import { escapeGlob, scanKeys } from './scan-keys.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    nostrNoteIndex(numberOfKeys: number, ...keysThenArguments: (string | Buffer)[]): Result<number, Context>;
    nostrNoteSearchBuffer(numberOfKeys: number, ...keysThenArguments: (string | Buffer)[]): Result<(Buffer | number)[], Context>;
  }
}

/** A posting's member: the note's place (newest first, then id: 39 bytes), its kind (2) and its size (4). */
function postingMember(kind: number, position: ReplyPosition & { bytes: number }): Buffer {
  const member = Buffer.alloc(45);
  replyMemberBytes(notePlace({ createdAt: position.createdAt, id: position.id })).copy(member, 0, 0, 39);
  member.writeUInt16BE(kind, 39);
  member.writeUInt32BE(position.bytes, 41);
  return member;
}

function postingOf(member: Buffer): NotePosting {
  const { createdAt, id } = notePlace(replyPositionOfBytes(Buffer.concat([member.subarray(0, 39), Buffer.alloc(4)])));
  return { createdAt, id, kind: member.readUInt16BE(39), bytes: member.readUInt32BE(41) };
}

/** The first 7 bytes of a place: its mirrored created_at (a bound before or after every note of that second). */
const secondBytes = (createdAt: number) => replyMemberBytes(notePlace({ createdAt, id: '00'.repeat(32) })).subarray(0, 7);

/** The BYLEX bounds of a query: after its cursor (or from `until`), to `since` (inclusive). */
function boundsOf(query: NoteSearchQuery): [start: Buffer | string, end: Buffer | string] {
  const { after, since, until } = query;
  let start: Buffer | string = '-';
  if (after && (until === null || after.createdAt <= until)) {
    // Past every member of that place, whatever its kind and size.
    start = Buffer.concat([Buffer.from('('), replyMemberBytes(notePlace({ createdAt: after.createdAt, id: after.id })).subarray(0, 39), Buffer.alloc(6, 0xff)]);
  } else if (until !== null) start = Buffer.concat([Buffer.from('['), secondBytes(until)]);
  const end = since !== null && since > 0 ? Buffer.concat([Buffer.from('('), secondBytes(since - 1)]) : '+';
  return [start, end];
}

/** Words per SCAN of a shard's lists (noteSearchLists). */
const LISTS_PER_BATCH = 200;

/**
 * The note search index on Redis (store/note-search-index.ts): per shard `h` (a note's id's first
 * hex digit) and word, a sorted set `q:{q<h>}:w:<word>` of its notes' postings (all scores 0, read
 * BYLEX: newest first, then id); `q:{q<h>}:v` the shard's words, for a prefix's expansion;
 * `q:{q<h>}:d` its removed postings (NOTE_INDEX_SCRIPT). Every key of a shard shares its hash tag:
 * one script writes a note's postings, one per shard answers a query.
 */
export class RedisNoteSearch implements Omit<NoteSearchIndex, 'noteSearchEnabled'> {
  constructor(
    private readonly client: RedisClient,
    private readonly commands: RedisCommands,
    private readonly keys: RedisKeys,
    private readonly prefix: string,
  ) {
    client.defineCommand('nostrNoteIndex', { lua: NOTE_INDEX_SCRIPT });
    client.defineCommand('nostrNoteSearch', { lua: NOTE_SEARCH_SCRIPT });
  }

  /** Adds (+1) or removes (-1) a note's postings: one script, in its shard. Nothing for another kind or a note without words. */
  async index(event: NostrEvent, delta: 1 | -1, size?: number): Promise<void> {
    const words = indexedWordsOf(event);
    if (words.length === 0) return;
    const shard = this.keys.noteSearch(noteShardOf(event.id));
    const member = postingMember(event.kind, { createdAt: event.created_at, id: event.id, bytes: size ?? storedSizeOf(event) });
    await this.client.nostrNoteIndex(2 + words.length, shard.words, shard.tombstones, ...words.map(shard.list), String(delta), member, ...words);
  }

  noteWordsStarting(prefix: string, limit: number): Promise<string[]> {
    return this.commands.read(async () => {
      const shards = await Promise.all(
        Array.from({ length: NOTE_SEARCH_SHARDS }, (_, shard) => this.client.zrangebylex(this.keys.noteSearch(shard).words, `[${prefix}`, `(${prefix}\u{10FFFF}`, 'LIMIT', 0, limit)),
      );
      const words = [...new Set(shards.flat())].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      return words.slice(0, limit);
    });
  }

  searchNotes(query: NoteSearchQuery, limits: NoteSearchLimits = NOTE_SEARCH_LIMITS): Promise<NoteSearchResult> {
    const [start, end] = boundsOf(query);
    const kinds = Buffer.concat(query.kinds.map((kind) => Buffer.from([kind >> 8, kind & 0xff])));
    return this.commands.read(async () => {
      const shards = await Promise.all(
        Array.from({ length: NOTE_SEARCH_SHARDS }, async (_, shard): Promise<NoteSearchResult> => {
          const keys = this.keys.noteSearch(shard);
          const lists = [...query.words, ...(query.anyOf ?? [])].map(keys.list);
          const [status, last, ...members] = await this.client.nostrNoteSearchBuffer(lists.length, ...lists, String(query.words.length), start, end, String(query.first), String(limits.scanPerShard), kinds);
          const stopped = status === 0 && Buffer.isBuffer(last) && last.length === 45;
          return { notes: (members as Buffer[]).map(postingOf), stoppedAt: stopped ? postingOf(last) : null };
        }),
      );
      return mergeShardResults(shards, query.first);
    });
  }

  async *noteSearchLists(): AsyncIterable<NoteSearchList[]> {
    // SCAN may hand a key over twice: each list once (a word's list in two shards is two keys).
    const seen = new Set<string>();
    for await (const found of scanKeys(this.client, this.commands, `${escapeGlob(this.prefix)}q:{q?}:w:*`)) {
      const names = found.filter((name) => !seen.has(name));
      for (const name of names) seen.add(name);
      for (let start = 0; start < names.length; start += LISTS_PER_BATCH) {
        const lists = await this.commands.read(() =>
          Promise.all(
            names.slice(start, start + LISTS_PER_BATCH).map(async (name): Promise<NoteSearchList> => {
              const members = (await this.client.zrangeBuffer(name, '0', '-1')) as Buffer[];
              return { word: name.slice(name.indexOf('}:w:') + 4), notes: members.map(postingOf).sort(compareNotes) };
            }),
          ),
        );
        yield lists;
      }
    }
  }
}
