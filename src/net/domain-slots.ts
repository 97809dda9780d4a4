/**
 * Exchanges that may wait in line, per slot: enough to absorb a burst that the slots clear within
 * a deadline, not so many that a hanging domain parks hundreds of requests.
 */
const WAITING_PER_SLOT = 4;

interface Waiter {
  domain: string;
  grant: (release: (() => void) | undefined) => void;
}

/**
 * Outgoing exchanges with domains at once: at most `total`, and at most `perDomain` with one
 * domain (40 clients held 320 hanging connections to one domain). A "domain" is whatever
 * key the caller gives: the guarded fetcher gives the address it connects to (guarded-fetch.ts
 * slotKey), so that many names of one server share its cap. Past a cap an exchange
 * waits its turn, first come first served, until its deadline; the line is bounded too
 * (WAITING_PER_SLOT per slot, in all and per domain), and an exchange past it is refused at once.
 */
export class DomainSlots {
  private running = 0;
  /** Slots held by background exchanges (at most half: backgroundShare). */
  private runningInBackground = 0;
  private readonly runningByDomain = new Map<string, number>();
  private readonly waiting: Waiter[] = [];
  private readonly waitingByDomain = new Map<string, number>();

  constructor(
    private readonly total: number,
    private readonly perDomain: number,
  ) {}

  /**
   * A slot for an exchange with `domain`: resolves with its release (call it once the connection is
   * done with), or with undefined when the line is full or `signal` aborts first; a `background`
   * exchange gets one only at once, within half of the slots.
   */
  acquire(domain: string, signal: AbortSignal, background = false): Promise<(() => void) | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    // Background exchanges (verifications nobody waits for) take at most half of the slots and never
    // wait: profiles an attacker stored, naming hanging domains, must not crowd out the names clients
    // ask for (found by review).
    if (background) {
      return Promise.resolve(this.hasRoom(domain) && this.runningInBackground < this.backgroundShare() ? this.take(domain, true) : undefined);
    }
    // Whoever waits cannot use a slot that is free now (each release hands slots out at once): no queue jumping.
    if (this.hasRoom(domain)) return Promise.resolve(this.take(domain));
    if (this.waiting.length >= WAITING_PER_SLOT * this.total || count(this.waitingByDomain, domain) >= WAITING_PER_SLOT * this.perDomain) {
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => {
      const waiter: Waiter = {
        domain,
        grant: (release) => {
          signal.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        this.leaveLine(waiter);
        waiter.grant(undefined);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
      add(this.waitingByDomain, domain, 1);
    });
  }

  /** Exchanges with `domain` holding a slot now. */
  runningWith(domain: string): number {
    return count(this.runningByDomain, domain);
  }

  private hasRoom(domain: string): boolean {
    return this.running < this.total && count(this.runningByDomain, domain) < this.perDomain;
  }

  private backgroundShare(): number {
    return Math.max(1, Math.floor(this.total / 2));
  }

  private take(domain: string, background = false): () => void {
    this.running++;
    if (background) this.runningInBackground++;
    add(this.runningByDomain, domain, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      if (background) this.runningInBackground--;
      add(this.runningByDomain, domain, -1);
      this.grantWaiting();
    };
  }

  /** Gives freed slots to the first waiters that fit (a domain at its cap does not hold up the others). */
  private grantWaiting(): void {
    for (let index = 0; index < this.waiting.length && this.running < this.total; ) {
      const waiter = this.waiting[index] as Waiter;
      if (!this.hasRoom(waiter.domain)) {
        index++;
        continue;
      }
      this.leaveLine(waiter);
      waiter.grant(this.take(waiter.domain));
    }
  }

  private leaveLine(waiter: Waiter): void {
    const index = this.waiting.indexOf(waiter);
    if (index === -1) return;
    this.waiting.splice(index, 1);
    add(this.waitingByDomain, waiter.domain, -1);
  }
}

function count(counts: Map<string, number>, key: string): number {
  return counts.get(key) ?? 0;
}

function add(counts: Map<string, number>, key: string, delta: number): void {
  const next = count(counts, key) + delta;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
