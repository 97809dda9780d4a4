import { setMaxListeners } from 'node:events';
import type { Filter } from 'nostr-tools/filter';
import { configuredRelays, type RelayConfig } from '../config/env.js';
import type { Logger } from '../logger.js';
import type { NostrEvent } from '../nostr/event.js';
import { DELETION_KIND } from '../nostr/deletions.js';
import { supersedes } from '../nostr/kinds.js';
import { RELAY_LIST_KIND, writeRelaysOf } from '../nostr/relay-list.js';
import type { RelayOutcome, RelayPool, RelayQuery } from '../relays/relay-pool.js';
import { relayUrlForLog } from '../relays/relay-url.js';
import { fingerprint } from './asked-relays.js';
import { chunks, type LookupKind, MAX_VALUES_PER_FILTER } from './lookup-kind.js';
import { planOutbox } from './outbox-plan.js';

/** What one search asks, of which relays. */
export interface SearchInput {
  lookup: LookupKind;
  /** Ids or pubkeys, none of them in the index. */
  keys: readonly string[];
  /** Each key's author where known: a profile's pubkey, an nevent's author. */
  authors: ReadonlyMap<string, string>;
  /** Write relays of the authors whose relay list (kind 10002) the index holds. */
  relayLists: ReadonlyMap<string, readonly string[]>;
  /**
   * What to ask the configured relays: `all` (RELAYS for the keys, INDEXER_RELAYS for profiles, both
   * for the relay lists the index lacks), `lists` (only the relay lists, to discover where to look
   * for keys they are not asked about again), or `none`.
   */
  configured: 'all' | 'lists' | 'none';
  /** Keys whose authors' write relays are asked (outbox); all keys when absent. */
  outboxKeys?: ReadonlySet<string>;
  /** Relays asked about every key: the request's hints (untrusted). */
  hints: readonly string[];
  /** Per key, relays already asked (fingerprints, from a remembered miss's note): not asked again. */
  asked?: ReadonlyMap<string, ReadonlySet<string>>;
  /** Authors whose stored relay list is due a check (its freshness mark expired): looked for again, while the stored one is used. */
  staleLists?: ReadonlySet<string>;
  /** The `created_at` of each stored relay list: one that arrives must be newer to replace it. */
  storedListAt?: ReadonlyMap<string, number>;
  /** Aborts when the relay queries must end. */
  signal: AbortSignal;
  /** Milliseconds until `signal` aborts. */
  msLeft(): number;
  /** Who asks (a client key): the pool keeps one client from holding every learned connection. */
  client: string;
  /** Write relays the request may still ask, all of its searches together (OUTBOX_MAX_RELAYS per request). */
  outboxBudget: { left: number };
  /** A background refresh: nobody waits for it, so that no relay answered is logged at debug. */
  background?: boolean;
}

export interface SearchResult {
  /** Per key, the answer (the newest version, for profiles). */
  found: Map<string, NostrEvent>;
  /** Per key, the relays asked about it that answered in full (EOSE): where it was looked for. */
  answeredBy: Map<string, Set<string>>;
  /** Per key, the learned relays that gave a final answer: EOSE, or no connection (failed, refused, closed). */
  settledBy: Map<string, Set<string>>;
  /** Relay lists (kind 10002) that arrived, verified: to be stored like any event. */
  relayLists: NostrEvent[];
  /** Authors whose outbox was consulted: their relay list was known, or a configured relay answered when asked for it. */
  consulted: Set<string>;
  /** Authors whose relay list the configured relays were asked for and answered (found or not): fresh for PROFILE_TTL. */
  listsChecked: Set<string>;
  /**
   * Deletion requests (NIP-09) that arrived, verified, by the author of an event found, naming it:
   * to be stored with it, so that the store refuses the event (event lookups only).
   */
  deletions: NostrEvent[];
}

/**
 * Deletion requests one search keeps while it runs, in bytes of their JSON at most. Anyone can sign
 * one naming any id, and a relay (a hint is the client's choice) may send thousands of 2 MiB ones:
 * those by someone other than the author of what they name are dropped as soon as that is known,
 * and the rest must fit this budget.
 */
const MAX_DELETION_BYTES = 256 * 1024;

/**
 * Discovery waits for the configured relays' relay lists at most this share of the time left; the
 * outbox round then has the rest. Lists that arrive later still get a round of their own.
 */
const DISCOVERY_SHARE = 0.35;
/**
 * An outbox relay that has not answered after this share of the time left at its round's start is
 * late: its authors are covered again by other write relays (it is still listened to).
 */
