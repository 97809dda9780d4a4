import type { AbstractRelay } from 'nostr-tools/abstract-relay';
import type { Filter } from 'nostr-tools/filter';
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
  /** Epoch milliseconds after which nothing more is awaited. */
  deadline: number;
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

/**
 * The relay side of fetch-on-miss, over nostr-tools' relay primitives. It asks every relay of a query
 * in parallel, verifies every event before the caller sees it, and reports per relay whether it
 * answered, so callers can tell "no relay has it" (404) from "no relay could say" (500).
 */
export class RelayPool {
  private readonly connections = new Map<string, AbstractRelay>();
  private readonly resting = new Map<string, { until: number; failures: number }>();
  private readonly slots = new Map<string, SubscriptionSlots>();
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
    const asked = { query, onEvent, complete: complete.signal };
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
    const slot = await slots.acquire(asked.query.deadline, asked.complete);
    if (slot !== 'acquired') return slot;
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
  private async ask(relay: AbstractRelay, { query, onEvent, complete }: Asked): Promise<RelayOutcome> {
    const remaining = query.deadline - Date.now();
    if (remaining <= 0) return 'timeout';
    if (complete.aborted) return 'stopped';
    // The connection may be shared with a query that started earlier with a longer timeout: wait for
    // it no longer than this query's own deadline.
    const connection = await settleFirst(
      relay.connect({ timeout: remaining }).then(
        () => 'connected' as const,
        () => 'failed' as const,
      ),
      remaining,
      complete,
    );
    if (connection === 'aborted') return 'stopped';
    // No connection by the deadline is a failure to connect (the relay rests), not a slow answer.
    if (connection !== 'connected' || !relay.connected) return 'failed';
    return new Promise<RelayOutcome>((resolve) => {
      let settled = false;
      let invalid = 0;
      const finish = (outcome: RelayOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadlineTimer);
        complete.removeEventListener('abort', onComplete);
        if (invalid > 0) {
          this.options.logger.warn({ relay: relay.url, invalid }, 'relay sent events that failed verification; ignored');
        }
        if (outcome !== 'closed') subscription.close();
        resolve(outcome);
      };
      const onComplete = () => finish('stopped');
      const subscription = relay.subscribe(query.filters, {
        onevent: (event) => onEvent(event, relay.url),
        oninvalidevent: () => {
          invalid += 1;
        },
        oneose: () => finish('eose'),
        onclose: () => finish('closed'),
        // nostr-tools reports a missing EOSE as an EOSE after this long; keep that after our own
        // deadline, so a relay that never answers counts as timed out, not as having nothing.
        eoseTimeout: remaining + 1000,
      });
      const deadlineTimer = setTimeout(() => finish('timeout'), Math.max(0, query.deadline - Date.now()));
      complete.addEventListener('abort', onComplete, { once: true });
    });
  }
}

/** What each relay of one query is handed. */
interface Asked {
  query: RelayQuery;
  onEvent: (raw: unknown, relay: string) => void;
  /** Aborted when the query's answer is complete. */
  complete: AbortSignal;
}

/** The value of `pending`, or 'timeout' after `ms`, or 'aborted' when `signal` aborts; whichever comes first. */
async function settleFirst<T>(pending: Promise<T>, ms: number, signal: AbortSignal): Promise<T | 'timeout' | 'aborted'> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      pending,
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), ms);
      }),
      new Promise<'aborted'>((resolve) => {
        onAbort = () => resolve('aborted');
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** A counting semaphore whose waiters give up at a deadline, or when their query is complete. */
class SubscriptionSlots {
  private active = 0;
  private readonly waiting: Array<() => boolean> = [];

  constructor(private readonly limit: number) {}

  acquire(deadline: number, complete: AbortSignal): Promise<'acquired' | 'timeout' | 'stopped'> {
    if (complete.aborted) return Promise.resolve('stopped');
    if (this.active < this.limit) {
      this.active += 1;
      return Promise.resolve('acquired');
    }
    return new Promise((resolve) => {
      let done = false;
      const giveUp = (outcome: 'timeout' | 'stopped') => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        complete.removeEventListener('abort', onComplete);
        resolve(outcome);
      };
      const onComplete = () => giveUp('stopped');
      const timer = setTimeout(() => giveUp('timeout'), Math.max(0, deadline - Date.now()));
      complete.addEventListener('abort', onComplete, { once: true });
      // Called by release(): takes the slot unless this waiter already gave up.
      this.waiting.push(() => {
        if (done) return false;
        done = true;
        clearTimeout(timer);
        complete.removeEventListener('abort', onComplete);
        this.active += 1;
        resolve('acquired');
        return true;
      });
    });
  }

  release(): void {
    this.active -= 1;
    while (this.waiting.length > 0) {
      if ((this.waiting.shift() as () => boolean)()) return;
    }
  }
}
