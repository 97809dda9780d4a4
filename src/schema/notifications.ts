import { LookupError } from '../errors.js';
import { isMuted, MUTE_LIST_KIND, type Mutes, mutesOf } from '../nostr/mutes.js';
import { NOTIFICATION_TYPES, type NotificationType, notificationTarget } from '../nostr/notifications.js';
import { isZapReceipt, readZapReceipt } from '../nostr/zaps.js';
import type { StoredEvent } from '../store/event-store.js';
import type { NotificationCounts, NotificationEntry } from '../store/notification-index.js';
import type { ReplyPosition } from '../store/relation-index.js';
import { isDeleted } from '../store/tombstones.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { EventRef } from './event.js';
import { PageInfoRef, type PageInfo } from './event-connection.js';
import { latestLists } from './latest-lists.js';
import { providerVerdicts } from './zap-stats.js';
import { loadEveryEvent } from './loaders.js';
import { DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor, FEED_SCAN_FACTOR, MAX_PAGE_SIZE, MAX_TRUSTED_COUNTED, pageSizeOf } from './paging.js';
import { type FieldsOfPubkey, ProfileRef, PubkeyRef } from './profile.js';
import { countByTrust, ownFilter, readerFilter } from './trust.js';
import type { TrustWeb } from '../nostr/web-of-trust.js';

/**
 * A pubkey's notifications (DESIGN "Screens": notifications of V), read from the index the stores
 * keep as events arrive (store/notification-index.ts): a page is one range read per type asked,
 * newest first, then by id, whatever the recipient has gathered; the events are then read and the
 * pubkey's own public mutes applied (a muted author, thread, hashtag or word; a zap by its sender),
 * up to FEED_SCAN_FACTOR × `first` examined, as the feed does; a zap shows once its receipt is
 * signed by the pubkey's own provider (as `stats.zaps` counts it). Counts are read from the index as
 * ranges (created_at >= since) and apply neither mutes nor the provider check; counts by trust read
 * and judge each notification as a trusted page does (trustedCounts), a bounded number.
 */

export interface Notification {
  type: NotificationType;
  token: string;
  event: StoredEvent;
  createdAt: number;
}

interface NotificationEdge {
  cursor: string;
  node: Notification;
}

interface NotificationConnection {
  edges: NotificationEdge[];
  pageInfo: PageInfo;
}

export const NotificationTypeRef = builder.enumType('NotificationType', {
  description: 'Why an event notifies a pubkey; an event has one type per recipient, the first of these that fits (DESIGN "Screens").',
  values: {
    ZAP: { description: "A valid zap receipt (NIP-57) whose first `p` is the pubkey: a page shows it once it is signed by the pubkey's own LNURL provider (as `stats.zaps` counts it); `notificationCounts.zap` counts every receipt that passes the other checks." },
    REPLY: { description: "A kind 1 or 1111 whose parent (NIP-10, NIP-22) is the pubkey's event, whether it tags the pubkey or not." },
    QUOTE: { description: "An event with a `q` tag naming the pubkey's event (NIP-18)." },
    REPOST: { description: "A kind 6 or 16 whose first `e` is the pubkey's event (NIP-18)." },
    REACTION: { description: "A kind 7 whose last `e` is the pubkey's event (NIP-25)." },
    MENTION: { description: 'A kind 1, 1111 or 30023 with a `p` tag naming the pubkey, or a NIP-27 `nostr:npub1…`/`nprofile1…` of it in its content.' },
    FOLLOW: { description: "The author's latest follow list names the pubkey (dated by that list)." },
  } as const,
});

