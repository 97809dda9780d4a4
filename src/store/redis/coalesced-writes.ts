import { Redis } from 'ioredis';
import type { RedisClient } from './mget-by-slot.js';

/**
 * Writes the commands issued during one turn of the event loop to Redis in one syscall per
 * connection: on a single Redis its one socket, on a cluster each master's.
 *
 * Under load, many requests reach the lookup in the same turn (one I/O callback each), and each
 * command used to be its own socket write: on loopback those writes were a quarter of the service's
 * CPU (BENCHMARKS.md). Corking the sockets and uncorking them in setImmediate, after the turn's I/O
 * callbacks, sends them together; a command waits at most until the end of the current turn. On a
 * cluster this is what makes the per-slot reads of one request one round trip per node.
 * ioredis' own auto-pipelining batches per tick only (process.nextTick), which runs between I/O
 * callbacks, and allocates a Pipeline each time.
 */
export class CoalescedWrites {
  private corked = false;

  constructor(private readonly client: RedisClient) {}

  /** Call before issuing a command. */
  beforeCommand(): void {
    if (this.corked) return;
    const streams = this.readyStreams();
    if (streams.length === 0) return;
    this.corked = true;
    for (const stream of streams) stream.cork();
    setImmediate(() => {
      this.corked = false;
      for (const stream of streams) stream.uncork();
    });
  }

  private readyStreams(): NonNullable<Redis['stream']>[] {
    const connections = this.client instanceof Redis ? [this.client] : this.client.nodes('master');
    const streams: NonNullable<Redis['stream']>[] = [];
    for (const connection of connections) {
      if (connection.stream && connection.status === 'ready') streams.push(connection.stream);
    }
    return streams;
  }
}
