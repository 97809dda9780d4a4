import { LookupError } from '../errors.js';
import { MAX_EVENT_BYTES } from '../nostr/work-caps.js';
import type { Held, StoredEvent } from '../store/event-store.js';
import type { ReplyPosition } from '../store/relation-index.js';
import { isDeleted } from '../store/tombstones.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { EventRef } from './event.js';
import { loadWithinReadBound } from './loaders.js';
import { encodeCursor, FEED_SCAN_FACTOR, type PositionList } from './paging.js';

/**
 * A page of events as a Relay-style connection (DESIGN "Relationships"), built by hand rather than
 * with @pothos/plugin-relay: the plugin's connection fields always take `before` and `last`, and its
 * PageInfo always has `hasPreviousPage` and `startCursor`, none of which these pages have (they are
 * read forwards only, `first` + 1 at a time). Every field here is a property read (no resolver:
 * see withPropertyFieldsInline in index.ts); the page is made by its field (event-relations.ts).
 */
export interface EventConnection {
  edges: EventEdge[];
  pageInfo: PageInfo;
}

export interface EventEdge {
  cursor: string;
  node: StoredEvent;
}

export interface PageInfo {
  hasNextPage: boolean;
  endCursor: string | null;
}

export const PageInfoRef = builder.objectRef<PageInfo>('PageInfo').implement({
  description: 'Where a page ends, and whether more follow.',
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage', { description: 'True when items follow this page: ask again with `after: endCursor`.' }),
    endCursor: t.exposeString('endCursor', {
      nullable: true,
      description: "The cursor of this page's last item (pass it as `after` for the next page); null when the page examined nothing (a filtered page may have none shown and still a cursor past what it examined).",
    }),
  }),
});

export const EventEdgeRef = builder.objectRef<EventEdge>('EventEdge').implement({
  description: 'One event of a page, with its place in the list.',
  fields: (t) => ({
    cursor: t.exposeString('cursor', { description: 'Opaque: pass it as `after` to read the items after this one.' }),
    node: t.expose('node', { type: EventRef }),
  }),
});

export const EventConnectionRef = builder.objectRef<EventConnection>('EventConnection').implement({
  description: 'A page of events: every item appears exactly once across the pages, even when many share a created_at.',
  fields: (t) => ({
    edges: t.expose('edges', { type: [EventEdgeRef] }),
    pageInfo: t.expose('pageInfo', { type: PageInfoRef }),
  }),
});

/**
 * The events of a list's positions, within the request's read bound, by the sizes the index keeps
 * with them (fewer, a prefix, where the bound stops the read).
 */
export function loadPositions(positions: readonly ReplyPosition[], { loaders, budget }: GraphQLContext): Promise<(Held | null)[]> {
  return loadWithinReadBound(
    loaders.events,
    positions.map((position) => position.id),
    budget,
    MAX_EVENT_BYTES,
    positions.map((position) => position.bytes),
  );
}

/**
 * A page of a position list (replies, an author's notes) from `size` + 1 positions read (the one
 * past the page says whether more follow): the page's events, through loaders.events (batched with
 * every other event read of the request), in slices that fit the read bound, by the sizes the index
 * keeps with the positions (a page of a hundred events of 256 KiB must not read 25 MB before it is
 * refused; a page of a hundred small ones is one read). An event the index lists but which is
 * missing or deleted is left out; the page still ends at its position, so none is read twice.
 */
export async function eventPage(positions: readonly ReplyPosition[], size: number, list: PositionList, context: GraphQLContext): Promise<EventConnection> {
  const { budget } = context;
  const page = positions.length > size ? positions.slice(0, size) : positions;
  const found = await loadPositions(page, context);
  // Past the read bound with overRead 'stop' (REST asks no lists): never a page cut short.
  if (found.length < page.length) throw new LookupError('response_too_large');
  const edges: EventEdge[] = [];
  page.forEach((position, index) => {
    const held = found[index];
    if (held && !isDeleted(held)) edges.push({ cursor: encodeCursor(position, list), node: held });
  });
  budget.charge(edges.length);
  const last = page[page.length - 1];
  return { edges, pageInfo: { hasNextPage: positions.length > size, endCursor: last ? encodeCursor(last, list) : null } };
}

/**
 * A page of a position list of which only some events are shown (a reader's web of trust and mutes:
 * schema/trust.ts): positions are read a page at a time after the cursor (never fewer: a page
 * nearly full must not read one position per round trip, found by review) and their events
 * filtered by `shows`, until `size` are shown or FEED_SCAN_FACTOR × `size` were examined, as a feed
 * page is: a page may then be short, even empty, with `hasNextPage` true and `endCursor` past what
 * it examined. Events it passes over count against the read bound as any read: past it, the page
 * ends where the bound stopped it (short), or is refused if it examined nothing.
 * `read(after, first)`: up to `first` positions after `after`.
 */
export async function filteredEventPage(
  read: (after: ReplyPosition | null, first: number) => Promise<ReplyPosition[]>,
  from: ReplyPosition | null,
  size: number,
  list: PositionList,
  shows: (event: StoredEvent) => boolean,
  context: GraphQLContext,
): Promise<EventConnection> {
  const { budget } = context;
  const limit = FEED_SCAN_FACTOR * size;
  const edges: EventEdge[] = [];
  let examined = 0;
  let last = from;
  let more = true;
  while (edges.length < size && examined < limit && more) {
    const want = Math.min(size, limit - examined);
    const positions = await read(last, want + 1);
    more = positions.length > want;
    const page = positions.slice(0, want);
    if (page.length === 0) break;
    const found = await loadPositions(page, context);
    if (found.length === 0 && examined === 0) throw new LookupError('response_too_large');
    for (const [index, position] of page.entries()) {
      // The page is full, or the read bound stopped the read here: the rest is the next page's.
      if (edges.length >= size || index >= found.length) {
        more = true;
        break;
      }
      examined += 1;
      last = position;
      const held = found[index];
      if (held && !isDeleted(held) && shows(held)) edges.push({ cursor: encodeCursor(position, list), node: held });
    }
    if (found.length < page.length) break;
  }
  budget.charge(edges.length);
  return { edges, pageInfo: { hasNextPage: more, endCursor: last && last !== from ? encodeCursor(last, list) : null } };
}
