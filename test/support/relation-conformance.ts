import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../../src/nostr/event.js';
import { MAX_REACTION_CONTENT_BYTES } from '../../src/nostr/work-caps.js';
import type { EventStore } from '../../src/store/event-store.js';
import { checkRelations, rebuildRelations } from '../../src/store/relation-check.js';
import { MAX_REACTION_CONTENTS, type RelationStats, type ReplyPosition } from '../../src/store/relation-index.js';
import { comparePositions } from '../../src/store/relation-recount.js';
import { deletion, vanish } from './deletion-conformance.js';
import { profile, pubkeyOf, signed } from './events.js';
import { shuffled } from './shuffle.js';
import { type OpenStore, withStoreFrom } from './store-under-test.js';
import { brokenReceipts, zapReceipt } from './zaps.js';
import { readZapReceipt } from '../../src/nostr/zaps.js';
import { queryWords } from '../../src/nostr/profile-search.js';
import { eventZapSubject, profileZapSubject, sortZapGroups, type ZapGroup } from '../../src/store/zap-index.js';

const T = 1_700_000_000;

const note = (author: string, content = 'a note', at = T) => signed(author, { content, created_at: at });
const reply = (author: string, tags: string[][], at = T + 10, kind = 1) => signed(author, { kind, tags, content: `re ${at}`, created_at: at });
const react = (author: string, target: string, content = '+', extraTags: string[][] = [], at = T + 20) =>
  signed(author, { kind: 7, tags: [...extraTags, ['e', target], ['p', pubkeyOf('alice')]], content, created_at: at });
const repost = (author: string, target: string, kind = 6, at = T + 30) => signed(author, { kind, tags: [['e', target], ['e', 'f'.repeat(64)]], content: '', created_at: at });

async function stats(store: EventStore, id: string): Promise<RelationStats> {
  return (await store.relations.stats([id]))[0] as RelationStats;
}

async function replyIds(store: EventStore, id: string): Promise<string[]> {
  return (await store.relations.allReplies(id)).map((position) => position.id);
}

/** The maintained figures equal the recount from the servable events. */
/**
 * `kinds` false: the counts of events by kind and the totals (follows, notifications) are left out,
 * where a fault cut a write between an event and its relations in a way a replay cannot tell
 * (docs/operations.md: `relations rebuild`).
 */
export async function expectExact(store: EventStore, { kinds = true }: { kinds?: boolean } = {}): Promise<void> {
  const check = await checkRelations(store);
  expect(check.differences).toEqual([]);
  expect(check.zapDifferences).toEqual([]);
  expect(check.followDifferences).toEqual([]);
  expect(check.noteDifferences).toEqual([]);
  expect(check.searchDifferences).toEqual([]);
  expect(check.noteSearchDifferences).toEqual([]);
  expect(check.notificationDifferences).toEqual([]);
  if (kinds) expect(check.kindDifferences).toEqual([]);
  if (kinds) expect(check.totalDifferences).toEqual([]);
}

const followList = (author: string, follows: string[], at = T + 100) => signed(author, { kind: 3, tags: follows.map((name) => ['p', pubkeyOf(name)]), content: '', created_at: at });

/** searchProfiles as the schema calls it (the query's words), on both of the index's paths. */
async function searchBoth(store: EventStore, query: string, first = 20): Promise<string[]> {
  const words = queryWords(query);
  const [listed, walked] = await Promise.all([store.relations.searchProfiles(words, first), store.relations.searchProfiles(words, first, { lexRange: 0, rankWalk: 5000 })]);
  // Both paths answer the same: the range read and sorted, and the rank order walked.
  expect(walked).toEqual(listed);
  return listed;
}
const names = (pubkeys: string[]) => pubkeys.map((pubkey) => NAME_OF.get(pubkey) ?? pubkey);
const NAME_OF = new Map(['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy', 'mallory'].map((name) => [pubkeyOf(name), name]));

const summary = (figures: RelationStats) => ({
  replies: figures.replies,
  threadReplies: figures.threadReplies,
  quotes: figures.quotes,
  reposts: figures.reposts,
  reactions: figures.reactions,
});

