// From the answers and what the relays saw, the figures of one run: recall per kind of lookup,
// latency, and relays asked per lookup (REQs attributed to the lookup whose ids or pubkeys they name).
import type { Accounting } from '../network/accounting.js';
import type { Network } from '../network/network.js';
import type { Answer } from '../lookups/drive.js';
import { LOOKUP_KINDS, type Lookup, type LookupKind } from '../lookups/sample.js';

export interface Recall {
  /** What is judged: lookups, or for `map` the profiles the maps should hold. */
  units: number;
  reachable: number;
  foundReachable: number;
  /** Found although not reachable by our definition (a gap in the definition, or a lucky find). */
  foundUnreachable: number;
  existsLive: number;
  foundExistsLive: number;
}

export interface KindMetrics {
  lookups: number;
  recall: Recall;
  /** `map`: lookups whose event itself was found. */
  eventsFound: number;
  /** `bare`: found of those a live base relay holds. */
  onLiveBase: { held: number; found: number };
  statuses: Map<string, number>;
  p50: number;
  p99: number;
  max: number;
  /** Distinct relays that received a REQ naming the lookup's ids or pubkeys, mean and most. */
  relaysMean: number;
  relaysMax: number;
  reqsMean: number;
}

export interface RunMetrics {
  byKind: Record<LookupKind, KindMetrics>;
  peakOpen: number;
  peakRelaysOpen: number;
  peakWebSockets: number;
  deadDials: number;
  reqs: number;
  /** REQs that name none of the lookups' ids or pubkeys. */
  unattributedReqs: number;
  /** REQs asking a relay that the named user lists as read-only (and no hint names). */
  readOnlyReqs: number;
  seconds: number;
}

export function percentile(values: readonly number[], share: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))] as number;
}

type Body = { profile?: { id?: string }; event?: { id?: string }; profiles?: Record<string, { id?: string }> } | undefined;

function found(lookup: Lookup, answer: Answer): boolean {
  if (answer.status !== 200) return false;
  const body = answer.body as Body;
  return (lookup.kind === 'profile' ? body?.profile?.id : body?.event?.id) === lookup.wantId;
}

function statusName(answer: Answer): string {
  if (answer.status !== 0) return String(answer.status);
  return answer.error?.includes('timeout') || answer.error?.includes('aborted') ? 'no answer' : 'socket error';
}

export function measureRun(network: Network, lookups: readonly Lookup[], answers: readonly Answer[], accounting: Accounting, seconds: number): RunMetrics {
  const owner = new Map<string, number>();
  lookups.forEach((lookup, index) => lookup.keys.forEach((key) => owner.set(key, index)));
  const authorOf = new Map<string, string>();
  for (const user of network.dataset.users) for (const note of user.notes) authorOf.set(note.event.id, user.pubkey);
  const trusted = new Set([network.plan.indexer, ...network.plan.base]);

  const relaysOf = lookups.map(() => new Set<number>());
  const reqsOf = lookups.map(() => 0);
  let unattributedReqs = 0;
  let readOnlyReqs = 0;
  for (const { relay, filters } of accounting.reqs) {
    const owners = new Set<number>();
    const users = new Set<string>();
    for (const filter of filters) {
      for (const id of filter.ids ?? []) {
        if (owner.has(id)) owners.add(owner.get(id) as number);
        const author = authorOf.get(id);
        if (author) users.add(author);
      }
      for (const pubkey of filter.authors ?? []) {
        if (owner.has(pubkey)) owners.add(owner.get(pubkey) as number);
        users.add(pubkey);
      }
    }
    if (owners.size === 0) unattributedReqs += 1;
    for (const index of owners) {
      relaysOf[index]?.add(relay);
      reqsOf[index] = (reqsOf[index] ?? 0) + 1;
    }
    const hinted = [...owners].some((index) => lookups[index]?.hints.includes(relay));
    const readOnly = [...users].some((pubkey) => network.dataset.byPubkey.get(pubkey)?.reads.includes(relay));
    if (readOnly && !trusted.has(relay) && !hinted) readOnlyReqs += 1;
  }

  const byKind = {} as Record<LookupKind, KindMetrics>;
  for (const kind of LOOKUP_KINDS) {
    const indexes = lookups.flatMap((lookup, index) => (lookup.kind === kind ? [index] : []));
    const recall: Recall = { units: 0, reachable: 0, foundReachable: 0, foundUnreachable: 0, existsLive: 0, foundExistsLive: 0 };
    const count = (unit: { reachable: boolean; existsLive: boolean }, isFound: boolean) => {
      recall.units += 1;
      if (unit.reachable) recall.reachable += 1;
      if (unit.existsLive) recall.existsLive += 1;
      if (isFound && unit.reachable) recall.foundReachable += 1;
      if (isFound && !unit.reachable) recall.foundUnreachable += 1;
      if (isFound && unit.existsLive) recall.foundExistsLive += 1;
    };
    const statuses = new Map<string, number>();
    let eventsFound = 0;
    const onLiveBase = { held: 0, found: 0 };
    for (const index of indexes) {
      const lookup = lookups[index] as Lookup;
      const answer = answers[index] as Answer;
      statuses.set(statusName(answer), (statuses.get(statusName(answer)) ?? 0) + 1);
      const isFound = found(lookup, answer);
      if (isFound) eventsFound += 1;
      if (lookup.onLiveBase) {
        onLiveBase.held += 1;
        if (isFound) onLiveBase.found += 1;
      }
      if (kind !== 'map') {
        count(lookup, isFound);
        continue;
      }
      const map = (answer.body as Body)?.profiles ?? {};
      for (const expected of lookup.profiles) count(expected, isFound && map[expected.pubkey]?.id === expected.id);
    }
    const latencies = indexes.map((index) => (answers[index] as Answer).ms);
    const relays = indexes.map((index) => relaysOf[index]?.size ?? 0);
    const reqs = indexes.map((index) => reqsOf[index] ?? 0);
    const mean = (values: number[]) => (values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : Number.NaN);
    byKind[kind] = {
      lookups: indexes.length,
      recall,
      eventsFound,
      onLiveBase,
      statuses,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      max: Math.max(...latencies),
      relaysMean: mean(relays),
      relaysMax: Math.max(...relays),
      reqsMean: mean(reqs),
    };
  }
  return {
    byKind,
    peakOpen: accounting.peakOpen,
    peakRelaysOpen: accounting.peakRelaysOpen,
    peakWebSockets: accounting.peakWebSockets,
    deadDials: accounting.deadDials,
    reqs: accounting.reqs.length,
    unattributedReqs,
    readOnlyReqs,
    seconds,
  };
}
