import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RelayHealth } from '../src/relays/relay-health.js';
import { captureLogs } from './support/logs.js';

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);
const RELAY = 'wss://relay.example/';
const OTHER = 'wss://other.example/';

interface LogLine {
  level: string;
  msg: string;
  relay?: string;
  outcome?: string;
  strikes?: number;
  restMs?: number;
  asked?: number;
  answered?: number;
  delivered?: number;
  after?: number;
}

function subject() {
  const { chunks, logger } = captureLogs('debug');
  const health = new RelayHealth(logger);
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine);
  const messages = () => lines().map((line) => line.msg);
  return { health, lines, messages };
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('RelayHealth', () => {
  describe('resting', () => {
    it('a relay never asked is not resting', () => {
      const { health } = subject();
      expect(health.resting(RELAY)).toBe(false);
      expect(health.get(RELAY)).toBeUndefined();
    });

    for (const learned of [false, true]) {
      it(`'failed' rests a ${learned ? 'learned' : 'configured'} relay for 1 s after the first failure`, () => {
        const { health, lines } = subject();
        health.outcome(RELAY, 'failed', learned);
        expect(health.resting(RELAY)).toBe(true);
        expect(health.resting(RELAY, T0 + 999)).toBe(true);
        expect(health.resting(RELAY, T0 + 1000)).toBe(false);
        expect(health.resting(OTHER)).toBe(false);
        expect(health.get(RELAY)).toMatchObject({ asked: 1, answered: 0, failures: 1, strikes: 1, restingUntil: T0 + 1000 });
        expect(lines()).toEqual([
          expect.objectContaining({
            level: learned ? 'debug' : 'info',
            msg: 'relay resting',
            relay: RELAY,
            outcome: 'failed',
            strikes: 1,
            restMs: 1000,
            asked: 1,
            answered: 0,
            delivered: 0,
          }),
        ]);
      });

      it(`'refused' rests a ${learned ? 'learned' : 'configured'} relay`, () => {
        const { health, messages } = subject();
        health.outcome(RELAY, 'refused', learned);
        expect(health.resting(RELAY)).toBe(true);
        expect(health.get(RELAY)).toMatchObject({ refused: 1, strikes: 1, restingUntil: T0 + 1000 });
        expect(messages()).toEqual(['relay resting']);
      });
    }

    it('the rest ends by itself when its time has passed', () => {
      const { health } = subject();
      health.outcome(RELAY, 'failed', true);
      vi.setSystemTime(T0 + 999);
      expect(health.resting(RELAY)).toBe(true);
      vi.setSystemTime(T0 + 1000);
      expect(health.resting(RELAY)).toBe(false);
    });

    it('the rest doubles with each failure in a row: 1 s, 2 s, 4 s, 8 s', () => {
      const { health, lines } = subject();
      for (let n = 0; n < 4; n++) health.outcome(RELAY, 'failed', false);
      expect(lines().map((line) => [line.strikes, line.restMs])).toEqual([
        [1, 1000],
        [2, 2000],
        [3, 4000],
        [4, 8000],
      ]);
      expect(health.get(RELAY)).toMatchObject({ asked: 4, failures: 4, strikes: 4, restingUntil: T0 + 8000 });
      expect(health.resting(RELAY, T0 + 7999)).toBe(true);
      expect(health.resting(RELAY, T0 + 8000)).toBe(false);
    });

    it('a configured relay rests at most 30 s, a learned one at most 10 min', () => {
      const { health, lines } = subject();
      for (let n = 0; n < 20; n++) {
        health.outcome(RELAY, 'failed', false);
        health.outcome(OTHER, 'failed', true);
      }
      const restsOf = (relay: string) => lines().filter((line) => line.relay === relay).map((line) => line.restMs);
      expect(restsOf(RELAY).slice(4, 7)).toEqual([16_000, 30_000, 30_000]);
      expect(Math.max(...(restsOf(RELAY) as number[]))).toBe(30_000);
      expect(restsOf(OTHER).slice(8, 11)).toEqual([256_000, 512_000, 600_000]);
      expect(Math.max(...(restsOf(OTHER) as number[]))).toBe(600_000);
      expect(health.resting(RELAY, T0 + 30_000)).toBe(false);
      expect(health.resting(OTHER, T0 + 599_999)).toBe(true);
      expect(health.resting(OTHER, T0 + 600_000)).toBe(false);
    });

    it("a learned relay that never answers rests once its deadlines missed in a row bring its success rate under 0.25 (the third)", () => {
      const { health, lines } = subject();
      health.outcome(RELAY, 'timeout', true);
      health.outcome(RELAY, 'timeout', true);
      expect(health.resting(RELAY)).toBe(false);
      expect(health.get(RELAY)).toMatchObject({ timeouts: 2, strikes: 2, restingUntil: 0 });
      expect(lines()).toEqual([]);
      health.outcome(RELAY, 'timeout', true);
      expect(health.resting(RELAY)).toBe(true);
      expect(health.get(RELAY)).toMatchObject({ timeouts: 3, strikes: 3, restingUntil: T0 + 4000 });
      expect(lines()).toEqual([expect.objectContaining({ msg: 'relay resting', relay: RELAY, outcome: 'timeout', strikes: 3, restMs: 4000, asked: 3 })]);
    });

    it('a slow learned relay that mostly answers does not rest for missing deadlines now and then (asked late, it cannot answer in time)', () => {
      const { health } = subject();
      for (let round = 0; round < 10; round++) {
        health.outcome(RELAY, 'eose', true);
        health.outcome(RELAY, 'eose', true);
        health.outcome(RELAY, 'timeout', true);
        health.outcome(RELAY, 'timeout', true);
        expect(health.resting(RELAY)).toBe(false);
      }
    });

    it("a configured relay does not rest for 'timeout's, however many", () => {
      const { health, messages } = subject();
      for (let n = 0; n < 5; n++) health.outcome(RELAY, 'timeout', false);
      expect(health.resting(RELAY)).toBe(false);
      expect(health.get(RELAY)).toMatchObject({ asked: 5, timeouts: 5, restingUntil: 0 });
      expect(messages()).toEqual([]);
    });

    it("'timeout's rest a learned relay only when in a row: an answer in between resets the count", () => {
      const { health, messages } = subject();
      health.outcome(RELAY, 'timeout', true);
      health.outcome(RELAY, 'eose', true);
      health.outcome(RELAY, 'timeout', true);
      expect(health.resting(RELAY)).toBe(false);
      expect(health.get(RELAY)).toMatchObject({ timeouts: 2, strikes: 1 });
      // No rest ever began, so no "answers again" either.
      expect(messages()).toEqual([]);
    });

    it("'closed' rests a learned relay at once, not a configured one", () => {
      const { health, lines } = subject();
      health.outcome(RELAY, 'closed', true);
      health.outcome(OTHER, 'closed', false);
      expect(health.resting(RELAY)).toBe(true);
      expect(health.resting(OTHER)).toBe(false);
      expect(health.get(RELAY)).toMatchObject({ closed: 1, strikes: 1, restingUntil: T0 + 1000 });
      expect(health.get(OTHER)).toMatchObject({ closed: 1, restingUntil: 0 });
      expect(lines()).toEqual([expect.objectContaining({ msg: 'relay resting', relay: RELAY, outcome: 'closed', restMs: 1000 })]);
    });

    it("'eose' ends the rest and resets the strikes, logging 'relay answers again'", () => {
      const { health, lines } = subject();
      health.outcome(RELAY, 'failed', true);
      health.outcome(RELAY, 'failed', true);
      expect(health.resting(RELAY)).toBe(true);
      health.outcome(RELAY, 'eose', true);
      expect(health.resting(RELAY)).toBe(false);
      expect(health.get(RELAY)).toMatchObject({ asked: 3, answered: 1, failures: 2, strikes: 0, restingUntil: 0 });
      expect(lines().map((line) => line.msg)).toEqual(['relay resting', 'relay resting', 'relay answers again']);
      // A learned relay's changes are logged at debug: their URLs come from strangers.
      expect(lines()[2]).toMatchObject({ level: 'debug', relay: RELAY, after: 2 });
      // The strikes start over: the next failure rests 1 s again, not 4 s.
      health.outcome(RELAY, 'failed', true);
      expect(lines()[3]).toMatchObject({ msg: 'relay resting', strikes: 1, restMs: 1000 });
    });

    it("'stopped' is no evidence either way (the answer was complete elsewhere): it changes nothing", () => {
      const { health, messages } = subject();
      health.outcome(RELAY, 'refused', false);
      const before = { ...health.get(RELAY) };
      health.outcome(RELAY, 'stopped', false);
      expect(health.resting(RELAY)).toBe(true);
      expect(health.get(RELAY)).toEqual(before);
      expect(messages()).toEqual(['relay resting']);
    });

    it("an answer from a relay that was not resting logs nothing", () => {
      const { health, messages } = subject();
      health.outcome(RELAY, 'eose', true);
      health.outcome(OTHER, 'timeout', false);
      health.outcome(OTHER, 'eose', false);
      expect(messages()).toEqual([]);
    });

    it("'skipped' changes nothing", () => {
      const { health, messages } = subject();
      health.outcome(RELAY, 'skipped', true);
      expect(health.get(RELAY)).toBeUndefined();
      expect(health.score(RELAY)).toBe(0.7);

      health.outcome(RELAY, 'failed', true);
      const before = { ...health.get(RELAY) };
      const scoreBefore = health.score(RELAY);
      health.outcome(RELAY, 'skipped', true);
      health.outcome(RELAY, 'skipped', false);
      expect(health.get(RELAY)).toEqual(before);
      expect(health.score(RELAY)).toBe(scoreBefore);
      expect(health.resting(RELAY)).toBe(true);
      expect(messages()).toEqual(['relay resting']);
    });
  });

  describe('score', () => {
    it('an unknown relay gets the neutral score 0.7', () => {
      const { health } = subject();
      expect(health.score(RELAY)).toBe(0.7);
    });

    it('is the running success rate (newest outcome weighs 0.3), plus 0.25 × the share of asks that delivered', () => {
      const { health } = subject();
      health.outcome(RELAY, 'eose', true);
      expect(health.score(RELAY)).toBeCloseTo(0.79, 12);
      health.delivered(RELAY);
      expect(health.score(RELAY)).toBeCloseTo(1.04, 12);
      health.outcome(RELAY, 'timeout', true);
      // success 0.79 × 0.7 = 0.553; delivered 1 of 2 asks → + 0.125.
      expect(health.get(RELAY)?.success).toBeCloseTo(0.553, 12);
      expect(health.score(RELAY)).toBeCloseTo(0.678, 12);
    });

    it('the delivered share counts at most 1 per ask', () => {
      const { health } = subject();
      health.outcome(RELAY, 'eose', false);
      for (let n = 0; n < 5; n++) health.delivered(RELAY);
      expect(health.get(RELAY)?.delivered).toBe(5);
      expect(health.score(RELAY)).toBeCloseTo(0.79 + 0.25, 12);
    });

    it('deliveries before any ask add nothing', () => {
      const { health } = subject();
      health.delivered(RELAY);
      expect(health.score(RELAY)).toBe(0.7);
    });

    it('falls with timeouts and failures', () => {
      const { health } = subject();
      health.outcome(RELAY, 'timeout', true);
      expect(health.score(RELAY)).toBeCloseTo(0.49, 12);
      health.outcome(RELAY, 'timeout', true);
      expect(health.score(RELAY)).toBeCloseTo(0.343, 12);
      health.outcome(OTHER, 'failed', false);
      expect(health.score(OTHER)).toBeCloseTo(0.49, 12);
    });

    it('relays that answer and deliver score higher than unknown ones, which score higher than ones that time out', () => {
      const { health } = subject();
      const delivering = 'wss://delivering.example/';
      const answering = 'wss://answering.example/';
      const timingOut = 'wss://timing-out.example/';
      for (let n = 0; n < 3; n++) {
        health.outcome(delivering, 'eose', true);
        health.delivered(delivering);
        health.outcome(answering, 'eose', true);
        health.outcome(timingOut, 'timeout', false);
      }
      const scores = [delivering, answering, 'wss://unknown.example/', timingOut].map((url) => health.score(url));
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
      expect(new Set(scores).size).toBe(4);
      expect(health.score(timingOut)).toBeCloseTo(0.7 ** 4, 12);
      expect(health.score(answering)).toBeCloseTo(1 - 0.3 * 0.7 ** 3, 12);
      expect(health.score(delivering)).toBeCloseTo(1 - 0.3 * 0.7 ** 3 + 0.25, 12);
    });
  });

  it('a configured relay that was slow or closed subscriptions rests 1 s on its first failure to connect, not the longest rest', () => {
    const { health } = subject();
    for (let index = 0; index < 5; index += 1) health.outcome(RELAY, 'timeout', false);
    health.outcome(RELAY, 'closed', false);
    expect(health.get(RELAY)).toMatchObject({ strikes: 0, timeouts: 5, closed: 1 });
    health.outcome(RELAY, 'failed', false);
    expect(health.get(RELAY)).toMatchObject({ strikes: 1, restingUntil: T0 + 1000 });
  });

  it('remembers at most 5,000 relays, forgetting the least recently asked first', () => {
    const { health } = subject();
    const relay = (n: number) => `wss://relay${n}.example/`;
    for (let n = 0; n < 5000; n++) health.outcome(relay(n), 'eose', true);
    health.outcome(relay(0), 'timeout', true);
    health.outcome(relay(5000), 'eose', true);
    expect(health.get(relay(1))).toBeUndefined();
    expect(health.score(relay(1))).toBe(0.7);
    expect(health.get(relay(0))).toMatchObject({ asked: 2, timeouts: 1 });
    expect(health.get(relay(2))).toMatchObject({ asked: 1 });
    expect(health.get(relay(5000))).toMatchObject({ asked: 1 });
  });

  describe('floods', () => {
    it('each flood rests a configured relay longer, up to 30 s; after ten quiet minutes its floods are forgotten (found by review: the rest climbed for good)', () => {
      const { health } = subject();
      const url = 'wss://configured.example/';
      const rests: number[] = [];
      for (let n = 0; n < 7; n++) {
        health.flooded(url, false);
        rests.push((health.get(url)?.floodedUntil ?? 0) - Date.now());
      }
      expect(rests[0]).toBe(1000);
      expect(rests[6]).toBe(30_000);
      vi.advanceTimersByTime(30_000 + 10 * 60_000 + 1);
      health.flooded(url, false);
      expect(health.get(url)?.floods).toBe(1);
      expect((health.get(url)?.floodedUntil ?? 0) - Date.now()).toBe(1000);
    });
  });
});
