import { LookupError } from '../errors.js';
import { isNoteKind } from '../nostr/relationships.js';
import { builder } from './builder.js';
import { EventConnectionRef, eventPage } from './event-connection.js';
import { DEFAULT_PAGE_SIZE, decodeCursor, MAX_PAGE_SIZE, pageSizeOf } from './paging.js';
import { type FieldsOfPubkey, ProfileRef, PubkeyRef } from './profile.js';

/**
 * What someone wrote: an author's events of some kinds, newest first, then by id (DESIGN
 * "Relationships"), from the notes part of the relationship index (store/relation-index.ts), which
 * holds every servable event of its author by kind (regular and addressable kinds; an addressable
 * one while it is the latest version). Costed as `replies` is: 1 for the page and 1 per event it hands back.
 */

/** The most kinds one `notes` may ask for: each is a list read. */
export const MAX_NOTE_KINDS = 20;
/** NIP-01 kinds are 0 to 65535. */
const MAX_KIND = 65_535;

/**
 * The distinct kinds asked for, or invalid_argument: 1 to MAX_NOTE_KINDS distinct kinds, each 0 to
 * 65535 and listed in notes (nostr/relationships.ts isNoteKind: a replaceable kind has one event per
 * author, which `profile`, `following` or an naddr reads, an ephemeral one is never stored, zap
 * receipts are not listed; asked here any would always be empty).
 */
export function noteKindsOf(kinds: readonly number[] | null | undefined): number[] {
  if (!Array.isArray(kinds)) throw new LookupError('invalid_argument');
  const distinct = [...new Set(kinds)];
  if (distinct.length === 0 || distinct.length > MAX_NOTE_KINDS) throw new LookupError('invalid_argument');
  for (const kind of distinct) if (!Number.isInteger(kind) || kind < 0 || kind > MAX_KIND || !isNoteKind(kind)) throw new LookupError('invalid_argument');
  return distinct.sort((a, b) => a - b);
}

/** On Profile and on Pubkey. */
const noteFields: FieldsOfPubkey = (t) => ({
  notes: t.field({
    type: EventConnectionRef,
    description: `Events this pubkey wrote of the given kinds (default: kind 1 notes; 1 to ${MAX_NOTE_KINDS} distinct kinds, none replaceable (0, 3, 10000–19999), ephemeral (20000–29999) or zap receipts (9735), else invalid_argument), newest first, then by id; an addressable kind lists its latest versions only. \`first\`: 1 to ${MAX_PAGE_SIZE} (else invalid_argument); \`after\`: a cursor from an earlier page of notes (else invalid_cursor).`,
    args: {
      kinds: t.arg.intList({ defaultValue: [1] }),
      first: t.arg.int({ defaultValue: DEFAULT_PAGE_SIZE }),
      after: t.arg.string(),
    },
    resolve: async (profile, { kinds, first, after }, context) => {
      const size = pageSizeOf(first);
      const asked = noteKindsOf(kinds);
      const from = after === null || after === undefined ? null : decodeCursor(after, 'notes');
      context.budget.charge(1);
      const positions = await context.loaders.notePages.load({ author: profile.pubkey, kinds: asked, after: from, first: size + 1 });
      return eventPage(positions, size, 'notes', context);
    },
  }),
});
builder.objectFields(ProfileRef, noteFields);
builder.objectFields(PubkeyRef, noteFields);
