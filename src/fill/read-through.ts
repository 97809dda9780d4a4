import { ClientSlots } from '../client-key.js';
import { type LookupOutcome, metrics } from '../metrics/metrics.js';
import { configuredRelays, type RelayConfig } from '../config/env.js';
import { LookupError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { NostrEvent } from '../nostr/event.js';
import { isEphemeralKind, readCoordinate } from '../nostr/kinds.js';
import { RELAY_LIST_KIND } from '../nostr/relay-list.js';
import type { RelayPool } from '../relays/relay-pool.js';
import { CorruptDataError, type EventStore, type Held, StoreUnavailableError } from '../store/event-store.js';
import { relayListMarkKey } from '../store/mark-store.js';
import { writeRelaysOfStored } from '../store/derived-values.js';
import { storedEventCreatedAt, toStoredEvent } from '../store/stored-event.js';
import { DELETED, isDeleted } from '../store/tombstones.js';
import { fingerprint, noteIsFull, readMissNote, writeMissNote } from './asked-relays.js';
import { InFlightLookups } from './coalescing.js';
import { ABSENT, type Fetched, type Found, GONE, THROTTLED, UNAVAILABLE } from './fetched.js';
import { acrossInstances } from './instance-claims.js';
import { ADDRESS_LOOKUP, EVENT_LOOKUP, type LookupKind, PROFILE_LOOKUP } from './lookup-kind.js';
import { FEED, FOLLOWERS, NOTES, NOTIFICATIONS, RelationFill, SEARCH, NOTE_SEARCH } from './relation-fill.js';
import { RelaySearch, type SearchResult } from './relay-search.js';
import { type MissLimit, RelayRequest } from './relay-request.js';
import { warnStoreFailure } from '../store/store-failure.js';

/**
 * One answer of a read: the stored event, DELETED (its author deleted it, or asked to vanish), null
 * (none exists, as far as anyone can tell), or the error to report.
 */
export type ReadAnswer = Held | LookupError;

export interface ReadThroughDependencies {
  pool: RelayPool;
  store: EventStore;
  config: RelayConfig;
  logger: Logger;
}

/** What the index and its marks said about the keys a read could not answer from the index. */
interface Misses {
  /** Per key, its mark's note (null: no mark; a string: a remembered miss, noting where it was looked for). */
  notes: ReadonlyMap<string, string | null>;
  /** Per key, its author where known (a profile's pubkey; an nevent's author). */
  authors: ReadonlyMap<string, string>;
  /** Write relays of those authors whose relay list the index holds (outbox on only). */
  relayLists: ReadonlyMap<string, readonly string[]>;
  /** Authors whose stored relay list is due a check (its freshness mark expired). */
  staleLists: ReadonlySet<string>;
  /** The `created_at` of each stored relay list. */
  storedListAt: ReadonlyMap<string, number>;
}

/**
 * The one read-through path: index → marks → relays → write back. The loaders call
 * `events` and `profiles` per batch; everything about relays and the negative cache is decided
 * here:
 * - a key the index holds is answered from it (a profile past PROFILE_TTL is served and refreshed
 *   in the background);
 * - a key no mark covers is searched for (fill/relay-search.ts: configured relays, relay list
 *   discovery, the author's write relays), coalesced with other requests in the process
 *   (coalescing.ts) and with other instances (instance-claims.ts); what verifies is stored, and the
 *   outcome is marked for every instance (found, or a miss noting where it was looked for);
 * - a remembered miss is answered "absent" without asking, unless this request brings places not
 *   yet asked: relay hints, or write relays of the author not in the miss's note
 *  . Those answers count for this request only.
 */
export class ReadThrough {
  private readonly search: RelaySearch;
  private readonly inflight: Record<LookupKind['name'], InFlightLookups>;
  private readonly refreshing = new Set<string>();
  /** Background refreshes under way: the service waits for them before it closes the store. */
  private readonly background = new Set<Promise<void>>();
  /** Lookups at the relays in progress, per client. */
  private readonly missesByClient = new ClientSlots();
  private readonly configured: ReadonlySet<string>;
  /**
   * The relationship fill: an event's replies, reactions, reposts and quotes, asked of
   * relays before they are read (the GraphQL context hands it to resolvers per request).
   */
  readonly relations: RelationFill;
  /** The followers fill: the follow lists naming a pubkey, asked of relays before its followers are read. */
  readonly followers: RelationFill;
  /** The notes fill: what an author wrote, asked of relays when the index holds less than a page. */
  readonly notes: RelationFill;
  /** The search fill: profiles a query matches, asked of SEARCH_RELAYS (NIP-50) before the index is searched. */
  readonly profileSearch: RelationFill;
  /** The note search fill: notes a query matches, asked of SEARCH_RELAYS (NIP-50) before the index is searched. */
  readonly noteSearch: RelationFill;
  readonly notifications: RelationFill;
  /** The feed fill: what the authors a pubkey follows wrote lately, asked before its feed's first page is merged. */
  readonly feed: RelationFill;

  constructor(private readonly deps: ReadThroughDependencies) {
    this.search = new RelaySearch(deps);
    // One client's fills of every subject share its MISS_CONCURRENCY_PER_CLIENT.
    const clientSlots = new ClientSlots();
    this.relations = new RelationFill(deps, { clientSlots });
    this.followers = new RelationFill(deps, { subject: FOLLOWERS, clientSlots });
    this.notes = new RelationFill(deps, { subject: NOTES, clientSlots });
    this.profileSearch = new RelationFill(deps, { subject: SEARCH, clientSlots });
    this.noteSearch = new RelationFill(deps, { subject: NOTE_SEARCH, clientSlots });
    this.notifications = new RelationFill(deps, { subject: NOTIFICATIONS, clientSlots });
    this.feed = new RelationFill(deps, { subject: FEED, clientSlots });
    this.inflight = {
      event: new InFlightLookups(deps.logger, 'event'),
      profile: new InFlightLookups(deps.logger, 'profile'),
      address: new InFlightLookups(deps.logger, 'address'),
    };
    this.configured = new Set(configuredRelays(deps.config));
  }

  /** A request starting now: its deadline is RELAY_TIMEOUT_MS away. */
  newRequest(client = '', missLimit?: MissLimit): RelayRequest {
    return new RelayRequest(this.deps.config.timeoutMs, client, this.deps.config.outbox.maxRelays, missLimit);
  }

  /**
   * Events by id, in order. `fromIndex` sees what the index held, before relays are asked (the
   * loaders prime profiles with the kind-0 events among them).
   */
  async events(
    ids: readonly string[],
    request: RelayRequest,
    fromIndex?: (stored: readonly Held[]) => void,
  ): Promise<ReadAnswer[]> {
    const stored = await guarded(() => this.deps.store.getEvents(ids, request.reads));
    fromIndex?.(stored);
    return this.missesToRelays(EVENT_LOOKUP, ids, stored, (id) => request.authorOf(id), request);
  }

  /**
   * The latest version at each NIP-01 coordinate (naddr), in order: from the index, else from the
   * relays (RELAYS, the coordinate's author's write relays, the request's hints).
   */
  async addresses(coordinates: readonly string[], request: RelayRequest): Promise<ReadAnswer[]> {
    const stored = await guarded(() => this.deps.store.getByCoordinates(coordinates, request.reads));
    // A held version may have been replaced since (an edited article): served, and looked for again
    // in the background once per PROFILE_TTL, as profiles are.
    const held = coordinates.filter((_, index) => stored[index] && !isDeleted(stored[index]));
    if (held.length > 0) {
      this.refreshInBackground(ADDRESS_LOOKUP, held, authorOfCoordinate);
      // Refreshed on its own schedule (its mark is not read here): an answer made of it is not kept.
      request.reads?.spoil();
    }
    return this.missesToRelays(ADDRESS_LOOKUP, coordinates, stored, authorOfCoordinate, request);
  }

  /**
   * The keys the index does not hold (null) go to the relays, unless their mark says they were
   * looked for: only on a miss, a second store call for the negative cache.
   */
  private async missesToRelays(
    lookup: LookupKind,
    keys: readonly string[],
    stored: Held[],
    authorOf: (key: string) => string | undefined,
    request: RelayRequest,
  ): Promise<ReadAnswer[]> {
    const missing = keys.filter((_, index) => stored[index] === null);
    metrics.lookups(lookup.name, 'index_hit', keys.length - missing.length, request.reads);
    if (missing.length === 0) return stored;
    // Asked beside the store (marks, relays): an answer made with it is not kept.
    request.reads?.spoil();
    const notes = await guarded(() => this.deps.store.marks.notes(missing.map(lookup.markKey)));
    const misses = await this.misses(missing, new Map(missing.map((key, index) => [key, notes[index] ?? null])), authorsOf(missing, authorOf));
    return this.answerMisses(lookup, keys, stored, missing, misses, request);
  }

  /** The latest profile (kind 0) of each pubkey, in order. */
  async profiles(pubkeys: readonly string[], request: RelayRequest): Promise<ReadAnswer[]> {
    // One store command: the profiles and their freshness marks.
    const read = await guarded(() => this.deps.store.getProfilesWithMarks(pubkeys, request.reads));
    const stale = pubkeys.filter((_, index) => read[index]?.profile && !read[index].marked);
    if (stale.length > 0) this.refreshInBackground(PROFILE_LOOKUP, stale, (pubkey) => pubkey);
    const found = read.map(({ profile }) => profile);
    const missing = pubkeys.filter((_, index) => !read[index]?.profile);
    metrics.lookups(PROFILE_LOOKUP.name, 'index_hit', pubkeys.length - missing.length, request.reads);
    if (missing.length === 0) return found;
    request.reads?.spoil();
    const notes = new Map(pubkeys.map((pubkey, index) => [pubkey, read[index]?.note ?? null]));
    const misses = await this.misses(missing, notes, new Map(missing.map((pubkey) => [pubkey, pubkey])));
    return this.answerMisses(PROFILE_LOOKUP, pubkeys, found, missing, misses, request);
  }

  /**
   * The latest versions at these coordinates, asked of the relays in the background as a stale one
   * is refreshed (once per PROFILE_TTL per key across instances): a web of trust's hop-1 follow
   * lists that the index lacks (store/trust-webs.ts). What comes is stored, and its change logged.
   */
  fillAddressesInBackground(coordinates: readonly string[]): void {
    this.refreshInBackground(ADDRESS_LOOKUP, coordinates, authorOfCoordinate);
  }

  /**
   * Stale-while-revalidate: the caller has already served these stored profiles (or latest versions
   * at coordinates); this refreshes them in the background, once per PROFILE_TTL per key across
   * every instance sharing the store (the mark is claimed first; whoever wins it asks the relays,
   * the authors' write relays included). A profile's mark is read with it: only stale ones come
   * here; a coordinate's is claimed at once (one command either way).
   */
  refreshInBackground(lookup: LookupKind, keys: readonly string[], authorOf: (key: string) => string | undefined): void {
    const wanted = keys.filter((key) => !this.refreshing.has(lookup.markKey(key)));
    if (wanted.length === 0) return;
    for (const key of wanted) this.refreshing.add(lookup.markKey(key));
    const refresh = async () => {
      const claimed = await this.deps.store.marks.claim(wanted.map(lookup.markKey), this.deps.config.profileTtlSeconds);
      const mine = wanted.filter((_, index) => claimed[index]);
      metrics.profileRefresh(lookup.name, mine.length);
      if (mine.length === 0) return;
      const request = this.newRequest();
      const misses = await this.misses(mine, new Map(), authorsOf(mine, authorOf));
      // Coalesced with cold fetches of the same keys; the claimed marks stand as they are.
      await this.inflight[lookup.name].join(mine, request.signal, (fresh) => this.searchAndRecord(lookup, fresh, misses, request, { mark: false }));
    };
    const running = refresh()
      .catch((error: unknown) => warnStoreFailure(this.deps.logger, error, 'background refresh failed', { lookup: lookup.name }))
      .finally(() => {
        for (const key of wanted) this.refreshing.delete(lookup.markKey(key));
        this.background.delete(running);
      });
    this.background.add(running);
  }

  /**
   * Resolves when the background refreshes under way have ended (each within RELAY_TIMEOUT_MS, at
   * once when the pool is closed): the store must not be closed under them (an LMDB read on a closed
   * environment kills the process).
   */
  async settled(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
    await Promise.all([this.relations.settled(), this.followers.settled(), this.notes.settled(), this.profileSearch.settled(), this.noteSearch.settled(), this.notifications.settled(), this.feed.settled()]);
  }

  /** The relay lists of the misses' authors, if outbox discovery is on (one store read, on misses only). */
  private async misses(
    keys: readonly string[],
    notes: ReadonlyMap<string, string | null>,
    authors: ReadonlyMap<string, string>,
  ): Promise<Misses> {
    const relayLists = new Map<string, readonly string[]>();
    const staleLists = new Set<string>();
    const storedListAt = new Map<string, number>();
    const wanted = [...new Set(keys.map((key) => authors.get(key)).filter((author): author is string => !!author))];
    if (!this.deps.config.outbox.enabled || wanted.length === 0) return { notes, authors, relayLists, staleLists, storedListAt };
    try {
      // One store command: the lists and their freshness marks.
      const read = await this.deps.store.getReplaceableWithMarks(RELAY_LIST_KIND, wanted, relayListMarkKey);
      wanted.forEach((author, index) => {
        const { event: list, marked } = read[index] ?? { event: null, marked: false };
        if (!list) return;
        if (isDeleted(list)) {
          // Deleted by its author: no write relays, looked for again only once its mark expires.
          relayLists.set(author, []);
          if (!marked) staleLists.add(author);
          return;
        }
        relayLists.set(author, writeRelaysOfStored(list));
        storedListAt.set(author, storedEventCreatedAt(list));
        if (!marked) staleLists.add(author);
      });
    } catch (error) {
      // Not worth failing the lookup: without the lists, discovery asks the relays for them.
      warnStoreFailure(this.deps.logger, error, 'could not read relay lists from the store');
    }
    return { notes, authors, relayLists, staleLists, storedListAt };
  }

  /** Fills the `missing` slots of `found` (keys in order) from the relays, as far as the caps allow. */
  private async answerMisses(
    lookup: LookupKind,
    keys: readonly string[],
    found: readonly Held[],
    missing: readonly string[],
    misses: Misses,
    request: RelayRequest,
  ): Promise<ReadAnswer[]> {
    const hinted = request.hints.length > 0;
    // A remembered miss is asked again only where it was not looked for yet.
    const withNewPlaces = new Set(missing.filter((key) => misses.notes.get(key) != null && this.hasNewPlaces(key, misses)));
    const ask = missing.filter((key) => misses.notes.get(key) == null || hinted || withNewPlaces.has(key));
    metrics.lookups(lookup.name, 'remembered_miss', missing.length - ask.length);
    if (ask.length === 0) return [...found];
    // Keys whose lookup is under way for another request are joined, not asked again: a request
    // that only joins (ten concurrent lookups of one pubkey) costs the relays nothing, and takes
    // no per-client slot (2 of 10 were 429).
    const joinsOnly = !hinted && withNewPlaces.size === 0 && ask.every((key) => this.inflight[lookup.name].has(key));
    const fetched = await this.perClient(request, ask, (admitted) => this.fetch(lookup, admitted, misses, request, withNewPlaces), joinsOnly);
    for (const answer of fetched) metrics.lookups(lookup.name, FETCHED_OUTCOMES[answer.kind], 1);
    const answers = new Map(ask.map((key, index) => [key, fetched[index] as Fetched]));
    return keys.map((key, index) => {
      const answer = answers.get(key);
      // A remembered miss the caps kept from its new places to look is still a known miss.
      if ((answer?.kind === 'throttled' || answer?.kind === 'rate_limited') && misses.notes.get(key) != null) return null;
      return answer ? fromRelays(answer) : (found[index] ?? null);
    });
  }

  /**
   * Whether a remembered miss has places to look it did not have: an author whose
   * outbox it did not consult (an nevent names the author of an id missed bare), or write relays of
   * the author not noted as asked (a relay list learned since).
   */
  private hasNewPlaces(key: string, misses: Misses): boolean {
    const author = misses.authors.get(key);
    const held = misses.notes.get(key);
    if (!author || !this.deps.config.outbox.enabled || noteIsFull(held)) return false;
    const note = readMissNote(held);
    if (!note.authors.has(fingerprint(author))) return true;
    const list = misses.relayLists.get(author) ?? [];
    // Configured relays are asked as configured by every unmarked lookup, never as write relays; a
    // resting relay would not be asked now.
    const health = this.deps.pool.health;
    return list.some((url) => !this.configured.has(url) && !note.relays.has(fingerprint(url)) && !health.resting(url));
  }

  /**
   * Every lookup that goes to relays fans out to many relays: one client sending random ids must not
   * be able to make us flood them. At most `missesPerClient` lookups at once per client,
   * and at most `maxKeysPerRequest` keys asked per request (a GraphQL request can name thousands);
   * past either, the keys are `throttled` (429 for the thing asked, absent from a profiles map).
   */
  private async perClient(
    request: RelayRequest,
    keys: readonly string[],
    fetch: (admitted: readonly string[]) => Promise<Fetched[]>,
    joinsOnly = false,
  ): Promise<Fetched[]> {
    const room = Math.max(0, this.deps.config.maxKeysPerRequest - request.keysAsked);
    const admitted = keys.slice(0, room);
    if (admitted.length === 0) return keys.map(() => THROTTLED);
    // A request that only joins holds no slot, so it neither waits for one nor keeps one from others.
    if (!joinsOnly && !this.missesByClient.enter(request.client, this.deps.config.missesPerClient)) return keys.map(() => THROTTLED);
    try {
      // MISS_RATE_LIMIT: each key asked of relays takes one from the client's allowance; the keys
      // past it are `rate_limited`, not asked.
      const limit = request.missLimit ? await request.missLimit(request.client, admitted.length) : { admitted: admitted.length, retryAfterSeconds: 0 };
      const asked = admitted.slice(0, limit.admitted);
      const limited: Fetched = { kind: 'rate_limited', retryAfterSeconds: limit.retryAfterSeconds };
      request.keysAsked += asked.length;
      const answers = asked.length > 0 ? await fetch(asked) : [];
      return keys.map((_, index) => (index < asked.length ? (answers[index] ?? THROTTLED) : index < admitted.length ? limited : THROTTLED));
    } finally {
      if (!joinsOnly) this.missesByClient.leave(request.client);
    }
  }

  /**
   * Keys no mark covers are searched for everyone (coalesced, marked); the request's own places to
   * look (its hints, and write relays a remembered miss has not asked) are asked for this request
   * only, in parallel: their answers are stored, never marked.
   */
  private async fetch(
    lookup: LookupKind,
    keys: readonly string[],
    misses: Misses,
    request: RelayRequest,
    withNewPlaces: ReadonlySet<string>,
  ): Promise<Fetched[]> {
    const unmarked = keys.filter((key) => misses.notes.get(key) == null);
    const shared = this.inflight[lookup.name].join(unmarked, request.signal, (fresh) =>
      acrossInstances(
        fresh,
        lookup.markKey,
        {
          marks: this.deps.store.marks,
          logger: this.deps.logger,
          claimSeconds: Math.ceil(this.deps.config.timeoutMs / 1000),
          readSettled: (pending) => this.readSettled(lookup, pending),
          unsettled: UNAVAILABLE,
          signal: request.querySignal,
        },
        (mine) => this.searchAndRecord(lookup, mine, misses, request, { mark: true }),
      ),
    );
    const own = this.searchOwn(lookup, keys, misses, request, withNewPlaces);
    const [fromShared, fromOwn] = await Promise.all([shared, own]);
    const sharedByKey = new Map(unmarked.map((key, index) => [key, fromShared[index] as Fetched]));
    return keys.map((key, index) => {
      // A key that was not asked of everyone is a remembered miss: absent unless its own search finds it.
      const answers = [sharedByKey.get(key) ?? ABSENT, fromOwn?.[index]].filter((answer): answer is Fetched => !!answer);
      // Its author deleted it: whoever found it, the store refused it.
      if (answers.some((answer) => answer.kind === 'deleted')) return GONE;
      const found = answers.filter((answer): answer is Found => answer.kind === 'found');
      if (found.length > 0) return found.reduce((a, b) => (lookup.wins(b.stored.event, a.stored.event) ? b : a));
      return answers.some((answer) => answer.kind === 'absent') ? ABSENT : UNAVAILABLE;
    });
  }

  /** The request's own search (hints for every key, new write relays for remembered misses), or undefined if it has none. */
  private async searchOwn(
    lookup: LookupKind,
    keys: readonly string[],
    misses: Misses,
    request: RelayRequest,
    withNewPlaces: ReadonlySet<string>,
  ): Promise<Fetched[] | undefined> {
    const remembered = keys.filter((key) => withNewPlaces.has(key));
    const hints = request.hints.filter((url) => !this.configured.has(url));
    if (hints.length === 0 && remembered.length === 0) return undefined;
    const asked = new Map(keys.map((key) => [key, readMissNote(misses.notes.get(key)).relays]));
    // Authors of remembered misses whose relay list the index lacks: the configured relays are asked
    // for their lists only (the keys themselves they have answered already).
    const discover = remembered.some((key) => !misses.relayLists.has(misses.authors.get(key) ?? ''));
    const result = await this.search.run({
      lookup,
      keys: hints.length > 0 ? keys : remembered,
      authors: misses.authors,
      relayLists: misses.relayLists,
      configured: discover ? 'lists' : 'none',
      storedListAt: misses.storedListAt,
      outboxKeys: new Set(remembered),
      hints,
      asked,
      signal: request.querySignal,
      msLeft: () => request.queryMsLeft(),
      client: request.client,
      outboxBudget: request.outboxBudget,
    });
    const { refused } = await this.store([...result.found.values(), ...result.relayLists, ...result.deletions]);
    await Promise.all([
      this.extendNotes(lookup, remembered, misses, result, new Set(hints)),
      this.mark(checkedListMarks(result, misses), this.deps.config.profileTtlSeconds),
    ]);
    return keys.map((key) => answerOf(lookup, key, result, refused));
  }

  /**
   * A remembered miss that its own search did not find notes the write relays that answered and the
   * author consulted, keeping its expiry: the next lookup does not ask them again. (Only adding to
   * where it was looked for, never lengthening the miss: a wrong author an nevent names costs
   * nobody anything.)
   */
  private async extendNotes(
    lookup: LookupKind,
    keys: readonly string[],
    misses: Misses,
    result: SearchResult,
    hints: ReadonlySet<string>,
  ): Promise<void> {
    const renoted: string[] = [];
    const notes: string[] = [];
    for (const key of keys) {
      if (result.found.has(key)) continue;
      const note = this.missNote(key, misses, result, hints);
      if (note === null) continue;
      renoted.push(key);
      notes.push(note);
    }
    if (renoted.length === 0) return;
    try {
      await this.deps.store.marks.renote(renoted.map(lookup.markKey), notes);
    } catch (error) {
      warnStoreFailure(this.deps.logger, error, 'could not record relay lookups in the store');
    }
  }

  /**
   * The search for everyone: configured relays, discovery and outbox; what verifies is stored, and
   * the outcome marked for every instance (`mark`: false for background refreshes, whose claim mark
   * stands). A miss's mark notes the write relays that answered, so a later lookup asks only others.
   */
  private async searchAndRecord(
    lookup: LookupKind,
    keys: string[],
    misses: Misses,
    request: RelayRequest,
    { mark }: { mark: boolean },
  ): Promise<Map<string, Fetched>> {
    const result = await this.search.run({
      lookup,
      keys,
      authors: misses.authors,
      relayLists: misses.relayLists,
      configured: 'all',
      hints: [],
      staleLists: misses.staleLists,
      storedListAt: misses.storedListAt,
      signal: request.querySignal,
      msLeft: () => request.queryMsLeft(),
      client: request.client,
      outboxBudget: request.outboxBudget,
      // Unmarked: a background refresh (its claim mark stands).
      background: !mark,
    });
    const { negativeTtlSeconds, profileTtlSeconds } = this.deps.config;
    const absent = mark ? keys.filter((key) => !result.found.has(key) && this.decidesMiss(lookup, result.answeredBy.get(key))) : [];
    const notes = absent.map((key) => this.missNote(key, misses, result, NO_HINTS) ?? '');
    const checkedLists = checkedListMarks(result, misses);
    // A found profile is marked only once it is written: a reader that saw the mark without the
    // profile would take it for a known miss. An event found but not kept is remembered like a
    // miss (otherwise every request for it would ask the relays again): an ephemeral one is answered
    // now, an old version of a replaceable event is not (answerOf). One the store refused as deleted
    // keeps a tombstone, which answers from now on.
    let refused: Refused = new Map();
    await Promise.all([
      this.store([...result.found.values(), ...result.relayLists, ...result.deletions]).then(async (written) => {
        const { notKept } = written;
        refused = written.refused;
        const foundKeys = [...result.found.keys()];
        // A found profile or latest version is fresh for PROFILE_TTL (then refreshed in the background).
        if (mark && lookup !== EVENT_LOOKUP) await this.mark(foundKeys.map(lookup.markKey), profileTtlSeconds);
        const dropped = foundKeys.filter((key) => notKept.has((result.found.get(key) as NostrEvent).id));
        if (lookup === EVENT_LOOKUP) await this.mark(dropped.map(lookup.markKey), negativeTtlSeconds);
      }),
      this.mark(absent.map(lookup.markKey), negativeTtlSeconds, notes),
      this.mark(checkedLists, profileTtlSeconds),
    ]);
    // The answer is shared (coalesced requests join it): "absent" only where it may be decided for
    // everyone, as the mark is.
    return new Map(
      keys.map((key) => {
        const answer = answerOf(lookup, key, result, refused);
        return [key, answer.kind === 'absent' && !this.decidesMiss(lookup, result.answeredBy.get(key)) ? UNAVAILABLE : answer];
      }),
    );
  }

  /**
   * Whether the relays that answered "not there" may decide a miss for everyone. An event's author
   * comes from the client (an nevent), so the write relays it leads to count for that request only:
   * a configured relay must have answered too (otherwise a made-up author's relay, answering at
   * once, would turn "the relays could not say" into a 404 for everyone). A profile's write relays
   * are its author's own, from their signed relay list.
   */
  private decidesMiss(lookup: LookupKind, answeredBy: ReadonlySet<string> | undefined): boolean {
    if (!answeredBy || answeredBy.size === 0) return false;
    // A profile's and a coordinate's write relays are their author's own, from a signed relay list.
    if (lookup !== EVENT_LOOKUP) return true;
    return [...answeredBy].some((url) => this.configured.has(url));
  }

  /**
   * The note of a key the search did not find (asked-relays.ts): what it held, the learned relays
   * that gave a final answer (not configured ones, not the request's hints), and the author if their
   * outbox was consulted; null when there is nothing to add.
   */
  private missNote(key: string, misses: Misses, result: SearchResult, hints: ReadonlySet<string>): string | null {
    const author = misses.authors.get(key);
    const learned = [...(result.settledBy.get(key) ?? [])].filter((url) => !this.configured.has(url) && !hints.has(url));
    const consulted = author !== undefined && result.consulted.has(author);
    if (learned.length === 0 && !consulted) return null;
    return writeMissNote(learned, consulted ? author : undefined, misses.notes.get(key) ?? '');
  }

  /** What the store says of keys now: found, absent (a miss mark), or not yet known. */
  private async readSettled(lookup: LookupKind, keys: string[]): Promise<(Fetched | undefined)[]> {
    const store = this.deps.store;
    const settled = (held: Held, marked: boolean | undefined): Fetched | undefined => {
      if (isDeleted(held)) return GONE;
      return held ? { kind: 'found', stored: held } : marked ? ABSENT : undefined;
    };
    if (lookup === PROFILE_LOOKUP) {
      const read = await store.getProfilesWithMarks(keys);
      return read.map(({ profile, marked }) => settled(profile, marked));
    }
    if (lookup === ADDRESS_LOOKUP) {
      const [held, marked] = await Promise.all([store.getByCoordinates(keys), store.marks.has(keys.map(lookup.markKey))]);
      return held.map((stored, index) => settled(stored, marked[index]));
    }
    const [events, marked] = await Promise.all([store.getEvents(keys), store.marks.has(keys.map(lookup.markKey))]);
    return events.map((stored, index) => settled(stored, marked[index]));
  }

  /**
   * Writes verified events to the index (deletion requests among them are applied first, by the
   * store); returns the ids of those it does not keep (ephemeral, superseded, rejected), and of those
   * it refused as superseded or as deleted by their authors.
   */
  private async store(events: NostrEvent[]): Promise<{ notKept: Set<string>; refused: Refused }> {
    const notKept = new Set(events.filter((event) => isEphemeralKind(event.kind)).map((event) => event.id));
    const refused = new Map<string, 'deleted' | 'superseded'>();
    const storable = events.filter((event) => !isEphemeralKind(event.kind));
    if (storable.length === 0) return { notKept, refused };
    try {
      const outcomes = await this.deps.store.putEvents(storable);
      storable.forEach((event, index) => {
        if (outcomes[index] === 'superseded' || outcomes[index] === 'rejected') notKept.add(event.id);
        const outcome = outcomes[index];
        if (outcome === 'deleted' || outcome === 'superseded') refused.set(event.id, outcome);
      });
    } catch (error) {
      warnStoreFailure(this.deps.logger, error, 'could not store events fetched from relays');
    }
    return { notKept, refused };
  }

  private async mark(keys: string[], ttlSeconds: number, notes?: string[]): Promise<void> {
    if (keys.length === 0) return;
    try {
      await this.deps.store.marks.set(keys, ttlSeconds, notes);
    } catch (error) {
      warnStoreFailure(this.deps.logger, error, 'could not record relay lookups in the store');
    }
  }
}

const NO_HINTS: ReadonlySet<string> = new Set();

/** How a key asked of relays is counted (metrics/metrics.ts). */
const FETCHED_OUTCOMES: Record<Fetched['kind'], LookupOutcome> = {
  found: 'relay_found',
  deleted: 'relay_deleted',
  absent: 'relay_not_found',
  unavailable: 'relay_unavailable',
  throttled: 'throttled',
  rate_limited: 'rate_limited',
};

/** A coordinate names its author. */
const authorOfCoordinate = (coordinate: string) => readCoordinate(coordinate)?.pubkey;

/** Each key's author, where known. */
function authorsOf(keys: readonly string[], authorOf: (key: string) => string | undefined): Map<string, string> {
  const authors = new Map<string, string>();
  for (const key of keys) {
    const author = authorOf(key);
    if (author) authors.set(key, author);
  }
  return authors;
}

/**
 * Freshness marks for the relay lists a search checked, of authors who have one (stored before, or
 * found now). An author with none gets no mark: there is nothing to keep fresh, and a mark per
 * random pubkey a client asks for would outlive its miss mark (PROFILE_TTL against NEGATIVE_TTL).
 */
function checkedListMarks(result: SearchResult, misses: Misses): string[] {
  const found = new Set(result.relayLists.map((list) => list.pubkey));
  return [...result.listsChecked].filter((author) => found.has(author) || misses.relayLists.has(author)).map(relayListMarkKey);
}

/** Ids of events the store would not keep, and why. */
type Refused = ReadonlyMap<string, 'deleted' | 'superseded'>;

/**
 * One key's answer from a search: found; deleted (the store refused it as deleted); absent (a relay
 * asked about it answered in full, or, for an id, what it found is an old version of a replaceable
 * event: not served, as the index would not serve it, and an `a`-tag deletion since may cover it); or
 * unavailable.
 */
function answerOf(lookup: LookupKind, key: string, result: SearchResult, refused: Refused): Fetched {
  const event = result.found.get(key);
  const verdict = event && refused.get(event.id);
  if (verdict === 'deleted') return GONE;
  if (verdict === 'superseded' && lookup === EVENT_LOOKUP) return ABSENT;
  if (event) return { kind: 'found', stored: toStoredEvent(event) };
  return result.answeredBy.has(key) ? ABSENT : UNAVAILABLE;
}

/** A relay answer as a read answer: found → the event, absent → null, else the error to report. */
function fromRelays(fetched: Fetched): ReadAnswer {
  if (fetched.kind === 'found') return fetched.stored;
  if (fetched.kind === 'absent') return null;
  if (fetched.kind === 'deleted') return DELETED;
  if (fetched.kind === 'throttled') return new LookupError('too_many_requests');
  if (fetched.kind === 'rate_limited') return new LookupError('rate_limited', { retryAfterSeconds: fetched.retryAfterSeconds });
  return new LookupError('relays_unavailable');
}

/** Store failures reach clients as table errors (500), with the cause kept for the log. */
export function asLookupError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return new LookupError('store_unavailable', { cause: error });
  if (error instanceof CorruptDataError) return new LookupError('corrupt_data', { cause: error });
  return error;
}

export async function guarded<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw asLookupError(error);
  }
}