const HEDGE_SHARE = 0.4;
/**
 * Once an event lookup has its answers, relays that have not answered yet are waited for this share
 * of the time left: one may hold the author's deletion (NIP-09) that the relay which delivered the
 * event lacks. A slow relay costs a found event at most this much more.
 */
const DELETION_GRACE_SHARE = 0.25;

export interface RelaySearchDependencies {
  pool: RelayPool;
  config: RelayConfig;
  logger: Logger;
}

/**
 * One search of the relays for keys the index lacks, within one deadline:
 * 1. the configured relays (and the request's hints) are asked at once; the same REQ asks RELAYS
 *    and INDEXER_RELAYS for the relay lists (kind 10002) of authors the index has none for;
 * 2. outbox (NIP-65): the authors' write relays are asked, grouped so that each relay gets one
 *    subscription for all the authors it covers (outbox-plan.ts), as soon as the relay lists are
 *    known (at once when the index held them all);
 * 3. a write relay that fails, or is late, has its authors covered by their next write relays, in
 *    a round of its own on relays not yet asked, while time is left.
 */
export class RelaySearch {
  constructor(private readonly deps: RelaySearchDependencies) {}

  run(input: SearchInput): Promise<SearchResult> {
    return new SearchRun(this.deps, input).run();
  }
}

class SearchRun {
  private readonly result: SearchResult = {
    found: new Map(),
    answeredBy: new Map(),
    settledBy: new Map(),
    relayLists: [],
    consulted: new Set(),
    listsChecked: new Set(),
    deletions: [],
  };
  /** Deletion requests naming a wanted key, by id, with their size (lookups with a deletion rule). */
  private readonly deletions = new Map<string, { request: NostrEvent; bytes: number }>();
  private deletionBytes = 0;
  /**
   * Relays that delivered an answer, and those of them that have ended. With deletions asked, an
   * answer is complete when every key is found and every relay that delivered one has ended (a relay
   * sends the deletion naming an event before its EOSE, not necessarily before the event).
   */
  private readonly delivering = new Set<string>();
  private readonly ended = new Set<string>();
  /** Every relay this search has sent a query to. */
  private readonly launched = new Set<string>();
  private graceStarted = false;
  /** Whether a configured relay asked for relay lists answered in full. */
  private listsAnswered = false;
  private readonly wanted: Set<string>;
  /** Aborted when the answer is complete (every id found), or at the deadline. */
  private readonly complete = new AbortController();
  private readonly signal: AbortSignal;
  /** Queries under way; the search ends when none is left. */
  private running = 0;
  private finished!: () => void;
  private readonly done = new Promise<void>((resolve) => (this.finished = resolve));
  // Outbox state.
  private readonly outboxOn: boolean;
  /** Author → keys of this search by that author (outbox keys only). */
  private readonly keysByAuthor = new Map<string, string[]>();
  /** Author → write relays, once known. */
  private readonly lists = new Map<string, readonly string[]>();
  /** Relay lists still awaited from the configured relays, newest so far per author. */
  private readonly discovering = new Map<string, NostrEvent | null>();
  private discoveryOpen = false;
  /** Relays this search has asked (configured, hints, write relays): none is asked twice. */
  private readonly used = new Set<string>();
  /** Timers under way (discovery cutoff, hedges). */
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Author → write relays asked for it that have not failed or been found late. */
  private readonly covering = new Map<string, Set<string>>();

  constructor(
    private readonly deps: RelaySearchDependencies,
    private readonly input: SearchInput,
  ) {
    this.wanted = new Set(input.keys);
    this.signal = AbortSignal.any([input.signal, this.complete.signal]);
    // Each query of the search listens for its end (one per outbox round, at most one per write relay).
    setMaxListeners(10 + deps.config.outbox.maxRelays, this.complete.signal);
    this.outboxOn = deps.config.outbox.enabled;
    if (this.outboxOn) {
      for (const key of input.keys) {
        if (input.outboxKeys && !input.outboxKeys.has(key)) continue;
        const author = input.authors.get(key);
        if (!author) continue;
        const keys = this.keysByAuthor.get(author) ?? [];
        keys.push(key);
        this.keysByAuthor.set(author, keys);
        const list = input.relayLists.get(author);
        if (list) this.lists.set(author, list);
        // Looked for when the index has none, or when the one it has is due a check.
        if ((!list || input.staleLists?.has(author)) && input.configured !== 'none') this.discovering.set(author, null);
      }
    }
  }

