import type { IndexSummary } from '../store/index-summary.js';
import type { CountedLookup, ReadReceipt } from '../store/read-receipt.js';
import { collectDefaultMetrics, type Metric, Registry } from 'prom-client';
import { relayUrlForLog } from '../relays/relay-url.js';

/**
 * The service's Prometheus metrics, one registry per process: `/metrics` serves it
 * (http/routes/metrics.ts). Labels are bounded by construction: routes are the registered
 * patterns (anything else is `unmatched`), relays are the configured ones by URL (without query:
 * relayLabel) and every other relay is `other`, outcomes are fixed words; no id, pubkey or client
 * address is ever a label.
 *
 * Counting is an addition to a plain number, found through a tree of Maps by label value; prom-client
 * reads the numbers when /metrics is scraped. (Its own counters hash the labels on every
 * increment: with a histogram, that was ~3% of a cached lookup's CPU, against a 5% budget for
 * metrics and rate limits together.)
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const PREFIX = 'nostr_lookup_';

interface Series {
  labels: Record<string, string>;
  value: number;
}

interface MetricValue {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** A metric prom-client formats from what `read` returns (or resolves to) at scrape time. */
function scraped(name: string, help: string, type: 'counter' | 'histogram' | 'gauge', read: () => MetricValue[] | Promise<MetricValue[]>): void {
  registry.registerMetric({
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: await read() }),
    reset: () => {},
  } as unknown as Metric);
}

/** A counter by label values: `series(...values)` is the number to add to (made on first use). */
function counter(name: string, help: string, labelNames: readonly string[]): (...values: string[]) => Series {
  const root = new Map<string, unknown>();
  const all: Series[] = [];
  scraped(name, help, 'counter', () => all.map(({ labels, value }) => ({ labels, value })));
  return (...values) => {
    let node = root;
    for (let index = 0; index < values.length - 1; index++) {
      let next = node.get(values[index] as string) as Map<string, unknown> | undefined;
      if (!next) {
        next = new Map();
        node.set(values[index] as string, next);
      }
      node = next;
    }
    const last = values[values.length - 1] as string;
    let series = node.get(last) as Series | undefined;
    if (!series) {
      series = { labels: Object.fromEntries(labelNames.map((label, index) => [label, values[index] as string])), value: 0 };
      node.set(last, series);
      all.push(series);
    }
    return series;
  };
}

const httpRequests = counter(`${PREFIX}http_requests_total`, 'HTTP requests answered, by route pattern, method and status.', ['route', 'method', 'status']);

const DURATION_BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** One route's durations: counts per bound (not cumulative; +Inf last), their sum and count. */
interface Durations {
  route: string;
  counts: number[];
  sum: number;
  count: number;
}
const durations = new Map<string, Durations>();
const DURATION_NAME = `${PREFIX}http_request_duration_seconds`;
scraped(DURATION_NAME, 'Time to answer an HTTP request, by route pattern.', 'histogram', () =>
  [...durations.values()].flatMap(({ route, counts, sum, count }) => {
    let cumulative = 0;
    const buckets = counts.map((bucketCount, index) => {
      cumulative += bucketCount;
      return { metricName: `${DURATION_NAME}_bucket`, labels: { le: index < DURATION_BOUNDS.length ? (DURATION_BOUNDS[index] as number) : '+Inf', route }, value: cumulative };
    });
    return [...buckets, { metricName: `${DURATION_NAME}_sum`, labels: { route }, value: sum }, { metricName: `${DURATION_NAME}_count`, labels: { route }, value: count }];
  }),
);

const storeCommands = counter(`${PREFIX}store_commands_total`, 'Store operations: a Redis command or pipeline, an embedded read or write transaction.', ['store']);
const storeFailures = counter(`${PREFIX}store_failures_total`, 'Store commands that failed (the store unreachable, too slow, or refusing).', ['store']);
const lookups = counter(`${PREFIX}lookups_total`, 'Keys looked up (events by id, profiles by pubkey, addresses), by what answered them.', ['kind', 'outcome']);
const relayConnections = counter(`${PREFIX}relay_connections_total`, 'WebSocket connections opened to relays (configured relays by URL, others as "other").', ['relay']);
const relayRequests = counter(`${PREFIX}relay_requests_total`, 'REQs sent to relays.', ['relay']);
const relayOutcomes = counter(
  `${PREFIX}relay_request_outcomes_total`,
  'How relay REQs ended: eose, timeout, failed, closed, stopped (enough found), refused, skipped (resting).',
  ['relay', 'outcome'],
);
const relayEvents = counter(`${PREFIX}relay_events_total`, 'Events received from relays, verified (id and signature) or rejected.', ['relay', 'result']);
const profileRefreshes = counter(`${PREFIX}profile_refreshes_total`, 'Background refreshes of stale profiles and addresses started (keys claimed and asked of relays).', ['kind']);
const rateLimitFailures = counter(`${PREFIX}rate_limit_store_failures_total`, 'Rate-limit counters that could not be read in Redis (the request was let through).', ['store']);
const coalesced = counter(`${PREFIX}fill_coalesced_total`, 'Keys a request did not ask relays for because a lookup of the same key was already under way.', ['kind']);