const NotificationRef = builder.objectRef<Notification>('Notification').implement({
  description: 'One event that notifies a pubkey, with its type and the event of the pubkey it is about.',
  fields: (t) => ({
    type: t.field({ type: NotificationTypeRef, resolve: (notification) => notification.type }),
    event: t.field({ type: EventRef, description: "The event that notifies (FOLLOW: the follower's follow list).", resolve: (notification) => notification.event }),
    target: t.field({
      type: EventRef,
      nullable: true,
      description: "The pubkey's own event it is about (REPLY: the parent; QUOTE, REPOST, REACTION: the event named; ZAP: the zapped event); null for MENTION, FOLLOW, a zap of the profile, and an event no longer held.",
      resolve: async (notification, _args, { loaders }) => {
        const id = notificationTarget(notification.event.event, notification.token);
        if (id === undefined) return null;
        const held = await loaders.events.load(id);
        return held && !isDeleted(held) ? held : null;
      },
    }),
    createdAt: t.field({ type: 'Timestamp', description: "The notifying event's created_at.", resolve: (notification) => notification.createdAt }),
  }),
});

const NotificationEdgeRef = builder.objectRef<NotificationEdge>('NotificationEdge').implement({
  description: 'One notification of a page, with its place in the list.',
  fields: (t) => ({
    cursor: t.exposeString('cursor', { description: 'Opaque: pass it as `after` to read the notifications after this one.' }),
    node: t.expose('node', { type: NotificationRef }),
  }),
});

const NotificationConnectionRef = builder.objectRef<NotificationConnection>('NotificationConnection').implement({
  description: 'A page of notifications, newest first, then by id: each once across the pages.',
  fields: (t) => ({
    edges: t.expose('edges', { type: [NotificationEdgeRef] }),
    pageInfo: t.expose('pageInfo', { type: PageInfoRef }),
  }),
});

const NotificationCountsRef = builder.objectRef<NotificationCounts & { total: number }>('NotificationCounts').implement({
  description: 'How many notifications of each type (mutes not applied).',
  fields: (t) => ({
    total: t.exposeInt('total'),
    zap: t.exposeInt('ZAP'),
    reply: t.exposeInt('REPLY'),
    quote: t.exposeInt('QUOTE'),
    repost: t.exposeInt('REPOST'),
    reaction: t.exposeInt('REACTION'),
    mention: t.exposeInt('MENTION'),
    follow: t.exposeInt('FOLLOW'),
  }),
});

/** The types asked: all when absent; an empty list is invalid_argument (it could only answer nothing). */
function typesOf(types: readonly NotificationType[] | null | undefined): readonly NotificationType[] {
  if (types === null || types === undefined) return NOTIFICATION_TYPES;
  if (types.length === 0) throw new LookupError('invalid_argument');
  return [...new Set(types)];
}

/**
 * Whether a notification is left out of the page: its event muted as the feed judges one; a zap
 * also by its sender, and unless its receipt is signed by the pubkey's own LNURL provider as last
 * checked (DESIGN: a valid receipt; `provider` undefined: not known yet, so none is shown).
 */
function hidden(notification: NotificationEntry, event: StoredEvent, mutes: Mutes, provider: string | undefined, web: TrustWeb | undefined): boolean {
  if (isMuted(event.event, mutes)) return true;
  if (notification.type !== 'ZAP') return web !== undefined && !web.has(event.event.pubkey);
  // Its signer first: a receipt anyone forged is left out without a parse of its invoice.
  if (provider === undefined || event.event.pubkey !== provider) return true;
  const receipt = readZapReceipt(event.event);
  return !isZapReceipt(receipt) || receipt.provider !== provider || mutes.pubkeys.has(receipt.sender) || (web !== undefined && !web.has(receipt.sender));
}

/** The pubkey's LNURL provider's signing key as last checked (zaps/zap-providers.ts), or undefined. */
async function zapProviderOf(pubkey: string, context: GraphQLContext): Promise<string | undefined> {
  const [verdict] = await providerVerdicts([pubkey], context);
  return verdict !== undefined && verdict !== 'pending' && 'provider' in verdict ? verdict.provider : undefined;
}

interface NotificationArguments {
  first?: number | null | undefined;
  after?: string | null | undefined;
  types?: readonly NotificationType[] | null | undefined;
  since?: number | null | undefined;
  trusted?: boolean | null | undefined;
}

