import { metrics, relayLabel } from '../metrics/metrics.js';
import type { AbstractRelay, Subscription } from 'nostr-tools/abstract-relay';
import { setMaxListeners } from 'node:events';
import WebSocket from 'ws';
import type { Filter } from 'nostr-tools/filter';
import { timeoutSignal, untilAborted } from '../abortable.js';
import { sleep } from '../backoff.js';
import type { Logger } from '../logger.js';
import type { NostrEvent } from '../nostr/event.js';
import { openRelay, VerifiedEvents } from './open-relay.js';
import { RelayHealth } from './relay-health.js';
import { hintHostAllowed } from './relay-socket.js';
import { relayUrlForLog } from './relay-url.js';

/**
 * How one relay took part in a query:
 * - `eose`: it sent everything it had (EOSE), so its silence about a key means it lacks it;
 * - `stopped`: the answer was complete before it finished (or before it was asked);
 * - `failed`: no connection (refused, or not open within the connect timeout, RELAY_TIMEOUT_MS);
 *   `closed`: it closed the subscription or the connection (NIP-01 CLOSED);
 * - `timeout`: connected, but no EOSE before the deadline; or still waiting for a connection or a
 *   subscription slot of our own at the deadline (then not held against the relay);
 * - `skipped`: not asked: it is resting after failures (relay-health.ts);
 * - `refused`: a learned relay (hint, relay list) that the address policy refused.
 */
export type RelayOutcome = 'eose' | 'stopped' | 'failed' | 'closed' | 'timeout' | 'skipped' | 'refused';

export interface RelayQuery {
  /** Configured relays (RELAYS, INDEXER_RELAYS): trusted, loopback and private addresses included. */
  relays: readonly string[];
  /**
   * Learned relays: hints from identifiers and write relays from relay lists. Untrusted: the address
   * policy applies (checked on the resolved address), and they share the connection cap.
   */
  learned?: readonly string[];
  /**
   * Sent together in one REQ per relay (NIP-01 allows several filters per subscription): the same
   * for every relay, or per relay (the outbox asks each write relay for its own authors).
   */
  filters: Filter[] | ((relay: string) => Filter[]);
  /** Aborts when nothing more is awaited (the deadline). */
  signal: AbortSignal;
  /** Aborts when the caller's answer is complete some other way (another query found it): every relay stops, as when onEvent says so. */
  stop?: AbortSignal;
  /**
   * Each event that matches a filter and verifies (NIP-01 id and signature), from any relay.
   * Returning true ends the query at once: the answer is complete.
   */
  onEvent(event: NostrEvent, relay: string): boolean;
  /** Each relay's outcome as soon as it is known (the outbox re-plans around relays that fail). */
  onSettled?(relay: string, outcome: RelayOutcome): void;
  /**
   * Who asks (a client key): one client may hold at most 3/4 of the learned connections at once;
   * past that its learned relays wait for one of its own to be given back, so one client cannot
   * take every learned connection from the others (with silent relays, until the deadline).
   */
  client?: string;
}

export interface RelayQueryResult {
  outcomes: Map<string, RelayOutcome>;
  /** Whether any relay answered (EOSE, or stopped because the answer was complete). */
  answered: boolean;
}

export interface RelayPoolOptions {
  logger: Logger;
  /** Whether learned relays (hints, relay lists) may be at loopback, private or link-local addresses (RELAY_ALLOW_PRIVATE). */
  allowPrivateHints: boolean;
  /** Connections open at once, at most (MAX_RELAY_CONNECTIONS); configured relays always have room. */
  maxConnections?: number;
  /**
   * The configured relays (RELAYS, INDEXER_RELAYS): their room is kept free of learned connections,
   * and a URL among them is always treated as configured, even when a relay list or hint names it
   * (so that a stranger's relay list can never make a configured relay rest as a learned one).
   */
  configured?: readonly string[];
  /** Shared relay health; one is made if not given. */
  health?: RelayHealth;
  /** A connection attempt not open after this long has failed (RELAY_TIMEOUT_MS; default 3 s). */
  connectTimeoutMs?: number;
}

