// The shape of the simulated network, drawn from the seed before anything listens: which relay is
// the indexer, which are the base RELAYS, which are users' relays, how each behaves, which are built
// on a third-party implementation, and how popular each users' relay is (power law).
import { type Behaviour, type Implementation, type RelaySpec } from './relays.js';
import { between, type Random, shuffled } from './random.js';

export interface RelayPlan {
  specs: RelaySpec[];
  indexer: number;
  base: number[];
  /** Relays users put in their NIP-65 lists, each with its popularity weight. */
  userRelays: number[];
  popularity: Map<number, number>;
}

export const SHARES = {
  dead: 0.1,
  silent: 0.1,
  slow: 0.1,
  /** Of the users' relays, built on @nostr-relay/core. */
  thirdParty: 0.25,
  /** Power-law exponent of users' relay popularity: the k-th most popular has weight 1/k^s. */
  popularityExponent: 1.2,
  slowDelayMs: [300, 1500] as const,
};
export const BASE_RELAYS = 3;

export function planRelays(random: Random, count: number): RelayPlan {
  if (count < BASE_RELAYS + 5) throw new Error(`--relays must be at least ${BASE_RELAYS + 5}`);
  const indexer = 0;
  const base = Array.from({ length: BASE_RELAYS }, (_, n) => n + 1);
  const userRelays = Array.from({ length: count - 1 - BASE_RELAYS }, (_, n) => n + 1 + BASE_RELAYS);
  // Trusted relays stay up: the failures to route around are among relays learned from lists.
  const behaviours = new Map<number, Behaviour>();
  const order = shuffled(random, userRelays);
  const take = (share: number) => order.splice(0, Math.round(count * share));
  take(SHARES.dead).forEach((relay, n) => behaviours.set(relay, n % 2 === 0 ? 'refusing' : 'resetting'));
  for (const relay of take(SHARES.silent)) behaviours.set(relay, 'silent');
  for (const relay of take(SHARES.slow)) behaviours.set(relay, 'slow');
  // One base relay is third-party too: the trusted path also meets an implementation not ours.
  const thirdParty = new Set([base[1] as number, ...shuffled(random, userRelays).slice(0, Math.round(userRelays.length * SHARES.thirdParty))]);
  const specs: RelaySpec[] = Array.from({ length: count }, (_, index) => {
    const behaviour = behaviours.get(index) ?? 'live';
    const implementation: Implementation = thirdParty.has(index) ? 'third-party' : 'ours';
    const delayMs = behaviour === 'slow' ? between(random, ...SHARES.slowDelayMs) : 0;
    return { index, behaviour, implementation, delayMs };
  });
  // Popularity rank is drawn independently of behaviour: a popular relay may be the one that is down.
  const popularity = new Map(shuffled(random, userRelays).map((relay, rank) => [relay, 1 / (rank + 1) ** SHARES.popularityExponent]));
  return { specs, indexer, base, userRelays, popularity };
}
