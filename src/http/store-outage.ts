import type { Logger } from '../logger.js';
import type { EventStore } from '../store/event-store.js';

/** While the store is unavailable, it is pinged this often to see it back. */
const PROBE_INTERVAL_MS = 1000;

/**
 * A store outage said in two lines: "store unavailable since …" at the first failure
 * seen (a lookup's or /readyz's), "store back after N s" once the store answers again (a ping of
 * its own every second, or /readyz), however many requests failed meanwhile: those are logged once
 * a second per code by the failure log.
 */
export class StoreOutage {
  private since: number | undefined;
  private probe: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly store: Pick<EventStore, 'ping'>,
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
    private readonly probeIntervalMs: number = PROBE_INTERVAL_MS,
  ) {}

  /** The store failed a request: an outage starts, unless one is under way. */
  failed(): void {
    if (this.since !== undefined || this.closed) return;
    this.since = Date.now();
    const since = new Date(this.since).toISOString();
    this.logger.warn({ since }, `store unavailable since ${since}`);
    this.probeLater();
  }

  /** The store answered: an outage under way ends. */
  answered(): void {
    if (this.since === undefined) return;
    const seconds = Math.round((Date.now() - this.since) / 100) / 10;
    this.since = undefined;
    clearTimeout(this.probe);
    this.logger.info({ seconds }, `store back after ${seconds} s`);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.probe);
  }

  private probeLater(): void {
    // Unref'd: a probe never keeps a stopping process alive.
    this.probe = setTimeout(() => {
      this.store.ping().then(
        () => this.answered(),
        () => {
          if (this.since !== undefined && !this.closed) this.probeLater();
        },
      );
    }, this.probeIntervalMs).unref();
  }
}
