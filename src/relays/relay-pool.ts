import type { AbstractRelay, Subscription } from 'nostr-tools/abstract-relay';
import type { Filter } from 'nostr-tools/filter';
import { untilAborted } from '../abortable.js';
import { backoffMs } from '../backoff.js';
import type { Logger } from '../logger.js';
import type { NostrEvent } from '../nostr/event.js';
import { openRelay, VerifiedEvents } from './open-relay.js';
import { hintHostAllowed, PublicOnlyRelaySocket, RelaySocket } from './relay-socket.js';

/**
 * How one relay took part in a query:
 * - `eose`: it sent everything it had (EOSE), so its silence about a key means it lacks it;
 * - `stopped`: the answer was complete before it finished;
 * - `failed`: no connection (refused, or none by the deadline); `closed`: it closed the subscription
 *   or the connection (NIP-01 CLOSED);
 * - `timeout`: connected, but no EOSE before the deadline; `skipped`: it failed recently and is resting;
 * - `refused`: a relay hint that the address policy refused.
 */
export type RelayOutcome = 'eose' | 'stopped' | 'failed' | 'closed' | 'timeout' | 'skipped' | 'refused';

export interface RelayQuery {
  /** Configured relays: long-lived connections, trusted. */
  relays: readonly string[];
  /** Untrusted relay hints: one-off connections under the address policy. */
  hints?: readonly string[];
  /** Sent together in one REQ (NIP-01 allows several filters per subscription). */
  filters: Filter[];
  /** Aborts when nothing more is awaited (the deadline). */
  signal: AbortSignal;
  /**
   * Each event that matches a filter and verifies (NIP-01 id and signature), from any relay.
   * Returning true ends the query at once: the answer is complete.
   */
  onEvent(event: NostrEvent, relay: string): boolean;
}

export interface RelayQueryResult {
  outcomes: Map<string, RelayOutcome>;
  /** Whether any relay answered (EOSE, or stopped because the answer was complete). */
  answered: boolean;
}

export interface RelayPoolOptions {
  logger: Logger;
  /** Whether hints may point at loopback, private or link-local addresses (RELAY_ALLOW_PRIVATE). */
  allowPrivateHints: boolean;
  /** One-off hint connections open at once, at most (RELAY_MAX_HINT_CONNECTIONS); past it, hints are skipped. */
  maxHintConnections?: number;
}

/**
 * Open subscriptions per pooled connection, at most. Relays cap them per connection (strfry and
 * @nostr-relay/core at 20 by default) and close or ignore the excess; queries beyond this wait.
 */
export const MAX_SUBSCRIPTIONS_PER_RELAY = 10;

/** A relay that failed to connect rests before the next attempt: 1 s, doubling up to 30 s (backoff.ts). */
const LONGEST_REST_MS = 30_000;

/** The longest timeout setTimeout takes: nostr-tools' EOSE timer, which the signal always beats. */
const NEVER_MS = 2 ** 31 - 1;

/**
 * The relay side of fetch-on-miss, over nostr-tools' relay primitives. It asks every relay of a query
 * in parallel, verifies every event before the caller sees it, and reports per relay whether it
 * answered, so callers can tell "no relay has it" (404) from "no relay could say" (500).
 */
export class RelayPool {
  private readonly connections = new Map<string, AbstractRelay>();
  private readonly resting = new Map<string, { until: number; failures: number }>();
  private readonly slots = new Map<string, SubscriptionSlots>();
  /** Connection attempts under way: a query that finds one shares it. */
  private readonly dialling = new Map<AbstractRelay, Promise<boolean>>();
  private readonly verified = new VerifiedEvents();
  private closed = false;
  private openHints = 0;

  constructor(private readonly options: RelayPoolOptions) {}

  async query(query: RelayQuery): Promise<RelayQueryResult> {
    // Aborted once the answer is complete: every relay of the query stops, waiting or not.
    const complete = new AbortController();
    const onEvent = (raw: unknown, relay: string) => {
      const event = this.verified.get(raw);
      if (complete.signal.aborted || !event) return;
      if (query.onEvent(event, relay)) complete.abort();
    };
    const hints = (query.hints ?? []).filter((url) => !query.relays.includes(url));
    // Signals of the query's own (the caller's may serve several queries, and every relay listens):
    // `deadline` when nothing more is awaited, `ended` also when the answer is complete.
    const deadline = AbortSignal.any([query.signal]);
    const ended = AbortSignal.any([query.signal, complete.signal]);
    const asked = { query, onEvent, complete: complete.signal, deadline, ended };
    const runs = [
      ...query.relays.map((url) => this.askPooled(url, asked)),
      ...hints.map((url) => this.askHint(url, asked)),
    ];
    const urls = [...query.relays, ...hints];
    const outcomes = new Map<string, RelayOutcome>();
    (await Promise.all(runs)).forEach((outcome, index) => outcomes.set(urls[index] as string, outcome));
    const answered = [...outcomes.values()].some((outcome) => outcome === 'eose' || outcome === 'stopped');
    return { outcomes, answered };
  }

