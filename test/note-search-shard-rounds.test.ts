import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeShardResults, NOTE_SEARCH_SHARDS, type NotePosting } from '../src/store/note-search-index.js';
import { postingMember, type ShardAnswer, shardRounds } from '../src/store/redis/redis-note-search.js';
import { compareNotes } from '../src/store/relation-index.js';

/**
 * The shards asked in rounds (RedisNoteSearch searchNotes) against what one call per shard for
 * `first` matches gave: a model of NOTE_SEARCH_SCRIPT per shard (postings in order, some matching,
 * a unit of work per posting looked at), and the rule a read keeps (mergeShardResults): the first
 * `first` matches of all shards, or, when a shard ran out of work, every match up to where it
 * stopped and no further.
 */
interface ModelPosting {
  posting: NotePosting;
  member: Buffer;
  matches: boolean;
}

const postingOf = (createdAt: number, n: number, kind: number): NotePosting => ({ createdAt, id: n.toString(16).padStart(64, '0'), kind, bytes: 100 + n });

/**
 * `lists`: the lists a call opens, a range read each, counted as one unit of work each by the first
 * call only (a call that goes on does not count them again, as the script).
 */
function modelShard(postings: readonly ModelPosting[], lists = 1) {
  return (from: Buffer | null, want: number, cap: number): ShardAnswer => {
    let at = from === null ? 0 : postings.findIndex((entry) => Buffer.compare(entry.member, from) > 0);
    if (at < 0) at = postings.length;
    const members: Buffer[] = [];
    let work = from === null ? lists : 0;
    let last: Buffer | null = null;
    for (; at < postings.length; at++) {
      // As the script: past its cap it stops before the next posting (at least one is looked at).
      if (last !== null && work >= cap) return { status: 0, last, work, members };
      const entry = postings[at] as ModelPosting;
      work += 1;
      last = entry.member;
      if (entry.matches) {
        members.push(entry.member);
        if (members.length >= want) return { status: 2, last, work, members };
      }
    }
    return { status: 1, last, work, members };
  };
}

describe('a note search over the shards, asked in rounds', () => {
  it('gives the first matches of all shards, or every match up to where a shard stopped (property)', async () => {
    const world = fc.record({
      // Many postings in few seconds: ties broken by id.
      postings: fc.array(fc.record({ second: fc.integer({ min: 0, max: 40 }), shard: fc.integer({ min: 0, max: NOTE_SEARCH_SHARDS - 1 }), matches: fc.boolean() }), { maxLength: 400 }),
      first: fc.integer({ min: 1, max: 30 }),
      cap: fc.integer({ min: 1, max: 120 }),
      lists: fc.integer({ min: 1, max: 64 }),
    });
    await fc.assert(
      fc.asyncProperty(world, async ({ postings, first, cap, lists }) => {
        const shards = Array.from({ length: NOTE_SEARCH_SHARDS }, () => [] as ModelPosting[]);
        postings.forEach(({ second, shard, matches }, n) => {
          const posting = postingOf(1_700_000_000 + second, n, 1);
          (shards[shard] as ModelPosting[]).push({ posting, member: postingMember(1, posting), matches });
        });
        for (const shard of shards) shard.sort((a, b) => compareNotes(a.posting, b.posting));
        const ids = (notes: readonly NotePosting[]) => notes.map((note) => note.id);
        const asks = shards.map((shard) => modelShard(shard, lists));
        const work = shards.map(() => 0);
        const result = await shardRounds(first, cap, async (shard, from, want, left) => {
          expect(left).toBeGreaterThan(0);
          expect(want).toBeGreaterThan(0);
          expect(want).toBeLessThanOrEqual(first);
          const answer = (asks[shard] as ReturnType<typeof modelShard>)(from, want, left);
          work[shard] = (work[shard] as number) + answer.work;
          return answer;
        });
        // Whatever one call per shard for `first` answered in full, the rounds answer the same.
        const single = mergeShardResults(
          shards.map((shard) => {
            const answer = modelShard(shard, lists)(null, first, cap);
            return { notes: answer.members.map((member) => (shard.find((entry) => entry.member.equals(member)) as ModelPosting).posting), stoppedAt: answer.status === 0 && answer.last ? (shard.find((entry) => entry.member.equals(answer.last as Buffer)) as ModelPosting).posting : null };
          }),
          first,
        );
        if (single.stoppedAt === null) expect({ ids: ids(result.notes), stoppedAt: result.stoppedAt }).toEqual({ ids: ids(single.notes), stoppedAt: null });
        // No more work counted in a shard than one call had (its cap is over all its rounds), bar
        // the first call's openings when they alone pass the cap (the script opens before it counts).
        for (const done of work) expect(done).toBeLessThanOrEqual(Math.max(cap, lists + 1));
        const matches = shards
          .flat()
          .filter((entry) => entry.matches)
          .map((entry) => entry.posting)
          .sort(compareNotes);
        if (result.stoppedAt === null) {
          expect(ids(result.notes)).toEqual(ids(matches.slice(0, first)));
        } else {
          const stop = result.stoppedAt;
          expect(result.notes.length).toBeLessThan(first);
          expect(ids(result.notes)).toEqual(ids(matches.filter((note) => compareNotes(note, stop) <= 0)));
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 300), seed: Number(process.env.FUZZ_SEED ?? 51) },
    );
  });

  it('asks a shard only what the page needs: a rare match spread over all shards is found reading a few postings each', async () => {
    // 16 shards of 300 postings, one in ten a match: one call per shard for 20 read about 200 postings in each.
    const shards = Array.from({ length: NOTE_SEARCH_SHARDS }, (_, shard) =>
      Array.from({ length: 300 }, (_, n) => {
        const posting = postingOf(1_700_000_000 - n, shard * 1000 + n, 1);
        return { posting, member: postingMember(1, posting), matches: (n + shard) % 10 === 0 };
      }),
    );
    const asks = shards.map(modelShard);
    let read = 0;
    const result = await shardRounds(20, 2000, async (shard, from, want, cap) => {
      const answer = (asks[shard] as ReturnType<typeof modelShard>)(from, want, cap);
      read += answer.work;
      return answer;
    });
    expect(result.stoppedAt).toBeNull();
    expect(result.notes).toHaveLength(20);
    expect(result.notes.map((note) => note.createdAt)).toEqual(result.notes.map((note) => note.createdAt).sort((a, b) => b - a));
    // Each shard read up to its third match (about 30 postings), some up to a sixth: not 200 each.
    expect(read).toBeLessThan(16 * 70);
  });
});
