import { Cluster } from 'ioredis';
import { metrics } from '../../metrics/metrics.js';
import { CorruptDataError, StoreUnavailableError } from '../event-store.js';
import { CoalescedWrites } from './coalesced-writes.js';
import type { RedisClient } from './mget-by-slot.js';

/**
 * How every concern stored in Redis (events, marks, cursors) sends its commands: any failure of
 * Redis itself becomes StoreUnavailableError, corrupt data stays what it is, and the commands of one
 * event-loop turn leave in one socket write per connection (coalesced-writes.ts).
 */
export class RedisCommands {
  private readonly writes: CoalescedWrites;

  constructor(
    readonly client: RedisClient,
    /**
     * On a cluster, the deadline of one read as a whole: a command there may follow redirections
     * and failover retries, each within the per-command timeout. A single Redis's commandTimeout is
     * the deadline already.
     */
    private readonly timeoutMs?: number,
  ) {
    this.writes = new CoalescedWrites(client);
  }

  /**
   * A read a request waits for: on a cluster, within `timeoutMs` as a whole. Writes (`run`) are
   * bounded per command only: a batch of an import takes as long as its commands do, and is never
   * given up on while it still writes.
   */
  read<T>(send: () => Promise<T>): Promise<T> {
    return this.run(this.timeoutMs !== undefined && this.client instanceof Cluster ? () => withDeadline(send(), this.timeoutMs as number) : send);
  }

  async run<T>(send: () => Promise<T>): Promise<T> {
    this.writes.beforeCommand();
    metrics.storeCommand('redis');
    try {
      return await send();
    } catch (error) {
      if (error instanceof CorruptDataError) throw error;
      metrics.storeFailure('redis');
      throw new StoreUnavailableError({ cause: error });
    }
  }
}

class DeadlineExceeded extends Error {
  override name = 'DeadlineExceeded';
}

/** `pending`, or a rejection once `timeoutMs` have passed (its late answer dropped). */
export function withDeadline<T>(pending: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(`no answer from the cluster within ${timeoutMs} ms`)), timeoutMs);
  });
  // The late answer (or failure) of a command given up on is dropped.
  pending.catch(() => {});
  return Promise.race([pending, expired]).finally(() => clearTimeout(timer));
}