  async run(): Promise<SearchResult> {
    const { config } = this.deps;
    const { lookup, keys, configured, hints } = this.input;
    const listFilter: Filter[] = chunks([...this.discovering.keys()], MAX_VALUES_PER_FILTER).map((authors) => ({
      kinds: [RELAY_LIST_KIND],
      authors,
    }));
    const keyFilters = lookup.filters(keys);
    // What each configured relay is asked, and about which keys (its EOSE says "not there" for those).
    // Indexers hold profiles and relay lists only: never asked for ids.
    const asks = new Map<string, { filters: Filter[]; about: readonly string[] }>();
    if (configured !== 'none') {
      const all = configured === 'all';
      for (const url of config.urls) {
        asks.set(url, all ? { filters: [...keyFilters, ...listFilter], about: keys } : { filters: listFilter, about: [] });
      }
      for (const url of config.indexerUrls) {
        if (asks.has(url)) continue;
        const forKeys = all && lookup.name === 'profile';
        asks.set(url, { filters: [...(forKeys ? keyFilters : []), ...listFilter], about: forKeys ? keys : [] });
      }
      for (const [url, ask] of asks) if (ask.filters.length === 0) asks.delete(url);
    }
    const learned = hints.filter((url) => !asks.has(url));
    // Configured relays are never planned as write relays: they are asked as configured or not at all.
    for (const url of [...configuredRelays(config), ...learned]) this.used.add(url);

    // The outbox round waits for the lists of authors the index has none for; a stored list due a
    // check is used at once, and a newer one that arrives gets a round of its own.
    this.discoveryOpen = [...this.discovering.keys()].some((author) => !this.lists.has(author));
    const listRelays = new Set(this.discovering.size > 0 ? asks.keys() : []);
    // Every timer of the search (the discovery cutoff, each round's hedge) goes when it ends or is
    // called off: one listener for all of them, however many rounds there are.
    const clearTimers = () => {
      for (const timer of this.timers) clearTimeout(timer);
      this.timers.clear();
    };
    this.signal.addEventListener('abort', clearTimers, { once: true });
    if (this.discoveryOpen) this.timer(() => this.endDiscovery(), this.input.msLeft() * DISCOVERY_SHARE);
    this.launch({
      relays: [...asks.keys()],
      learned,
      filters: (url) => asks.get(url)?.filters ?? keyFilters,
      onSettled: (url, outcome) => {
        if (outcome === 'eose') this.answered(url, asks.get(url)?.about ?? keys);
        if (!asks.has(url)) this.settled(url, keys, outcome);
        if (listRelays.delete(url)) {
          if (outcome === 'eose') this.listsAnswered = true;
          if (listRelays.size === 0) this.endDiscovery();
        }
      },
    });
    if (!this.discoveryOpen) this.outboxRound([...this.lists.keys()]);
    await this.done;
    this.signal.removeEventListener('abort', clearTimers);
    clearTimers();
    for (const [author, list] of this.discovering) {
      if (list) this.result.relayLists.push(list);
      if (list || this.listsAnswered) this.result.listsChecked.add(author);
    }
    for (const author of this.keysByAuthor.keys()) {
      if (this.lists.has(author) || this.result.listsChecked.has(author)) this.result.consulted.add(author);
    }
    // Kept: those signed by who may delete what they name (an id's only once its event is found).
    this.result.deletions = [...this.deletions.values()]
      .map(({ request }) => request)
      .filter((request) => this.namesDeletable(request, (signer) => signer === request.pubkey));
    return this.result;
  }

  /** Starts one pool query (one REQ per relay) as part of this search. */
  private launch(query: Pick<RelayQuery, 'relays' | 'learned' | 'filters' | 'onSettled'>): void {
    const relayCount = query.relays.length + (query.learned?.length ?? 0);
    if (relayCount === 0) {
      if (this.running === 0) queueMicrotask(() => this.running === 0 && this.finished());
      return;
    }
    this.running += 1;
    for (const url of [...query.relays, ...(query.learned ?? [])]) this.launched.add(url);
    this.deps.pool
      .query({
        ...query,
        signal: this.input.signal,
        stop: this.complete.signal,
        client: this.input.client,
        onEvent: (event, relay) => this.accept(event, relay),
        onSettled: (url, outcome) => {
          query.onSettled?.(url, outcome);
          this.ended.add(url);
          this.completeIfAnswered();
        },
      })
      .then((outcome) => {
        if (!outcome.answered && this.input.configured === 'all' && query.relays.length > 0) {
          // Offline, every background refresh ends so: a warning only where a request waited.
          const level = this.input.background ? 'debug' : 'warn';
          this.deps.logger[level]({ relays: Object.fromEntries([...outcome.outcomes].map(([url, said]) => [relayUrlForLog(url), said])) }, 'no relay answered');
        }
      })
      .catch((error: unknown) => this.deps.logger.error({ err: error }, 'relay query failed'))
      .finally(() => {
        this.running -= 1;
        if (this.running === 0) this.finished();
      });
  }

