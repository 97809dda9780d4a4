import type { AbstractRelay, Subscription } from 'nostr-tools/abstract-relay';
import { backoffMs } from '../backoff.js';
import type { Logger } from '../logger.js';
import type { NostrEvent } from '../nostr/event.js';
import { isEphemeralKind } from '../nostr/kinds.js';
import { openRelay, pauseReading, VerifiedEvents } from '../relays/open-relay.js';
import { relayUrlForLog, relayUrlsForLog } from '../relays/relay-url.js';
import type { EventStore, WriteOutcome } from '../store/event-store.js';

export interface RelaySyncOptions {
  relays: readonly string[];
  kinds: readonly number[];
  store: EventStore;
  logger: Logger;
  /** Where a relay without a cursor starts (unix seconds); default: an hour ago. */
  firstSince?: number;
  /** How often progress counts are logged. */
  progressIntervalMs?: number;
  /** MAX_UNWRITTEN unless a test says. */
  maxUnwritten?: number;
  /** How often the store's abandoned transitions are healed (EventStore.healJournals); JOURNAL_SWEEP_MS unless a test says. */
  journalSweepMs?: number;
}

/**
 * How often `sync` heals what writers of replaceable events left half applied (a lost reply, a
 * process stopped: redis-event-store.ts heal): a transition nothing writes again would stay off
 * until `relations rebuild`. A sweep reads every journal, most of the time none.
 */
const JOURNAL_SWEEP_MS = 5 * 60_000;

export interface SyncCounts {
  received: number;
  invalid: number;
  stored: number;
  replaced: number;
  superseded: number;
  duplicate: number;
  rejected: number;
  ephemeral: number;
  /** Deletion requests (NIP-09) and requests to vanish (NIP-62), new and applied. */
  applied: number;
  /** Events refused: their authors deleted them, or asked to vanish. */
  deleted: number;
}

/** On resume, ask again for this much before the cursor: relays deliver live events slightly out of order. */
export const RESUME_OVERLAP_SECONDS = 60;
/** Without a cursor (and without --since), start this far back. */
export const FIRST_SYNC_LOOKBACK_SECONDS = 3600;
/** Events arrive in batches written together: at most this many, or whatever came within FLUSH_MS. */
const BATCH_SIZE = 500;
const FLUSH_MS = 1000;
/**
 * Events received and not yet written (buffered, or in batches waiting for the store) past which a
 * relay's connection is no longer read, and at or below a quarter of which it is read again: behind
 * a slow store, sync holds a few batches, not whatever the relay can send (a backfill may be millions).
 */
export const MAX_UNWRITTEN = 4 * BATCH_SIZE;
/** Reconnection waits 1 s, doubling up to 60 s (backoff.ts); a connection that held 60 s resets it. */
const LONGEST_BACKOFF_MS = 60_000;
/** nostr-tools treats a missing EOSE as one after this long; a large backfill may take a while. */
const EOSE_PATIENCE_MS = 10 * 60_000;
/** A created_at further ahead than this never moves a cursor (a clock in the future would skip events). */
const FUTURE_SKEW_SECONDS = 900;

/** The store cursor of one relay and set of kinds (a new SYNC_KINDS starts its own history). */
export function syncCursorName(relay: string, kinds: readonly number[]): string {
  return `sync:${[...kinds].sort((a, b) => a - b).join(',')}:${relay}`;
}

/**
 * `nostr-lookup sync`: follows the configured relays for SYNC_KINDS and writes what verifies into the
 * index. Per relay, it resumes from a cursor kept in the store (the newest created_at written after
 * the relay's backfill ended with EOSE), reconnects with backoff, and stops cleanly.
 */
