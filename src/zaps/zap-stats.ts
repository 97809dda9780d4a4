import type { ZapGroup, ZapTotal } from '../store/zap-index.js';
import type { ProviderVerdict } from './zap-providers.js';

/**
 * The zap figures of a subject (DESIGN "Relationships", zaps row) from its recipients'
 * provider verdicts (zap-providers.ts) and what the index holds for them (store/zap-index.ts): a
 * recipient's group of receipts signed by its provider counts; while its provider has not answered,
 * its receipts, whoever signed them, are pending; a recipient whose endpoint refuses adds nothing.
 */
export interface ZapStats {
  /** Valid receipts. */
  count: number;
  /** Their millisatoshis, summed (at most 2^53 - 1: a larger sum reads as that). */
  msats: number;
  /** Distinct zap-request authors among them. */
  senders: number;
  /** Receipts that pass every check but the provider's, which has not answered yet. */
  pending: number;
  /** Receipts of recipients whose provider cannot be checked as things stand (no profile, no LNURL, a refusal): they never count until that changes. */
  unverifiable: number;
  /** Why, once per reason, in the recipients' order (the provider check's own words: `no profile`, `no lud16 or lud06`, …). */
  unverifiableBecause: string[];
}

export const NO_ZAPS: ZapStats = Object.freeze({ count: 0, msats: 0, senders: 0, pending: 0, unverifiable: 0, unverifiableBecause: [] });

/**
 * The most recipients an event's zaps are read for: its author and the pubkeys its `zap` tags name
 * (NIP-57 appendix G: a split names a few). Each costs a profile and a provider answer to read.
 */
export const MAX_ZAP_RECIPIENTS = 8;

/** The figures, and the groups that count (when more than one does, the caller reads the union of their senders). */
export function zapFigures(read: readonly { verdict: ProviderVerdict; total: ZapTotal }[]): { stats: ZapStats; counted: ZapGroup[] } {
  const stats = { ...NO_ZAPS, unverifiableBecause: [] as string[] };
  const counted: ZapGroup[] = [];
  let msats = 0n;
  for (const { verdict, total } of read) {
    if (verdict === 'pending') stats.pending += total.receipts;
    else if ('refused' in verdict) {
      if (total.receipts === 0) continue;
      stats.unverifiable += total.receipts;
      if (!stats.unverifiableBecause.includes(verdict.refused)) stats.unverifiableBecause.push(verdict.refused);
    } else if (total.group && total.group.provider === verdict.provider) {
      counted.push(total.group);
      stats.count += total.group.count;
      msats += BigInt(total.group.msats);
    }
  }
  stats.msats = msats > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(msats);
  stats.senders = counted.length === 1 ? (counted[0] as ZapGroup).senders : 0;
  return { stats, counted };
}
