import { metrics } from '../../metrics/metrics.js';
import type { RootDatabase } from 'lmdb';
import { StoreUnavailableError } from '../event-store.js';

/**
 * A write that failed this recently makes /readyz say writes are failing. Successes do not clear
 * it: on a nearly full disk small writes still land while larger ones fail.
 */
const WRITE_FAILURE_WINDOW_MS = 30_000;

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
  /** Set by the store's close(): lmdb-js may crash the process on a read of a closed environment. */
  private closed = false;

  constructor(
    private readonly root: RootDatabase<string, string>,
    /** Opened read-only (a read-only disk): every write fails, and writesFailing says so for good. */
    private readonly readOnly = false,
  ) {}

  /** From now on every read and write fails with StoreUnavailableError, never reaching LMDB. */
  close(): void {
    this.closed = true;
  }

  /** One LMDB write transaction: atomic, and serialised with every other writer of the directory. */
  async write<T>(action: () => T): Promise<T> {
    if (this.closed) throw new StoreUnavailableError({ cause: new Error('the store is closed') });
    metrics.storeCommand('embedded');
    try {
      return await this.root.transaction(action);
    } catch (error) {
      metrics.storeFailure('embedded');
      this.lastWriteFailure = Date.now();
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