export class RelaySync {
  readonly counts: SyncCounts = { received: 0, invalid: 0, stored: 0, replaced: 0, superseded: 0, duplicate: 0, rejected: 0, ephemeral: 0, applied: 0, deleted: 0 };
  private readonly followers: RelayFollower[];
  private progressTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RelaySyncOptions) {
    this.followers = options.relays.map((url) => new RelayFollower(url, options, this.counts));
  }

  start(): void {
    this.options.logger.info({ relays: this.options.relays.map(relayUrlForLog), kinds: this.options.kinds }, 'sync started');
    for (const follower of this.followers) follower.start();
    this.progressTimer = setInterval(() => this.logProgress('sync progress'), this.options.progressIntervalMs ?? 10_000);
    this.progressTimer.unref();
    const { store, logger } = this.options;
    if (store.healJournals) {
      const heal = store.healJournals.bind(store);
      // One sweep at a time: a sweep that waits on busy addresses may outlast the interval.
      let sweeping = false;
      this.sweepTimer = setInterval(() => {
        if (sweeping) return;
        sweeping = true;
        heal()
          .then(
            (healed) => {
              if (healed > 0) logger.info({ healed }, 'sync healed transitions of replaceable events left half applied');
            },
            (error: unknown) => logger.warn({ err: error }, 'sync could not heal transitions of replaceable events'),
          )
          .finally(() => {
            sweeping = false;
          });
      }, this.options.journalSweepMs ?? JOURNAL_SWEEP_MS);
      this.sweepTimer.unref();
    }
  }

  /** Closes every subscription, writes what is buffered and the cursors. */
  async stop(): Promise<void> {
    clearInterval(this.progressTimer);
    clearInterval(this.sweepTimer);
    await Promise.all(this.followers.map((follower) => follower.stop()));
    this.logProgress('sync stopped');
  }

  /** Events received and not yet written, over all relays (each bounded by MAX_UNWRITTEN). */
  get unwritten(): number {
    return this.followers.reduce((sum, follower) => sum + follower.unwritten, 0);
  }

  private logProgress(message: string): void {
    const connected = this.followers.filter((follower) => follower.connected).length;
    this.options.logger.info({ ...this.counts, unwritten: this.unwritten, relaysConnected: connected, relays: this.followers.length }, message);
  }
}

class RelayFollower {
  private relay: AbstractRelay | undefined;
  private subscription: Subscription | undefined;
  private buffer: NostrEvent[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private stopped = false;
  private eosed = false;
  /** A write failed on this connection: the cursor must not move past it (see flush). */
  private lostWrites = false;
  /** Newest created_at received on this connection (a candidate for the cursor once written). */
  private newestSeen = 0;
  /**
   * Which connection this is (counted up at each): a batch moves the cursor only if it came on the
   * connection still open. One from an earlier connection, written late behind a failed one, would
   * move it past the events that failed, which the connection after asks for again from the cursor:
   * they would be lost for good (found by review: 493 of 1,500).
   */
  private connection = 0;
  /** Events received and not yet written (MAX_UNWRITTEN), and whether the connection is read meanwhile. */
  unwritten = 0;
  private paused = false;
  private cursor: number | undefined;
  private readonly verified = new VerifiedEvents();
  private readonly cursorName: string;

  constructor(
    private readonly url: string,
    private readonly options: RelaySyncOptions,
    private readonly counts: SyncCounts,
  ) {
    this.cursorName = syncCursorName(url, options.kinds);
  }

  get connected(): boolean {
    return this.relay?.connected === true && this.subscription !== undefined;
  }

  start(): void {
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.subscription?.close('sync stopping');
    this.relay?.close();
    await this.flush();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const logger = this.options.logger;
    try {
      if (this.cursor === undefined) {
        const saved = await this.options.store.cursors.get(this.cursorName);
        const parsed = saved === undefined ? Number.NaN : Number(saved);
        this.cursor = Number.isSafeInteger(parsed) && parsed >= 0 ? parsed : undefined;
      }
      const since =
        this.cursor === undefined
          ? (this.options.firstSince ?? Math.floor(Date.now() / 1000) - FIRST_SYNC_LOOKBACK_SECONDS)
          : Math.max(0, this.cursor - RESUME_OVERLAP_SECONDS);
      const relay = openRelay(this.url, { verified: this.verified, logger });
      this.relay = relay;
      // A new socket is read; the next event stops it again if the store is still behind.
      this.paused = false;
      await relay.connect({ timeout: 10_000 });
      if (this.stopped) {
        relay.close();
        return;
      }
      const connectedAt = Date.now();
      this.connection++;
      this.eosed = false;
      this.lostWrites = false;
      this.newestSeen = 0;
      logger.info({ relay: relayUrlForLog(this.url), since }, 'sync connected');
      this.subscription = relay.subscribe([{ kinds: [...this.options.kinds], since }], {
        onevent: (raw) => this.receive(raw),
        oninvalidevent: () => {
          this.counts.received += 1;
          this.counts.invalid += 1;
        },
        oneose: () => {
          this.eosed = true;
          void this.flush();
        },
        onclose: (reason) => {
          this.subscription = undefined;
          if (Date.now() - connectedAt > LONGEST_BACKOFF_MS) this.failures = 0;
          this.retry(`closed: ${String(reason).slice(0, 200)}`);
        },
        eoseTimeout: EOSE_PATIENCE_MS,
      });
    } catch (error) {
      this.retry(error instanceof Error ? error.message : String(error));
    }
  }

  private retry(reason: string): void {
    void this.flush();
    if (this.stopped) return;
    this.failures += 1;
    const wait = backoffMs(this.failures, LONGEST_BACKOFF_MS);
    this.options.logger.warn({ relay: relayUrlForLog(this.url), reason: relayUrlsForLog(reason), retryInMs: wait }, 'sync connection lost; reconnecting');
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.connect(), wait);
  }

