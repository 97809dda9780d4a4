import { pause, untilAborted } from '../abortable.js';
import type { RelayConfig } from '../config/env.js';
import type { Logger } from '../logger.js';
import type { NostrEvent } from '../nostr/event.js';
import { isEphemeralKind, PROFILE_KIND, supersedes } from '../nostr/kinds.js';
import type { RelayPool, RelayQuery, RelayQueryResult } from '../relays/relay-pool.js';
import type { EventStore, StoredEvent } from '../store/event-store.js';
import { eventMarkKey, profileMarkKey } from '../store/mark-store.js';
import { toStoredEvent } from '../store/stored-event.js';
import { RelayRequest } from './relay-request.js';

/**
 * What the relays said about one key:
 * - `found`: a verified event, already written to the index;
 * - `absent`: at least one relay answered in full (EOSE) and none had it;
 * - `unavailable`: no relay could be reached or answered before the deadline;
 * - `throttled`: not asked: the client already has MISS_CONCURRENCY_PER_CLIENT lookups at the relays,
 *   or the request has asked RELAY_MAX_KEYS_PER_REQUEST keys.
 */
export type Fetched = Found | { kind: 'absent' } | { kind: 'unavailable' } | { kind: 'throttled' };
type Found = { kind: 'found'; stored: StoredEvent };

const JOINABLE_AFTER_SETTLED_MS = 1000;
/**
 * Ids or authors per filter, at most. A GraphQL request can want thousands of profiles (100 events
 * × 100 relevant pubkeys); relays refuse oversized filters, so larger sets are split into several
 * filters of the same REQ: still one subscription per relay.
 */
const MAX_VALUES_PER_FILTER = 500;
/** How often an instance looks in the store for a result another instance is fetching. */
const OTHER_INSTANCE_POLL_MS = 50;
const ABSENT: Fetched = { kind: 'absent' };
const UNAVAILABLE: Fetched = { kind: 'unavailable' };
const THROTTLED: Fetched = { kind: 'throttled' };

export interface FetchRequest {
  /** Relay hints that came with the request (already limited to a few; the pool applies the address policy). */
  hints: readonly string[];
  /** Who asks (the client's address), for the per-client cap on lookups at the relays. */
  client: string;
  /** Aborts at the request's deadline, shared by all of its relay lookups. */
  signal: AbortSignal;
  /** Keys (ids, pubkeys) this request has asked of the relays so far, capped by RELAY_MAX_KEYS_PER_REQUEST. */
  keysAsked: number;
  /**
   * Aborts when its relay queries must end: a little before the deadline, so that what arrived can
   * still be stored and returned in time.
   */
  querySignal: AbortSignal;
}

export interface RelayFillDependencies {
  pool: RelayPool;
  store: EventStore;
  config: RelayConfig;
  logger: Logger;
}

/**
 * Fetch on miss: asks the relays for what the index lacks, stores what verifies, and keeps the
 * marks (store/mark-store.ts) that make up the negative cache and profile freshness.
 *
 * Concurrent requests for the same key share one relay query: within a process through a map of
 * queries in flight, across processes sharing the store through claims (see acrossInstances).
 */
export class RelayFill {
  private readonly inflight = new Map<string, Promise<Fetched>>();
  private readonly claiming = new Set<string>();
  /** Lookups at the relays in progress, per client. */
  private readonly missesByClient = new Map<string, number>();

  constructor(private readonly deps: RelayFillDependencies) {}

  /** A request starting now: its deadline is RELAY_TIMEOUT_MS away. */
  newRequest(client = ''): RelayRequest {
    return new RelayRequest(this.deps.config.timeoutMs, client);
  }

  /**
   * Events by id, for ids the index lacks: one subscription per relay for all. The configured
   * relays (trusted) are asked for the ids no mark covers, coalesced with other requests and
   * instances, and only their answer is remembered (a miss mark for every instance). The request's
   * own relay hints (untrusted) are asked, in parallel, for every id, marked or not: their answer
   * counts for this request only (issue 18 §3), so a hint can neither be hidden by a miss another
   * request left nor leave one for others.
   */
  fetchEvents(ids: readonly string[], request: FetchRequest, knownMisses: ReadonlySet<string> = NO_KEYS): Promise<Fetched[]> {
    return this.perClient(request, ids, (admitted) => this.fetchEventsNow(admitted, request, knownMisses));
  }

