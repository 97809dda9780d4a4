/** The items in an order drawn from `seed` (Fisher–Yates over a linear congruential stream), in place: the same seed, the same order. */
export function shuffled<T>(items: T[], seed: number): T[] {
  let state = seed >>> 0 || 1;
  for (let index = items.length - 1; index > 0; index--) {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    const other = state % (index + 1);
    [items[index], items[other]] = [items[other] as T, items[index] as T];
  }
  return items;
}
