import { LookupError } from '../errors.js';
import type { NostrEvent } from '../nostr/event.js';
import { FOLLOW_LIST_KIND, followsOf } from '../nostr/follows.js';
import { isMuted, MUTE_LIST_KIND, type Mutes, mutesOf } from '../nostr/mutes.js';
import { DEFAULT_FEED_KINDS, NOTE_KIND, threadPositionOf, type ThreadPosition } from '../nostr/relationships.js';
import { compareNotes, type ReplyPosition } from '../store/relation-index.js';
import { isDeleted } from '../store/tombstones.js';
import { builder } from './builder.js';
import { latestLists } from './latest-lists.js';
import { readerFilter } from './trust.js';
import type { GraphQLContext } from './context.js';
import { type EventConnection, EventConnectionRef, type EventEdge, loadPositions } from './event-connection.js';
import type { NotePageKey } from './loaders.js';
import { noteKindsOf } from './notes.js';
import { DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor, FEED_SCAN_FACTOR, MAX_PAGE_SIZE, pageSizeOf } from './paging.js';
import { type FieldsOfPubkey, ProfileRef, PubkeyRef } from './profile.js';

/**
 * The home feed and the mutes of a pubkey V (DESIGN "Screens": feed of V, mutes of V). The feed is
 * read at request time by merging the timelines of the authors V's latest servable follow list
 * names, from the author index the store keeps for `notes` (store/relation-index.ts), newest first,
 * then by id: every followed author's list is read after the page's cursor, a few positions at a
 * time (TimelineMerge), and merged, so that a page costs a read of each followed author's list
 * plus what the page hands back, whatever the authors wrote before. The events of the merged
 * positions are then read and filtered (kind 1 replies unless asked for, V's public mutes), and the
 * merge goes on, up to FEED_SCAN_FACTOR × `first` positions, until the page is full.
 *
 * A page is thus a range read per followed author and kind asked, whatever the page's size: the
 * cost model charges MAX_FOLLOWS of them per kind, and scripts/bench/feed.ts measures a page at
 * 1,000 authors against a profile read. With relays, a first page asks them first what the authors
 * wrote lately (FEED: RELAYS and each author's write relays, once per RELATIONS_TTL per author, within
 * the request's deadline, half of RELAY_MAX_KEYS_PER_REQUEST authors a request: the others on later reads);
 * later pages read the index only.
 */

/** The fewest positions read per followed author on a page's first read: the heads, and one behind to save a round trip. */
const MIN_FIRST_READ = 2;


interface Timeline {
  author: string;
  /** Positions read and not yet merged, from `at` on. */
  buffer: ReplyPosition[];
  at: number;
  /** The index has nothing after the buffer. */
  done: boolean;
}

/**
 * A k-way merge of authors' timelines (each newest first, then by id: compareNotes) after a
 * position: `next(count)` hands back the next `count` positions of all of them in that order (fewer
 * only at the end). Each author's list is read lazily, in batched store calls: first a few
 * positions of every author (enough for the page if the authors wrote evenly), then more of an
 * author only when the merge has taken all it read of it (as much as the page may still need), so
 * that a page reads O(authors + page) positions in at most one round trip per author it takes from.
 */
export class TimelineMerge {
  private readonly heap: Timeline[] = [];
  private started = false;

  constructor(
    private readonly authors: readonly string[],
    private readonly kinds: readonly number[],
    private readonly after: ReplyPosition | null,
    private readonly read: (pages: readonly NotePageKey[]) => Promise<ReplyPosition[][]>,
    /** Positions the caller expects to take: the first read of each author is sized by it. */
    private readonly expected: number,
  ) {}

  /** Whether positions remain after those handed back (known once `next` has run). */
  get hasMore(): boolean {
    return this.heap.length > 0;
  }

  async next(count: number): Promise<ReplyPosition[]> {
    if (!this.started) await this.start();
    const taken: ReplyPosition[] = [];
    while (taken.length < count && this.heap.length > 0) {
      const top = this.heap[0] as Timeline;
      taken.push(top.buffer[top.at++] as ReplyPosition);
      if (top.at === top.buffer.length) {
        // Its next position may be the merge's next: read it before going on.
        if (!top.done) await this.readMore([top], count - taken.length + 1);
        if (top.at === top.buffer.length) {
          this.removeTop();
          continue;
        }
      }
      this.siftDown(0);
    }
    return taken;
  }