  private fetchEventsNow(ids: readonly string[], request: FetchRequest, knownMisses: ReadonlySet<string>): Promise<Fetched[]> {
    const unmarked = ids.filter((id) => !knownMisses.has(id));
    const trusted = this.coalesced(unmarked.map(eventMarkKey), request, (keys) =>
      this.acrossInstances(keys, request, (mine) => this.queryEvents(mine.map(keyTail), request)),
    );
    const hints = this.untrustedHints(request);
    const hinted = hints.length > 0 ? this.queryEventsOnHints(ids, hints, request) : undefined;
    return combineAnswers(ids, unmarked, trusted, hinted, (first) => first);
  }

  /** The newest profiles of pubkeys the index lacks: one `{kinds:[0], authors:[…]}` per relay for all; trusted and hinted relays as for fetchEvents. */
  fetchProfiles(pubkeys: readonly string[], request: FetchRequest, knownMisses: ReadonlySet<string> = NO_KEYS): Promise<Fetched[]> {
    return this.perClient(request, pubkeys, (admitted) => this.fetchProfilesNow(admitted, request, knownMisses));
  }

  /**
   * Every lookup that goes to relays fans out to every relay: one client sending random ids must not
   * be able to make us flood them (issue 18). At most `missesPerClient` lookups at once per client,
   * and at most `maxKeysPerRequest` keys asked per request (a GraphQL request can name thousands);
   * past either, the keys are `throttled` (429 for the thing asked, absent from a profiles map).
   */
  private async perClient(
    request: FetchRequest,
    keys: readonly string[],
    fetch: (admitted: readonly string[]) => Promise<Fetched[]>,
  ): Promise<Fetched[]> {
    const running = this.missesByClient.get(request.client) ?? 0;
    const cap = this.deps.config.missesPerClient;
    if (cap > 0 && running >= cap) return keys.map(() => THROTTLED);
    const room = Math.max(0, this.deps.config.maxKeysPerRequest - request.keysAsked);
    const admitted = keys.slice(0, room);
    if (admitted.length === 0) return keys.map(() => THROTTLED);
    request.keysAsked += admitted.length;
    this.missesByClient.set(request.client, running + 1);
    try {
      const answers = await fetch(admitted);
      return keys.map((_, index) => answers[index] ?? THROTTLED);
    } finally {
      const left = (this.missesByClient.get(request.client) ?? 1) - 1;
      if (left <= 0) this.missesByClient.delete(request.client);
      else this.missesByClient.set(request.client, left);
    }
  }

  private fetchProfilesNow(pubkeys: readonly string[], request: FetchRequest, knownMisses: ReadonlySet<string>): Promise<Fetched[]> {
    const unmarked = pubkeys.filter((pubkey) => !knownMisses.has(pubkey));
    const trusted = this.coalesced(unmarked.map(profileMarkKey), request, (keys) =>
      this.acrossInstances(keys, request, (mine) => this.queryProfiles(mine.map(keyTail), request, { markResults: true })),
    );
    const hints = this.untrustedHints(request);
    const hinted = hints.length > 0 ? this.queryProfilesOnHints(pubkeys, hints, request) : undefined;
    return combineAnswers(pubkeys, unmarked, trusted, hinted, (a, b) =>
      supersedes(b.stored.event, a.stored.event) ? b : a,
    );
  }

