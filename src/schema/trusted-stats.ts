import { LookupError } from '../errors.js';
import type { NostrEvent } from '../nostr/event.js';
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
import { countByTrust, type ReaderFilter } from './trust.js';

/**
 * `stats(viewer:)` (DESIGN "Screens", with `viewer: V`): an event's figures counted over the events
 * the reader's filter shows, exactly. The index lists which events relate to the event
 * (RelationIndex.relatedIds, with their sizes); each is read and judged (its author in the web, not
 * muted; a zap receipt by its sender), and the figures are recounted from those shown by the
 * recount's own rule (store/relation-recount.ts), the one `relations check` holds the index against.
 * Bounded: MAX_TRUSTED_COUNTED events a request (countByTrust), refused before any is read.
 */
export async function trustedStats(stored: StoredEvent, reader: ReaderFilter, context: GraphQLContext): Promise<EventStatsParent> {
  const { loaders, budget } = context;
  const id = storedEventId(stored);
  // The index's figures first: with relays, their read brings what relays know (the relationship fill).
  await loaders.relationStats.load(id);
  const related = await loaders.relatedIds(id, MAX_TRUSTED_COUNTED + 1);
  countByTrust(context, related.length, (events) => tooManyToJudge(events));
  const held = await loadEveryEvent(
    loaders.events,
    related.map((event) => event.id),
    budget,
    related.map((event) => event.bytes),
  );
  const shown: NostrEvent[] = [];
  for (const event of held) if (event && !isDeleted(event) && reader.shows(event.event, judgedAuthorOf(event.event))) shown.push(event.event);
  const recount = recountRelations(shown, id);
  return { ...(recount.stats.get(id) ?? NO_RELATIONS), event: stored, zapsShown: recount.zaps.get(eventZapSubject(id)) ?? null };
}

/** Whose event it is for the web: a zap receipt's sender (its zap request's author), else its author. */
function judgedAuthorOf(event: NostrEvent): string {
  if (event.kind !== ZAP_RECEIPT_KIND) return event.pubkey;
  const receipt = readZapReceipt(event);
  return isZapReceipt(receipt) ? receipt.sender : event.pubkey;
}

/** Counts by trust past their bound (countByTrust): the one refusal both fields give. */
export function tooManyToJudge(events: number): LookupError {
  return new LookupError('invalid_argument', {
    message: `Counts by trust (stats(viewer:), notificationCounts(trusted: true)) read and judge each event they count, ${MAX_TRUSTED_COUNTED} in one request at most, and this request would read ${events}: ask without a viewer, for fewer events' stats, or (notificationCounts) with a later \`since\`.`,
  });
}