/** The running sync's counts (relay-sync.ts keeps them), read when metrics are collected. */
let syncCounts: Readonly<Record<string, number>> | undefined;
scraped(`${PREFIX}sync_events_total`, 'Events `sync` received from relays (received, invalid) and what became of them (stored, replaced, duplicate, …).', 'counter', () =>
  Object.entries(syncCounts ?? {}).map(([result, value]) => ({ labels: { result }, value })),
);

/** The hot cache of this process (store/redis/hot-cache.ts), read when metrics are collected. */
let hotCache: { readonly stats: Readonly<Record<'hits' | 'misses' | 'invalidations' | 'flushes' | 'answers', number>>; readonly size: number; readonly active: boolean } | undefined;
scraped(`${PREFIX}hot_cache_reads_total`, 'Store reads the hot cache answered whole (hit) or sent on to Redis (miss).', 'counter', () =>
  hotCache ? [{ labels: { result: 'hit' }, value: hotCache.stats.hits }, { labels: { result: 'miss' }, value: hotCache.stats.misses }] : [],
);
scraped(`${PREFIX}hot_cache_invalidations_total`, 'Keys Redis said were written (dropped from the hot cache), and times the cache was emptied (flush).', 'counter', () =>
  hotCache ? [{ labels: { kind: 'key' }, value: hotCache.stats.invalidations }, { labels: { kind: 'flush' }, value: hotCache.stats.flushes }] : [],
);
scraped(`${PREFIX}hot_cache_answers_served_total`, 'Answers (REST, and prepared GraphQL queries) served as kept, made only of hot cache entries that still hold (store/answer-cache.ts): no lookup run, no cache read.', 'counter', () =>
  hotCache ? [{ labels: {}, value: hotCache.stats.answers }] : [],
);
/** How full the index is (store/index-summary.ts), read from the store's kept counters at scrape time. */
let indexSummary: (() => Promise<IndexSummary>) | undefined;
/** One read per scrape, shared by the gauges below (they are collected together). */
let summaryRead: Promise<IndexSummary | undefined> | undefined;
function readSummary(): Promise<IndexSummary | undefined> {
  summaryRead ??= (indexSummary?.() ?? Promise.resolve(undefined)).catch(() => undefined).finally(() => setImmediate(() => (summaryRead = undefined)));
  return summaryRead;
}
scraped(`${PREFIX}index_events`, 'Servable events the index holds, by kind (counters kept as events are stored, replaced and removed; none while the store does not answer).', 'gauge', async () => {
  const summary = await readSummary();
  return summary ? Object.entries(summary.kinds).map(([kind, value]) => ({ labels: { kind }, value })) : [];
});
scraped(`${PREFIX}index_follows`, 'Follows the index holds: the pubkeys the latest follow lists name, summed (kept as lists are stored, replaced and removed).', 'gauge', async () => {
  const summary = await readSummary();
  return summary ? [{ labels: {}, value: summary.follows }] : [];
});
scraped(`${PREFIX}index_notifications`, 'Notifications the index holds, all recipients (kept as events are stored, replaced and removed).', 'gauge', async () => {
  const summary = await readSummary();
  return summary ? [{ labels: {}, value: summary.notifications }] : [];
});
scraped(`${PREFIX}index_stored_bytes`, "Bytes the store takes: the embedded store's data file, or Redis's used_memory summed over its masters.", 'gauge', async () => {
  const summary = await readSummary();
  return summary && summary.storedBytes !== null ? [{ labels: {}, value: summary.storedBytes }] : [];
});

scraped(`${PREFIX}hot_cache_bytes`, 'Bytes the hot cache holds (as it measures them: values, and kept answers\' bookkeeping); 0 while it is off.', 'gauge', () => (hotCache ? [{ labels: {}, value: hotCache.active ? hotCache.size : 0 }] : []));