/**
 * Open subscriptions per pooled connection, at most. Relays cap them per connection (strfry and
 * @nostr-relay/core at 20 by default) and close or ignore the excess; queries beyond this wait.
 */
export const MAX_SUBSCRIPTIONS_PER_RELAY = 10;

/** MAX_RELAY_CONNECTIONS' default. */
export const DEFAULT_MAX_RELAY_CONNECTIONS = 50;

/** After a socket closes, its room stays taken this long: the time the relay takes to see the close. */
const CLOSE_SETTLE_MS = 25;

/**
 * Events that fail their filter or verification, per relay of a query: past this many, the relay is
 * taken as flooding (its connection closed, it rests). Honest relays send none.
 */
export const MAX_INVALID_EVENTS_PER_QUERY = 20;

/**
 * A learned relay's connection unused this long is closed (and its room freed): long enough for the
 * later rounds of the same request (the outbox) to reuse it, short enough that a stranger's relay
 * is not kept connected once the request that named it is answered.
 */
export const LEARNED_IDLE_MS = 2_000;

/** The longest timeout setTimeout takes: nostr-tools' EOSE timer, which the signal always beats. */
const NEVER_MS = 2 ** 31 - 1;

/** A pooled connection and what the cap needs to know of it. */
interface Connection {
  relay: AbstractRelay;
  /** Not a configured relay: under the address policy, closed when idle, evicted first. */
  learned: boolean;
  slots: SubscriptionSlots;
  /** Queries using it now; 0 means idle. */
  users: number;
  lastUsed: number;
  /** A learned connection's close once it has been idle for LEARNED_IDLE_MS. */
  idleClose?: NodeJS.Timeout;
  /** Set once it is dropped: resolves when its socket is closed. */
  dropped?: Promise<void>;
}

/**
 * The relay side of fetch-on-miss, over nostr-tools' relay primitives. It asks every relay of a query
 * in parallel (one REQ each), verifies every event before the caller sees it, and reports per relay
 * whether it answered, so callers can tell "no relay has it" (404) from "no relay could say" (500).
 *
 * Connections are pooled, configured and learned alike, under one cap (MAX_RELAY_CONNECTIONS): the
 * configured relays' room is reserved; a learned relay needing a connection when the rest is full
 * closes the least recently used idle learned one, or waits for one to be given back (within its
 * deadline; one client holds at most 3/4 of the learned connections). A learned connection is closed
 * LEARNED_IDLE_MS after its last query ends; configured ones stay. What each relay did is kept in
 * RelayHealth: one that fails rests, for every request, until its backoff ends; so does one whose
 * connection kept sending what answered nothing of ours (message-screen.ts), which is closed at once.
 */
export class RelayPool {
  readonly health: RelayHealth;
  private readonly connections = new Map<string, Connection>();
  /** Connection attempts under way: a query that finds one shares it. */
  private readonly dialling = new Map<AbstractRelay, Promise<boolean>>();
  private readonly verified = new VerifiedEvents();
  private readonly maxConnections: number;
  private readonly connectTimeoutMs: number;
  private readonly configured: ReadonlySet<string>;
  /** Learned connections in use per client (a connection two clients use counts for both). */
  private readonly learnedInUse = new Map<string, number>();
  private closed = false;
  /** Rooms freed by closing an idle connection, held for the relay that closed it until the socket is gone. */
  private reserved = 0;
  /** Dropped connections whose sockets are still closing: they count against the cap until gone. */
  private closing = 0;
  /** Learned relays waiting for a connection to be given back (every learned one is busy). */
  private readonly roomWaiters: Array<() => void> = [];
  /** The most connections open at once so far (for tests and benchmarks). */
  peakConnections = 0;

  constructor(private readonly options: RelayPoolOptions) {
    this.health = options.health ?? new RelayHealth(options.logger);
    this.configured = new Set(options.configured ?? []);
    this.maxConnections = options.maxConnections ?? DEFAULT_MAX_RELAY_CONNECTIONS;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 3000;
  }

  /** Connections open (or dialling, or closing) now. */
  get openConnections(): number {
    return this.connections.size + this.closing;
  }

