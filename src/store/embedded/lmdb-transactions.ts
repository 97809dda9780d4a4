import { statfsSync } from 'node:fs';
import { metrics } from '../../metrics/metrics.js';
import type { RootDatabase } from 'lmdb';
import { StoreUnavailableError, type WritesRefusedError } from '../event-store.js';
import { DiskState, type DiskLog, errnoName, refusal } from './lmdb-disk-state.js';

/**
 * A write that failed this recently makes /readyz say writes are failing. Successes do not clear
 * it: on a nearly full disk small writes still land while larger ones fail.
 */
const WRITE_FAILURE_WINDOW_MS = 30_000;

/**
 * After a failed commit, writes fail at once for this long, doubling with each failure after it up
 * to MAX_WRITE_PAUSE_MS, until one succeeds: a full disk stays full for a while, and every failed
 * commit risks lmdb-js' native double free (kriszyp/lmdb-js#48), which corrupts the heap and can
 * take the process down later (seen: a serve on a full disk died of it mid-request).
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

/** How long a failed commit's own error (lmdb-js' `commitError`, rejected as the commit fails) is waited for. */
const COMMIT_ERROR_WAIT_MS = 1000;

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
  /** Writes fail at once until then (after a failed commit, for its cause); the pause doubles on each failure. */
  private pausedUntil = 0;
  private pause = 0;
  private pausedFor: WritesRefusedError | undefined;
  /** What the log says of the disk (one line per change). */
  private readonly disk: DiskState;
  /** Set by the store's close(): lmdb-js may crash the process on a read of a closed environment. */
  private closed = false;

  /** When the free space was last read, and whether it was enough. */
  private freeSpaceCheckedAt = 0;
  private freeSpaceLow = false;

  constructor(
    private readonly root: RootDatabase<string, string>,
    /** Opened read-only (a read-only disk), and why: every write fails, and writesFailing says so for good. */
    private readonly readOnly?: WritesRefusedError,
    /** The data directory, whose file system's free space is checked before writes. */
    private readonly dataDir?: string,
    log?: DiskLog,
  ) {
    this.disk = new DiskState(log, dataDir);
    if (readOnly) this.disk.openedReadOnly(readOnly);
  }

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
    // A read-only environment has no write transactions at all: refused before reaching lmdb-js.
    if (this.readOnly) throw this.refused(this.readOnly);
    if (this.pausedFor && Date.now() < this.pausedUntil) throw this.refused(this.pausedFor);
    if (this.diskNearlyFull()) {
      this.lastWriteFailure = Date.now();
      throw this.refused(refusal({ code: 'ENOSPC' }, `less than ${MIN_FREE_BYTES / 1024 / 1024} MiB free`));
    }
    let written: T;
    try {
      written = await this.root.transaction(action);
    } catch (error) {
      this.lastWriteFailure = Date.now();
      this.pause = Math.min(MAX_WRITE_PAUSE_MS, this.pause === 0 ? FIRST_WRITE_PAUSE_MS : this.pause * 2);
      this.pausedUntil = this.lastWriteFailure + this.pause;
      this.pausedFor = this.commitRefusal(await commitFailure(error));
      throw this.refused(this.pausedFor);
    }
    this.pause = 0;
    this.pausedFor = undefined;
    this.disk.landed();
    return written;
  }

  /** A write refused for `cause`: counted, told to the disk state (which says it once), thrown. */
  private refused(cause: WritesRefusedError): StoreUnavailableError {
    metrics.storeFailure('embedded');
    this.disk.refusedFor(cause);
    return new StoreUnavailableError({ cause });
  }

  /**
   * Why a commit failed, with DATA_DIR's free space: a commit that outgrows a full disk fails as EIO
   * on some file systems (tmpfs: lmdb-js writes through its memory map), which then has less than
   * MIN_FREE_BYTES free. That is said as the full disk it is, the errno beside it.
   */
  private commitRefusal(failure: unknown): WritesRefusedError {
    let free: number | undefined;
    try {
      if (this.dataDir !== undefined) {
        const { bavail, bsize } = statfsSync(this.dataDir);
        free = bavail * bsize;
      }
    } catch {
      // Not knowable: the failure as it is.
    }
    const freeWords = free === undefined ? undefined : `${(free / 1024 / 1024).toFixed(1)} MiB free`;
    const code = errnoName(failure);
    if (free !== undefined && free < MIN_FREE_BYTES && code !== 'ENOSPC') {
      return refusal({ code: 'ENOSPC' }, `a commit failed${code ? ` with ${code}` : ''}, ${freeWords}`);
    }
    return refusal(failure, freeWords);
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
    return this.readOnly !== undefined || Date.now() - this.lastWriteFailure < WRITE_FAILURE_WINDOW_MS;
  }
}

/**
 * What made a commit fail: lmdb-js rejects the transaction with "Commit failed (see commitError for
 * details)" and a second promise, `commitError`, with the file system's error (rejected in the same
 * callback, so at once; nobody else awaits it). Anything else (the transaction's own error) as it is.
 */
async function commitFailure(error: unknown): Promise<unknown> {
  const commitError = (error as { commitError?: Promise<unknown> } | undefined)?.commitError;
  if (!commitError) return error;
  let timer: NodeJS.Timeout | undefined;
  const reason = await Promise.race([
    commitError.then(
      () => error,
      (cause: unknown) => cause ?? error,
    ),
    new Promise<unknown>((resolve) => {
      timer = setTimeout(() => resolve(error), COMMIT_ERROR_WAIT_MS).unref();
    }),
  ]);
  clearTimeout(timer);
  return reason;
}
