import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type OutboxLimits, planOutbox } from '../src/fill/outbox-plan.js';

const url = (name: string) => `wss://${name}.example/`;

function needs(authors: Record<string, { relays: string[]; missing: number }>) {
  const candidates = new Map<string, string[]>();
  const missing = new Map<string, number>();
  for (const [author, { relays, missing: count }] of Object.entries(authors)) {
    candidates.set(author, relays.map(url));
    missing.set(author, count);
  }
  return { candidates, missing };
}

function limits(maxRelays: number, scores: Record<string, number> = {}, unusable: string[] = []): OutboxLimits {
  const resting = new Set(unusable.map(url));
  return {
    maxRelays,
    score: (relay) => scores[relay] ?? 1,
    usable: (relay) => !resting.has(relay),
  };
}

/** The plan as [relay name, authors] pairs, in the order the relays were taken. */
const entries = (plan: Map<string, string[]>) => [...plan].map(([relay, authors]) => [relay.slice('wss://'.length, -'.example/'.length), authors]);

describe('planOutbox', () => {
  it('takes a relay shared by many authors first, and it alone when it covers them all', () => {
    const plan = planOutbox(
      needs({
        alice: { relays: ['alice-own', 'shared'], missing: 1 },
        bob: { relays: ['bob-own', 'shared'], missing: 1 },
        carol: { relays: ['shared', 'carol-own'], missing: 1 },
      }),
      limits(10),
    );
    expect(entries(plan)).toEqual([['shared', ['alice', 'bob', 'carol']]]);
  });

  it('a relay with more authors beats one an author lists first', () => {
    const plan = planOutbox(
      needs({
        alice: { relays: ['solo', 'shared'], missing: 1 },
        bob: { relays: ['shared'], missing: 1 },
      }),
      limits(10),
    );
    expect(entries(plan)).toEqual([['shared', ['alice', 'bob']]]);
  });

  it('counts only the authors still short: an author covered already is not planned again', () => {
    // r1 and r2 both cover two authors (tie on rank 0, r1 wins by URL); once r1 covers alice and
    // bob, r2 is still needed for carol alone.
    const plan = planOutbox(
      needs({
        alice: { relays: ['r1'], missing: 1 },
        bob: { relays: ['r1', 'r2'], missing: 1 },
        carol: { relays: ['r2'], missing: 1 },
      }),
      limits(10),
    );
    expect(entries(plan)).toEqual([
      ['r1', ['alice', 'bob']],
      ['r2', ['carol']],
    ]);
  });

  it('gives each author at most its missing count of relays', () => {
    const plan = planOutbox(
      needs({
        alice: { relays: ['a1', 'a2', 'a3', 'a4'], missing: 2 },
        bob: { relays: ['b1', 'b2', 'b3'], missing: 1 },
      }),
      limits(10),
    );
    // All gains 1: ties go to the author's order (rank), then the URL.
    expect(entries(plan)).toEqual([
      ['a1', ['alice']],
      ['b1', ['bob']],
      ['a2', ['alice']],
    ]);
  });

  it('plans nobody whose missing count is zero or negative', () => {
    const plan = planOutbox(
      needs({
        alice: { relays: ['a1', 'shared'], missing: 0 },
        bob: { relays: ['b1', 'shared'], missing: -2 },
        carol: { relays: ['c1', 'shared'], missing: 1 },
      }),
      limits(10),
    );
    expect(entries(plan)).toEqual([['c1', ['carol']]]);
  });

  it('takes at most maxRelays relays, the best ones', () => {
    const plan = planOutbox(
      needs({
        alice: { relays: ['a1', 'shared-2'], missing: 2 },
        bob: { relays: ['b1', 'shared-2', 'shared-3'], missing: 2 },
        carol: { relays: ['c1', 'shared-3'], missing: 2 },
        dave: { relays: ['d1', 'shared-3'], missing: 2 },
      }),
      limits(2),
    );
    expect(entries(plan)).toEqual([
      ['shared-3', ['bob', 'carol', 'dave']],
      ['shared-2', ['alice', 'bob']],
    ]);
    expect(planOutbox(needs({ alice: { relays: ['a1'], missing: 1 } }), limits(0)).size).toBe(0);
  });

  it('never takes a relay that is not usable, however many authors it would cover', () => {
    const plan = planOutbox(
      needs({
        alice: { relays: ['resting', 'a1'], missing: 1 },
        bob: { relays: ['resting', 'b1'], missing: 1 },
        carol: { relays: ['resting'], missing: 1 },
      }),
      limits(10, {}, ['resting']),
    );
    expect(entries(plan)).toEqual([
      ['a1', ['alice']],
      ['b1', ['bob']],
    ]);
    expect(planOutbox(needs({ alice: { relays: ['resting'], missing: 3 } }), limits(10, {}, ['resting'])).size).toBe(0);
  });

  it('weights by health: a shared relay with a very low score loses to healthy ones', () => {
    const authors = {
      alice: { relays: ['shared', 'a1'], missing: 1 },
      bob: { relays: ['shared', 'b1'], missing: 1 },
      carol: { relays: ['shared', 'c1'], missing: 1 },
    };
    // 3 × 0.1 = 0.3 < 0.7: each author's own healthy relay wins, and then nobody needs `shared`.
    const scores = { [url('shared')]: 0.1, [url('a1')]: 0.7, [url('b1')]: 0.7, [url('c1')]: 0.7 };
    expect(entries(planOutbox(needs(authors), limits(10, scores)))).toEqual([
      ['a1', ['alice']],
      ['b1', ['bob']],
      ['c1', ['carol']],
    ]);
    // 3 × 0.3 = 0.9 > 0.7: the shared relay is worth it again.
    expect(entries(planOutbox(needs(authors), limits(10, { ...scores, [url('shared')]: 0.3 })))).toEqual([['shared', ['alice', 'bob', 'carol']]]);
  });

  it('a low-score shared relay is still taken, last, for authors that need more relays', () => {
    const plan = planOutbox(
      needs({
        alice: { relays: ['shared', 'a1'], missing: 2 },
        bob: { relays: ['shared', 'b1'], missing: 2 },
      }),
      limits(10, { [url('shared')]: 0.1, [url('a1')]: 0.9, [url('b1')]: 0.8 }),
    );
    expect(entries(plan)).toEqual([
      ['a1', ['alice']],
      ['b1', ['bob']],
      ['shared', ['alice', 'bob']],
    ]);
  });

  it('between a healthy and an unhealthy relay of one author, takes the healthy one even if listed later', () => {
    const plan = planOutbox(needs({ alice: { relays: ['flaky', 'steady'], missing: 1 } }), limits(10, { [url('flaky')]: 0.2, [url('steady')]: 0.9 }));
    expect(entries(plan)).toEqual([['steady', ['alice']]]);
  });

  it('breaks ties by the author’s order (position in its list) before the URL', () => {
    // Equal gains: `zeta` is alice's first relay, so it wins over `alpha` despite sorting after it.
    expect(entries(planOutbox(needs({ alice: { relays: ['zeta', 'alpha'], missing: 1 } }), limits(10)))).toEqual([['zeta', ['alice']]]);
    // The rank is the best position any author gives the relay: alice puts `alpha` before `zeta`,
    // but bob puts `zeta` first, and that is the better position.
    expect(
      entries(
        planOutbox(
          needs({
            alice: { relays: ['mid', 'alpha', 'zeta'], missing: 1 },
            bob: { relays: ['zeta', 'alpha'], missing: 1 },
          }),
          limits(1, { [url('mid')]: 0.5 }),
        ),
      ),
    ).toEqual([['zeta', ['alice', 'bob']]]);
  });

  it('breaks ties of gain and position by the URL', () => {
    const plan = planOutbox(
      needs({
        alice: { relays: ['zeta'], missing: 1 },
        bob: { relays: ['alpha'], missing: 1 },
        carol: { relays: ['mu'], missing: 1 },
      }),
      limits(2),
    );
    expect(entries(plan)).toEqual([
      ['alpha', ['bob']],
      ['mu', ['carol']],
    ]);
  });

  it('plans nothing for empty inputs', () => {
    const empty = { candidates: new Map<string, string[]>(), missing: new Map<string, number>() };
    expect(planOutbox(empty, limits(10)).size).toBe(0);
    // An author with candidates but no missing entry, or missing but no candidates, or an empty list.
    expect(planOutbox({ candidates: new Map([['alice', [url('a1')]]]), missing: new Map() }, limits(10)).size).toBe(0);
    expect(planOutbox({ candidates: new Map(), missing: new Map([['alice', 2]]) }, limits(10)).size).toBe(0);
    expect(planOutbox(needs({ alice: { relays: [], missing: 2 } }), limits(10)).size).toBe(0);
  });

  const POOL = Array.from({ length: 30 }, (_, n) => `wss://relay${n}.example/`);

  it('property: bounded, usable, honest and complete plans for random authors', () => {
    const author = fc.record({
      relays: fc.uniqueArray(fc.constantFrom(...POOL), { minLength: 1, maxLength: 6 }),
      missing: fc.integer({ min: 0, max: 3 }),
    });
    const scenario = fc.record({
      authors: fc.array(author, { minLength: 1, maxLength: 50 }),
      maxRelays: fc.integer({ min: 1, max: 40 }),
      resting: fc.subarray(POOL, { maxLength: 10 }),
      scores: fc.array(fc.double({ min: 0.05, max: 1.5, noNaN: true }), { minLength: POOL.length, maxLength: POOL.length }),
    });
    fc.assert(
      fc.property(scenario, ({ authors, maxRelays, resting, scores }) => {
        const candidates = new Map(authors.map(({ relays }, n) => [`author${n}`, relays]));
        const missing = new Map(authors.map(({ missing: count }, n) => [`author${n}`, count]));
        const unusable = new Set(resting);
        const score = (relay: string) => scores[POOL.indexOf(relay)] as number;
        const plan = planOutbox({ candidates, missing }, { maxRelays, score, usable: (relay) => !unusable.has(relay) });

        expect(plan.size).toBeLessThanOrEqual(maxRelays);
        const got = new Map<string, number>();
        for (const [relay, planned] of plan) {
          expect(unusable.has(relay)).toBe(false);
          expect(planned.length).toBeGreaterThan(0);
          expect(new Set(planned).size).toBe(planned.length);
          for (const name of planned) {
            expect(candidates.get(name)).toContain(relay);
            got.set(name, (got.get(name) ?? 0) + 1);
          }
        }
        for (const [name, count] of got) expect(count).toBeLessThanOrEqual(missing.get(name) as number);

        // Greedy: each relay taken had the best gain (authors still short × score) at its turn.
        const short = new Map([...missing].filter(([, count]) => count > 0));
        const taken = new Set<string>();
        const gain = (relay: string) => [...short.keys()].filter((name) => candidates.get(name)?.includes(relay)).length * score(relay);
        for (const [relay, planned] of plan) {
          const best = Math.max(...POOL.filter((other) => !unusable.has(other) && !taken.has(other)).map(gain));
          expect(gain(relay)).toBe(best);
          expect(planned).toEqual([...short.keys()].filter((name) => candidates.get(name)?.includes(relay)));
          taken.add(relay);
          for (const name of planned) {
            const left = (short.get(name) as number) - 1;
            if (left > 0) short.set(name, left);
            else short.delete(name);
          }
        }

        // Complete: with room for every relay (or when the plan stopped short of the bound),
        // every author gets as many relays as it misses, or all its usable ones.
        const distinct = new Set(authors.flatMap(({ relays }) => relays)).size;
        if (maxRelays >= distinct || plan.size < maxRelays) {
          for (const [name, relays] of candidates) {
            const usableCount = relays.filter((relay) => !unusable.has(relay)).length;
            expect(got.get(name) ?? 0).toBe(Math.min(missing.get(name) as number, usableCount));
          }
        }
      }),
      { numRuns: 400 },
    );
  });
});