  /** An event from any relay of the search: an answer, a relay list being discovered, a deletion request, or several. */
  private accept(event: NostrEvent, relay: string): boolean {
    if (event.kind === RELAY_LIST_KIND && this.discovering.has(event.pubkey)) this.discovered(event);
    if (this.input.lookup.deletions && event.kind === DELETION_KIND) this.keepDeletion(event);
    const key = this.input.lookup.keyOf(event);
    if (!this.wanted.has(key)) return false;
    const held = this.result.found.get(key);
    if (!held || this.input.lookup.wins(event, held)) this.result.found.set(key, event);
    if (this.input.lookup.deletions) this.dropForeignDeletions();
    this.delivering.add(relay);
    // Completion stops every query through `complete` (the queries' `stop` signal).
    this.completeIfAnswered();
    return false;
  }

  /** A deletion request that may delete a wanted key: kept within MAX_DELETION_BYTES. */
  private keepDeletion(request: NostrEvent): void {
    if (this.deletions.has(request.id) || !this.mayDelete(request)) return;
    const bytes = request.content.length + JSON.stringify(request.tags).length + 300;
    if (this.deletionBytes + bytes > MAX_DELETION_BYTES) return;
    this.deletions.set(request.id, { request, bytes });
    this.deletionBytes += bytes;
  }

  /**
   * Whether a deletion request names a wanted key whose author may be its signer: for an id, the
   * author of the event found for it, any signer until it is found (not the author an nevent names:
   * a client naming a wrong one must not get the real author's deletion dropped, and the note
   * stored); for a coordinate, the author it names.
   */
  private mayDelete(request: NostrEvent): boolean {
    return this.namesDeletable(request, (signer) => signer === undefined || signer === request.pubkey);
  }

  /** Whether a tag of the request names a wanted key whose signer (lookup-kind.ts `signerOf`) passes `allowed`. */
  private namesDeletable(request: NostrEvent, allowed: (signer: string | undefined) => boolean): boolean {
    const rule = this.input.lookup.deletions;
    if (!rule) return false;
    return request.tags.some((tag) => {
      const key = rule.keyOfTag(tag);
      return key !== undefined && this.wanted.has(key) && allowed(rule.signerOf(key, this.result.found.get(key)));
    });
  }

  /** Once an event is found, the deletion requests of other signers that name only it make room. */
  private dropForeignDeletions(): void {
    for (const [id, { request, bytes }] of this.deletions) {
      if (this.mayDelete(request)) continue;
      this.deletions.delete(id);
      this.deletionBytes -= bytes;
    }
  }

  /**
   * A lookup whose first answer is final is complete once every key is found; with deletions
   * asked, once every relay that delivered one has also ended (see `delivering`), and relays still
   * running, which may hold a deletion the others lack, get DELETION_GRACE_SHARE of the time left.
   */
  private completeIfAnswered(): void {
    const { firstIsFinal } = this.input.lookup;
    const asksDeletions = this.input.lookup.deletions !== undefined;
    if (!firstIsFinal || this.result.found.size < this.wanted.size) return;
    if (asksDeletions && ![...this.delivering].every((url) => this.ended.has(url))) return;
    if (!asksDeletions || [...this.launched].every((url) => this.ended.has(url))) {
      this.complete.abort();
    } else if (!this.graceStarted) {
      this.graceStarted = true;
      this.timer(() => this.complete.abort(), this.input.msLeft() * DELETION_GRACE_SHARE);
    }
  }

  private answered(url: string, keys: readonly string[]): void {
    addTo(this.result.answeredBy, keys, url);
  }

  /**
   * A learned relay's final answer about keys: it said EOSE, or it could not be reached, refused by
   * the address policy, or closed the subscription (noted, so not asked again for them while the
   * miss is remembered).
   */
  private settled(url: string, keys: readonly string[], outcome: RelayOutcome): void {
    if (outcome === 'eose' || outcome === 'failed' || outcome === 'refused' || outcome === 'closed') addTo(this.result.settledBy, keys, url);
  }