  private receive(raw: unknown): void {
    const event = this.verified.get(raw);
    if (!event) return;
    this.counts.received += 1;
    if (isEphemeralKind(event.kind)) {
      this.counts.ephemeral += 1;
      return;
    }
    const now = Math.floor(Date.now() / 1000);
    if (event.created_at <= now + FUTURE_SKEW_SECONDS) this.newestSeen = Math.max(this.newestSeen, event.created_at);
    this.buffer.push(event);
    this.unwritten += 1;
    if (this.unwritten >= (this.options.maxUnwritten ?? MAX_UNWRITTEN)) {
      this.readRelay(false);
      // Nothing more comes until it is written: no point waiting for FLUSH_MS.
      void this.flush();
    } else if (this.buffer.length >= BATCH_SIZE) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Writes the buffer, then (after the backfill) moves the cursor. Writes run one after another. */
  private flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    const eosed = this.eosed;
    const connection = this.connection;
    const newest = Math.min(this.newestSeen, Math.floor(Date.now() / 1000));
    this.writing = this.writing.then(async () => {
      try {
        if (batch.length > 0) this.tally(await this.options.store.putEvents(batch));
        // Before EOSE the relay is still sending history, newest first: a restart then must redo it.
        if (eosed && connection === this.connection && !this.lostWrites && newest > (this.cursor ?? 0)) {
          await this.options.store.cursors.set(this.cursorName, String(newest));
          this.cursor = newest;
        }
      } catch (error) {
        // Nothing is lost for good: the cursor stays where it was, and reconnecting subscribes again
        // from it, so the relay sends these events again.
        this.options.logger.error({ err: error, relay: relayUrlForLog(this.url), events: batch.length }, 'sync could not write to the store');
        this.lostWrites = true;
        this.relay?.close();
      } finally {
        this.unwritten -= batch.length;
        if (this.unwritten <= (this.options.maxUnwritten ?? MAX_UNWRITTEN) / 4) this.readRelay(true);
      }
    });
    return this.writing;
  }

  /** Reads the relay's connection, or stops reading it until the store has caught up (MAX_UNWRITTEN). */
  private readRelay(read: boolean): void {
    if (this.paused === !read || !this.relay) return;
    this.paused = !read;
    pauseReading(this.relay, this.paused);
  }

  private tally(outcomes: WriteOutcome[]): void {
    for (const outcome of outcomes) this.counts[outcome] += 1;
  }
}
