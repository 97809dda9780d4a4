import { backoffMs } from '../backoff.js';
import type { Logger } from '../logger.js';
import type { RelayOutcome } from './relay-pool.js';
import { relayUrlForLog } from './relay-url.js';

/** A configured relay rests at most this long after failures: it is one we chose and expect back. */
const LONGEST_REST_CONFIGURED_MS = 30_000;
/** A learned relay (a hint, a write relay from a relay list) may be gone for good: it rests longer. */
const LONGEST_REST_LEARNED_MS = 10 * 60_000;
/**
 * A learned relay that connects but misses this many deadlines in a row, and has come to answer
 * rarely, rests like one that failed: it is silent, not slow (a slow relay asked late misses a
 * deadline too, and still answers the next time).
 */
const TIMEOUTS_BEFORE_REST = 2;
const SILENT_BELOW_SUCCESS = 0.25;
/** Weight of the newest outcome in the running success rate. */
const SMOOTHING = 0.3;
/** Success rate of a relay never asked: high enough that new relays get tried. */
const UNKNOWN_SUCCESS = 0.7;
/** Relays remembered at most; the least recently asked are forgotten first. */
const MAX_TRACKED = 5_000;

/** What one relay has done, as counted since the process started (or since it was last forgotten). */
export interface RelayRecord {
  asked: number;
  answered: number;
  timeouts: number;
  failures: number;
  closed: number;
  refused: number;
  /** Verified events it delivered that a query wanted. */
  delivered: number;
  /** Running rate of answers (EOSE or a complete answer) per ask, 0 to 1. */
  success: number;
  /** Failures to connect in a row (for learned relays, also missed deadlines and closed subscriptions); the rest grows with them. */
  strikes: number;
  /** Until when (ms since the epoch) it is skipped. */
  restingUntil: number;
  /** Connections it flooded (kept sending what answered nothing of ours: message-screen.ts), ever. */
  floods: number;
  /** Until when it is skipped for its last flood: an answer does not end this rest. */
  floodedUntil: number;
}

/** A relay's past floods count no more once it has not flooded for this long. */
const FLOODS_FORGOTTEN_AFTER_MS = 10 * 60_000;
/**
 * A configured relay's rests are logged at info once per this period, the others at debug: offline,
 * every lookup's background refresh finds the relays down again, one more rest each.
 */
const RESTING_LOGGED_EVERY_MS = 10 * 60_000;

/**
 * Learned relay health, shared by every request of the process: per relay, what it did
 * when asked. A relay that fails to connect, refuses, floods, or (if learned) keeps missing deadlines rests
 * with a growing backoff and is skipped meanwhile; the outbox planner prefers relays that answer
 * and deliver. Changes of state are logged (a relay starts resting, comes back).
 */
export class RelayHealth {
  private readonly records = new Map<string, RelayRecord>();
  /** When each configured relay's rest was last logged at info. */
  private readonly restLoggedAt = new Map<string, number>();

  constructor(private readonly logger: Logger) {}

  /** Whether `url` is resting (skipped until its rest ends). */
  resting(url: string, now = Date.now()): boolean {
    const record = this.records.get(url);
    return record !== undefined && Math.max(record.restingUntil, record.floodedUntil) > now;
  }

  /** Higher is better: the running success rate, plus a little for relays that delivered what was asked. */
  score(url: string): number {
    const record = this.records.get(url);
    if (!record) return UNKNOWN_SUCCESS;
    const deliveredShare = record.asked === 0 ? 0 : Math.min(1, record.delivered / record.asked);
    return record.success + 0.25 * deliveredShare;
  }

  delivered(url: string): void {
    this.record(url).delivered += 1;
  }

