import { LookupError } from '../errors.js';
import { type AddressPointer, type EventPointer, parseEventPointer } from '../nostr/identifiers.js';
import { MAX_PROFILE_BYTES } from '../nostr/work-caps.js';
import { relevantPubkeysOf } from '../store/derived-values.js';
import type { Held, StoredEvent } from '../store/event-store.js';
import {
  storedEventCreatedAt,
  storedEventId,
  storedEventKind,
  storedEventPubkey,
  storedEventSig,
} from '../store/stored-event.js';
import { isDeleted } from '../store/tombstones.js';
import { builder } from './builder.js';
import { answered, type GraphQLContext } from './context.js';
import { loadAvailable, loadWithinReadBound } from './loaders.js';
import type { ObjectBudget } from './object-budget.js';
import { Profile, ProfileRef, toProfile } from './profile.js';

/**
 * The parsed event, the request charged its size first (ObjectBudget.chargeFieldBytes), each time a
 * field computed from tags or content asks: they grow with what the author wrote; the other fields
 * are read at fixed offsets.
 */
function parsed(stored: StoredEvent, budget: ObjectBudget) {
  budget.chargeFieldBytes(stored.json.bytes.length);
  return stored.event;
}

export const EventRef = builder.objectRef<StoredEvent>('Event');

EventRef.implement({
  description: 'A verified Nostr event (NIP-01).',
  fields: (t) => ({
    // id, pubkey, createdAt, kind and sig are read from the stored bytes without parsing them.
    id: t.string({ description: 'Event id: 64 lowercase hex characters.', resolve: (stored) => storedEventId(stored) }),
    pubkey: t.string({
      description: "Author's public key: 64 lowercase hex.",
      resolve: (stored) => storedEventPubkey(stored),
    }),
    createdAt: t.field({ type: 'Timestamp', resolve: (stored) => storedEventCreatedAt(stored) }),
    kind: t.int({ resolve: (stored) => storedEventKind(stored) }),
    tags: t.field({
      type: t.listRef(t.listRef('String')),
      description: 'Tags as signed: a list of string lists.',
      resolve: (stored, _args, { budget }) => parsed(stored, budget).tags,
    }),
    content: t.string({ resolve: (stored, _args, { budget }) => parsed(stored, budget).content }),
    sig: t.string({
      description: 'Schnorr signature: 128 lowercase hex.',
      resolve: (stored) => storedEventSig(stored),
    }),
    // Exposed (a property read, no resolver): see withPropertyFieldsInline in index.ts.
    json: t.exposeString('json', {
      description:
        'The event as NIP-01 JSON: exactly the seven fields, in NIP-01 order, with the values as signed.',
    }),
    raw: t.field({
      type: 'RawEvent',
      description:
        'The event as its NIP-01 JSON object, in the answer as an object (not a string): exactly the seven fields, in NIP-01 order, with the values as signed. What the REST routes send.',
      resolve: (stored) => stored.json,
    }),
    author: t.field({
      type: ProfileRef,
      nullable: true,
      description: "The author's latest profile, if known (or, with relays, if it arrived in time).",
      resolve: async (stored, _args, { loaders, budget }) => {
        budget.charge(1);
        // The pubkey at its offset: reading `stored.event` here parsed the whole event for free (found by review).
        const [found] = await loadAvailable(loaders.profiles, [storedEventPubkey(stored)]);
        return toProfile(found ?? null, budget.derivedCharger);
      },
    }),
    relevantPubkeys: t.stringList({
      description:
        'The author, then every pubkey the event names (p/P tags, nostr: mentions, e/q tag authors, a repost’s embedded author), deduplicated and capped.',
      resolve: (stored, _args, { limits, budget }) => {
        // Charged like an object (query-cost.ts): every alias asks again, even if the answer is cached.
        budget.charge(1);
        budget.chargeDerived(stored);
        return relevantPubkeysOf(stored, limits.maxProfiles);
      },
    }),
    relevantProfiles: t.field({
      type: [ProfileRef],
      description:
        'The latest profiles of relevantPubkeys, in that order; pubkeys without a profile are left out.',
      resolve: async (stored, _args, { loaders, limits, budget }) => {
        budget.chargeDerived(stored);
        const pubkeys = relevantPubkeysOf(stored, limits.maxProfiles);
        budget.charge(pubkeys.length);
        const profiles: Profile[] = [];
        for (const profile of await loadWithinReadBound(loaders.profiles, pubkeys, budget, MAX_PROFILE_BYTES)) {
          // A deleted profile is left out, like a missing one (NIP-09, NIP-62).
          if (profile && !isDeleted(profile)) profiles.push(new Profile(profile, budget.derivedCharger));
        }
        return profiles;
      },
    }),
  }),
});

builder.queryFields((t) => ({
  event: t.field({
    type: EventRef,
    nullable: true,
    description:
      'One event by id (hex, note1… or nevent1…), or the latest version of a replaceable or addressable event by naddr1…, optionally prefixed nostr:. Null if unknown, or if its author deleted it (NIP-09) or asked to vanish (NIP-62).',
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, { id }, context) => {
      context.budget.charge(1);
      const pointer = parseEventPointer(id);
      return loadPointer(context, pointer).then((held) => answered(context, keyOf(pointer), held));
    },
  }),
  events: t.field({
    type: [EventRef],
    nullable: { list: false, items: true },
    description:
      'Events by id or naddr, as `event`, in the order given, one entry per distinct event (a repeated id is answered once, at its first place); null where unknown or deleted. At most MAX_LIST_LENGTH ids.',
    args: { ids: t.arg.stringList({ required: true }) },
    resolve: async (_root, { ids }, context) => {
      const { limits, budget } = context;
      if (ids.length > limits.maxListLength) throw new LookupError('list_too_long');
      // Distinct ids only: the same id a hundred times must not cost a hundred answers.
      const distinct = new Map<string, EventPointer | AddressPointer>();
      for (const pointer of ids.map(parseEventPointer)) if (!distinct.has(keyOf(pointer))) distinct.set(keyOf(pointer), pointer);
      budget.charge(distinct.size);
      const found = await Promise.all([...distinct.values()].map((pointer) => loadPointer(context, pointer)));
      // What was read by id counts against the read bound (a hundred events of 256 KiB are 25 MB).
      budget.settleRead(0, found.filter((held): held is StoredEvent => held !== null && !isDeleted(held)));
      const keys = [...distinct.keys()];
      return found.map((held, index) => answered(context, keys[index] as string, held));
    },
  }),
}));

/** What a pointer is looked up by: an event id, or a coordinate (naddr). */
function keyOf(pointer: EventPointer | AddressPointer): string {
  return 'id' in pointer ? pointer.id : pointer.coordinate;
}

/**
 * Loads what a pointer names, its relay hints (and an nevent's author) noted for the request: an
 * event by id, or the latest version at a coordinate. A list fails as a whole if one load fails.
 */
function loadPointer(context: GraphQLContext, pointer: EventPointer | AddressPointer): Promise<Held> {
  const { loaders, relays } = context;
  relays?.request.addHints(pointer.relays);
  if (!('id' in pointer)) return loaders.addresses.load(pointer.coordinate);
  relays?.request.addAuthor(pointer.id, pointer.author);
  return loaders.events.load(pointer.id);
}
