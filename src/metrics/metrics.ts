import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/**
 * The service's Prometheus metrics (issue 16 §1), one registry per process: `/metrics` serves it
 * (http/routes/metrics.ts). Labels are bounded by construction: routes are the registered
 * patterns (anything else is `unmatched`), relays are the configured ones by URL and every other
 * relay is `other`, outcomes are fixed words; no id, pubkey or client address is ever a label.
 *
 * Children are looked up once per label set and kept (prom-client hashes the labels of every
 * `inc({…})` call): counting costs a property read and an addition on the hot path.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const PREFIX = 'nostr_lookup_';

const httpRequests = new Counter({
  name: `${PREFIX}http_requests_total`,
  help: 'HTTP requests answered, by route pattern, method and status.',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [registry],
});
const httpDuration = new Histogram({
  name: `${PREFIX}http_request_duration_seconds`,
  help: 'Time to answer an HTTP request, by route pattern.',
  labelNames: ['route'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});
const storeCommands = new Counter({
  name: `${PREFIX}store_commands_total`,
  help: 'Store operations: a Redis command or pipeline, an embedded read or write transaction.',
  labelNames: ['store'] as const,
  registers: [registry],
});
const storeFailures = new Counter({
  name: `${PREFIX}store_failures_total`,
  help: 'Store commands that failed (the store unreachable, too slow, or refusing).',
  labelNames: ['store'] as const,
  registers: [registry],
});
const lookups = new Counter({
  name: `${PREFIX}lookups_total`,
  help: 'Keys looked up (events by id, profiles by pubkey, addresses), by what answered them.',
  labelNames: ['kind', 'outcome'] as const,
  registers: [registry],
});
const relayConnections = new Counter({
  name: `${PREFIX}relay_connections_total`,
  help: 'WebSocket connections opened to relays (configured relays by URL, others as "other").',
  labelNames: ['relay'] as const,
  registers: [registry],
});
const relayRequests = new Counter({
  name: `${PREFIX}relay_requests_total`,
  help: 'REQs sent to relays.',
  labelNames: ['relay'] as const,
  registers: [registry],
});
const relayOutcomes = new Counter({
  name: `${PREFIX}relay_request_outcomes_total`,
  help: 'How relay REQs ended: eose, timeout, failed, closed, stopped (enough found), refused, skipped (resting).',
  labelNames: ['relay', 'outcome'] as const,
  registers: [registry],
});
const relayEvents = new Counter({
  name: `${PREFIX}relay_events_total`,
  help: 'Events received from relays, verified (id and signature) or rejected.',
  labelNames: ['relay', 'result'] as const,
  registers: [registry],
});
const profileRefreshes = new Counter({
  name: `${PREFIX}profile_refreshes_total`,
  help: 'Background refreshes of stale profiles and addresses started (keys claimed and asked of relays).',
  labelNames: ['kind'] as const,
  registers: [registry],
});
const coalesced = new Counter({
  name: `${PREFIX}fill_coalesced_total`,
  help: 'Keys a request did not ask relays for because a lookup of the same key was already under way.',
  labelNames: ['kind'] as const,
  registers: [registry],
});
/** The running sync's counts (relay-sync.ts keeps them), read when metrics are collected. */
let syncCounts: Readonly<Record<string, number>> | undefined;
new Counter({
  name: `${PREFIX}sync_events_total`,
  help: 'Events `sync` received from relays (received, invalid) and what became of them (stored, replaced, duplicate, …).',
  labelNames: ['result'] as const,
  registers: [registry],
  collect() {
    if (!syncCounts) return;
    this.reset();
    for (const [result, count] of Object.entries(syncCounts)) this.inc({ result }, count);
  },
});

/** A counter's children by label values, made once each. */
function children<L extends string>(counter: Counter<L>) {
  const made = new Map<string, ReturnType<Counter<L>['labels']>>();
  return (...values: string[]) => {
    const key = values.join('\u0000');
    let child = made.get(key);
    if (!child) {
      child = counter.labels(...values);
      made.set(key, child);
    }
    return child;
  };
}

const httpChild = children(httpRequests);
const durationChildren = new Map<string, ReturnType<typeof httpDuration.labels>>();
const storeCommandChild = children(storeCommands);
const storeFailureChild = children(storeFailures);
const lookupChild = children(lookups);
const relayConnectionChild = children(relayConnections);
const relayRequestChild = children(relayRequests);
const relayOutcomeChild = children(relayOutcomes);
const relayEventChild = children(relayEvents);
const refreshChild = children(profileRefreshes);
const coalescedChild = children(coalesced);

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
 * A relay as a label: a configured relay (RELAYS, INDEXER_RELAYS) by its URL, any other (learned
 * from relay lists and hints: unbounded, and chosen by strangers) as `other`.
 */
export function relayLabel(url: string, learned: boolean): string {
  return learned ? 'other' : url;
}

/** What the rest of the service counts. */
export const metrics = {
  httpRequest(route: string, method: string, status: number, seconds: number): void {
    httpChild(route, method, String(status)).inc();
    let duration = durationChildren.get(route);
    if (!duration) {
      duration = httpDuration.labels(route);
      durationChildren.set(route, duration);
    }
    duration.observe(seconds);
  },
  storeCommand(store: 'redis' | 'embedded'): void {
    storeCommandChild(store).inc();
  },
  storeFailure(store: 'redis' | 'embedded'): void {
    storeFailureChild(store).inc();
  },
  lookups(kind: string, outcome: LookupOutcome, count: number): void {
    if (count > 0) lookupChild(kind, outcome).inc(count);
  },
  relayConnection(relay: string): void {
    relayConnectionChild(relay).inc();
  },
  relayRequest(relay: string): void {
    relayRequestChild(relay).inc();
  },
  relayOutcome(relay: string, outcome: string): void {
    relayOutcomeChild(relay, outcome).inc();
  },
  relayEvent(relay: string, result: 'verified' | 'rejected'): void {
    relayEventChild(relay, result).inc();
  },
  profileRefresh(kind: string, count: number): void {
    if (count > 0) refreshChild(kind).inc(count);
  },
  coalesced(kind: string, count: number): void {
    if (count > 0) coalescedChild(kind).inc(count);
  },
  /** `sync` in this process: its counts are exported as nostr_lookup_sync_events_total. */
  followSync<T extends { readonly [K in keyof T]: number }>(counts: T): void {
    syncCounts = counts as Readonly<Record<string, number>>;
  },
};
