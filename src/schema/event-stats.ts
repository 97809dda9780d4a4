import { MAX_REACTION_CONTENTS, type ReactionCount, type ReactionStats, type RelationStats } from '../store/relation-index.js';
import type { StoredEvent } from '../store/event-store.js';
import type { RecountedZaps } from '../store/relation-recount.js';
import { builder } from './builder.js';
import { MAX_TRUSTED_COUNTED } from './paging.js';

/**
 * What other events say about an event, as the relationship index holds it (store/relation-index.ts,
 * rules in nostr/relationships.ts and DESIGN "Relationships"): exact counts over servable events.
 * Every field is a property read of the figures one store call returned for a whole request
 * (loaders.relationStats).
 */

const ReactionCountRef = builder.objectRef<ReactionCount>('ReactionCount').implement({
  description: 'How many distinct authors reacted with one content.',
  fields: (t) => ({
    content: t.exposeString('content', {
      description: 'The reaction as signed: an emoji, a `:shortcode:` (NIP-30), `+`, `-` or empty.',
    }),
    pubkeys: t.exposeInt('pubkeys', { description: 'Distinct authors of servable reactions with this content.' }),
  }),
});

const ReactionStatsRef = builder.objectRef<ReactionStats>('ReactionStats').implement({
  description: 'NIP-25 reactions: kind 7 events whose last `e` tag is the event. Every figure counts distinct authors.',
  fields: (t) => ({
    pubkeys: t.exposeInt('pubkeys', { description: 'Distinct authors who reacted, with any content.' }),
    likes: t.exposeInt('likes', { description: 'Distinct authors who reacted `+` or with empty content.' }),
    dislikes: t.exposeInt('dislikes', { description: 'Distinct authors who reacted `-`.' }),
    byContent: t.field({
      type: [ReactionCountRef],
      description: `One entry per distinct content, by count descending, then content ascending (by its UTF-8 bytes): the first ${MAX_REACTION_CONTENTS} only (pubkeys counts every author). A content over 256 bytes counts its author but has no entry.`,
      // The stores read no more (store/relation-index.ts MAX_REACTION_CONTENTS).
      resolve: ({ byContent }) => byContent,
    }),
  }),
});

/**
 * An event's figures, with the event they are of (its zaps are read from its id, author and `zap`
 * tags); counted by trust (schema/trusted-stats.ts), the zaps shown as recounted (null: none).
 */
export type EventStatsParent = RelationStats & { event: StoredEvent; trusted: boolean; zapsShown?: RecountedZaps | null };

export const EventStatsRef = builder.objectRef<EventStatsParent>('EventStats').implement({
  description:
    'What other servable events say about this one (DESIGN "Relationships"): exact counts, kept as events arrive, are replaced or are deleted.',
  fields: (t) => ({
    replies: t.exposeInt('replies', { description: 'Kind 1 and kind 1111 events whose parent is this event (NIP-10, NIP-22).' }),
    threadReplies: t.exposeInt('threadReplies', {
      description: 'Kind 1 and kind 1111 events whose root is this event: the whole thread below it.',
    }),
    quotes: t.exposeInt('quotes', { description: 'Events of any kind with a `q` tag naming this event (NIP-18).' }),
    reposts: t.exposeInt('reposts', { description: 'Distinct authors of kind 6 and 16 reposts whose first `e` tag is this event (NIP-18).' }),
    reactions: t.expose('reactions', { type: ReactionStatsRef }),
    trusted: t.exposeBoolean('trusted', {
      description: `Whether these figures are counted by a web of trust (\`stats(viewer:)\`, or TRUST_SEEDS where the operator set them): false without one, and for an event with more relating events than the request may still count by trust (${MAX_TRUSTED_COUNTED} a request, with every other count by trust): its figures are then the index's, for everyone.`,
    }),
  }),
});