  async query(query: RelayQuery): Promise<RelayQueryResult> {
    // Aborted once the answer is complete: every relay of the query stops, waiting or not.
    const complete = new AbortController();
    const stop = () => complete.abort();
    if (query.stop?.aborted) stop();
    query.stop?.addEventListener('abort', stop, { once: true });
    const onEvent = (raw: unknown, relay: string) => {
      const event = this.verified.get(raw);
      if (complete.signal.aborted || !event) return;
      this.health.delivered(relay);
      if (query.onEvent(event, relay)) complete.abort();
    };
    // A configured relay named as learned (a relay list, a hint) is asked as configured.
    const configured = [...query.relays, ...(query.learned ?? []).filter((url) => this.configured.has(url))];
    const relays = [...new Set(configured)];
    const learned = [...new Set(query.learned ?? [])].filter((url) => !this.configured.has(url) && !relays.includes(url));
    // Signals of the query's own (the caller's may serve several queries, and every relay listens):
    // `deadline` when nothing more is awaited, `ended` also when the answer is complete.
    const deadline = AbortSignal.any([query.signal]);
    const ended = AbortSignal.any([query.signal, complete.signal]);
    // Each relay of the query waits on these (connection, slot, dial, answer), each wait removing its
    // listener when it ends: a query of many relays is not a leak, so Node's warning at 10 is raised
    // to what the query can hold.
    setMaxListeners(10 + 4 * (query.relays.length + (query.learned?.length ?? 0)), deadline, ended);
    const asked = { query, onEvent, complete: complete.signal, deadline, ended, client: query.client ?? '' };
    const settle = async (url: string, isLearned: boolean) => {
      const outcome = await this.askPooled(url, isLearned, asked);
      query.onSettled?.(url, outcome);
      return outcome;
    };
    const runs = [...relays.map((url) => settle(url, false)), ...learned.map((url) => settle(url, true))];
    const urls = [...relays, ...learned];
    const outcomes = new Map<string, RelayOutcome>();
    (await Promise.all(runs)).forEach((outcome, index) => outcomes.set(urls[index] as string, outcome));
    query.stop?.removeEventListener('abort', stop);
    const answered = [...outcomes.values()].some((outcome) => outcome === 'eose' || outcome === 'stopped');
    return { outcomes, answered };
  }

  /** Whether close() was called: what a query answers after it says nothing of the relays. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Closes every pooled connection; queries after this find no relay. */
  close(): void {
    this.closed = true;
    this.wakeRoomWaiters();
    for (const { relay, idleClose } of this.connections.values()) {
      clearTimeout(idleClose);
      relay.close();
    }
    this.connections.clear();
  }

  /** One relay of a query: its outcome, recorded in its health unless it was never sent the REQ. */
  private async askPooled(url: string, learned: boolean, asked: Asked): Promise<RelayOutcome> {
    const { outcome, sent } = await this.askPooledOnce(url, learned, asked);
    metrics.relayOutcome(relayLabel(url, learned), outcome);
    // Only what the relay did once it had our REQ counts: waiting for our own connections or slots,
    // being called off, or the address policy are not its doing, and a failure to connect is
    // recorded once per attempt by dial(), however many queries waited on it.
    if (sent) this.health.outcome(url, outcome, learned);
    return outcome;
  }