export type LookupOutcome =
  /** The index held it (or its deletion). */
  | 'index_hit'
  /** Not in the index, and relays are off (RELAYS empty): 404. */
  | 'index_miss'
  /** Fetched from relays on a miss. */
  | 'relay_found'
  /** A relay held its author's deletion (NIP-09) or request to vanish: 404 deleted. */
  | 'relay_deleted'
  /** A miss remembered from an earlier search: not asked again. */
  | 'remembered_miss'
  /** Asked of relays, not found (404 for the thing asked). */
  | 'relay_not_found'
  /** Relays could not be asked or did not answer in time (500 for the thing asked). */
  | 'relay_unavailable'
  /** Past the per-client caps: not asked (429 for the thing asked). */
  | 'throttled'
  /** Past MISS_RATE_LIMIT: not asked (429 rate_limited). */
  | 'rate_limited';

/**
 * A relay as a label: a configured relay (RELAYS, INDEXER_RELAYS) by its scheme, host and path
 * only, any other (learned from relay lists and hints: unbounded, and chosen by strangers) as
 * `other`. A configured URL may carry an access token in its query string (or credentials): a
 * label is shown to whoever scrapes /metrics, so the query, the fragment and any userinfo are left
 * out.
 */
export function relayLabel(url: string, learned: boolean): string {
  return learned ? 'other' : relayUrlForLog(url);
}

/** What the rest of the service counts. */
export const metrics = {
  httpRequest(route: string, method: string, status: number, seconds: number): void {
    httpRequests(route, method, statusText(status)).value += 1;
    let routeDurations = durations.get(route);
    if (!routeDurations) {
      routeDurations = { route, counts: new Array<number>(DURATION_BOUNDS.length + 1).fill(0), sum: 0, count: 0 };
      durations.set(route, routeDurations);
    }
    let bucket = 0;
    while (bucket < DURATION_BOUNDS.length && seconds > (DURATION_BOUNDS[bucket] as number)) bucket += 1;
    routeDurations.counts[bucket] = (routeDurations.counts[bucket] as number) + 1;
    routeDurations.sum += seconds;
    routeDurations.count += 1;
  },
  storeCommand(store: 'redis' | 'embedded'): void {
    storeCommands(store).value += 1;
  },
  storeFailure(store: 'redis' | 'embedded'): void {
    storeFailures(store).value += 1;
  },
  /** `reads`: the request's receipt, which counts them again when its answer is served again (read-receipt.ts). */
  lookups(kind: string, outcome: LookupOutcome, count: number, reads?: ReadReceipt): void {
    if (count <= 0) return;
    lookups(kind, outcome).value += count;
    reads?.lookups.push([kind, outcome, count]);
  },
  /** Lookups a kept answer stands for, counted as when it was made. */
  lookupsAgain(counted: readonly CountedLookup[]): void {
    for (const [kind, outcome, count] of counted) lookups(kind, outcome as LookupOutcome).value += count;
  },
  relayConnection(relay: string): void {
    relayConnections(relay).value += 1;
  },
  relayRequest(relay: string): void {
    relayRequests(relay).value += 1;
  },
  relayOutcome(relay: string, outcome: string): void {
    relayOutcomes(relay, outcome).value += 1;
  },
  relayEvent(relay: string, result: 'verified' | 'rejected'): void {
    relayEvents(relay, result).value += 1;
  },
  profileRefresh(kind: string, count: number): void {
    if (count > 0) profileRefreshes(kind).value += count;
  },
  rateLimitFailure(): void {
    rateLimitFailures('redis').value += 1;
  },
  coalesced(kind: string, count: number): void {
    if (count > 0) coalesced(kind).value += count;
  },
  /** The hot cache of `serve` in this process: exported as nostr_lookup_hot_cache_*. */
  followHotCache(cache: typeof hotCache): void {
    hotCache = cache;
  },
  /** The index `serve` answers from: exported as nostr_lookup_index_* (read at scrape time). */
  followIndex(read: () => Promise<IndexSummary>): void {
    indexSummary = read;
  },
  /** `sync` in this process: its counts are exported as nostr_lookup_sync_events_total. */
  followSync<T extends { readonly [K in keyof T]: number }>(counts: T): void {
    syncCounts = counts as Readonly<Record<string, number>>;
  },
};

/** HTTP statuses as label values, made once each. */
const STATUS_TEXT = new Map<number, string>();
function statusText(status: number): string {
  let text = STATUS_TEXT.get(status);
  if (text === undefined) {
    text = String(status);
    STATUS_TEXT.set(status, text);
  }
  return text;
}
