import type { Database } from 'lmdb';
import { endOfTurn } from '../../end-of-turn.js';

/**
 * Values of `keys`, read at once from the memory map, handed back with the other answers of this
 * turn (end-of-turn.ts). lmdb-js' getMany prefetches on a thread first (against page faults on a
 * cold disk) and cost a third of /user-profile's CPU on a warm one (BENCHMARKS.md).
 */
export async function readNow<V>(db: Database<V, string>, keys: readonly string[]): Promise<(V | undefined)[]> {
  const values = keys.map((key) => db.get(key));
  await endOfTurn();
  return values;
}