  /** Records how `url` took part in a query. `learned`: not a configured relay. */
  outcome(url: string, outcome: RelayOutcome, learned: boolean): void {
    // `stopped`: the answer was complete elsewhere before this relay said anything: no evidence.
    if (outcome === 'skipped' || outcome === 'stopped') return;
    const record = this.record(url);
    record.asked += 1;
    const answered = outcome === 'eose';
    record.success = record.success * (1 - SMOOTHING) + (answered ? SMOOTHING : 0);
    if (answered) {
      record.answered += 1;
      if (record.strikes > 0 && record.restingUntil > 0) {
        this.log(learned, { relay: relayUrlForLog(url), after: record.strikes }, 'relay answers again');
      }
      record.strikes = 0;
      record.restingUntil = 0;
      return;
    }
    if (outcome === 'timeout') record.timeouts += 1;
    if (outcome === 'failed') record.failures += 1;
    if (outcome === 'closed') record.closed += 1;
    if (outcome === 'refused') record.refused += 1;
    // A configured relay that is slow or closes a subscription is still the operator's choice: only
    // failing to connect counts against it. A learned one has to earn its place.
    const counts = outcome === 'failed' || outcome === 'refused' || learned;
    if (!counts) return;
    record.strikes += 1;
    const rests = outcome !== 'timeout' || (record.strikes >= TIMEOUTS_BEFORE_REST && record.success < SILENT_BELOW_SUCCESS);
    if (!rests) return;
    const restMs = backoffMs(record.strikes, learned ? LONGEST_REST_LEARNED_MS : LONGEST_REST_CONFIGURED_MS);
    record.restingUntil = Date.now() + restMs;
    this.logRest(
      learned,
      { relay: url, outcome, strikes: record.strikes, restMs, asked: record.asked, answered: record.answered, delivered: record.delivered },
    );
  }

  /**
   * A connection to `url` was closed because it kept sending what answered none of our subscriptions
   * (message-screen.ts): the relay rests like one that fails to connect, 1 s after its first flood,
   * doubling with each flood up to the same longest rests. Deliberate, so an answer (a flooding relay
   * answers EOSE first) neither ends the rest nor starts the count over.
   */
  flooded(url: string, learned: boolean): void {
    const record = this.record(url);
    // Forgotten after a quiet while: a configured relay's rest does not climb for good (found by review).
    if (Date.now() - record.floodedUntil > FLOODS_FORGOTTEN_AFTER_MS) record.floods = 0;
    record.floods += 1;
    const restMs = backoffMs(record.floods, learned ? LONGEST_REST_LEARNED_MS : LONGEST_REST_CONFIGURED_MS);
    record.floodedUntil = Date.now() + restMs;
    this.logRest(learned, { relay: url, outcome: 'flooded', floods: record.floods, restMs, asked: record.asked, answered: record.answered });
  }

  /** A relay starts resting: a configured one at info once per RESTING_LOGGED_EVERY_MS, else at debug. */
  private logRest(learned: boolean, fields: { relay: string } & Record<string, unknown>): void {
    const now = Date.now();
    const last = this.restLoggedAt.get(fields.relay);
    const logged = { ...fields, relay: relayUrlForLog(fields.relay) };
    if (learned || (last !== undefined && now - last < RESTING_LOGGED_EVERY_MS)) {
      this.logger.debug(logged, 'relay resting');
      return;
    }
    this.restLoggedAt.set(fields.relay, now);
    this.logger.info(logged, 'relay resting');
  }

  /**
   * Configured relays' changes at info; learned relays' at debug: their URLs come from strangers
   * (hints, relay lists), and a client could otherwise fill the log with them.
   */
  private log(learned: boolean, fields: Record<string, unknown>, message: string): void {
    if (learned) this.logger.debug(fields, message);
    else this.logger.info(fields, message);
  }

  /** What is known of `url` (for tests and logs). */
  get(url: string): Readonly<RelayRecord> | undefined {
    return this.records.get(url);
  }

  private record(url: string): RelayRecord {
    let record = this.records.get(url);
    if (record) {
      // Re-inserted: the map's order is the order of last use, oldest first.
      this.records.delete(url);
    } else {
      record = {
        asked: 0,
        answered: 0,
        timeouts: 0,
        failures: 0,
        closed: 0,
        refused: 0,
        delivered: 0,
        success: UNKNOWN_SUCCESS,
        strikes: 0,
        restingUntil: 0,
        floods: 0,
        floodedUntil: 0,
      };
      if (this.records.size >= MAX_TRACKED) {
        const oldest = this.records.keys().next().value;
        if (oldest !== undefined) this.records.delete(oldest);
      }
    }
    this.records.set(url, record);
    return record;
  }
}