/** A page of V's notifications (see the module comment and the field's description). */
export async function notificationPage(pubkey: string, args: NotificationArguments, context: GraphQLContext): Promise<NotificationConnection> {
  const size = pageSizeOf(args.first);
  const types = typesOf(args.types);
  const since = args.since ?? undefined;
  let after: ReplyPosition | null = args.after === null || args.after === undefined ? null : decodeCursor(args.after, 'notifications');
  const { loaders, budget } = context;
  budget.charge(1);
  const mutes = mutesOf((await latestLists(pubkey, [MUTE_LIST_KIND], context))[0]);
  // `trusted`: only by authors (a zap: senders) in the pubkey's own web of trust (schema/trust.ts).
  // Without it, TRUST_SEEDS' web where the operator set them.
  const web = args.trusted === true ? (await ownFilter(context, pubkey)).web : (await readerFilter(context, undefined))?.web;
  const limit = FEED_SCAN_FACTOR * size;
  const edges: NotificationEdge[] = [];
  let examined = 0;
  let more = true;
  let last: ReplyPosition | undefined;
  let provider: string | undefined | null = null;
  while (edges.length < size && examined < limit && more) {
    // A page's worth at a time (never fewer: entries left out in a row, forged zaps say, must not
    // make a round trip each), one past it to know whether more follow.
    const want = Math.min(size, limit - examined);
    const read = await loaders.notifications(pubkey, types, after, want + 1);
    const inRange = since === undefined ? read : read.filter((entry) => entry.createdAt >= since);
    const entries = inRange.slice(0, want);
    more = inRange.length > want;
    if (entries.length === 0) break;
    const found = await loadEveryEvent(
      loaders.events,
      entries.map((entry) => entry.id),
      budget,
    );
    // Zaps on the page: the pubkey's provider is read once a request.
    if (provider === null && entries.some((entry) => entry.type === 'ZAP')) provider = await zapProviderOf(pubkey, context);
    for (const [index, entry] of entries.entries()) {
      // The page is full: what is left of this read is the next page's (the cursor stops before it).
      if (edges.length >= size) {
        more = true;
        break;
      }
      examined += 1;
      last = { createdAt: entry.createdAt, id: entry.id };
      const held = found[index];
      if (!held || isDeleted(held) || hidden(entry, held, mutes, provider ?? undefined, web)) continue;
      edges.push({ cursor: encodeCursor(entry, 'notifications'), node: { type: entry.type, token: entry.token, event: held, createdAt: entry.createdAt } });
    }
    after = last ?? after;
  }
  budget.charge(edges.length);
  return { edges, pageInfo: { hasNextPage: more, endCursor: last ? encodeCursor(last, 'notifications') : null } };
}

/**
 * V's notifications since `since` counted as its trusted pages show them (the pubkey's own web of
 * trust and mutes; a zap by its sender, once signed by its provider): read whole, MAX_TRUSTED_COUNTED
 * at most (invalid_argument past that: by the index's counts before any is read, else as read).
 */
async function trustedCounts(pubkey: string, since: number | undefined, context: GraphQLContext): Promise<NotificationCounts> {
  const { loaders, budget } = context;
  const indexed = await loaders.notificationCounts(pubkey, since);
  const total = NOTIFICATION_TYPES.reduce((sum, type) => sum + indexed[type], 0);
  countByTrust(context, total, tooManyToJudge);
  let charged = total;
  const counts = Object.fromEntries(NOTIFICATION_TYPES.map((type) => [type, 0])) as NotificationCounts;
  if (total === 0) return counts;
  const mutes = mutesOf((await latestLists(pubkey, [MUTE_LIST_KIND], context))[0]);
  const { web } = await ownFilter(context, pubkey);
  let provider: string | undefined | null = null;
  let after: ReplyPosition | null = null;
  let examined = 0;
  for (;;) {
    const read = await loaders.notifications(pubkey, NOTIFICATION_TYPES, after, NOTIFICATIONS_READ);
    const entries = since === undefined ? read : read.filter((entry) => entry.createdAt >= since);
    if (entries.length === 0) break;
    // More came since the index counted them (anyone may date an event back): still bounded.
    examined += entries.length;
    if (examined > charged) {
      countByTrust(context, examined - charged, tooManyToJudge);
      charged = examined;
    }
    const found = await loadEveryEvent(
      loaders.events,
      entries.map((entry) => entry.id),
      budget,
    );
    if (provider === null && entries.some((entry) => entry.type === 'ZAP')) provider = await zapProviderOf(pubkey, context);
    entries.forEach((entry, index) => {
      const held = found[index];
      if (held && !isDeleted(held) && !hidden(entry, held, mutes, provider ?? undefined, web)) counts[entry.type] += 1;
    });
    // Newest first: past `since`, or the end of what the index holds.
    if (entries.length < read.length || read.length < NOTIFICATIONS_READ) break;
    const last = entries.at(-1) as NotificationEntry;
    after = { createdAt: last.createdAt, id: last.id };
  }
  return counts;
}

