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
import { NOTE_INDEX_MANY_SCRIPT, NOTE_INDEX_SCRIPT, NOTE_SEARCH_SCRIPT } from './lua-scripts.js';
import type { RedisClient } from './mget-by-slot.js';
import type { RedisCommands } from './redis-commands.js';
import { escapeGlob, scanKeys } from './scan-keys.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    nostrNoteIndex(numberOfKeys: number, ...keysThenArguments: (string | Buffer)[]): Result<number, Context>;
    nostrNoteIndexMany(numberOfKeys: number, ...keysThenArguments: (string | Buffer)[]): Result<number, Context>;
    nostrNoteSearchBuffer(numberOfKeys: number, ...keysThenArguments: (string | Buffer)[]): Result<(Buffer | number)[], Context>;
  }
}

/** A posting's member: the note's place (newest first, then id: 39 bytes), its kind (2) and its size (4). */
export function postingMember(kind: number, position: ReplyPosition & { bytes: number }): Buffer {
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

/** Postings a NOTE_INDEX_MANY call writes at most (its notes' words), so that one script never runs long. */
const POSTINGS_PER_CALL = 4_096;

/** A note's change in the index: added (1) or taken away (-1), with its stored size where the caller has it. */
export interface NoteChange {
  event: NostrEvent;
  delta: 1 | -1;
  size?: number;
}

/** What one shard's NOTE_SEARCH_SCRIPT answers: its status (1 nothing more, 2 the matches wanted, 0 out of work), the last member it looked at, the work it did, its matches. */
export interface ShardAnswer {
  status: number;
  last: Buffer | null;
  work: number;
  members: Buffer[];
}

/** Matches a shard is asked for in the first round: a page's share of sixteen, and some over. */
const firstAsk = (first: number) => Math.min(first, Math.ceil(first / NOTE_SEARCH_SHARDS) + 2);
/** Rounds at most: past them, a shard still asked counts as stopped where it was (a short page, never a wrong one). */
const MAX_ROUNDS = 8;
/**
 * The first `first` matches of every shard merged, asking each in rounds (RedisNoteSearch
 * searchNotes): a shard is asked again, for twice as many as the last time, from the last member it
 * looked at, while it holds more and its matches so far end before the `first`-th match of all
 * shards (what it holds further on may come before that one), never for more than `first` in all.
 * Each shard does `cap` units of work at most over all its rounds, as one call with `first` did: a
 * call after the first does not count reopening its lists (NOTE_SEARCH_SCRIPT's ARGV[7]), at most
 * MAX_ROUNDS range reads a list more in all. A shard out of work, or still wanted after MAX_ROUNDS,
 * stopped where it was, if that is before the page's last match (mergeShardResults).
 */
export async function shardRounds(
  first: number,
  cap: number,
  ask: (shard: number, from: Buffer | null, want: number, cap: number) => Promise<ShardAnswer>,
): Promise<NoteSearchResult> {
  const shards = Array.from({ length: NOTE_SEARCH_SHARDS }, () => ({ from: null as Buffer | null, want: firstAsk(first), work: 0, done: false, outOfWork: false, notes: [] as NotePosting[] }));
  /** The `first`-th match found so far, if that many are. */
  const barOf = () => {
    const found = shards.flatMap((shard) => shard.notes).sort(compareNotes);
    return found.length >= first ? found[first - 1] : undefined;
  };
  /** Whether what a shard holds past where it stopped may be in the page. */
  const wanted = (shard: (typeof shards)[number], bar: NotePosting | undefined) =>
    !shard.done && shard.notes.length < first && (bar === undefined || shard.from === null || compareNotes(postingOf(shard.from), bar) < 0);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const bar = barOf();
    const asked = shards.filter((shard) => !shard.outOfWork && wanted(shard, bar));
    if (asked.length === 0) break;
    await Promise.all(
      asked.map(async (shard) => {
        const answer = await ask(shards.indexOf(shard), shard.from, shard.want, cap - shard.work);
        shard.work += answer.work;
        shard.notes.push(...answer.members.map(postingOf));
        if (answer.status === 1 || answer.last === null) {
          shard.done = true;
          return;
        }
        shard.from = answer.last;
        // Never more than `first` matches in all: no more postings read than one call for `first` read.
        shard.want = Math.min(first - shard.notes.length, 2 * shard.want);
        // Out of work (the script stopped, or it found what it was asked as it ran out): asked no more.
        if (answer.status === 0 || shard.work >= cap) shard.outOfWork = true;
      }),
    );
  }
  const bar = barOf();
  return mergeShardResults(
    shards.map((shard) => ({ notes: shard.notes, stoppedAt: wanted(shard, bar) && shard.from !== null ? postingOf(shard.from) : null })),
    first,
  );
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
    client.defineCommand('nostrNoteIndexMany', { lua: NOTE_INDEX_MANY_SCRIPT });
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

  /**
   * index() for a batch's notes, in their order: one script a shard (NOTE_INDEX_MANY), where a
   * script a note spent more on its call than on its writes.
   */
  async indexMany(notes: readonly NoteChange[]): Promise<void> {
    type Call = { shard: number; words: Map<string, number>; notes: (string | Buffer)[]; postings: number };
    // A shard's current call; a call holds POSTINGS_PER_CALL postings at most (notes of a thousand words each would make one script run long), then the next one starts.
    const open = new Map<number, Call>();
    const calls: Call[] = [];
    for (const { event, delta, size } of notes) {
      const words = indexedWordsOf(event);
      if (words.length === 0) continue;
      const number = noteShardOf(event.id);
      let shard = open.get(number);
      if (!shard || shard.postings + words.length > POSTINGS_PER_CALL) {
        open.set(number, (shard = { shard: number, words: new Map(), notes: [], postings: 0 }));
        calls.push(shard);
      }
      shard.postings += words.length;
      const places = words.map((word) => {
        let place = shard.words.get(word);
        if (place === undefined) shard.words.set(word, (place = shard.words.size + 1));
        return String(place);
      });
      shard.notes.push(String(delta), postingMember(event.kind, { createdAt: event.created_at, id: event.id, bytes: size ?? storedSizeOf(event) }), String(words.length), ...places);
    }
    // A shard's calls one after the other, in order (a note's later change after its earlier one); the shards at once.
    const send = (call: Call) => {
      const keys = this.keys.noteSearch(call.shard);
      const words = [...call.words.keys()];
      return this.client.nostrNoteIndexMany(2 + words.length, keys.words, keys.tombstones, ...words.map(keys.list), String(words.length), ...words, ...call.notes);
    };
    const byShard = new Map<number, Call[]>();
    for (const call of calls) {
      const shardCalls = byShard.get(call.shard);
      if (shardCalls) shardCalls.push(call);
      else byShard.set(call.shard, [call]);
    }
    await Promise.all(
      [...byShard.values()].map(async (shardCalls) => {
        for (const call of shardCalls) await send(call);
      }),
    );
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

  /**
   * The shards are asked in rounds (shardRounds): each first for a few matches, then only those
   * whose matches so far might still be among the first `first`, for more, from where each stopped.
   * Asked for `first` each at once, every shard looked through its lists until it had `first`
   * matches of its own: up to sixteen pages' work for one page where matches are plentiful (where
   * they are rare, each shard reads its lists to the end either way).
   */
  searchNotes(query: NoteSearchQuery, limits: NoteSearchLimits = NOTE_SEARCH_LIMITS): Promise<NoteSearchResult> {
    const [start, end] = boundsOf(query);
    const kinds = Buffer.concat(query.kinds.map((kind) => Buffer.from([kind >> 8, kind & 0xff])));
    const lists = (shard: number) => {
      const keys = this.keys.noteSearch(shard);
      return [...query.words, ...(query.anyOf ?? [])].map(keys.list);
    };
    const ask = async (shard: number, from: Buffer | null, want: number, cap: number): Promise<ShardAnswer> => {
      const keys = lists(shard);
      const after = from === null ? start : Buffer.concat([Buffer.from('('), from]);
      const goesOn = from === null ? '0' : '1';
      const [status, last, work, ...members] = await this.client.nostrNoteSearchBuffer(keys.length, ...keys, String(query.words.length), after, end, String(want), String(cap), kinds, goesOn);
      return { status: Number(status), last: Buffer.isBuffer(last) && last.length === 45 ? last : null, work: Number(work), members: members as Buffer[] };
    };
    return this.commands.read(() => shardRounds(query.first, limits.scanPerShard, ask));
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
