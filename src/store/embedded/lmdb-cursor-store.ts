import type { Database } from 'lmdb';
import type { CursorStore } from '../cursor-store.js';
import { inTransaction, type LmdbTransactions } from './lmdb-transactions.js';

/** Cursors in LMDB: name → value. */
export class LmdbCursorStore implements CursorStore {
  constructor(
    private readonly db: Database<string, string>,
    private readonly transactions: LmdbTransactions,
  ) {}

  async get(name: string): Promise<string | undefined> {
    return (await this.transactions.read(() => this.db.get(name))) ?? undefined;
  }

  async set(name: string, value: string): Promise<void> {
    await this.transactions.write(() => {
      inTransaction(this.db.put(name, value));
    });
  }
}