/** notificationCounts(trusted: true) past the request's bound (countByTrust). */
function tooManyToJudge(events: number): LookupError {
  return new LookupError('invalid_argument', {
    message: `notificationCounts(trusted: true) reads and judges each notification it counts, ${MAX_TRUSTED_COUNTED} in one request at most (with stats(viewer:)), and this request would read ${events}: ask with a later \`since\`.`,
  });
}

/** Notifications read per round trip when counting them by trust. */
const NOTIFICATIONS_READ = 500;

/** On Profile and on Pubkey. */
const notificationFields: FieldsOfPubkey = (t) => ({
  notifications: t.field({
    type: NotificationConnectionRef,
    description: `What happened to this pubkey (DESIGN "Screens"): events by others that zap, reply to, quote, repost or react to its events, mention it, or follow it, each once with the first type that fits (see NotificationType), newest first, then by id; kept as events arrive, whatever their order (a reply stored before its parent notifies once the parent is here), gone at once when the event or its target is deleted or vanishes. \`types\`: only these (a non-empty list; default all); \`since\`: created_at >= since. The pubkey's own public mutes always apply (as its feed's; a zap is judged by its sender). A page examines at most ${FEED_SCAN_FACTOR} × \`first\` notifications: past that many muted in a row, it holds fewer (even none) with \`hasNextPage\` true. \`trusted\`: only notifications by authors in this pubkey's own web of trust (a zap: by its sender); without it, TRUST_SEEDS' web where the operator set them. A request names at most one web. \`first\`: 1 to ${MAX_PAGE_SIZE} (else invalid_argument); \`after\`: a cursor from an earlier page of notifications (else invalid_cursor).`,
    args: {
      first: t.arg.int({ defaultValue: DEFAULT_PAGE_SIZE }),
      after: t.arg.string(),
      types: t.arg({ type: [NotificationTypeRef] }),
      since: t.arg({ type: 'Timestamp' }),
      trusted: t.arg.boolean({ defaultValue: false }),
    },
    resolve: (profile, args, context) => notificationPage(profile.pubkey, args, context),
  }),
  notificationCounts: t.field({
    type: NotificationCountsRef,
    description: `How many notifications this pubkey has of each type (\`since\`: created_at >= since). Without \`trusted\`, read from the index as kept for every notifying author: mutes are not applied (the list applies them), nor TRUST_SEEDS. \`trusted: true\`: counted as the trusted list shows them, by authors in this pubkey's own web of trust and not muted (a zap: by its sender, once signed by the pubkey's provider), exact: each is read, ${MAX_TRUSTED_COUNTED} in one request at most (with stats(viewer:); more: invalid_argument before any is read; ask with a later \`since\`).`,
    args: { since: t.arg({ type: 'Timestamp' }), trusted: t.arg.boolean({ defaultValue: false }) },
    resolve: async (profile, args, context) => {
      const since = args.since ?? undefined;
      const counts = args.trusted === true ? await trustedCounts(profile.pubkey, since, context) : await context.loaders.notificationCounts(profile.pubkey, since);
      return { ...counts, total: NOTIFICATION_TYPES.reduce((sum, type) => sum + counts[type], 0) };
    },
  }),
});
builder.objectFields(ProfileRef, notificationFields);
builder.objectFields(PubkeyRef, notificationFields);
