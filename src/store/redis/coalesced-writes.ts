import type { Redis } from 'ioredis';

/**
 * Writes the commands issued during one turn of the event loop to Redis in one syscall.
 *
 * Under load, many requests reach the lookup in the same turn (one I/O callback each), and each
 * command used to be its own socket write: on loopback those writes were a quarter of the service's
 * CPU (BENCHMARKS.md). Corking the socket and uncorking it in setImmediate, after the turn's I/O
 * callbacks, sends them together; a command waits at most until the end of the current turn.
 * ioredis' own auto-pipelining batches per tick only (process.nextTick), which runs between I/O
 * callbacks, and allocates a Pipeline each time.
 */
export class CoalescedWrites {
  private corked = false;

  constructor(private readonly client: Redis) {}

  /** Call before issuing a command. */
  beforeCommand(): void {
    if (this.corked) return;
    const { stream } = this.client;
    if (!stream || this.client.status !== 'ready') return;
    this.corked = true;
    stream.cork();
    setImmediate(() => {
      this.corked = false;
      stream.uncork();
    });
  }
}
