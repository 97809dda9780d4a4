// What the simulated relays saw of the service, counted on the relay side (the service is their
// only client): every REQ with its filters, and every TCP connection open at each moment.
import type { Filter } from 'nostr-tools/filter';

export interface ReqRecord {
  relay: number;
  filters: Filter[];
}

export class Accounting {
  reqs: ReqRecord[] = [];
  /** Sockets from the service open now, all relays together, and the most at once. */
  open = 0;
  peakOpen = 0;
  /** Relays with at least one open socket now, and the most at once. */
  relaysOpen = 0;
  peakRelaysOpen = 0;
  /**
   * WebSockets open and not closing (neither side has sent a close frame), the most at once. A socket
   * the service is closing stays in `open` until its TCP connection ends; this one drops it at once.
   */
  peakWebSockets = 0;
  /** Connection attempts a dead relay reset at once (the refusing ones cannot count theirs). */
  deadDials = 0;
  private readonly openByRelay = new Map<number, number>();
  private readonly webSocketCounters: (() => number)[] = [];

  /** A new run: the counters start again (sockets still open, if any, stay counted). */
  reset(): void {
    this.reqs = [];
    this.peakOpen = this.open;
    this.peakRelaysOpen = this.relaysOpen;
    this.peakWebSockets = this.webSockets();
    this.deadDials = 0;
  }

  /** A relay's count of its WebSockets open and not closing. */
  countWebSockets(counter: () => number): void {
    this.webSocketCounters.push(counter);
  }

  /** A WebSocket finished its handshake: the only moment the not-closing count can reach a new peak. */
  webSocketOpened(): void {
    this.peakWebSockets = Math.max(this.peakWebSockets, this.webSockets());
  }

  private webSockets(): number {
    return this.webSocketCounters.reduce((sum, count) => sum + count(), 0);
  }

  opened(relay: number): void {
    this.open += 1;
    this.peakOpen = Math.max(this.peakOpen, this.open);
    const before = this.openByRelay.get(relay) ?? 0;
    this.openByRelay.set(relay, before + 1);
    if (before === 0) {
      this.relaysOpen += 1;
      this.peakRelaysOpen = Math.max(this.peakRelaysOpen, this.relaysOpen);
    }
  }

  closed(relay: number): void {
    this.open -= 1;
    const after = (this.openByRelay.get(relay) ?? 1) - 1;
    this.openByRelay.set(relay, after);
    if (after === 0) this.relaysOpen -= 1;
  }

  req(relay: number, filters: Filter[]): void {
    this.reqs.push({ relay, filters });
  }
}