  private async start(): Promise<void> {
    this.started = true;
    const timelines = this.authors.map((author) => ({ author, buffer: [], at: 0, done: false }));
    // Enough of each that an even spread of the page across the authors needs no second read.
    const first = Math.min(this.expected + 1, Math.max(MIN_FIRST_READ, Math.ceil((2 * this.expected) / Math.max(1, timelines.length))));
    await this.readMore(timelines, first);
    for (const timeline of timelines) if (timeline.buffer.length > 0) this.heap.push(timeline);
    for (let index = (this.heap.length >> 1) - 1; index >= 0; index--) this.siftDown(index);
  }

  /** Reads up to `first` more positions of each timeline (after what it holds), in one batch. */
  private async readMore(timelines: Timeline[], first: number): Promise<void> {
    const pages = timelines.map(({ author, buffer }) => ({ author, kinds: this.kinds, after: buffer.at(-1) ?? this.after, first }));
    const found = await this.read(pages);
    timelines.forEach((timeline, index) => {
      const positions = found[index] ?? [];
      timeline.buffer = positions;
      timeline.at = 0;
      timeline.done = positions.length < first;
    });
  }

  private removeTop(): void {
    const last = this.heap.pop() as Timeline;
    if (this.heap.length === 0) return;
    this.heap[0] = last;
    this.siftDown(0);
  }

  private head(index: number): ReplyPosition {
    const timeline = this.heap[index] as Timeline;
    return timeline.buffer[timeline.at] as ReplyPosition;
  }

  private siftDown(start: number): void {
    const { heap } = this;
    let index = start;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let least = index;
      if (left < heap.length && compareNotes(this.head(left), this.head(least)) < 0) least = left;
      if (right < heap.length && compareNotes(this.head(right), this.head(least)) < 0) least = right;
      if (least === index) return;
      [heap[index], heap[least]] = [heap[least] as Timeline, heap[index] as Timeline];
      index = least;
    }
  }
}

/** Whether a feed shows this event: not a kind 1 reply (NIP-10 parent) unless `replies`, not muted. */
function shown(event: NostrEvent, mutes: Mutes, replies: boolean): boolean {
  let position: ThreadPosition | undefined;
  const threadOf = (of: NostrEvent) => (of === event ? (position ??= threadPositionOf(event)) : threadPositionOf(of));
  if (!replies && event.kind === NOTE_KIND && threadOf(event).parent !== undefined) return false;
  return !isMuted(event, mutes, threadOf);
}

interface FeedArguments {
  trusted?: boolean | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
  kinds?: readonly number[] | null | undefined;
  replies?: boolean | null | undefined;
}

/** A page of V's feed (see the module comment and the field's description). */
export async function feedPage(pubkey: string, args: FeedArguments, context: GraphQLContext): Promise<EventConnection> {
  const size = pageSizeOf(args.first);
  const kinds = noteKindsOf(args.kinds);
  const from = args.after === null || args.after === undefined ? null : decodeCursor(args.after, 'feed');
  const replies = args.replies === true;
  const { loaders, budget } = context;
  budget.charge(1);
  const [followList, muteList] = await latestLists(pubkey, [FOLLOW_LIST_KIND, MUTE_LIST_KIND], context);
  const mutes = mutesOf(muteList);
  // TRUST_SEEDS, where the operator set them: a read without a viewer reads as the seeds'
  // (`trusted`, the pubkey's own web, holds every author it follows: nothing to filter).
  const reader = args.trusted === true ? undefined : await readerFilter(context, undefined);
  // A muted author is not read at all.
  const authors = followList ? followsOf(followList).filter((author) => !mutes.pubkeys.has(author)) : [];
  // With relays, the first page asks what they wrote lately (fill/relation-fill.ts FEED) first.
  if (from === null && authors.length > 0) await loaders.fillFeed(authors, kinds);
  const merge = new TimelineMerge(authors, kinds, from, (pages) => loaders.timelines(pages), size);
  const limit = FEED_SCAN_FACTOR * size;
  const edges: EventEdge[] = [];
  let examined = 0;
  let last: ReplyPosition | undefined;
  while (edges.length < size && examined < limit) {
    // As many as the page still needs (never more: what is not shown on this page is examined again on the next).
    const positions = await merge.next(Math.min(size - edges.length, limit - examined));
    if (positions.length === 0) break;
    const found = await loadPositions(positions, context);
    // Past the read bound (as eventPage): never a page cut short.
    if (found.length < positions.length) throw new LookupError('response_too_large');
    positions.forEach((position, index) => {
      const held = found[index];
      if (held && !isDeleted(held) && shown(held.event, mutes, replies) && (!reader || reader.shows(held.event))) edges.push({ cursor: encodeCursor(position, 'feed'), node: held });
    });
    examined += positions.length;
    last = positions.at(-1);
  }
  budget.charge(edges.length);
  return { edges, pageInfo: { hasNextPage: merge.hasMore, endCursor: last ? encodeCursor(last, 'feed') : null } };
}

