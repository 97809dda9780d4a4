import { Redis } from 'ioredis';
import { metrics } from '../../metrics/metrics.js';
import { CorruptDataError, StoreUnavailableError } from '../event-store.js';
import { CoalescedWrites } from './coalesced-writes.js';
import type { RedisClient } from './mget-by-slot.js';

/**
 * How every concern stored in Redis (events, marks, cursors) sends its commands: any failure of
 * Redis itself becomes StoreUnavailableError, corrupt data stays what it is, and the commands of one
 * event-loop turn leave in one socket write (coalesced-writes.ts).
 */
export class RedisCommands {
  private readonly writes: CoalescedWrites | undefined;

  constructor(readonly client: RedisClient) {
    // On a single Redis; a Cluster client spreads commands over several sockets.
    this.writes = client instanceof Redis ? new CoalescedWrites(client) : undefined;
  }

  async run<T>(send: () => Promise<T>): Promise<T> {
    this.writes?.beforeCommand();
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
