// What the service could find at best: "reachable" means held by a live relay (neither dead nor
// silent; a slow one only if it answers within the deadline) among those it can know of:
// - the base RELAYS, for everything; the indexer too, for profiles (it is asked for kinds 0 and 10002);
// - the author's write relays, when their kind 10002 can be found: on a live indexer or base relay
//   (a list only on the author's own relays cannot be discovered without the list);
// - the relays a lookup's hints name.
// The same for a bare id (the definition), although it names no author: only the base
// relays can answer it, which `onLiveBase` tells apart.
import type { User } from '../network/dataset.js';
import type { Network } from '../network/network.js';
import { isLive } from '../network/relays.js';

export interface Availability {
  /** Held by a live relay the service can know of (see above). */
  reachable: boolean;
  /** Held by any live relay at all. */
  existsLive: boolean;
}

/**
 * A slow relay counts as live only if it can answer within the deadline: its delay at most
 * RELAY_TIMEOUT_MS less this much (the service keeps 100 ms to store and answer, and a write relay
 * is asked once its relay list is known).
 */
const ANSWER_MARGIN_MS = 300;

export class Reachability {
  private readonly trusted: number[];

  constructor(
    private readonly network: Network,
    private readonly timeoutMs: number,
  ) {
    this.trusted = [network.plan.indexer, ...network.plan.base];
  }

  private isLive(relay: number): boolean {
    const spec = this.network.relays[relay]?.spec;
    if (!spec || !isLive(spec.behaviour)) return false;
    return spec.behaviour !== 'slow' || spec.delayMs <= this.timeoutMs - ANSWER_MARGIN_MS;
  }

  private heldLive(id: string, among: (relay: number) => boolean): boolean {
    return (this.network.dataset.placement.get(id) ?? []).some((relay) => this.isLive(relay) && among(relay));
  }

  /** The user's write relays as the service can learn them: none if no live trusted relay holds the list. */
  listedWrites(user: User): number[] {
    const list = user.relayList;
    if (!list || !this.heldLive(list.id, (relay) => this.trusted.includes(relay))) return [];
    return user.writes;
  }

  profile(user: User): Availability {
    const known = new Set([...this.trusted, ...this.listedWrites(user)]);
    return this.availability(user.profile.id, known);
  }

  event(id: string, author: User, hints: number[]): Availability {
    return this.availability(id, new Set([...this.network.plan.base, ...this.listedWrites(author), ...hints]));
  }

  /** Whether a live base relay holds it: all that a bare id can reach. */
  onLiveBase(id: string): boolean {
    return this.heldLive(id, (relay) => this.network.plan.base.includes(relay));
  }

  private availability(id: string, known: Set<number>): Availability {
    return { reachable: this.heldLive(id, (relay) => known.has(relay)), existsLive: this.heldLive(id, () => true) };
  }
}
