/**
 * Outbox relay selection (NIP-65): which write relays to ask, for which authors. Greedy weighted set
 * cover: the relay with the most authors still short of coverage, weighted by its health, is taken
 * first (ties: the author's order, then the URL), until every author has the coverage it misses or
 * `maxRelays` relays are taken. Each relay taken gets one subscription for all the
 * authors it covers, however many.
 */
export interface OutboxNeeds {
  /** Per author: its write relays that may still be asked, in the author's order. */
  candidates: ReadonlyMap<string, readonly string[]>;
  /** Per author: how many more relays should cover it. */
  missing: ReadonlyMap<string, number>;
}

export interface OutboxLimits {
  /** Relays this plan may take, at most. */
  maxRelays: number;
  /** Relay health: higher is better (relays/relay-health.ts). */
  score(url: string): number;
  /** False for relays not to ask now (resting). The caller leaves relays it asked already out of `candidates`. */
  usable(url: string): boolean;
}

/** Relay → the authors it is asked about, in the order the relays were taken. */
export function planOutbox({ candidates, missing }: OutboxNeeds, { maxRelays, score, usable }: OutboxLimits): Map<string, string[]> {
  const short = new Map<string, number>();
  for (const [author, count] of missing) if (count > 0) short.set(author, count);
  // Relay → authors that list it (among those short), and the best position any author gives it.
  const coverers = new Map<string, { authors: string[]; rank: number }>();
  for (const [author, relays] of candidates) {
    if (!short.has(author)) continue;
    // Once per relay, at its first position: a relay listed twice covers its author once.
    [...new Set(relays)].forEach((url, position) => {
      if (!usable(url)) return;
      const entry = coverers.get(url) ?? { authors: [], rank: position };
      entry.authors.push(author);
      entry.rank = Math.min(entry.rank, position);
      coverers.set(url, entry);
    });
  }
  const plan = new Map<string, string[]>();
  const scores = new Map<string, number>();
  const scoreOf = (url: string) => {
    let value = scores.get(url);
    if (value === undefined) scores.set(url, (value = score(url)));
    return value;
  };
  while (plan.size < maxRelays && short.size > 0) {
    let best: { url: string; gain: number; rank: number } | undefined;
    for (const [url, { authors, rank }] of coverers) {
      const covers = authors.filter((author) => short.has(author)).length;
      if (covers === 0) continue;
      // A relay that rarely answers covers its authors in name only.
      const candidate = { url, gain: covers * scoreOf(url), rank };
      if (!best || better(candidate, best)) best = candidate;
    }
    if (!best) break;
    const covered = (coverers.get(best.url)?.authors ?? []).filter((author) => short.has(author));
    coverers.delete(best.url);
    plan.set(best.url, covered);
    for (const author of covered) {
      const left = (short.get(author) ?? 1) - 1;
      if (left > 0) short.set(author, left);
      else short.delete(author);
    }
  }
  return plan;
}

function better(a: { url: string; gain: number; rank: number }, b: { url: string; gain: number; rank: number }): boolean {
  if (a.gain !== b.gain) return a.gain > b.gain;
  if (a.rank !== b.rank) return a.rank < b.rank;
  return a.url < b.url;
}