/** The relationship index (DESIGN "Relationships"): every row of the table, on every store. */
export function describeRelationConformance(name: string, open: OpenStore): void {
  describe(`${name}: relationships (DESIGN "Relationships")`, () => {
    const withStore = withStoreFrom(open);

    it(
      'NIP-10 marked tags: root is the first `root`, parent the first `reply`, else the root; `mention` never threads',
      withStore(async (store) => {
        const root = note('alice', 'root');
        const middle = reply('bob', [['e', root.id, '', 'root']]);
        const deep = reply('carol', [['e', root.id, '', 'root'], ['e', middle.id, '', 'reply'], ['e', 'a'.repeat(64), '', 'reply']], T + 11);
        const mention = reply('dave', [['e', root.id, '', 'mention']], T + 12);
        const mixed = reply('erin', [['e', 'b'.repeat(64)], ['e', middle.id, '', 'reply']], T + 13); // marked wins: no root, parent middle
        await store.putEvents([root, middle, deep, mention, mixed]);
        expect(await replyIds(store, root.id)).toEqual([middle.id]);
        expect(await replyIds(store, middle.id)).toEqual([deep.id, mixed.id]);
        expect(summary(await stats(store, root.id))).toMatchObject({ replies: 1, threadReplies: 2 });
        expect(await stats(store, middle.id)).toMatchObject({ replies: 2, threadReplies: 0 });
        expect(await stats(store, 'b'.repeat(64))).toMatchObject({ replies: 0, threadReplies: 0 });
        await expectExact(store);
      }),
    );

    it(
      'NIP-10 positional tags: one is root and parent; of several, the first is root and the last parent; unknown markers ignored',
      withStore(async (store) => {
        const [a, b, c] = ['a', 'b', 'c'].map((letter) => letter.repeat(64)) as [string, string, string];
        const one = reply('bob', [['e', a]]);
        const several = reply('carol', [['e', a, 'wss://hint'], ['e', b, ''], ['e', c, '', 'weird'], ['e', 'not-an-id']], T + 11);
        await store.putEvents([one, several]);
        expect(await replyIds(store, a)).toEqual([one.id]);
        expect(await replyIds(store, b)).toEqual([several.id]);
        expect(await stats(store, a)).toMatchObject({ replies: 1, threadReplies: 2 });
        expect(await stats(store, c)).toMatchObject({ replies: 0, threadReplies: 0 });
        await expectExact(store);
      }),
    );

    it(
      'NIP-22 comments: root is the first `E`, parent the first `e`; `A`/`I` roots are not event replies',
      withStore(async (store) => {
        const article = note('alice', 'post');
        const top = reply('bob', [['E', article.id], ['K', '1'], ['e', article.id], ['k', '1']], T + 10, 1111);
        const nested = reply('carol', [['E', article.id], ['e', top.id], ['e', 'd'.repeat(64)]], T + 11, 1111);
        const onAddress = reply('dave', [['A', `30023:${pubkeyOf('alice')}:x`], ['a', `30023:${pubkeyOf('alice')}:x`]], T + 12, 1111);
        await store.putEvents([article, top, nested, onAddress]);
        expect(await replyIds(store, article.id)).toEqual([top.id]);
        expect(await replyIds(store, top.id)).toEqual([nested.id]);
        expect(await stats(store, article.id)).toMatchObject({ replies: 1, threadReplies: 2 });
        await expectExact(store);
      }),
    );

    it(
      'quotes: any kind with a `q` tag naming the id (an address in `q` is not an id); a replaced version stops quoting',
      withStore(async (store) => {
        const quoted = note('alice', 'quotable');
        const quoting = signed('bob', { tags: [['q', quoted.id], ['q', quoted.id, 'wss://x']], content: 'look' });
        const article = signed('carol', { kind: 30023, tags: [['d', 'essay'], ['q', quoted.id], ['q', `30023:${pubkeyOf('alice')}:x`]], created_at: T });
        await store.putEvents([quoted, quoting, article]);
        expect((await stats(store, quoted.id)).quotes).toBe(2);
        const edited = signed('carol', { kind: 30023, tags: [['d', 'essay']], content: 'no quote now', created_at: T + 5 });
        expect(await store.putEvents([edited])).toEqual(['replaced']);
        expect((await stats(store, quoted.id)).quotes).toBe(1);
        await expectExact(store);
      }),
    );

    it(
      'reposts: distinct authors of kind 6 and 16 whose first `e` is the target; one author twice counts once, and still once after one is deleted',
      withStore(async (store) => {
        const target = note('alice');
        const first = repost('bob', target.id, 6, T + 1);
        const again = repost('bob', target.id, 16, T + 2);
        const other = repost('carol', target.id, 16, T + 3);
        const secondTag = signed('dave', { kind: 6, tags: [['e', 'f'.repeat(64)], ['e', target.id]] });
        await store.putEvents([target, first, again, other, secondTag]);
        expect((await stats(store, target.id)).reposts).toBe(2);
        await store.putEvents([deletion('bob', { ids: [first.id] })]);
        expect((await stats(store, target.id)).reposts).toBe(2);
        await store.putEvents([deletion('bob', { ids: [again.id] })]);
        expect((await stats(store, target.id)).reposts).toBe(1);
        await expectExact(store);
      }),
    );

    it(
      'reactions (NIP-25): the last `e` tag; distinct authors per figure; two likes count once, two emoji count one pubkey and two contents',
      withStore(async (store) => {
        const target = note('alice');
        const other = 'e'.repeat(64);
        await store.putEvents([
          target,
          react('bob', target.id, '+', [['e', other]]),
          react('bob', target.id, '+', [], T + 21),
          react('carol', target.id, ''),
          react('carol', target.id, '🤙', [], T + 22),
          react('carol', target.id, ':soapbox:', [['emoji', 'soapbox', 'https://x/y.png']], T + 23),
          react('dave', target.id, '-'),
          react('erin', target.id, '🤙'),
          react('frank', other, '+', [['e', target.id]]), // last `e` is `other`
        ]);
        expect(await stats(store, target.id)).toEqual({
          replies: 0,
          threadReplies: 0,
          quotes: 0,
          reposts: 0,
          reactions: {
            pubkeys: 4,
            likes: 2,
            dislikes: 1,
            byContent: [
              { content: '🤙', pubkeys: 2 },
              { content: '', pubkeys: 1 },
              { content: '+', pubkeys: 1 },
              { content: '-', pubkeys: 1 },
              { content: ':soapbox:', pubkeys: 1 },
            ],
          },
        });
        expect((await stats(store, other)).reactions.pubkeys).toBe(1);
        await expectExact(store);
      }),
    );

    it(
      'a reaction content over MAX_REACTION_CONTENT_BYTES (its JSON, UTF-8) counts its author but has no byContent entry; at the cap it has one',
      withStore(async (store) => {
        const target = note('alice');
        const atCap = 'x'.repeat(MAX_REACTION_CONTENT_BYTES - 2); // with its quotes, exactly the cap
        await store.putEvents([
          target,
          react('bob', target.id, atCap),
          react('carol', target.id, 'y'.repeat(MAX_REACTION_CONTENT_BYTES - 1)),
          react('carol', target.id, '+', [], T + 25),
          react('dave', target.id, '\u0001'.repeat(50)), // 50 characters, 302 bytes of JSON
        ]);
        expect((await stats(store, target.id)).reactions).toEqual({
          pubkeys: 3,
          likes: 1,
          dislikes: 0,
          byContent: [
            { content: '+', pubkeys: 1 },
            { content: atCap, pubkeys: 1 },
          ],
        });
        await expectExact(store);
      }),
    );

    it(
      'many contents: one author with several (and back to one), a target past 32 distinct contents and past the 50 it answers, deletions among them',
      withStore(async (store) => {
        const target = note('alice');
        const mallory = ['+', '-', '🔥', '', '🤙', '+'].map((content, index) => react('mallory', target.id, content, [], T + 100 + index));
        const crowd = Array.from({ length: 60 }, (_, index) => react(`fan${index}`, target.id, `:e${String(index % 55).padStart(2, '0')}:`, [], T + 200 + index));
        await store.putEvents([target, ...mallory, ...crowd]);
        let figures = await stats(store, target.id);
        expect(figures.reactions).toMatchObject({ pubkeys: 61, likes: 1, dislikes: 1 });
        expect(figures.reactions.byContent).toHaveLength(MAX_REACTION_CONTENTS);
        expect(figures.reactions.byContent.slice(0, 6)).toEqual([
          { content: ':e00:', pubkeys: 2 },
          { content: ':e01:', pubkeys: 2 },
          { content: ':e02:', pubkeys: 2 },
          { content: ':e03:', pubkeys: 2 },
          { content: ':e04:', pubkeys: 2 },
          { content: '', pubkeys: 1 },
        ]);
        await expectExact(store);
        // Mallory takes back all but one `+`: still one like, no dislike; then that one too.
        await store.putEvents([deletion('mallory', { ids: mallory.slice(0, 5).map((event) => event.id) })]);
        figures = await stats(store, target.id);
        expect(figures.reactions).toMatchObject({ pubkeys: 61, likes: 1, dislikes: 0 });
        await expectExact(store);
        await store.putEvents([deletion('mallory', { ids: [(mallory[5] as NostrEvent).id] }), ...crowd.slice(0, 30).map((event, index) => deletion(`fan${index}`, { ids: [event.id] }))]);
        figures = await stats(store, target.id);
        expect(figures.reactions).toMatchObject({ pubkeys: 30, likes: 0, dislikes: 0 });
        expect(figures.reactions.byContent).toHaveLength(30);
        await expectExact(store);
      }),
    );

    it(
      'a reaction deleted by its author stops counting at once; one "deleted" by a stranger still counts; a duplicate counts once',
      withStore(async (store) => {
        const target = note('alice');
        const bobs = react('bob', target.id, '❤️');
        const carols = react('carol', target.id, '❤️');
        await store.putEvents([target, bobs, carols, carols]);
        await store.putEvents([bobs, carols]);
        expect((await stats(store, target.id)).reactions.byContent).toEqual([{ content: '❤️', pubkeys: 2 }]);
        await store.putEvents([deletion('bob', { ids: [bobs.id] }), deletion('mallory', { ids: [carols.id] })]);
        expect((await stats(store, target.id)).reactions).toEqual({ pubkeys: 1, likes: 0, dislikes: 0, byContent: [{ content: '❤️', pubkeys: 1 }] });
        // Arriving again after its deletion changes nothing.
        await store.putEvents([bobs]);
        expect((await stats(store, target.id)).reactions.pubkeys).toBe(1);
        await expectExact(store);
      }),
    );

    it(
      'a deletion before its reaction, in another batch or the same one, keeps it from ever counting; a reply deleted leaves the list',
      withStore(async (store) => {
        const target = note('alice');
        const early = react('bob', target.id);
        const answer = reply('carol', [['e', target.id, '', 'root']]);
        await store.putEvents([deletion('bob', { ids: [early.id] })]);
        await store.putEvents([early, target, answer]);
        expect((await stats(store, target.id)).reactions.pubkeys).toBe(0);
        const late = react('dave', target.id);
        await store.putEvents([late, deletion('dave', { ids: [late.id] }), deletion('carol', { ids: [answer.id] })]);
        expect(await stats(store, target.id)).toMatchObject({ replies: 0, threadReplies: 0, reactions: { pubkeys: 0 } });
        expect(await replyIds(store, target.id)).toEqual([]);
        await expectExact(store);
      }),
    );

    it(
      'once every relation to a target is gone, its figures are zero and no reply is listed (Redis keeps their tombstones only)',
      withStore(async (store) => {
        const target = note('alice');
        const relating = [
          react('bob', target.id),
          react('bob', target.id, '🤙', [], T + 21),
          repost('bob', target.id),
          reply('bob', [['e', target.id, '', 'root']]),
          signed('bob', { tags: [['q', target.id]], content: 'quoting' }),
        ];
        await store.putEvents([target, ...relating]);
        const targets = async () => {
          const found: string[] = [];
          for await (const batch of store.relations.targets()) found.push(...batch);
          return found;
        };
        expect(await targets()).toEqual([target.id]);
        await store.putEvents([deletion('bob', { ids: relating.map((event) => event.id) })]);
        // A removal leaves a tombstone for good on Redis (lua-scripts.ts RELATE): the target may
        // still be listed, holding nothing else.
        expect([[], [target.id]]).toContainEqual(await targets());
        expect(await stats(store, target.id)).toEqual({ replies: 0, threadReplies: 0, quotes: 0, reposts: 0, reactions: { likes: 0, dislikes: 0, pubkeys: 0, byContent: [] } });
        expect(await store.relations.allReplies(target.id)).toEqual([]);
        await expectExact(store);
      }),
    );

    it(
      'a request to vanish (NIP-62) takes its author out of every figure, and keeps later arrivals of theirs out',
      withStore(async (store) => {
        const target = note('alice');
        const answer = reply('bob', [['e', target.id, '', 'root']]);
        await store.putEvents([target, answer, react('bob', target.id), repost('bob', target.id), react('carol', target.id)]);
        await store.putEvents([vanish('bob', T + 1000)]);
        expect(await stats(store, target.id)).toMatchObject({ replies: 0, threadReplies: 0, reposts: 0, reactions: { pubkeys: 1 } });
        await store.putEvents([react('bob', target.id, '🔥', [], T + 500)]);
        expect((await stats(store, target.id)).reactions.pubkeys).toBe(1);
        expect(await replyIds(store, target.id)).toEqual([]);
        await expectExact(store);
      }),
    );

    it(
      'a reaction or reply before its target counts from the start, and once the target arrives',
      withStore(async (store) => {
        const target = note('alice');
        await store.putEvents([react('bob', target.id), reply('carol', [['e', target.id]])]);
        expect(await stats(store, target.id)).toMatchObject({ replies: 1, reactions: { pubkeys: 1 } });
        await store.putEvents([target]);
        expect(await stats(store, target.id)).toMatchObject({ replies: 1, reactions: { pubkeys: 1 } });
        await expectExact(store);
      }),
    );

    it(
      'an event is never its own reply, and unrelated kinds relate to nothing',
      withStore(async (store) => {
        const plain = note('alice');
        const profileLike = signed('bob', { kind: 0, content: '{}', tags: [['e', plain.id]] });
        const longForm = signed('bob', { kind: 30023, tags: [['d', 'x'], ['e', plain.id]] });
        await store.putEvents([plain, profileLike, longForm]);
        expect(await stats(store, plain.id)).toMatchObject({ replies: 0, threadReplies: 0, quotes: 0, reposts: 0, reactions: { pubkeys: 0 } });
        await expectExact(store);
      }),
    );

    it(
      'replies page oldest first by (created_at, id): pages concatenate to the list, never a repeat or a gap, with many in one second and inserts between pages',
      withStore(async (store) => {
        const target = note('alice');
        const first = await Promise.all(Array.from({ length: 12 }, (_, index) => reply(`r${index}`, [['e', target.id]], T + (index % 3))));
        await store.putEvents([target, ...first]);
        const seen: ReplyPosition[] = [];
        let after: ReplyPosition | null = null;
        let inserted = false;
        for (;;) {
          const page: ReplyPosition[] = await store.relations.replies(target.id, after, 5);
          seen.push(...page);
          if (!inserted) {
            // One before the cursor, one after: only the later one may appear.
            await store.putEvents([reply('late-early', [['e', target.id]], T - 5), reply('late-later', [['e', target.id]], T + 100)]);
            inserted = true;
          }
          if (page.length < 5) break;
          after = page[page.length - 1] as ReplyPosition;
        }
        const ids = seen.map((position) => position.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids).toHaveLength(13);
        expect([...seen].sort(comparePositions)).toEqual(seen);
        await expectExact(store);
      }),
    );

    it(
      'zaps (NIP-57): a valid receipt joins its target and its recipient, per (recipient, signer) group: receipts, msats, distinct senders',
      withStore(async (store) => {
        const target = note('alice');
        const first = zapReceipt({ sender: 'bob', recipient: 'alice', provider: 'zapper', target: target.id, msats: 21_000 });
        const again = zapReceipt({ sender: 'bob', recipient: 'alice', provider: 'zapper', target: target.id, msats: 1_000, at: T + 200 });
        const carols = zapReceipt({ sender: 'carol', recipient: 'alice', provider: 'zapper', target: target.id, msats: 500 });
        const forged = zapReceipt({ sender: 'mallory', recipient: 'alice', provider: 'mallory', target: target.id, msats: 2_100_000_000_000 });
        const profileZap = zapReceipt({ sender: 'dave', recipient: 'alice', provider: 'zapper', msats: 7 });
        // A receipt before its note, and twice.
        await store.putEvents([first, again, first]);
        await store.putEvents([target, carols, forged, profileZap, carols]);
        const group = (provider: string, count: number, msats: number, senders: number): ZapGroup => ({ recipient: pubkeyOf('alice'), provider: pubkeyOf(provider), count, msats: String(msats), senders });
        const [ofNote, ofAlice] = await store.relations.zapGroups([eventZapSubject(target.id), profileZapSubject(pubkeyOf('alice'))]);
        // Every group is kept: which one counts is the provider's answer, read with the figures.
        expect(sortZapGroups(ofNote?.groups ?? [])).toEqual(sortZapGroups([group('zapper', 3, 22_500, 2), group('mallory', 1, 2_100_000_000_000, 1)]));
        expect(sortZapGroups(ofAlice?.groups ?? [])).toEqual(sortZapGroups([group('zapper', 4, 22_507, 3), group('mallory', 1, 2_100_000_000_000, 1)]));
        expect(ofAlice?.receipts).toEqual(new Map([[pubkeyOf('alice'), 5]]));
        expect(await store.relations.zapSenders(eventZapSubject(target.id), [{ recipient: pubkeyOf('alice'), provider: pubkeyOf('zapper') }])).toEqual(
          new Set([pubkeyOf('bob'), pubkeyOf('carol')]),
        );
        // A read asks for the recipient's receipts (pending) or its provider's group, nothing else.
        const subject = eventZapSubject(target.id);
        expect(
          await store.relations.zapTotals([
            { subject, recipient: pubkeyOf('alice') },
            { subject, recipient: pubkeyOf('alice'), provider: pubkeyOf('zapper') },
            { subject, recipient: pubkeyOf('alice'), provider: pubkeyOf('nobody') },
            { subject, recipient: pubkeyOf('bob'), provider: pubkeyOf('zapper') },
          ]),
        ).toEqual([{ receipts: 4 }, { receipts: 4, group: group('zapper', 3, 22_500, 2) }, { receipts: 4 }, { receipts: 0 }]);
        await expectExact(store);
      }),
    );

    it(
      'zaps: one receipt per rule it breaks is never indexed, beside the valid one; amounts with each multiplier (m, u, n, p) are exact',
      withStore(async (store) => {
        const target = note('alice');
        const broken = brokenReceipts({ sender: 'bob', recipient: 'alice', provider: 'zapper', target: target.id });
        // Each breaks the rule it is named after (nostr/zaps.ts reads it so), and only that one.
        for (const [rule, receipt] of Object.entries(broken)) expect(readZapReceipt(receipt), rule).toEqual({ invalid: rule });
        // The encoder writes the shortest amount: 1 m, 1 u, 10 n and 10 p bitcoin.
        const amounts = [100_000_000, 100_000, 1_000, 1].map((msats, index) => zapReceipt({ sender: 'carol', recipient: 'alice', provider: 'zapper', target: target.id, msats, at: T + 300 + index }));
        expect(amounts.map((receipt) => /^lnbc\d+([munp])1/.exec(receipt.tags.find((tag) => tag[0] === 'bolt11')?.[1] ?? '')?.[1])).toEqual(['m', 'u', 'n', 'p']);
        await store.putEvents([target, ...Object.values(broken), ...amounts]);
        const [held] = await store.relations.zapGroups([eventZapSubject(target.id)]);
        expect(held?.groups).toEqual([{ recipient: pubkeyOf('alice'), provider: pubkeyOf('zapper'), count: 4, msats: '100101001', senders: 1 }]);
        await expectExact(store);
      }),
    );

    it(
      'zaps: millisatoshi sums stay exact past 2^53, whatever the order of additions and removals',
      withStore(async (store) => {
        const target = note('alice');
        const huge = Number.MAX_SAFE_INTEGER;
        const receipts = [huge, 1, huge, 3].map((msats, index) => zapReceipt({ sender: `s${index}`, recipient: 'alice', provider: 'whale', target: target.id, msats, at: T + 400 + index }));
        await store.putEvents(receipts);
        const sumOf = async () => (await store.relations.zapGroups([eventZapSubject(target.id)]))[0]?.groups[0]?.msats;
        expect(await sumOf()).toBe((2n * BigInt(huge) + 4n).toString());
        await store.putEvents([deletion('whale', { ids: [receipts[0], receipts[2], receipts[1]].map((receipt) => (receipt as NostrEvent).id) })]);
        expect(await sumOf()).toBe('3');
        await store.putEvents([deletion('whale', { ids: [(receipts[3] as NostrEvent).id] })]);
        expect(await store.relations.zapGroups([eventZapSubject(target.id)])).toEqual([{ groups: [], receipts: new Map() }]);
        await expectExact(store);
      }),
    );

    it(
      'zaps: a receipt that fails a check is not indexed; one deleted by its signer stops counting, one "deleted" by a stranger or its sender does not; vanish takes the signer\'s',
      withStore(async (store) => {
        const target = note('alice');
        const valid = zapReceipt({ sender: 'bob', recipient: 'alice', provider: 'zapper', target: target.id, msats: 1_000 });
        const kept = zapReceipt({ sender: 'carol', recipient: 'alice', provider: 'zapper', target: target.id, msats: 2_000 });
        const byDave = zapReceipt({ sender: 'carol', recipient: 'alice', provider: 'dave', target: target.id, msats: 4_000 });
        const broken = signed('zapper', { kind: 9735, tags: valid.tags.map((tag) => (tag[0] === 'description' ? ['description', '{}'] : tag)), content: '' });
        await store.putEvents([target, valid, kept, byDave, broken]);
        const groupsOf = async () => sortZapGroups([...((await store.relations.zapGroups([eventZapSubject(target.id)]))[0]?.groups ?? [])]);
        expect((await groupsOf()).map((group) => group.count)).toHaveLength(2);
        await store.putEvents([deletion('zapper', { ids: [valid.id] }), deletion('mallory', { ids: [kept.id] }), deletion('carol', { ids: [kept.id] })]);
        await store.putEvents([vanish('dave', T + 1000)]);
        expect(await groupsOf()).toEqual([{ recipient: pubkeyOf('alice'), provider: pubkeyOf('zapper'), count: 1, msats: '2000', senders: 1 }]);
        await store.putEvents([deletion('zapper', { ids: [kept.id] })]);
        expect(await groupsOf()).toEqual([]);
        // What is left of the subjects is the receipts' tombstones (lua-scripts.ts ZAP): no group, no count.
        const subjects: string[] = [];
        for await (const batch of store.relations.zapSubjects()) subjects.push(...batch);
        const profileSubject = (await store.relations.zapGroups([profileZapSubject(pubkeyOf('alice'))]))[0];
        expect(profileSubject?.groups ?? []).toEqual([]);
        expect(subjects.length).toBeLessThanOrEqual(2);
        await expectExact(store);
      }),
    );

    it(
      'follows (NIP-02): a list follows each valid `p` once (duplicates, capitals, junk skipped; its own author too); followers in pubkey order, paged',
      withStore(async (store) => {
        const [bob, carol, dave] = ['bob', 'carol', 'dave'].map(pubkeyOf) as [string, string, string];
        const list = signed('alice', {
          kind: 3,
          created_at: T,
          tags: [['p', bob], ['p', carol.toUpperCase()], ['p', bob], ['p', 'not a pubkey'], ['p', `${dave}00`], ['e', dave], ['p', pubkeyOf('alice')], ['p']],
          content: '',
        });
        const others = ['erin', 'frank', 'grace', 'heidi'].map((name) => signed(name, { kind: 3, created_at: T, tags: [['p', bob]], content: '' }));
        await store.putEvents([list, ...others, list]);
        expect(await store.relations.followCounts([pubkeyOf('alice'), bob, carol, dave, pubkeyOf('nobody')])).toEqual([
          { followers: 1, following: 3 },
          { followers: 5, following: 0 },
          { followers: 1, following: 0 },
          { followers: 0, following: 0 },
          { followers: 0, following: 0 },
        ]);
        const all = ['alice', 'erin', 'frank', 'grace', 'heidi'].map(pubkeyOf).sort();
        expect(await store.relations.followers(bob, null, 100)).toEqual(all);
        const first = await store.relations.followers(bob, null, 2);
        const second = await store.relations.followers(bob, first[1] as string, 2);
        const third = await store.relations.followers(bob, second[1] as string, 2);
        expect([...first, ...second, ...third]).toEqual(all);
        expect(third).toHaveLength(1);
        await expectExact(store);
      }),
    );

    it(
      'follows: a newer list replaces by the difference, an older one arriving later changes nothing; a deleted list (by id or address) and a request to vanish take its follows away',
      withStore(async (store) => {
        const [bob, carol, dave] = ['bob', 'carol', 'dave'].map(pubkeyOf) as [string, string, string];
        const v1 = signed('alice', { kind: 3, created_at: T, tags: [['p', bob], ['p', carol]], content: '' });
        const v2 = signed('alice', { kind: 3, created_at: T + 10, tags: [['p', carol], ['p', dave]], content: '' });
        await store.putEvents([v1]);
        await store.putEvents([v2, v1]);
        expect(await store.relations.followCounts([pubkeyOf('alice'), bob, carol, dave])).toEqual([
          { followers: 0, following: 2 },
          { followers: 0, following: 0 },
          { followers: 1, following: 0 },
          { followers: 1, following: 0 },
        ]);
        await expectExact(store);
        await store.putEvents([deletion('alice', { addresses: [`3:${pubkeyOf('alice')}:`], at: T + 20 })]);
        expect(await store.relations.followCounts([pubkeyOf('alice'), carol])).toEqual([{ followers: 0, following: 0 }, { followers: 0, following: 0 }]);
        const erins = signed('erin', { kind: 3, created_at: T, tags: [['p', carol]], content: '' });
        const franks = signed('frank', { kind: 3, created_at: T, tags: [['p', carol]], content: '' });
        await store.putEvents([erins, franks, deletion('mallory', { ids: [franks.id] })]);
        expect((await store.relations.followCounts([carol]))[0]?.followers).toBe(2);
        await store.putEvents([deletion('erin', { ids: [erins.id] }), vanish('frank', T + 100)]);
        expect((await store.relations.followCounts([carol]))[0]).toEqual({ followers: 0, following: 0 });
        expect(await store.relations.followers(carol, null, 10)).toEqual([]);
        const subjects: string[] = [];
        for await (const batch of store.relations.followSubjects()) subjects.push(...batch);
        expect(subjects).toEqual([]);
        await expectExact(store);
      }),
    );

    it(
      "notes: an author's events per kind, newest first then by id across kinds, paged with ties; a duplicate once, another author's never",
      withStore(async (store) => {
        const alice = pubkeyOf('alice');
        // Five kind 1 at one created_at (ties by id), two older, a kind 30023 and a reaction.
        const tied = [1, 2, 3, 4, 5].map((index) => note('alice', `tied ${index}`, T + 50));
        const older = [note('alice', 'older', T + 10), note('alice', 'oldest', T)];
        const article = signed('alice', { kind: 30023, created_at: T + 20, tags: [['d', 'post']], content: 'long form' });
        const reaction = react('alice', (older[0] as NostrEvent).id, '+', [], T + 60);
        await store.putEvents([...older, article, ...tied, reaction, note('bob', 'not hers', T + 70), tied[0] as NostrEvent]);
        const order = (events: NostrEvent[]) => [...events].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1)).map((event) => event.id);
        const ids = async (kinds: number[], after: ReplyPosition | null, first: number) => (await store.relations.notes(alice, kinds, after, first)).map((position) => position.id);
        expect(await ids([1], null, 100)).toEqual(order([...tied, ...older]));
        expect(await ids([1, 7, 30023], null, 100)).toEqual(order([...tied, ...older, article, reaction]));
        expect(await ids([0], null, 100)).toEqual([]);
        // Paged two at a time through the ties: each exactly once.
        const paged: string[] = [];
        let after: ReplyPosition | null = null;
        for (;;) {
          const page = await store.relations.notes(alice, [1, 30023], after, 2);
          paged.push(...page.map((position) => position.id));
          if (page.length < 2) break;
          after = page[1] as ReplyPosition;
        }
        expect(paged).toEqual(order([...tied, ...older, article]));
        // Sizes are kept with the places: a page reserves what it will read.
        const [newest] = await store.relations.notes(alice, [7], null, 1);
        expect(newest).toEqual({ createdAt: T + 60, id: reaction.id, bytes: Buffer.byteLength(JSON.stringify(reaction)) });
        await expectExact(store);
      }),
    );

    it(
      'notes: a deleted event, a replaced version and what a request to vanish covers leave the list at once; an older version arriving later never enters',
      withStore(async (store) => {
        const alice = pubkeyOf('alice');
        const [kept, deleted] = [note('alice', 'kept', T), note('alice', 'deleted', T + 1)];
        const v1 = signed('alice', { kind: 30023, created_at: T + 10, tags: [['d', 'post']], content: 'v1' });
        const v2 = signed('alice', { kind: 30023, created_at: T + 20, tags: [['d', 'post']], content: 'v2' });
        await store.putEvents([kept, deleted, v1]);
        await store.putEvents([v2, v1, deletion('alice', { ids: [deleted.id], at: T + 30 }), deletion('mallory', { ids: [kept.id] })]);
        const ids = async (kinds: number[]) => (await store.relations.notes(alice, kinds, null, 100)).map((position) => position.id);
        expect(await ids([1])).toEqual([kept.id]);
        expect(await ids([30023])).toEqual([v2.id]);
        await expectExact(store);
        await store.putEvents([vanish('alice', T + 15)]);
        expect(await ids([1])).toEqual([]);
        expect(await ids([30023])).toEqual([v2.id]);
        await expectExact(store);
      }),
    );

    it(
      'search: every query word starts a word of name, display_name or nip05 (NFKC, lower case; accents, CJK, emoji, nip05 words), ranked by followers then pubkey',
      withStore(async (store) => {
        await store.putEvents([
          profile('alice', { name: 'Jack', display_name: 'Jack Dorsey', nip05: 'jack@cash.app' }),
          profile('bob', { name: 'jackie', display_name: 'José Ｊａｃｋｓｏｎ' }),
          profile('carol', { name: '⚡️Satoshi⚡️', nip05: '_@satoshi.example' }),
          profile('dave', { name: '中本聪', display_name: 'नमस्ते दुनिया' }),
          // Not the fields searched: about, website, lud16; a name of the wrong type.
          profile('erin', { name: 42, about: 'jack of all trades', website: 'https://jack.example', lud16: 'jack@wallet.example' }),
          // "José" decomposed (e + combining acute): NFKC composes it as bob's.
          profile('frank', { name: 'Jose\u0301 Sanchez' }),
        ]);
        // Followers: bob 3, alice 2, carol 1, frank 0.
        await store.putEvents([followList('grace', ['bob', 'alice', 'carol']), followList('heidi', ['bob', 'alice']), followList('ivan', ['bob'])]);
        expect(names(await searchBoth(store, 'jack'))).toEqual(['bob', 'alice']);
        expect(names(await searchBoth(store, 'JACK'))).toEqual(['bob', 'alice']);
        expect(names(await searchBoth(store, 'ｊａｃｋ'))).toEqual(['bob', 'alice']);
        expect(names(await searchBoth(store, 'jacks'))).toEqual(['bob']);
        expect(names(await searchBoth(store, 'jack dor'))).toEqual(['alice']);
        expect(names(await searchBoth(store, 'dor jack'))).toEqual(['alice']);
        expect(names(await searchBoth(store, 'cash'))).toEqual(['alice']);
        expect(names(await searchBoth(store, 'jack@cash.app'))).toEqual(['alice']);
        expect(names(await searchBoth(store, 'app'))).toEqual(['alice']);
        expect(names(await searchBoth(store, 'josé'))).toEqual(['bob', 'frank']);
        expect(names(await searchBoth(store, 'jose\u0301'))).toEqual(['bob', 'frank']);
        // NFKC does not take accents off: "jose" is not a prefix of "josé"… but "jos" is.
        expect(names(await searchBoth(store, 'jose'))).toEqual([]);
        expect(names(await searchBoth(store, 'jos'))).toEqual(['bob', 'frank']);
        expect(names(await searchBoth(store, 'sat'))).toEqual(['carol']);
        expect(names(await searchBoth(store, '⚡sat'))).toEqual(['carol']);
        expect(names(await searchBoth(store, '中本'))).toEqual(['dave']);
        expect(names(await searchBoth(store, '本聪'))).toEqual([]);
        expect(names(await searchBoth(store, 'नमस्ते'))).toEqual(['dave']);
        expect(names(await searchBoth(store, 'trades'))).toEqual([]);
        expect(names(await searchBoth(store, 'wallet'))).toEqual([]);
        expect(names(await searchBoth(store, 'jack zzz'))).toEqual([]);
        expect(names(await searchBoth(store, 'j', 1))).toEqual(['bob']);
        expect(names(await searchBoth(store, 'j', 3))).toEqual(['bob', 'alice', 'frank']);
        // Ties (no followers) by pubkey.
        const tied = [pubkeyOf('dave'), pubkeyOf('frank')].sort();
        await store.putEvents([profile('dave', { name: 'Sanchez Dave' }, T + 1)]);
        expect(await searchBoth(store, 'sanchez')).toEqual(tied);
        await expectExact(store);
      }),
    );

    it(
      'search: a replaced profile answers by its new words at once, a deleted or vanished one not at all, an older one arriving later changes nothing; followers move the ranks',
      withStore(async (store) => {
        const v1 = profile('alice', { name: 'Alice Old' }, T);
        const v2 = profile('alice', { name: 'Alice New' }, T + 10);
        await store.putEvents([v1, profile('bob', { name: 'Alice Fan' })]);
        expect(names(await searchBoth(store, 'alice'))).toEqual(['alice', 'bob'].sort((a, b) => (pubkeyOf(a) < pubkeyOf(b) ? -1 : 1)));
        await store.putEvents([v2, v1]);
        expect(names(await searchBoth(store, 'old'))).toEqual([]);
        expect(names(await searchBoth(store, 'new'))).toEqual(['alice']);
        await expectExact(store);
        // bob gains a follower, then loses it to a replaced list; alice gains two.
        await store.putEvents([followList('carol', ['bob'], T + 100)]);
        expect(names(await searchBoth(store, 'alice'))).toEqual(['bob', 'alice']);
        await store.putEvents([followList('carol', ['alice'], T + 101), followList('dave', ['alice', 'bob'], T + 100)]);
        expect(names(await searchBoth(store, 'alice'))).toEqual(['alice', 'bob']);
        await expectExact(store);
        await store.putEvents([deletion('alice', { ids: [v2.id], at: T + 20 })]);
        expect(names(await searchBoth(store, 'alice'))).toEqual(['bob']);
        expect(names(await searchBoth(store, 'new'))).toEqual([]);
        await expectExact(store);
        await store.putEvents([profile('alice', { name: 'Alice Back' }, T + 30), vanish('bob', T + 40)]);
        expect(names(await searchBoth(store, 'alice'))).toEqual(['alice']);
        await expectExact(store);
      }),
    );

    it(
      'search: a profile dated past 10^14 (any safe integer verifies) is indexed, replaced and found like any other (review: Lua wrote 1e+14)',
      withStore(async (store) => {
        const far = profile('alice', { name: 'Alibaba Far' }, 100_000_000_000_000);
        await store.putEvents([far, profile('bob', { name: 'Alice Near' })]);
        expect(names(await searchBoth(store, 'ali'))).toEqual(['alice', 'bob'].sort((a, b) => (pubkeyOf(a) < pubkeyOf(b) ? -1 : 1)));
        await store.putEvents([profile('alice', { name: 'Alibaba Farther' }, 2 ** 53 - 1)]);
        expect(names(await searchBoth(store, 'farther'))).toEqual(['alice']);
        expect(names(await searchBoth(store, 'far'))).toEqual(['alice']);
        await expectExact(store);
      }),
    );

    it(
      'search: a walk of the rank order stops after its limit with what it found, in order (a short page, never a wrong one)',
      withStore(async (store) => {
        await store.putEvents([profile('alice', { name: 'Max Moon' }), profile('bob', { name: 'Max Moor' }), profile('carol', { name: 'Max Moore' }), profile('dave', { name: 'Max Moonlight' })]);
        // Ranks: carol 3, alice 2, dave 1, bob 0.
        await store.putEvents([followList('erin', ['carol', 'alice', 'dave']), followList('frank', ['carol', 'alice']), followList('grace', ['carol'])]);
        const walk = (query: string, rankWalk: number, first = 20) => store.relations.searchProfiles(queryWords(query), first, { lexRange: 0, rankWalk });
        expect(names(await walk('max', 100))).toEqual(['carol', 'alice', 'dave', 'bob']);
        expect(names(await walk('max', 2))).toEqual(['carol', 'alice']);
        // Only dave has a "moonl" word, but every profile is in the rank orders of "max" and "moo":
        // the walk stops before it reaches dave, third.
        expect(names(await walk('max moonl', 2))).toEqual([]);
        expect(names(await walk('max moonl', 3))).toEqual(['dave']);
        expect(names(await walk('moonl', 2))).toEqual([]);
        expect(names(await walk('max', 100, 3))).toEqual(['carol', 'alice', 'dave']);
      }),
    );

    it(
      'many followers (1,600: on Redis past 384, 16 buckets; deeper moves run in redis-event-store.test.ts at a bucket size of 96): counts, pages in pubkey order across them, removals, all exact',
      withStore(async (store) => {
        const star = pubkeyOf('star');
        const fans = Array.from({ length: 1600 }, (_, index) => `fan ${index}`);
        const lists = fans.map((fan) => followList(fan, ['star']));
        const followersOf = async (first: number) => {
          const all: string[] = [];
          for (let after: string | null = null; ; ) {
            const page = await store.relations.followers(star, after, first);
            all.push(...page);
            if (page.length < first) return all;
            after = page.at(-1) as string;
          }
        };
        const count = async () => (await store.relations.followCounts([star]))[0]?.followers;
        await store.putEvents(lists.slice(0, 100));
        expect(await count()).toBe(100);
        await store.putEvents(lists.slice(100, 200));
        expect(await count()).toBe(200);
        const some = fans.slice(0, 200).map(pubkeyOf).sort();
        expect(await followersOf(7)).toEqual(some);
        for (let start = 200; start < lists.length; start += 400) await store.putEvents(lists.slice(start, start + 400));
        expect(await count()).toBe(1600);
        const all = fans.map(pubkeyOf).sort();
        expect(await followersOf(100)).toEqual(all);
        expect(await followersOf(33)).toEqual(all);
        // After a cursor in the middle of a bucket, and after one past the last follower.
        expect(await store.relations.followers(star, all[777] as string, 5)).toEqual(all.slice(778, 783));
        expect(await store.relations.followers(star, 'f'.repeat(64), 5)).toEqual([]);
        // Fans 0–99 replace their lists (no star any more), 100–149 delete theirs.
        await store.putEvents(fans.slice(0, 100).map((fan) => followList(fan, ['alice'], T + 200)));
        await store.putEvents(fans.slice(100, 150).map((fan, index) => deletion(fan, { ids: [(lists[100 + index] as NostrEvent).id], at: T + 300 })));
        expect(await count()).toBe(1450);
        expect(await followersOf(100)).toEqual(fans.slice(150).map(pubkeyOf).sort());
        await expectExact(store);
      }),
      120_000,
    );

    it(
      'rebuild empties the index and relates every servable event again to the same figures',
      withStore(async (store) => {
        const target = note('alice');
        await store.putEvents([target, react('bob', target.id), reply('carol', [['e', target.id]]), repost('dave', target.id)]);
        const before = await stats(store, target.id);
        await store.relations.clear();
        expect((await checkRelations(store)).differences).toHaveLength(1);
        expect(await rebuildRelations(store)).toBe(4);
        expect(await stats(store, target.id)).toEqual(before);
        await expectExact(store);
      }),
    );

    it(
      'maintained == recounted for generated worlds in any order of arrival and batching (property)',
      async () => {
        const runs = Number(process.env.FUZZ_RUNS ?? 12);
        const target = note('alice', 'the target');
        const authors = ['bob', 'carol', 'dave'];
        const world: NostrEvent[] = [target];
        for (const author of authors) {
          world.push(react(author, target.id, '+'), react(author, target.id, '🤙', [], T + 21), repost(author, target.id));
          world.push(reply(author, [['e', target.id, '', 'root']], T + 40), signed(author, { tags: [['q', target.id]], content: 'q', created_at: T + 41 }));
        }
        // Zaps: two of one sender and one of another through the provider, one signed by dave (who
        // vanishes), one of alice's profile; the provider deletes one, a stranger "deletes" another.
        const zaps = [
          zapReceipt({ sender: 'bob', recipient: 'alice', provider: 'zapper', target: target.id, msats: 1000 }),
          zapReceipt({ sender: 'bob', recipient: 'alice', provider: 'zapper', target: target.id, msats: 2000, at: T + 50 }),
          zapReceipt({ sender: 'carol', recipient: 'alice', provider: 'zapper', target: target.id, msats: 3000 }),
          zapReceipt({ sender: 'carol', recipient: 'alice', provider: 'dave', target: target.id, msats: 4000 }),
          zapReceipt({ sender: 'erin', recipient: 'alice', provider: 'zapper', msats: 5000 }),
        ];
        world.push(...zaps);
        // Follows: two versions of one list, a list of another author, one naming its author.
        const follows = [
          signed('bob', { kind: 3, created_at: T + 60, tags: [['p', pubkeyOf('alice')], ['p', pubkeyOf('carol')]], content: '' }),
          signed('bob', { kind: 3, created_at: T + 61, tags: [['p', pubkeyOf('carol')], ['p', pubkeyOf('dave')], ['p', pubkeyOf('bob')]], content: '' }),
          signed('dave', { kind: 3, created_at: T + 60, tags: [['p', pubkeyOf('alice')]], content: '' }),
        ];
        world.push(...follows);
        // Profiles: two versions of alice's, one each of bob's and dave's (dave vanishes).
        world.push(profile('alice', { name: 'Alice A' }, T + 1), profile('alice', { name: 'Alice B', nip05: 'a@b.c' }, T + 2), profile('bob', { name: 'Bob' }), profile('dave', { display_name: 'Dave' }));
        const zapDeletions = [deletion('zapper', { ids: [(zaps[0] as NostrEvent).id] }), deletion('mallory', { ids: [(zaps[2] as NostrEvent).id] })];
        const deletions = authors.flatMap((author) => world.filter((event) => event.pubkey === pubkeyOf(author)).map((event) => deletion(author, { ids: [event.id] })));
        const strangers = world.slice(1, 4).map((event) => deletion('mallory', { ids: [event.id] }));
        const pool = [...world, ...deletions, ...strangers, ...zapDeletions, vanish('dave', T + 30)];
        await fc.assert(
          fc.asyncProperty(fc.subarray(pool), fc.integer({ min: 1, max: 4 }), fc.integer(), async (chosen, batchSize, seed) => {
            const order = shuffled([...chosen, ...chosen.slice(0, 2)], seed);
            const subject = await open();
            try {
              for (let start = 0; start < order.length; start += batchSize) await subject.store.putEvents(order.slice(start, start + batchSize));
              await expectExact(subject.store);
            } finally {
              await subject.cleanup();
            }
          }),
          { numRuns: runs, seed: Number(process.env.FUZZ_SEED ?? 26) },
        );
      },
      120_000,
    );
  });
}
