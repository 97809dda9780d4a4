import { GraphQLError, Kind } from 'graphql';
import { profileMetadataOf } from '../store/derived-values.js';
import { eventZapSubject, profileZapSubject, type ZapQuery, type ZapSubject, type ZapTotal, zapGroupKey } from '../store/zap-index.js';
import type { RecountedZaps } from '../store/relation-recount.js';
import { isDeleted } from '../store/tombstones.js';
import { zapRecipientsOf } from '../nostr/zaps.js';
import type { Held } from '../store/event-store.js';
import { storedEventId } from '../store/stored-event.js';
import { MAX_ZAP_RECIPIENTS, NO_ZAPS, type ZapStats, zapFigures } from '../zaps/zap-stats.js';
import { type ProviderVerdict, readVerdict } from '../zaps/zap-providers.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { EventStatsRef } from './event-stats.js';
import { ProfileRef } from './profile.js';

/**
 * Zaps (NIP-57; DESIGN "Relationships", zaps row): `EventStats.zaps` and
 * `Profile.zapsReceived`, from the zap groups the index keeps (store/zap-index.ts) and the recipients'
 * provider answers (zaps/zap-providers.ts), applied as the figures are read (zaps/zap-stats.ts).
 */

function asMsats(value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  throw new GraphQLError('Msats must be a non-negative whole number of millisatoshis no larger than 2^53 - 1.');
}

// GraphQL's Int is 32-bit: 2^31 millisatoshis is about 21,000 sats. This carries any amount a
// receipt can (nostr/zaps.ts refuses one over 2^53 - 1), as a JSON number.
builder.scalarType('Msats', {
  description: 'An amount in millisatoshis, as a JSON number: exact for any integer from 0 to 2^53 - 1.',
  serialize: asMsats,
  parseValue: asMsats,
  parseLiteral: (node) => {
    if (node.kind !== Kind.INT) throw new GraphQLError('Msats must be an integer literal.');
    return asMsats(Number(node.value));
  },
});

const ZapStatsRef = builder.objectRef<ZapStats>('ZapStats').implement({
  description:
    "NIP-57 zaps, by DESIGN's rule: a receipt counts when its invoice, its zap request and its tags agree and it is signed by the `nostrPubkey` of the zapped pubkey's own LNURL pay endpoint (its profile's lud16, else lud06), as the service last checked it.",
  fields: (t) => ({
    count: t.exposeInt('count', { description: 'Valid receipts.' }),
    msats: t.field({ type: 'Msats', description: 'Their invoices\' amounts, summed, in millisatoshis.', resolve: (stats) => stats.msats }),
    senders: t.exposeInt('senders', { description: 'Distinct zap-request authors among the valid receipts.' }),
    pending: t.exposeInt('pending', {
      description:
        "Receipts that pass every check but the provider's, which has not answered yet (checked in the background after a read): they move to the other figures when it answers, or to `unverifiable` when it refuses.",
    }),
    unverifiable: t.exposeInt('unverifiable', {
      description:
        "Receipts that cannot count as things stand, whoever signed them: their recipient's provider cannot be checked (no profile known, no lud16 or lud06, an LNURL endpoint that refused or does not allow Nostr). They count once the recipient's profile names a provider that signed them.",
    }),
    unverifiableBecause: t.exposeStringList('unverifiableBecause', {
      description: 'Why `unverifiable` is not 0: each reason once, in the recipients\' order (the check\'s own words, e.g. `no profile`, `no lud16 or lud06`, `allowsNostr is not true`).',
    }),
  }),
});

/** A query's total from receipts recounted (as zapTotals reads it from the index). */
function totalShown(shown: RecountedZaps | null, { recipient, provider }: ZapQuery): ZapTotal {
  const total: ZapTotal = { receipts: shown?.receipts.get(recipient) ?? 0 };
  const group = provider === undefined ? undefined : shown?.groups.find((held) => held.recipient === recipient && held.provider === provider);
  if (group) total.group = group;
  return total;
}

/** What reading one sender of a zap split costs, in the cost model's units (a key read: about 13 µs on LMDB). */
const ZAP_SENDER_COST = 1.5;

/**
 * The figures of one subject for its recipients (an event: its author and its `zap` tags' pubkeys;
 * a pubkey: itself): their profiles and provider answers, then what the index holds for each, for
 * its provider's group only. Nothing else is read: receipts naming other recipients, or signed by
 * anyone but a recipient's provider, cost a read nothing, however many there are.
 */
