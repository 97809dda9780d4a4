import { readNow } from './lmdb-read-now.js';
import type { Database } from 'lmdb';
import type { MarkStore } from '../mark-store.js';
import { inTransaction, type LmdbTransactions } from './lmdb-transactions.js';

/** A lap of the sweeper starts every second; each run looks at this many marks at most (bounded work). */
const SWEEP_INTERVAL_MS = 1000;
const SWEEP_BATCH = 2000;

export interface LmdbMarkStoreOptions {
  /** How often the sweeper runs (tests shorten it). */
  sweepIntervalMs?: number;
  /** Marks looked at per run, at most. */
  sweepBatch?: number;
}

/**
 * Marks in LMDB: key → expiry time (ms since the epoch, as text), then a space and the note if any. Expired marks read as absent at
 * once, and a sweeper removes them even if nobody reads them again, so the directory does not grow
 * with every distinct id ever asked.
 */
export class LmdbMarkStore implements MarkStore {
  private sweeper: NodeJS.Timeout | undefined;
  /** Where the sweeper goes on from (a rolling scan: every mark is looked at once per lap). */
  private sweepFrom: string | undefined;
  private stopped = false;

  constructor(
    private readonly db: Database<string, string>,
    private readonly transactions: LmdbTransactions,
    { sweepIntervalMs = SWEEP_INTERVAL_MS, sweepBatch = SWEEP_BATCH }: LmdbMarkStoreOptions = {},
  ) {
    // A lap of the rolling scan goes on run after run (each bounded to `sweepBatch`, with the event
    // loop free in between) until it reaches the end, then rests `sweepIntervalMs`: however fast
    // misses write marks, each is looked at within a lap (found by review: a fixed 2,000 a second
    // fell behind 22,500 a second of random ids).
    const next = (restMs: number) => {
      if (this.stopped) return;
      this.sweeper = setTimeout(() => {
        this.sweep(sweepBatch).then(
          () => next(this.sweepFrom === undefined ? sweepIntervalMs : 0),
          () => next(sweepIntervalMs),
        );
      }, restMs);
      this.sweeper.unref();
    };
    next(sweepIntervalMs);
  }

  async set(keys: readonly string[], ttlSeconds: number, notes?: readonly string[]): Promise<void> {
    const expires = String(Date.now() + ttlSeconds * 1000);
    await this.transactions.write(() => {
      keys.forEach((key, index) => {
        const note = notes?.[index];
        inTransaction(this.db.put(key, note ? `${expires} ${note}` : expires));
      });
    });
  }

  async renote(keys: readonly string[], notes: readonly string[]): Promise<void> {
    await this.transactions.write(() => {
      const now = Date.now();
      keys.forEach((key, index) => {
        const held = this.db.get(key);
        if (held === undefined || expiryOf(held) <= now) return;
        const note = notes[index];
        const expires = String(expiryOf(held));
        inTransaction(this.db.put(key, note ? `${expires} ${note}` : expires));
      });
    });
  }

  async has(keys: readonly string[]): Promise<boolean[]> {
    return (await this.notes(keys)).map((note) => note !== null);
  }

  async notes(keys: readonly string[]): Promise<(string | null)[]> {
    const now = Date.now();
    const values = await this.transactions.read(() => readNow(this.db, keys));
    return values.map((value) => noteInForce(value ?? undefined, now));
  }

  async claim(keys: readonly string[], ttlSeconds: number): Promise<boolean[]> {
    // Read and set in one write transaction: LMDB serialises writers, across processes too.
    return this.transactions.write(() => {
      const now = Date.now();
      const expires = String(now + ttlSeconds * 1000);
      return keys.map((key) => {
        const held = this.db.get(key);
        if (held !== undefined && expiryOf(held) > now) return false;
        inTransaction(this.db.put(key, expires));
        return true;
      });
    });
  }

  async clear(keys: readonly string[]): Promise<void> {
    await this.transactions.write(() => {
      for (const key of keys) inTransaction(this.db.remove(key));
    });
  }

  /**
   * One run of the sweeper: a rolling scan of at most `batch` marks, the expired ones removed in one
   * write transaction that checks each is still expired (another writer may have renewed it since
   * it was read). Returns how many were removed.
   */
  async sweep(batch: number = SWEEP_BATCH): Promise<number> {
    if (this.stopped) return 0;
    const now = Date.now();
    const expired: string[] = [];
    let last: string | undefined;
    let seen = 0;
    for (const { key, value } of this.db.getRange({ start: this.sweepFrom, limit: batch })) {
      seen += 1;
      last = key;
      if (expiryOf(value) <= now) expired.push(key);
    }
    // A short page means the end was reached: the next lap starts from the first mark.
    this.sweepFrom = seen < batch || last === undefined ? undefined : `${last}\u0000`;
    if (expired.length === 0) return 0;
    await this.transactions.write(() => {
      const at = Date.now();
      for (const key of expired) {
        const expires = this.db.get(key);
        if (expires !== undefined && expiryOf(expires) <= at) inTransaction(this.db.remove(key));
      }
    });
    return expired.length;
  }

  /** How many marks the directory holds, expired or not (for tests and the soak run). */
  count(): number {
    return this.db.getKeysCount();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.sweeper);
  }
}

/** The expiry time at the start of a mark's value. */
function expiryOf(value: string): number {
  return Number.parseInt(value, 10);
}

/** A mark's value: its expiry (ms since the epoch) and its note, as this store keeps them. */
export function markValue(expiresMs: number, note?: string): string {
  return note ? `${expiresMs} ${note}` : String(expiresMs);
}

/** The note of a mark's value while it is in force at `nowMs` (`''` without one), else null. */
export function noteInForce(value: string | undefined, nowMs: number): string | null {
  if (value === undefined || expiryOf(value) <= nowMs) return null;
  const space = value.indexOf(' ');
  return space < 0 ? '' : value.slice(space + 1);
}
