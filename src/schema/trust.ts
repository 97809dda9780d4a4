import { LookupError } from '../errors.js';
import { FOLLOW_LIST_KIND } from '../nostr/follows.js';
import { isMuted, MUTE_LIST_KIND, mutesOf } from '../nostr/mutes.js';
import type { NostrEvent } from '../nostr/event.js';
import type { TrustWeb } from '../nostr/web-of-trust.js';
import type { EventStore } from '../store/event-store.js';
import { TrustWebs } from '../store/trust-webs.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { latestLists } from './latest-lists.js';
import { MAX_TRUSTED_COUNTED } from './paging.js';
import { type FieldsOfPubkey, ProfileRef, pubkeyOfArgument, PubkeyRef } from './profile.js';

/**
 * The reader's web of trust in the schema (DESIGN "Screens", with `viewer: V`): a field that takes
 * `viewer` (or `trusted`, for the pubkey's own web) lists and counts only authors in that web, and
 * never what the reader muted. Without one, TRUST_SEEDS (when set) is the reader. The webs are held
 * per store by store/trust-webs.ts; a request names at most one reader (MAX_READERS_PER_REQUEST), so
 * that a query cannot make the process build many webs at once.
 */

/** Hop-1 follow lists the index lacks asked of the relays per web built, at most. */
export const MAX_HOP_FILL = 500;

/** Distinct readers (viewers, `trusted` pubkeys, `trusts` subjects) one request may name. */
export const MAX_READERS_PER_REQUEST = 1;

/** A reader's filter: its web, and its mutes (what it also hides). */
export interface ReaderFilter {
  web: TrustWeb;
  /** Whether an event is shown: its author (or, for a zap, `author`) is in the web, and the reader did not mute it. */
  shows(event: NostrEvent, author?: string): boolean;
}

/**
 * Counts by trust (`notificationCounts(trusted: true)`, `stats(viewer:)`) read and judge each event
 * they count: MAX_TRUSTED_COUNTED events in one request, all such fields together, so that a page of
 * twenty notes with their stats costs what one popular note's would. Past it, `refusal` (an
 * invalid_argument that says how to ask for less), thrown before the events are read; stats fall
 * back to the index's figures instead (takeByTrust, schema/trusted-stats.ts).
 */
export function countByTrust(context: GraphQLContext, events: number, refusal: (events: number) => LookupError): void {
  if (!takeByTrust(context, events)) throw refusal(context.countedByTrust.events + events);
}

/** countByTrust without the refusal: whether `events` more fit, taken if they do. */
export function takeByTrust(context: GraphQLContext, events: number): boolean {
  const counted = context.countedByTrust.events + events;
  if (counted > MAX_TRUSTED_COUNTED) return false;
  context.countedByTrust.events = counted;
  return true;
}

/** One TrustWebs per store: every request of the process shares its webs. */
const websByStore = new WeakMap<EventStore, TrustWebs>();

export function trustWebsOf(store: EventStore): TrustWebs {
  let webs = websByStore.get(store);
  if (!webs) websByStore.set(store, (webs = new TrustWebs(store)));
  return webs;
}

/**
 * The filter of `viewer` (any pubkey form, as `pubkey(...)` takes it), else of TRUST_SEEDS, else
 * none (undefined: nothing is filtered). Made once per request and reader.
 */
export async function readerFilter(context: GraphQLContext, viewer: string | null | undefined): Promise<ReaderFilter | undefined> {
  if (viewer !== null && viewer !== undefined) return filterOf(context, [await pubkeyOfArgument(context, viewer)]);
  const seeds = context.limits.trustSeeds ?? [];
  return seeds.length > 0 ? filterOf(context, seeds) : undefined;
}

/** The filter of a pubkey's own web (`trusted: true`). */
export function ownFilter(context: GraphQLContext, pubkey: string): Promise<ReaderFilter> {
  return filterOf(context, [pubkey]);
}

function filterOf(context: GraphQLContext, readers: readonly string[]): Promise<ReaderFilter> {
  const key = readers.join(',');
  const made = context.readerFilters.get(key);
  if (made) return made;
  // TRUST_SEEDS are the operator's, not the request's: they do not count against its one reader.
  const requested = [...context.readerFilters.keys()].filter((other) => other !== seedsKey(context));
  if (key !== seedsKey(context) && requested.length >= MAX_READERS_PER_REQUEST) {
    return Promise.reject(new LookupError('invalid_argument', { message: `a request names at most ${MAX_READERS_PER_REQUEST} web of trust (viewer, trusted, trusts)` }));
  }
  // A web is read beside the request's tracked reads (store/trust-webs.ts): an answer made with it is not kept.
  context.reads?.spoil();
  const filter = makeFilter(context, readers, key === seedsKey(context));
  context.readerFilters.set(key, filter);
  return filter;
}

const seedsKey = (context: GraphQLContext) => (context.limits.trustSeeds ?? []).join(',');

/** `seeds`: TRUST_SEEDS' web, which every read without a viewer needs: queued, never refused (webs_busy). */
async function makeFilter(context: GraphQLContext, readers: readonly string[], seeds: boolean): Promise<ReaderFilter> {
  const lists = await Promise.all(readers.map((reader) => latestLists(reader, [FOLLOW_LIST_KIND, MUTE_LIST_KIND], context)));
  const followLists = lists.map(([follows]) => follows ?? null);
  const muteLists = lists.map(([, mutes]) => mutes ?? null);
  // With relays, the hop-1 lists the index lacks are asked for in the background (bounded): once
  // stored, the log of list changes drops this web, and a later read holds their follows.
  const fill = context.relays?.fill;
  const onMissing = fill ? (pubkeys: string[]) => fill.fillAddressesInBackground(pubkeys.slice(0, MAX_HOP_FILL).map((pubkey) => `${FOLLOW_LIST_KIND}:${pubkey}:`)) : undefined;
  const web = await trustWebsOf(context.store).web({ readers, followLists, muteLists, mutes: muteLists.map((list) => (list ? mutesOf(list) : null)) }, { mayWait: seeds, ...(onMissing ? { onMissing } : {}) });
  const { mutes } = web;
  return { web, shows: (event, author = event.pubkey) => web.has(author) && !isMuted(event, mutes) };
}

/** On Profile and on Pubkey. */
const trustFields: FieldsOfPubkey = (t) => ({
  trusts: t.boolean({
    description:
      "Whether `pubkey` (any form `pubkey(...)` takes) is in this pubkey's web of trust: itself, the pubkeys its latest follow list names, and those their lists name; minus those it muted (DESIGN \"Screens\"). A request names at most one web (viewer, trusted, trusts), else invalid_argument.",
    args: { pubkey: t.arg.string({ required: true }) },
    resolve: async (profile, args, context) => {
      const [filter, other] = await Promise.all([ownFilter(context, profile.pubkey), pubkeyOfArgument(context, args.pubkey)]);
      return filter.web.has(other);
    },
  }),
});
builder.objectFields(ProfileRef, trustFields);
builder.objectFields(PubkeyRef, trustFields);