  /**
   * Stale-while-revalidate: the caller has already served these stored profiles; this refreshes them
   * in the background, once per PROFILE_TTL per pubkey across every instance sharing the store (the
   * mark is claimed first; whoever wins it asks the relays).
   */
  refreshProfiles(pubkeys: readonly string[]): void {
    const wanted = pubkeys.filter((pubkey) => !this.claiming.has(pubkey));
    if (wanted.length === 0) return;
    for (const pubkey of wanted) this.claiming.add(pubkey);
    const refresh = async () => {
      const claimed = await this.deps.store.marks.claim(wanted.map(profileMarkKey), this.deps.config.profileTtlSeconds);
      const mine = wanted.filter((_, index) => claimed[index]);
      if (mine.length === 0) return;
      const request = this.newRequest();
      // Coalesced with cold fetches of the same pubkeys; the claimed marks stand as they are.
      await this.coalesced(mine.map(profileMarkKey), request, (keys) =>
        this.queryProfiles(keys.map(keyTail), request, { markResults: false }),
      );
    };
    refresh()
      .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'background profile refresh failed'))
      .finally(() => {
        for (const pubkey of wanted) this.claiming.delete(pubkey);
      });
  }

  /**
   * Events by id from `relays` (trusted) or `hints` (untrusted), for queryEvents and
   * queryEventsOnHints alike: what verified, and whether any of them answered in full.
   */
  private async collectEvents(
    ids: readonly string[],
    request: FetchRequest,
    { relays, hints }: { relays: readonly string[]; hints?: readonly string[] },
  ): Promise<{ found: Map<string, NostrEvent>; answered: boolean }> {
    const wanted = new Set(ids);
    const found = new Map<string, NostrEvent>();
    const { answered } = await this.ask({
      relays,
      hints,
      filters: chunks([...wanted], MAX_VALUES_PER_FILTER).map((part) => ({ ids: part })),
      signal: request.querySignal,
      onEvent: (event) => {
        if (wanted.has(event.id)) found.set(event.id, event);
        // An id names one event: the first that verifies is the answer (NIP-01).
        return found.size === wanted.size;
      },
    });
    return { found, answered };
  }

  /** The newest profiles of pubkeys from `relays` or `hints`, as collectEvents. */
  private async collectProfiles(
    pubkeys: readonly string[],
    request: FetchRequest,
    { relays, hints }: { relays: readonly string[]; hints?: readonly string[] },
  ): Promise<{ newest: Map<string, NostrEvent>; answered: boolean }> {
    const newest = new Map<string, NostrEvent>();
    const { answered } = await this.ask({
      relays,
      hints,
      filters: chunks([...new Set(pubkeys)], MAX_VALUES_PER_FILTER).map((part) => ({ kinds: [PROFILE_KIND], authors: part })),
      signal: request.querySignal,
      // Relays may hold different versions: wait for every EOSE (or the deadline), keep the newest.
      onEvent: (event) => {
        const held = newest.get(event.pubkey);
        if (!held || supersedes(event, held)) newest.set(event.pubkey, event);
        return false;
      },
    });
    return { newest, answered };
  }

  private async queryEvents(ids: string[], request: FetchRequest): Promise<Map<string, Fetched>> {
    const { found, answered } = await this.collectEvents(ids, request, { relays: this.deps.config.urls });
    const absent = answered ? ids.filter((id) => !found.has(id)) : [];
    // An event found but not kept (ephemeral, or an old version of a replaceable event) is answered
    // now and then remembered like a miss: otherwise every request for it would ask the relays again.
    const [notKept] = await Promise.all([
      this.store([...found.values()]),
      this.mark(absent.map(eventMarkKey), this.deps.config.negativeTtlSeconds),
    ]);
    await this.mark(notKept.map(eventMarkKey), this.deps.config.negativeTtlSeconds);
    return new Map(ids.map((id) => [eventMarkKey(id), result(found.get(id), answered)]));
  }

  private async queryProfiles(
    pubkeys: string[],
    request: FetchRequest,
    { markResults }: { markResults: boolean },
  ): Promise<Map<string, Fetched>> {
    const { newest, answered } = await this.collectProfiles(pubkeys, request, { relays: this.deps.config.urls });
    const absent = answered && markResults ? pubkeys.filter((pubkey) => !newest.has(pubkey)) : [];
    // A found profile is marked only once it is written: a reader that saw the mark without the
    // profile would take it for a known miss.
    await Promise.all([
      this.store([...newest.values()]).then(() =>
        this.mark(markResults ? [...newest.keys()].map(profileMarkKey) : [], this.deps.config.profileTtlSeconds),
      ),
      this.mark(absent.map(profileMarkKey), this.deps.config.negativeTtlSeconds),
    ]);
    return new Map(pubkeys.map((pubkey) => [profileMarkKey(pubkey), result(newest.get(pubkey), answered)]));
  }

  /** A request's hints that are not configured relays (those are asked as trusted already). */
  private untrustedHints(request: FetchRequest): string[] {
    return request.hints.filter((url) => !this.deps.config.urls.includes(url));
  }

  /** The request's hinted relays alone, for this request only: what verifies is stored, nothing is marked. */
  private async queryEventsOnHints(ids: readonly string[], hints: string[], request: FetchRequest): Promise<Fetched[]> {
    const { found, answered } = await this.collectEvents(ids, request, { relays: [], hints });
    await this.store([...found.values()]);
    return ids.map((id) => result(found.get(id), answered));
  }

  private async queryProfilesOnHints(pubkeys: readonly string[], hints: string[], request: FetchRequest): Promise<Fetched[]> {
    const { newest, answered } = await this.collectProfiles(pubkeys, request, { relays: [], hints });
    await this.store([...newest.values()]);
    return pubkeys.map((pubkey) => result(newest.get(pubkey), answered));
  }

  /**
   * One relay query for the keys nobody is fetching yet; keys already in flight join that query.
   * Each caller stops waiting at its own deadline, whatever the query it joined does.
   */
  private async coalesced(
    keys: readonly string[],
    request: FetchRequest,
    query: (keys: string[]) => Promise<Map<string, Fetched>>,
  ): Promise<Fetched[]> {
    const fresh = [...new Set(keys.filter((key) => !this.inflight.has(key)))];
    if (fresh.length > 0) {
      const running = query(fresh).catch((error: unknown) => {
        this.deps.logger.error({ err: error }, 'relay fetch failed');
        return new Map<string, Fetched>();
      });
      for (const key of fresh) {
        const settled = running.then((results) => results.get(key) ?? UNAVAILABLE);
        this.inflight.set(key, settled);
        // Kept joinable a moment after it settles: a request that read the index just before the
        // results were written would otherwise ask the relays again.
        void settled.finally(() => {
          setTimeout(() => {
            if (this.inflight.get(key) === settled) this.inflight.delete(key);
          }, JOINABLE_AFTER_SETTLED_MS).unref();
        });
      }
    }
    // One listener on the request's signal for all keys: what has settled by then is the answer.
    const answers: Fetched[] = keys.map(() => UNAVAILABLE);
    const all = Promise.all(
      keys.map((key, index) => (this.inflight.get(key) ?? Promise.resolve(UNAVAILABLE)).then((fetched) => (answers[index] = fetched))),
    );
    return (await untilAborted(all, request.signal, null)) ?? [...answers];
  }

  /**
   * Coalescing across instances that share the store: each key is claimed (`fetching:<key>`, a mark
   * that expires with the deadline) before asking the relays. Keys another instance has claimed are
   * not asked again: their result is awaited in the store, where that instance writes it (the event
   * or profile, or the miss mark), polling until this request's relay queries end.
   */
  private async acrossInstances(
    keys: string[],
    request: FetchRequest,
    query: (mine: string[]) => Promise<Map<string, Fetched>>,
  ): Promise<Map<string, Fetched>> {
    const claims = keys.map(fetchingKey);
    let claimed: boolean[];
    try {
      claimed = await this.deps.store.marks.claim(claims, Math.ceil(this.deps.config.timeoutMs / 1000));
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'could not claim relay lookups in the store; asking the relays anyway');
      claimed = keys.map(() => true);
    }
    const mine = keys.filter((_, index) => claimed[index]);
    const theirs = keys.filter((_, index) => !claimed[index]);
    const release = () => this.deps.store.marks.clear(mine.map(fetchingKey)).catch(() => {});
    const [own, others] = await Promise.all([
      mine.length > 0 ? query(mine).finally(() => void release()) : new Map<string, Fetched>(),
      theirs.length > 0 ? this.awaitOtherInstance(theirs, request) : new Map<string, Fetched>(),
    ]);
    return new Map([...own, ...others]);
  }

  /**
   * Polls the store for what another instance is fetching; `unavailable` for what is not settled when
   * this request's relay queries end (as its own would, so that both are returned in time).
   */
  private async awaitOtherInstance(keys: string[], request: FetchRequest): Promise<Map<string, Fetched>> {
    const results = new Map<string, Fetched>();
    let pending = keys;
    while (pending.length > 0 && (await pause(OTHER_INSTANCE_POLL_MS, request.querySignal))) {
      let settled: (Fetched | undefined)[];
      try {
        settled = await this.readSettled(pending);
      } catch {
        break; // the store failed: nothing to wait for
      }
      pending = pending.filter((key, index) => {
        const outcome = settled[index];
        if (outcome) results.set(key, outcome);
        return !outcome;
      });
    }
    for (const key of pending) results.set(key, UNAVAILABLE);
    return results;
  }

  /** What the store says of keys of one kind (all `event:` or all `profile:`): found, absent, or not yet known. */
  private async readSettled(keys: string[]): Promise<(Fetched | undefined)[]> {
    const store = this.deps.store;
    if (keys[0]?.startsWith('profile:')) {
      const read = await store.getProfilesWithMarks(keys.map(keyTail));
      return read.map(({ profile, marked }) =>
        profile ? { kind: 'found', stored: profile } : marked ? ABSENT : undefined,
      );
    }
    const [events, marked] = await Promise.all([store.getEvents(keys.map(keyTail)), store.marks.has(keys)]);
    return events.map((stored, index) => (stored ? { kind: 'found', stored } : marked[index] ? ABSENT : undefined));
  }

  /** A pool query; when no relay answered, the log says what each one did (the 500 body cannot). */
  private async ask(query: RelayQuery): Promise<RelayQueryResult> {
    const result = await this.deps.pool.query(query);
    if (!result.answered) {
      this.deps.logger.warn({ relays: Object.fromEntries(result.outcomes) }, 'no relay answered');
    }
    return result;
  }

  /** Writes verified events to the index; returns the ids of those it does not keep (ephemeral, superseded). */
  private async store(events: NostrEvent[]): Promise<string[]> {
    const notKept = events.filter((event) => isEphemeralKind(event.kind)).map((event) => event.id);
    const storable = events.filter((event) => !isEphemeralKind(event.kind));
    if (storable.length === 0) return notKept;
    try {
      const outcomes = await this.deps.store.putEvents(storable);
      storable.forEach((event, index) => {
        if (outcomes[index] === 'superseded' || outcomes[index] === 'rejected') notKept.push(event.id);
      });
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'could not store events fetched from relays');
    }
    return notKept;
  }

  private async mark(keys: string[], ttlSeconds: number): Promise<void> {
    if (keys.length === 0) return;
    try {
      await this.deps.store.marks.set(keys, ttlSeconds);
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'could not record relay lookups in the store');
    }
  }
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const parts: T[][] = [];
  for (let start = 0; start < items.length; start += size) parts.push(items.slice(start, start + size));
  return parts;
}