  private async askPooledOnce(url: string, learned: boolean, asked: Asked): Promise<{ outcome: RelayOutcome; sent: boolean }> {
    const unsent = (outcome: RelayOutcome) => ({ outcome, sent: false });
    if (this.closed) return unsent('failed');
    if (learned && !this.options.allowPrivateHints && !hintHostAllowed(url)) return unsent('refused');
    if (this.health.resting(url)) return unsent('skipped');
    // One client's share of the learned connections: past it, wait for one of its own.
    while (learned && (this.learnedInUse.get(asked.client) ?? 0) >= this.learnedShare()) {
      if (!(await this.untilRoomFreed(asked.ended)) || this.closed) return unsent(endedAs(asked));
    }
    if (learned) this.learnedInUse.set(asked.client, (this.learnedInUse.get(asked.client) ?? 0) + 1);
    let connection: Connection | undefined;
    try {
      connection = await this.connectionFor(url, learned, asked.ended);
    } finally {
      if (!connection && learned) this.giveBackShare(asked.client);
    }
    if (!connection) return unsent(endedAs(asked));
    let outcome: RelayOutcome;
    try {
      if (!(await connection.slots.acquire(asked.ended))) return unsent(endedAs(asked));
      try {
        const asking = await this.ask(url, connection.relay, asked, learned);
        if (asking === 'unsent') return unsent(endedAs(asked));
        if (asking === 'failed') outcome = 'failed';
        else outcome = asking;
      } finally {
        connection.slots.release();
      }
    } finally {
      connection.users -= 1;
      connection.lastUsed = Date.now();
      if (learned) this.giveBackShare(asked.client);
      if (connection.users === 0) {
        if (learned) this.closeWhenIdle(url, connection);
        this.wakeRoomWaiters();
      }
    }
    // A learned relay that could not be reached gives its room back; a configured one keeps its
    // place and redials after its rest. (Its failure is recorded by dial().)
    if (outcome === 'failed') {
      if (learned && connection.users === 0) void this.drop(url, connection);
      return { outcome, sent: false };
    }
    return { outcome, sent: true };
  }

  /**
   * The pooled connection to `url`, made if need be, and taken (its `users` counted; the caller
   * gives it back). A learned relay gets one only while the connections it may share (the cap less
   * the configured relays' room) are not all taken; past that, the least recently used idle learned
   * connection is closed for it, or it waits for one to become idle, until `signal` aborts
   * (undefined then).
   */
  private async connectionFor(url: string, learned: boolean, signal: AbortSignal): Promise<Connection | undefined> {
    for (;;) {
      if (this.closed) return undefined;
      const held = this.connections.get(url);
      if (held) return take(held);
      if (!learned || this.learnedRoom() > 0) break;
      const evicted = this.evictIdleLearned();
      if (evicted) {
        // The room is free once the old socket is gone, not when it is asked to go; it is this
        // relay's meanwhile.
        this.reserved += 1;
        try {
          // Within the deadline: a socket slow to close must not hold the request past it.
          if (!(await untilAborted(evicted.then(() => true), signal, false))) return undefined;
        } finally {
          this.reserved -= 1;
        }
        const raced = this.connections.get(url);
        if (raced) return take(raced);
        break;
      }
      // Every learned connection is busy: wait for one to be given back, within the deadline.
      if (!(await this.untilRoomFreed(signal))) return undefined;
    }
    const connection: Connection = {
      relay: openRelay(url, {
        verified: this.verified,
        logger: this.options.logger,
        publicOnly: learned && !this.options.allowPrivateHints,
        onFlood: () => this.flooded(url, connection),
      }),
      learned,
      slots: new SubscriptionSlots(MAX_SUBSCRIPTIONS_PER_RELAY),
      users: 0,
      lastUsed: Date.now(),
    };
    this.connections.set(url, connection);
    metrics.relayConnection(relayLabel(url, learned));
    this.peakConnections = Math.max(this.peakConnections, this.connections.size + this.closing);
    return take(connection);
  }

  /** Resolves true when a connection is given back or closed, false if `signal` aborts first. */
  private untilRoomFreed(signal: AbortSignal): Promise<boolean> {
    const freed = new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    return untilAborted(freed.then(() => true), signal, false);
  }

  /** How many learned connections one client may use at once: 3/4 of those the cap leaves them. */
  private learnedShare(): number {
    return Math.max(1, Math.ceil((this.learnedRooms() * 3) / 4));
  }

  /** Connections learned relays may hold in all: the cap less the configured relays' room. */
  private learnedRooms(): number {
    let configured = 0;
    for (const connection of this.connections.values()) if (!connection.learned) configured += 1;
    return this.maxConnections - Math.max(configured, this.configured.size);
  }

  /** Connections a learned relay may still open without closing another. */
  private learnedRoom(): number {
    let learned = 0;
    for (const connection of this.connections.values()) if (connection.learned) learned += 1;
    return this.learnedRooms() - (learned + this.closing + this.reserved);
  }