const MuteListRef = builder.objectRef<Mutes>('MuteList').implement({
  description:
    "The public entries of a pubkey's latest servable mute list (NIP-51 kind 10000), each once, in the order the list first names them; empty lists when it has none. Private (encrypted) entries cannot be read and are not here.",
  fields: (t) => ({
    pubkeys: t.stringList({ description: '`p` tags: authors hidden (64 lowercase hex).', resolve: (mutes) => [...mutes.pubkeys] }),
    events: t.stringList({ description: '`e` tags: events hidden, with every event whose root or parent they are (64 lowercase hex).', resolve: (mutes) => [...mutes.events] }),
    hashtags: t.stringList({ description: '`t` tags, lower case: events with that hashtag are hidden.', resolve: (mutes) => [...mutes.hashtags] }),
    words: t.stringList({ description: '`word` tags, NFKC and lower case: events whose content holds one (NFKC, lower case) are hidden.', resolve: (mutes) => [...mutes.words] }),
  }),
});

/** On Profile and on Pubkey. */
const feedFields: FieldsOfPubkey = (t) => ({
  muted: t.field({
    type: MuteListRef,
    description: 'What this pubkey muted in public (NIP-51 kind 10000, its latest servable list): its own feed applies it.',
    resolve: async (profile, _args, context) => mutesOf((await latestLists(profile.pubkey, [MUTE_LIST_KIND], context))[0]),
  }),
  feed: t.field({
    type: EventConnectionRef,
    description: `The home feed of this pubkey: events of \`kinds\` (default 1, 6, 16; validated as \`notes\`' kinds, else invalid_argument) whose author is in its latest servable follow list (NIP-02), newest first, then by id; every event once across pages, an author dropped from the list gone from the next page. Kind 1 replies (a parent by NIP-10) only with \`replies: true\`. The pubkey's own public mutes (\`muted\`) always apply. A page examines at most ${FEED_SCAN_FACTOR} × \`first\` events: when more than that in a row are filtered out, the page holds fewer than \`first\` (even none) with \`hasNextPage\` true and \`endCursor\` after the events it passed over. \`hasNextPage\` says that events of the followed authors follow, not that one of them will be shown. \`trusted\`: the feed's authors are those the pubkey follows, all in its own web of trust: it changes nothing; without it, TRUST_SEEDS' web applies where the operator set them. \`first\`: 1 to ${MAX_PAGE_SIZE} (else invalid_argument); \`after\`: a cursor from an earlier page of a feed (else invalid_cursor). No follow list: an empty feed.`,
    args: {
      first: t.arg.int({ defaultValue: DEFAULT_PAGE_SIZE }),
      after: t.arg.string(),
      kinds: t.arg.intList({ defaultValue: [...DEFAULT_FEED_KINDS] }),
      replies: t.arg.boolean({ defaultValue: false }),
      trusted: t.arg.boolean({ defaultValue: false }),
    },
    resolve: (profile, args, context) => feedPage(profile.pubkey, args, context),
  }),
});
builder.objectFields(ProfileRef, feedFields);
builder.objectFields(PubkeyRef, feedFields);
