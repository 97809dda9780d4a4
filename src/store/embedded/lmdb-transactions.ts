import { statfsSync } from 'node:fs';
import { metrics } from '../../metrics/metrics.js';
import type { RootDatabase } from 'lmdb';
import { StoreUnavailableError } from '../event-store.js';

/**
 * A write that failed this recently makes /readyz say writes are failing. Successes do not clear
 * it: on a nearly full disk small writes still land while larger ones fail.
 */
const WRITE_FAILURE_WINDOW_MS = 30_000;

/**
 * After a failed commit, writes fail at once for this long, doubling with each failure after it up
 * to MAX_WRITE_PAUSE_MS, until one succeeds: a full disk stays full for a while, and every failed
 * commit risks lmdb-js' native double free (kriszyp/lmdb-js#48), which corrupts the heap and can
 * take the process down later (seen in session 15: a serve on a full disk died of it mid-request).
 */
const FIRST_WRITE_PAUSE_MS = 500;
const MAX_WRITE_PAUSE_MS = 30_000;

/**
 * Below this much free space on the data directory's file system, writes fail at once, before LMDB
 * runs out of room mid-commit (and so before lmdb-js' failed-commit path, above). Read at most
 * every FREE_SPACE_CHECK_MS.
 */
export const MIN_FREE_BYTES = 1024 * 1024;
const FREE_SPACE_CHECK_MS = 100;

/** Inside a write transaction a put's promise only reports the commit, which `transaction()` reports too. */
export function inTransaction(written: Promise<unknown>): void {
  written.catch(() => {});
}

/**
 * Reads and write transactions on one LMDB directory, for every concern stored there (events,
 * marks, cursors): failures become StoreUnavailableError, and failed writes are remembered so that
 * /readyz can say writes are failing while reads go on.
 */
export class LmdbTransactions {
  private lastWriteFailure = 0;
  /** Writes fail at once until then (after a failed commit); the pause doubles on each failure. */
  private pausedUntil = 0;
  private pause = 0;
  /** Set by the store's close(): lmdb-js may crash the process on a read of a closed environment. */
  private closed = false;

  /** When the free space was last read, and whether it was enough. */
  private freeSpaceCheckedAt = 0;
  private freeSpaceLow = false;

  constructor(
    private readonly root: RootDatabase<string, string>,
    /** Opened read-only (a read-only disk): every write fails, and writesFailing says so for good. */
    private readonly readOnly = false,
    /** The data directory, whose file system's free space is checked before writes. */
    private readonly dataDir?: string,
  ) {}

  /** True when the data directory's file system has less than MIN_FREE_BYTES free (read at most every 100 ms). */
  private diskNearlyFull(): boolean {
    if (this.dataDir === undefined) return false;
    const now = Date.now();
    if (now - this.freeSpaceCheckedAt >= FREE_SPACE_CHECK_MS) {
      this.freeSpaceCheckedAt = now;
      try {
        const { bavail, bsize } = statfsSync(this.dataDir);
        this.freeSpaceLow = bavail * bsize < MIN_FREE_BYTES;
      } catch {
        // Not knowable here: LMDB's own errors say what happens.
        this.freeSpaceLow = false;
      }
    }
    return this.freeSpaceLow;
  }

  /** From now on every read and write fails with StoreUnavailableError, never reaching LMDB. */
  close(): void {
    this.closed = true;
  }

  /** One LMDB write transaction: atomic, and serialised with every other writer of the directory. */
  async write<T>(action: () => T): Promise<T> {
    if (this.closed) throw new StoreUnavailableError({ cause: new Error('the store is closed') });
    metrics.storeCommand('embedded');
    if (Date.now() < this.pausedUntil) {
      metrics.storeFailure('embedded');
      throw new StoreUnavailableError({ cause: new Error('writes paused after a failed commit (is the disk full?)') });
    }
    if (this.diskNearlyFull()) {
      metrics.storeFailure('embedded');
      this.lastWriteFailure = Date.now();
      throw new StoreUnavailableError({ cause: new Error(`the disk is nearly full (less than ${MIN_FREE_BYTES / 1024 / 1024} MiB free)`) });
    }
    try {
      const written = await this.root.transaction(action);
      this.pause = 0;
      return written;
    } catch (error) {
      metrics.storeFailure('embedded');
      this.lastWriteFailure = Date.now();
      this.pause = Math.min(MAX_WRITE_PAUSE_MS, this.pause === 0 ? FIRST_WRITE_PAUSE_MS : this.pause * 2);
      this.pausedUntil = this.lastWriteFailure + this.pause;
      // lmdb-js rejects a second promise with the cause of a failed commit, which nobody else awaits.
      (error as { commitError?: Promise<unknown> }).commitError?.catch(() => {});
      throw new StoreUnavailableError({ cause: error });
    }
  }

  async read<T>(run: () => Promise<T> | T): Promise<T> {
    if (this.closed) throw new StoreUnavailableError({ cause: new Error('the store is closed') });
    metrics.storeCommand('embedded');
    try {
      return await run();
    } catch (error) {
      metrics.storeFailure('embedded');
      throw new StoreUnavailableError({ cause: error });
    }
  }

  /** True while writes fail (a full or read-only disk): a write failed within the last 30 s. */
  writesFailing(): boolean {
    return this.readOnly || Date.now() - this.lastWriteFailure < WRITE_FAILURE_WINDOW_MS;
  }
}
