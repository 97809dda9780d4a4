import { isHex64 } from '../nostr/identifiers.js';
import { threadPositionOf } from '../nostr/relationships.js';
import { MAX_TAGS_READ } from '../nostr/work-caps.js';
import type { StoredEvent } from '../store/event-store.js';
import { storedEventId } from '../store/stored-event.js';
import { isDeleted } from '../store/tombstones.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { EventRef } from './event.js';
import { type EventConnection, EventConnectionRef, eventPage, filteredEventPage } from './event-connection.js';
import { readerFilter } from './trust.js';
import { EventStatsRef } from './event-stats.js';
import { loadAvailable } from './loaders.js';
import { DEFAULT_PAGE_SIZE, decodeCursor, FEED_SCAN_FACTOR, MAX_PAGE_SIZE, MAX_TRUSTED_COUNTED, pageSizeOf } from './paging.js';
import { trustedStats } from './trusted-stats.js';

/**
 * The fields of an event that come from other events (DESIGN "Relationships"): where it sits in a
 * thread (`parent`, `root`), its direct replies, and what others say about it (`stats`). Costed
 * before the request runs by query-cost.ts and charged while it runs as the other fields are:
 * `parent`, `root` and `stats` 1 each, `replies` 1 for the page and 1 per event it hands back.
 */
builder.objectFields(EventRef, (t) => ({
  parent: t.field({
    type: EventRef,
    nullable: true,
    description:
      'The event this one replies to (NIP-10 for kind 1, NIP-22 for kind 1111); null when it is not a reply, or when that event cannot be found or was deleted.',
    resolve: (stored, _args, context) => threadEvent(stored, 'parent', context),
  }),
  root: t.field({
    type: EventRef,
    nullable: true,
    description: 'The root of the thread this event replies in (NIP-10, NIP-22); null as for `parent`.',
    resolve: (stored, _args, context) => threadEvent(stored, 'root', context),
  }),
  replies: t.field({
    type: EventConnectionRef,
    description: `Direct replies (kind 1 and kind 1111 events whose parent is this one), oldest first (by created_at, then id). \`first\`: 1 to ${MAX_PAGE_SIZE} (else invalid_argument); \`after\`: a cursor from an earlier page (else invalid_cursor). \`viewer\` (any form \`pubkey(...)\` takes; else TRUST_SEEDS where the operator set them): only replies by authors in the viewer's web of trust, none it muted; a page then examines at most ${FEED_SCAN_FACTOR} × \`first\` replies and may be short (as a feed's).`,
    args: {
      first: t.arg.int({ defaultValue: DEFAULT_PAGE_SIZE }),
      after: t.arg.string(),
      viewer: t.arg.string(),
    },
    resolve: (stored, { first, after, viewer }, context) => repliesPage(stored, first, after, viewer, context),
  }),
  stats: t.field({
    type: EventStatsRef,
    description: `Replies, quotes, reposts, reactions and zaps of this event, counted over the servable events held. \`viewer\` (any form \`pubkey(...)\` takes; else TRUST_SEEDS where the operator set them): counted over the events by authors in the viewer's web of trust, none it muted (a zap: by its sender), exactly: each event that relates to this one is read and judged, ${MAX_TRUSTED_COUNTED} in one request at most (with every other count by trust); an event with more gets the index's figures for everyone, \`trusted: false\`.`,
    args: { viewer: t.arg.string() },
    resolve: async (stored, { viewer }, context) => {
      const { loaders, budget } = context;
      budget.charge(1);
      const reader = await readerFilter(context, viewer);
      if (reader) return trustedStats(stored, reader, context);
      const id = storedEventId(stored);
      return { ...(await loaders.relationStats.load(id)), event: stored, trusted: false };
    },
  }),
}));

/**
 * An event's parent or root, loaded like `event(id:)` (so that, with relays, one the index lacks is
 * asked for, the tag's relay hint and author noted); its bytes count against the read bound.
 */
async function threadEvent(stored: StoredEvent, which: 'parent' | 'root', context: GraphQLContext): Promise<StoredEvent | null> {
  const { loaders, budget, relays } = context;
  budget.charge(1);
  // Read from the tags: charged like relevantPubkeys, once per event per request.
  budget.chargeDerived(stored);
  const id = threadPositionOf(stored.event)[which];
  if (id === undefined) return null;
  if (relays) noteThreadHints(stored, id, context);
  const [held] = await loadAvailable(loaders.events, [id]);
  if (!held || isDeleted(held)) return null;
  budget.settleRead(0, [held]);
  return held;
}

/**
 * The relay hint and author that the `e`/`E` tags naming `id` carry (NIP-10: `["e", id, relay,
 * marker, pubkey]`; NIP-22: `["E", id, relay, pubkey]`), for the relay fill to ask there.
 */
function noteThreadHints(stored: StoredEvent, id: string, { relays }: GraphQLContext): void {
  const { tags } = stored.event;
  for (let index = 0; index < tags.length && index < MAX_TAGS_READ; index++) {
    const tag = tags[index] as string[];
    if ((tag[0] !== 'e' && tag[0] !== 'E') || tag[1]?.toLowerCase() !== id) continue;
    if (typeof tag[2] === 'string' && tag[2] !== '') relays?.request.addHints([tag[2]]);
    const author = tag[0] === 'e' ? tag[4] : tag[3];
    if (typeof author === 'string' && isHex64(author)) relays?.request.addAuthor(id, author.toLowerCase());
  }
}

/** One page of direct replies: `first` + 1 positions read, then the page's events (eventPage); with a reader, filtered (filteredEventPage). */
async function repliesPage(
  stored: StoredEvent,
  first: number | null | undefined,
  after: string | null | undefined,
  viewer: string | null | undefined,
  context: GraphQLContext,
): Promise<EventConnection> {
  const size = pageSizeOf(first);
  const from = after === null || after === undefined ? null : decodeCursor(after);
  const { loaders, budget } = context;
  budget.charge(1);
  const id = storedEventId(stored);
  const reader = await readerFilter(context, viewer);
  if (reader) return filteredEventPage((position, count) => loaders.replyPages.load({ id, after: position, first: count }), from, size, 'replies', (held) => reader.shows(held.event), context);
  const positions = await loaders.replyPages.load({ id, after: from, first: size + 1 });
  return eventPage(positions, size, 'replies', context);
}