  private discovered(list: NostrEvent): void {
    const held = this.discovering.get(list.pubkey);
    if (held && !supersedes(list, held)) return;
    // A copy of the stored list, or an older one an indexer still holds, changes nothing.
    const storedAt = this.input.storedListAt?.get(list.pubkey);
    if (storedAt !== undefined && list.created_at <= storedAt) return;
    this.discovering.set(list.pubkey, list);
    if (!this.discoveryOpen) {
      // Late (after the outbox round began) or a stored list's newer version: its author gets a
      // round of its own, on relays not asked yet.
      this.lists.set(list.pubkey, writeRelaysOf(list));
      this.outboxRound([list.pubkey]);
      return;
    }
    const awaited = [...this.discovering].filter(([author]) => !this.lists.has(author));
    if (awaited.every(([, found]) => found !== null)) this.endDiscovery();
  }

  /** The relay lists are in (or the wait is over): the outbox round for every author with a list. */
  private endDiscovery(): void {
    if (!this.discoveryOpen) return;
    // (A list that arrived meanwhile for a stored one is newer than it: the newest is what the author says.)
    this.discoveryOpen = false;
    for (const [author, list] of this.discovering) if (list) this.lists.set(author, writeRelaysOf(list));
    this.outboxRound([...this.lists.keys()]);
  }

  /**
   * Asks write relays for `authors` that are still short of coverage: one plan, one query, one REQ per
   * relay, on relays this search has not asked yet.
   */
  private outboxRound(authors: readonly string[]): void {
    if (!this.outboxOn || this.signal.aborted) return;
    const { relaysPerPubkey } = this.deps.config.outbox;
    const candidates = new Map<string, string[]>();
    const missing = new Map<string, number>();
    for (const author of authors) {
      const keys = this.pendingKeys(author);
      const list = this.lists.get(author);
      if (keys.length === 0 || !list) continue;
      candidates.set(
        author,
        list.filter((url) => !this.used.has(url) && keys.some((key) => !this.alreadyAsked(key, url))),
      );
      missing.set(author, relaysPerPubkey - (this.covering.get(author)?.size ?? 0));
    }
    const health = this.deps.pool.health;
    const budget = this.input.outboxBudget;
    const plan = planOutbox(
      { candidates, missing },
      {
        maxRelays: budget.left,
        score: (url) => health.score(url),
        usable: (url) => !health.resting(url),
      },
    );
    if (plan.size === 0) {
      if (this.running === 0) this.finished();
      return;
    }
    budget.left -= plan.size;
    const keysOf = new Map<string, string[]>();
    for (const [url, planned] of plan) {
      this.used.add(url);
      const keys: string[] = [];
      for (const author of planned) {
        let covering = this.covering.get(author);
        if (!covering) this.covering.set(author, (covering = new Set()));
        covering.add(url);
        for (const key of this.pendingKeys(author)) if (!this.alreadyAsked(key, url)) keys.push(key);
      }
      keysOf.set(url, keys);
    }
    const pending = new Set(plan.keys());
    // A relay that fails, or is late, no longer covers its authors: they get their next relays.
    const uncover = (url: string) => {
      if (!pending.delete(url)) return;
      const authors = plan.get(url) ?? [];
      for (const author of authors) this.covering.get(author)?.delete(url);
      this.outboxRound(authors);
    };
    const hedge = this.timer(() => {
      for (const url of [...pending]) uncover(url);
    }, this.input.msLeft() * HEDGE_SHARE);
    this.launch({
      relays: [],
      learned: [...plan.keys()],
      filters: (url) => this.input.lookup.filters(keysOf.get(url) ?? []),
      onSettled: (url, outcome: RelayOutcome) => {
        this.settled(url, keysOf.get(url) ?? [], outcome);
        if (outcome === 'eose' || outcome === 'stopped') {
          if (outcome === 'eose') this.answered(url, keysOf.get(url) ?? []);
          pending.delete(url);
        } else {
          uncover(url);
        }
        if (pending.size === 0) this.clearTimer(hedge);
      },
    });
  }

  /** A timer of this search, cleared when it ends (see run). */
  private timer(run: () => void, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, Math.max(0, ms));
    this.timers.add(timer);
    return timer;
  }

  private clearTimer(timer: NodeJS.Timeout): void {
    clearTimeout(timer);
    this.timers.delete(timer);
  }

  /** The keys of `author` that this search still looks for. */
  private pendingKeys(author: string): string[] {
    return (this.keysByAuthor.get(author) ?? []).filter((key) => !this.result.found.has(key));
  }

  private alreadyAsked(key: string, url: string): boolean {
    return this.input.asked?.get(key)?.has(fingerprint(url)) ?? false;
  }
}

function addTo(map: Map<string, Set<string>>, keys: readonly string[], url: string): void {
  for (const key of keys) {
    let relays = map.get(key);
    if (!relays) map.set(key, (relays = new Set()));
    relays.add(url);
  }
}
