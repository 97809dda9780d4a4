import type { NostrEvent } from '../nostr/event.js';
import { isZapReceipt, readZapReceipt, type ZapReceipt } from '../nostr/zaps.js';

/**
 * The zap part of the relationship index (DESIGN "Relationships", zaps row): what the
 * stores keep of the receipts that pass every check but the provider's (nostr/zaps.ts), in the same
 * write as the receipt, on every transition (stored, deleted, vanished), by increments that commute.
 *
 * A receipt counts, or is pending, or neither, by its recipient's provider answer (zaps/): that
 * answer changes (a check, a new `lud16`) without any receipt changing. So the stores keep figures
 * per *group*, one group per (recipient, receipt signer), and the answer is applied when the figures
 * are read: for a recipient at most one signer is its provider, so a group is wholly counted, wholly
 * pending or wholly not. Nothing is rewritten when an answer arrives, and every figure is exact at
 * all times.
 *
 * A receipt adds to two *subjects*: its target event (the first `e` tag, `stats.zaps`) if it has
 * one, and its recipient (the first `p` tag, `Profile.zapsReceived`).
 */

/** Whose zaps: an event (`e` + id) or a pubkey (`p` + pubkey). */
export type ZapSubject = string;

export const eventZapSubject = (id: string): ZapSubject => `e${id}`;
export const profileZapSubject = (pubkey: string): ZapSubject => `p${pubkey}`;

/** The receipts of one subject with one recipient and one signer (`provider`). */
export interface ZapGroup {
  recipient: string;
  provider: string;
  /** Receipts. */
  count: number;
  /** Their invoices' millisatoshis, summed, exactly: a decimal string (sums may pass 2^53). */
  msats: string;
  /** Distinct zap-request authors among them. */
  senders: number;
}

/** What one receipt adds to one subject (+1) or takes from it (-1). */
export interface ZapEntry {
  subject: ZapSubject;
  recipient: string;
  provider: string;
  sender: string;
  msats: number;
}

/** The subjects a receipt adds to, with what it adds: none unless it passes every check but the provider's. */
export function zapEntriesOf(event: NostrEvent): ZapEntry[] {
  const reading = readZapReceipt(event);
  return isZapReceipt(reading) ? entriesOfReceipt(reading) : [];
}

function entriesOfReceipt(receipt: ZapReceipt): ZapEntry[] {
  const { recipient, provider, sender, msats } = receipt;
  const entry = (subject: ZapSubject): ZapEntry => ({ subject, recipient, provider, sender, msats });
  return receipt.target === undefined ? [entry(profileZapSubject(recipient))] : [entry(eventZapSubject(receipt.target)), entry(profileZapSubject(recipient))];
}

/** A group's key: recipient then signer, 128 hex digits. */
export function zapGroupKey({ recipient, provider }: { recipient: string; provider: string }): string {
  return recipient + provider;
}

export function zapGroupOf(key: string): { recipient: string; provider: string } {
  return { recipient: key.slice(0, 64), provider: key.slice(64, 128) };
}

/** Groups in a fixed order (by key), so that both stores and the recount compare equal. */
export function sortZapGroups(groups: ZapGroup[]): ZapGroup[] {
  return groups.sort((a, b) => (zapGroupKey(a) < zapGroupKey(b) ? -1 : zapGroupKey(a) > zapGroupKey(b) ? 1 : 0));
}

/**
 * Millisatoshi sums are kept as two parts, each an integer JavaScript and Lua numbers hold exactly
 * whatever the order of additions and removals: `high` (the amounts divided by 2^26, rounded down)
 * and `low` (the remainders). A receipt is at most 2^53 - 1 msats, so both stay exact for up to
 * 2^26 receipts per group, and a sum past 2^53 is still exact (as a decimal string).
 */
export const MSATS_SPLIT = 2 ** 26;

export function msatsParts(msats: number): [high: number, low: number] {
  return [Math.floor(msats / MSATS_SPLIT), msats % MSATS_SPLIT];
}

export function msatsOfParts(high: number, low: number): string {
  return (BigInt(high) * BigInt(MSATS_SPLIT) + BigInt(low)).toString();
}

/** One read of zapTotals: a subject's receipts for one recipient, and that recipient's group with one signer. */
export interface ZapQuery {
  subject: ZapSubject;
  recipient: string;
  /** The signer whose group is wanted (the recipient's provider); none: the receipts' count only. */
  provider?: string;
}

export interface ZapTotal {
  /** Receipts of the recipient in the subject, whoever signed them (pending, while its provider has not answered). */
  receipts: number;
  /** The group of the provider asked, when asked and held. */
  group?: ZapGroup;
}

export interface ZapIndex {
  /**
   * For each query, in order: what a read of the figures needs, and nothing else (never the groups
   * of signers nobody asked about, which anyone can add). One round trip.
   */
  zapTotals(queries: readonly ZapQuery[]): Promise<ZapTotal[]>;
  /**
   * The distinct senders of some groups of a subject: `senders` of the figures when more than one
   * group counts (a zap split between recipients); each group's own `senders` is maintained.
   */
  zapSenders(subject: ZapSubject, groups: readonly { recipient: string; provider: string }[]): Promise<Set<string>>;
  /** Every group of each subject, with each recipient's receipts (for `relations check`). */
  zapGroups(subjects: readonly ZapSubject[]): Promise<{ groups: ZapGroup[]; receipts: Map<string, number> }[]>;
  /** Every subject with zaps (for `relations check`), in batches. */
  zapSubjects(): AsyncIterable<ZapSubject[]>;
}