  private giveBackShare(client: string): void {
    const left = (this.learnedInUse.get(client) ?? 1) - 1;
    if (left <= 0) this.learnedInUse.delete(client);
    else this.learnedInUse.set(client, left);
    this.wakeRoomWaiters();
  }

  /** A connection was given back or closed: whoever waits for room looks again. */
  private wakeRoomWaiters(): void {
    for (const wake of this.roomWaiters.splice(0)) wake();
  }

  /** Closes the least recently used idle learned connection (resolves once its socket is closed); undefined if there is none. */
  private evictIdleLearned(): Promise<void> | undefined {
    let oldest: [string, Connection] | undefined;
    for (const entry of this.connections) {
      const [, connection] = entry;
      if (!connection.learned || connection.users > 0) continue;
      if (!oldest || connection.lastUsed < oldest[1].lastUsed) oldest = entry;
    }
    if (!oldest) return undefined;
    return this.drop(...oldest);
  }

  /** A learned connection nobody uses is closed LEARNED_IDLE_MS later, unless it is taken again meanwhile. */
  private closeWhenIdle(url: string, connection: Connection): void {
    if (this.connections.get(url) !== connection) return;
    clearTimeout(connection.idleClose);
    connection.idleClose = setTimeout(() => {
      if (connection.users === 0) void this.drop(url, connection);
    }, LEARNED_IDLE_MS);
    connection.idleClose.unref();
  }

  /**
   * The connection sent more than it may without being asked (message-screen.ts) and its socket is
   * closed: its relay rests like one that fails, and the connection is forgotten (the queries still
   * on it end as 'closed').
   */
  private flooded(url: string, connection: Connection): void {
    this.health.flooded(url, connection.learned);
    void this.drop(url, connection);
  }

  /**
   * Forgets a connection and closes its socket at once (no closing handshake to wait for); resolves
   * once it is closed. Until then it still counts against the cap: the room is free when the socket
   * is gone, not when it is asked to go.
   */
  private drop(url: string, connection: Connection): Promise<void> {
    connection.dropped ??= this.closeConnection(url, connection);
    return connection.dropped;
  }

  private async closeConnection(url: string, connection: Connection): Promise<void> {
    clearTimeout(connection.idleClose);
    if (this.connections.get(url) === connection) this.connections.delete(url);
    const socket = (connection.relay as unknown as { ws?: WebSocket }).ws;
    connection.relay.close();
    if (!socket || socket.readyState === WebSocket.CLOSED) {
      this.wakeRoomWaiters();
      return;
    }
    this.closing += 1;
    try {
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.terminate();
      await untilAborted(closed, timeoutSignal(1000), undefined);
      // The relay learns of the close a moment later than we do: counted from its side, a room
      // reused at once would be one connection over the cap for that moment.
      await sleep(CLOSE_SETTLE_MS);
    } finally {
      this.closing -= 1;
      this.wakeRoomWaiters();
    }
  }

  /**
   * One relay, one subscription: resolves with how it took part, never later than the deadline, and
   * at once when the query's answer is complete.
   */
  private async ask(url: string, relay: AbstractRelay, asked: Asked, learned: boolean): Promise<RelayOutcome | 'unsent'> {
    const { query, onEvent, complete, deadline, ended } = asked;
    const filters = typeof query.filters === 'function' ? query.filters(url) : query.filters;
    if (deadline.aborted || complete.aborted) return 'unsent';
    // The attempt may be shared with other queries: this one waits no longer than its own deadline
    // (or its answer being complete), and is then not sent, which is not the relay's doing. The
    // attempt itself fails when the relay refuses, or has not connected within the connect timeout
    // (RELAY_TIMEOUT_MS): that is a failure (the relay rests).
    const connected = await untilAborted(this.dial(url, relay, learned), ended, null);
    if (connected === null || complete.aborted) return 'unsent';
    if (!connected || !relay.connected) return 'failed';
    let invalid = 0;
    let subscription: Subscription | undefined;
    const label = relayLabel(url, learned);
    metrics.relayRequest(label);
    const answer = new Promise<RelayOutcome>((resolve) => {
      subscription = relay.subscribe(filters, {
        onevent: (event) => {
          metrics.relayEvent(label, 'verified');
          onEvent(event, url);
        },
        oninvalidevent: () => {
          metrics.relayEvent(label, 'rejected');
          invalid += 1;
          // Events that fail the filter or the signature cost a parse and a check each: past a few,
          // the relay is flooding us before its EOSE (found by review: 2.5 s of CPU per request).
          if (invalid === MAX_INVALID_EVENTS_PER_QUERY + 1) {
            const connection = this.connections.get(url);
            if (connection?.relay === relay) this.flooded(url, connection);
          }
        },
        oneose: () => resolve('eose'),
        onclose: () => resolve('closed'),
        // nostr-tools reports a missing EOSE as an EOSE after this long; never, here (the signal comes
        // first), so a relay that never answers counts as timed out, not as having nothing.
        eoseTimeout: NEVER_MS,
      });
    });
    const outcome = (await untilAborted(answer, ended, null)) ?? endedAs(asked);
    if (invalid > 0) {
      this.options.logger.warn({ relay: relayUrlForLog(url), invalid }, 'relay sent events that failed verification; ignored');
    }
    if (subscription) {
      if (outcome !== 'closed') subscription.close();
      // close() leaves nostr-tools' EOSE timer running: marking the EOSE clears it (the answer is taken).
      subscription.receivedEose();
    }
    return outcome;
  }