  /** Closes every pooled connection; queries after this find no relay. */
  close(): void {
    this.closed = true;
    for (const relay of this.connections.values()) relay.close();
    this.connections.clear();
  }

  private async askPooled(url: string, asked: Asked): Promise<RelayOutcome> {
    if (this.closed) return 'failed';
    const rest = this.resting.get(url);
    if (rest && rest.until > Date.now()) return 'skipped';
    let relay = this.connections.get(url);
    if (!relay) {
      relay = this.newRelay(url, RelaySocket);
      this.connections.set(url, relay);
    }
    let slots = this.slots.get(url);
    if (!slots) {
      slots = new SubscriptionSlots(MAX_SUBSCRIPTIONS_PER_RELAY);
      this.slots.set(url, slots);
    }
    if (asked.complete.aborted) return 'stopped';
    if (!(await slots.acquire(asked.ended))) return endedAs(asked);
    let outcome: RelayOutcome;
    try {
      outcome = await this.ask(relay, asked);
    } finally {
      slots.release();
    }
    if (outcome === 'failed') {
      const failures = (rest?.failures ?? 0) + 1;
      const wait = backoffMs(failures, LONGEST_REST_MS);
      this.resting.set(url, { until: Date.now() + wait, failures });
    } else if (outcome !== 'stopped') {
      this.resting.delete(url);
    }
    return outcome;
  }

  private async askHint(url: string, asked: Asked): Promise<RelayOutcome> {
    const allowPrivate = this.options.allowPrivateHints;
    if (!allowPrivate && !hintHostAllowed(url)) return 'refused';
    // Every hint is a new connection a client chose: the process holds a bounded number at once.
    if (this.openHints >= (this.options.maxHintConnections ?? 64)) return 'skipped';
    this.openHints += 1;
    // One-off: a hint never joins the pool, so a stranger's URL cannot hold a connection open.
    const relay = this.newRelay(url, allowPrivate ? RelaySocket : PublicOnlyRelaySocket);
    try {
      return await this.ask(relay, asked);
    } finally {
      this.openHints -= 1;
      relay.close();
    }
  }

  private newRelay(url: string, socket: typeof RelaySocket): AbstractRelay {
    return openRelay(url, { verified: this.verified, logger: this.options.logger, socket });
  }

  /**
   * One relay, one subscription: resolves with how it took part, never later than the deadline, and
   * at once when the query's answer is complete.
   */
  private async ask(relay: AbstractRelay, asked: Asked): Promise<RelayOutcome> {
    const { query, onEvent, complete, deadline, ended } = asked;
    if (deadline.aborted) return 'timeout';
    if (complete.aborted) return 'stopped';
    // The attempt may be shared with a query that started it earlier (and ends earlier): this query
    // waits no longer than its own deadline, and a shared attempt given up at the first query's
    // deadline counts as failed here too (a relay slower to connect than RELAY_TIMEOUT_MS rests).
    const connected = await untilAborted(this.dial(relay, deadline), ended, false);
    if (complete.aborted) return 'stopped';
    // No connection by the deadline is a failure to connect (the relay rests), not a slow answer.
    if (!connected || !relay.connected) return 'failed';
    let invalid = 0;
    let subscription: Subscription | undefined;
    const answer = new Promise<RelayOutcome>((resolve) => {
      subscription = relay.subscribe(query.filters, {
        onevent: (event) => onEvent(event, relay.url),
        oninvalidevent: () => {
          invalid += 1;
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
      this.options.logger.warn({ relay: relay.url, invalid }, 'relay sent events that failed verification; ignored');
    }
    if (subscription) {
      if (outcome !== 'closed') subscription.close();
      // close() leaves nostr-tools' EOSE timer running: marking the EOSE clears it (the answer is taken).
      subscription.receivedEose();
    }
    return outcome;
  }

  /**
   * Whether `relay` connects: an attempt under way is shared, as nostr-tools shares it. The attempt is
   * given up at the deadline of the query that started it, its socket closed so that the next one
   * dials afresh.
   */
  private dial(relay: AbstractRelay, deadline: AbortSignal): Promise<boolean> {
    let attempt = this.dialling.get(relay);
    if (!attempt) {
      const connecting = relay.connect().then(
        () => true,
        () => false,
      );
      attempt = untilAborted(connecting, deadline, null).then((connected) => {
        this.dialling.delete(relay);
        if (connected === null && !relay.connected) relay.close();
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