/** The claim of a lookup being fetched by some instance. */
function fetchingKey(markKey: string): string {
  return `fetching:${markKey}`;
}

function keyTail(markKey: string): string {
  return markKey.slice(markKey.indexOf(':') + 1);
}

function result(event: NostrEvent | undefined, answered: boolean): Fetched {
  if (event) return { kind: 'found', stored: toStoredEvent(event) };
  return answered ? ABSENT : UNAVAILABLE;
}

const NO_KEYS: ReadonlySet<string> = new Set();

/**
 * One answer per key from the trusted query (for `unmarked` keys) and the hinted one (for all, if
 * any): found by either (both: `pick`), else absent if either answered in full, else absent if a
 * mark already said so (the key was not asked of the trusted relays), else unavailable.
 */
async function combineAnswers(
  keys: readonly string[],
  unmarked: readonly string[],
  trusted: Promise<Fetched[]>,
  hinted: Promise<Fetched[]> | undefined,
  pick: (a: Found, b: Found) => Found,
): Promise<Fetched[]> {
  const [fromTrusted, fromHints] = await Promise.all([trusted, hinted]);
  const trustedByKey = new Map(unmarked.map((key, index) => [key, fromTrusted[index] as Fetched]));
  return keys.map((key, index) => {
    const answers = [trustedByKey.get(key) ?? ABSENT, fromHints?.[index]].filter((answer): answer is Fetched => !!answer);
    const found = answers.filter((answer): answer is Found => answer.kind === 'found');
    if (found.length > 0) return found.reduce(pick);
    return answers.some((answer) => answer.kind === 'absent') ? ABSENT : UNAVAILABLE;
  });
}
