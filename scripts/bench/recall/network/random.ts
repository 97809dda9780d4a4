// A seeded pseudo-random stream (mulberry32), so `--seed` gives the same network and the same
// lookups every run: two runs differ only in what the service does.

export type Random = () => number;

export function seeded(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** A whole number in [min, max]. */
export function between(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

export function chance(random: Random, probability: number): boolean {
  return random() < probability;
}

export function pickOne<T>(random: Random, items: readonly T[]): T {
  if (items.length === 0) throw new Error('pickOne of an empty list');
  return items[Math.floor(random() * items.length)] as T;
}

/** A shuffled copy (Fisher–Yates). */
export function shuffled<T>(random: Random, items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

/** `count` distinct items, each draw weighted by `weight` among those not drawn yet. */
export function pickWeighted<T>(random: Random, items: readonly T[], weight: (item: T) => number, count: number): T[] {
  const left = [...items];
  const picked: T[] = [];
  while (picked.length < count && left.length > 0) {
    const total = left.reduce((sum, item) => sum + weight(item), 0);
    let target = random() * total;
    let index = left.findIndex((item) => (target -= weight(item)) < 0);
    if (index < 0) index = left.length - 1;
    picked.push(...left.splice(index, 1));
  }
  return picked;
}