  /**
   * Whether `relay` connects: an attempt under way is shared, as nostr-tools shares it. The attempt
   * has its own timeout (RELAY_TIMEOUT_MS), whoever waits on it; when it fails (refused, or not open
   * in time) the relay's health records one failure, and its socket is closed so that the next
   * attempt dials afresh.
   */
  private dial(url: string, relay: AbstractRelay, learned: boolean): Promise<boolean> {
    let attempt = this.dialling.get(relay);
    if (!attempt) {
      const connecting = relay.connect().then(
        () => true,
        () => false,
      );
      attempt = untilAborted(connecting, timeoutSignal(this.connectTimeoutMs), null).then((connected) => {
        this.dialling.delete(relay);
        if (connected === null && !relay.connected) relay.close();
        if (!connected && !this.closed) this.health.outcome(url, 'failed', learned);
        return connected ?? false;
      });
      this.dialling.set(relay, attempt);
    }
    return attempt;
  }

}

/** What each relay of one query is handed. */
interface Asked {
  query: RelayQuery;
  onEvent: (raw: unknown, relay: string) => void;
  /** Aborted when the query's answer is complete. */
  complete: AbortSignal;
  /** Aborted at the query's deadline. */
  deadline: AbortSignal;
  /** Aborted at either. */
  ended: AbortSignal;
  /** Who asks (RelayQuery.client). */
  client: string;
}

/** Counts a user of a connection (so that it is not closed as idle) and returns it. */
function take(connection: Connection): Connection {
  clearTimeout(connection.idleClose);
  connection.users += 1;
  connection.lastUsed = Date.now();
  return connection;
}

/** How a relay took part when its wait ended before it answered: the answer was complete, or the deadline came. */
function endedAs({ complete }: Asked): 'stopped' | 'timeout' {
  return complete.aborted ? 'stopped' : 'timeout';
}

/** A counting semaphore whose waiters give up when their signal aborts. */
class SubscriptionSlots {
  private active = 0;
  private readonly waiting: Array<() => boolean> = [];

  constructor(private readonly limit: number) {}

  /** Whether a slot was taken (then released by the caller), or the signal aborted first. */
  async acquire(signal: AbortSignal): Promise<boolean> {
    if (this.active < this.limit) {
      this.active += 1;
      return true;
    }
    let taken = false;
    const granted = new Promise<void>((resolve) => {
      // Called by release(): takes the slot unless this waiter has given up.
      this.waiting.push(() => {
        if (signal.aborted) return false;
        taken = true;
        this.active += 1;
        resolve();
        return true;
      });
    });
    await untilAborted(granted, signal, undefined);
    // A slot taken just as the signal aborted is still the caller's to release.
    return taken;
  }

  release(): void {
    this.active -= 1;
    while (this.waiting.length > 0) {
      if ((this.waiting.shift() as () => boolean)()) return;
    }
  }
}
