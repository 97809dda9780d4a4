// Free loopback ports that never collide with one handed out before: a refusing relay's port has
// nothing listening on it, so without this book a later freePort() (the service, Redis) could land on
// it and turn a dead relay into a live one.
import { freePort } from '../../../../test/support/redis-server.js';

export class PortBook {
  private readonly taken = new Set<number>();

  note(port: number): void {
    this.taken.add(port);
  }

  async free(): Promise<number> {
    for (;;) {
      const port = await freePort();
      if (!this.taken.has(port)) {
        this.taken.add(port);
        return port;
      }
    }
  }
}
