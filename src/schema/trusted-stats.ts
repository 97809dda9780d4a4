import type { NostrEvent } from '../nostr/event.js';
import { MAX_EVENT_BYTES } from '../nostr/work-caps.js';
import { isZapReceipt, readZapReceipt, ZAP_RECEIPT_KIND } from '../nostr/zaps.js';
import type { StoredEvent } from '../store/event-store.js';
import { NO_RELATIONS } from '../store/relation-index.js';
import { recountRelations } from '../store/relation-recount.js';
import { storedEventId } from '../store/stored-event.js';
import { isDeleted } from '../store/tombstones.js';
import { eventZapSubject } from '../store/zap-index.js';
import type { GraphQLContext } from './context.js';
import type { EventStatsParent } from './event-stats.js';
import { loadEveryEvent } from './loaders.js';
import { MAX_TRUSTED_COUNTED } from './paging.js';
import { type ReaderFilter, takeByTrust } from './trust.js';

/**
 * `stats(viewer:)` (DESIGN "Screens", with `viewer: V`): an event's figures counted over the events
 * the reader's filter shows, exactly. The index lists which events relate to the event
 * (RelationIndex.relatedIds, with their sizes); each is read and judged (its author in the web, not
 * muted; a zap receipt by its sender), and the figures are recounted from those shown by the
 * recount's own rule (store/relation-recount.ts), the one `relations check` holds the index against.
 * Bounded: MAX_TRUSTED_COUNTED events a request (countByTrust), LEDGER_ENTRIES_PER_REQUEST index
 * entries read for them, their bytes within the request's read bound. An event with more than the
 * request may still read (a popular note) gets the index's figures for everyone, `trusted: false`:
 * never an error, never a count of part of them.
 */
export async function trustedStats(stored: StoredEvent, reader: ReaderFilter, context: GraphQLContext): Promise<EventStatsParent> {
  const { loaders, budget, countedByTrust } = context;
  const id = storedEventId(stored);
  // The index's figures, the answer when the event has too many relating events to judge, read
  // beside the list of them (each after the relationship fill, with relays).
  const left = MAX_TRUSTED_COUNTED - countedByTrust.events;
  const [figures, list] = await Promise.all([loaders.relationStats.load(id), left > 0 ? loaders.relatedIds(id, left, countedByTrust.scan) : undefined]);
  const everyone: EventStatsParent = { ...figures, event: stored, trusted: false };
  if (!list) return everyone;
  const { events: related, complete } = list;
  // Their sizes must fit in what the request may still read (MAX_RESPONSE_BYTES), and others of the
  // request may have counted meanwhile: taken only if both still hold.
  const bytes = related.reduce((sum, event) => sum + Math.min(event.bytes, MAX_EVENT_BYTES), 0);
  if (!complete || bytes > budget.readBytesLeft || !takeByTrust(context, related.length)) return everyone;
  const held = await loadEveryEvent(
    loaders.events,
    related.map((event) => event.id),
    budget,
    related.map((event) => event.bytes),
  );
  const shown: NostrEvent[] = [];
  for (const event of held) if (event && !isDeleted(event) && reader.shows(event.event, judgedAuthorOf(event.event))) shown.push(event.event);
  const recount = recountRelations(shown, id);
  return { ...(recount.stats.get(id) ?? NO_RELATIONS), event: stored, trusted: true, zapsShown: recount.zaps.get(eventZapSubject(id)) ?? null };
}

/** Whose event it is for the web: a zap receipt's sender (its zap request's author), else its author. */
function judgedAuthorOf(event: NostrEvent): string {
  if (event.kind !== ZAP_RECEIPT_KIND) return event.pubkey;
  const receipt = readZapReceipt(event);
  return isZapReceipt(receipt) ? receipt.sender : event.pubkey;
}