/**
 * Each recipient's provider answer (zaps/zap-providers.ts): from its profile (its LNURL) and the
 * answer held; with the service's providers, a missing or stale one is asked in the background.
 */
export async function providerVerdicts(recipients: readonly string[], context: GraphQLContext): Promise<ProviderVerdict[]> {
  const { loaders, zaps, budget } = context;
  // A recipient's profile and provider answer are read: charged as an object each.
  budget.charge(recipients.length);
  const [profiles, notes] = await Promise.all([
    Promise.allSettled(recipients.map((recipient) => loaders.profiles.load(recipient))),
    Promise.all(recipients.map((recipient) => loaders.zapProviderNotes.load(recipient))),
  ]);
  return recipients.map((recipient, index): ProviderVerdict => {
    const profile = profiles[index] as PromiseSettledResult<Held>;
    // A profile that could not be read (relays unavailable): its provider is unknown for now.
    if (profile.status === 'rejected') return 'pending';
    const held = profile.value;
    const metadata = held && !isDeleted(held) ? profileMetadataOf(held) : null;
    const note = notes[index] ?? null;
    return zaps ? zaps.verdict(recipient, metadata, note) : readVerdict(metadata, note, Number.POSITIVE_INFINITY).verdict;
  });
}

/**
 * `shown`: the receipts a reader's filter shows, recounted (schema/trusted-stats.ts), read in place
 * of the index's groups (null: none shown).
 */
async function zapStatsOf(subject: ZapSubject, recipients: readonly string[], context: GraphQLContext, shown?: RecountedZaps | null): Promise<ZapStats> {
  const { loaders, budget } = context;
  const verdicts = await providerVerdicts(recipients, context);
  // A refused recipient's receipts are counted, not read group by group: they say why nothing counts.
  const asked = recipients.map((recipient, index) => {
    const verdict = verdicts[index] as ProviderVerdict;
    return { verdict, query: { subject, recipient, ...(verdict !== 'pending' && 'provider' in verdict ? { provider: verdict.provider } : {}) } };
  });
  if (asked.length === 0) return NO_ZAPS;
  const totals = shown === undefined ? await Promise.all(asked.map(({ query }) => loaders.zapTotals.load(query))) : asked.map(({ query }) => totalShown(shown, query));
  const { stats, counted } = zapFigures(asked.map(({ verdict }, index) => ({ verdict, total: totals[index] as ZapTotal })));
  if (shown !== undefined) {
    if (counted.length > 1) stats.senders = new Set(counted.flatMap((group) => [...(shown?.senders.get(zapGroupKey(group)) ?? [])])).size;
    return stats;
  }
  // A zap split: the senders of every group that counts, once each. Every sender of every group is
  // read (once per request: loaders.zapSenders), so the read is charged by their number first:
  // anyone with an LNURL provider can sign receipts from a thousand fresh keys.
  if (counted.length > 1) {
    budget.chargeOnce(`zap-senders:${subject}`, counted.reduce((sum, group) => sum + group.senders, 0) * ZAP_SENDER_COST);
    stats.senders = (await loaders.zapSenders(subject, counted)).size;
  }
  return stats;
}

builder.objectFields(EventStatsRef, (t) => ({
  zaps: t.field({
    type: ZapStatsRef,
    description:
      "Zap receipts (kind 9735) whose first `e` tag is this event and whose recipient is its author or a pubkey of its `zap` tags (NIP-57 appendix G; at most 8 recipients, the author first).",
    resolve: (stats, _args, context) => {
      // Its `zap` tags are read: charged like relevantPubkeys, once per event per request.
      context.budget.chargeDerived(stats.event);
      const recipients = zapRecipientsOf(stats.event.event, MAX_ZAP_RECIPIENTS);
      return zapStatsOf(eventZapSubject(storedEventId(stats.event)), recipients, context, stats.zapsShown);
    },
  }),
}));

builder.objectFields(ProfileRef, (t) => ({
  zapsReceived: t.field({
    type: ZapStatsRef,
    description: 'Zap receipts (kind 9735) whose first `p` tag is this pubkey: zaps of its events and of the profile itself.',
    resolve: (profile, _args, context) => zapStatsOf(profileZapSubject(profile.pubkey), [profile.pubkey], context),
  }),
}));
