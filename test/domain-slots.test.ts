import { describe, expect, it } from 'vitest';
import { DomainSlots } from '../src/net/domain-slots.js';

const never = () => new AbortController().signal;

describe('DomainSlots: exchanges with domains at once, in all and per domain', () => {
  it('per domain: past the cap an exchange waits for a release, first come first served', async () => {
    const slots = new DomainSlots(10, 2);
    const first = await slots.acquire('a.example', never());
    const second = await slots.acquire('a.example', never());
    const granted: string[] = [];
    const third = slots.acquire('a.example', never()).then((release) => (granted.push('third'), release));
    const fourth = slots.acquire('a.example', never()).then((release) => (granted.push('fourth'), release));
    // Another domain is not held up by a full one.
    expect(await slots.acquire('b.example', never())).toBeTypeOf('function');
    await Promise.resolve();
    expect(granted).toEqual([]);
    first?.();
    first?.(); // a second release changes nothing
    expect(await third).toBeTypeOf('function');
    expect(granted).toEqual(['third']);
    second?.();
    expect(await fourth).toBeTypeOf('function');
  });

  it('in all: past the total, the first waiter whose domain has room is served', async () => {
    const slots = new DomainSlots(2, 2);
    const a1 = await slots.acquire('a.example', never());
    await slots.acquire('a.example', never());
    const b = slots.acquire('b.example', never());
    a1?.();
    expect(await b).toBeTypeOf('function');
  });

  it('the line is bounded (4 per slot, in all and per domain): past it, refused at once', async () => {
    const slots = new DomainSlots(3, 1);
    await slots.acquire('a.example', never());
    const waiting = Array.from({ length: 4 }, () => slots.acquire('a.example', never()));
    expect(await slots.acquire('a.example', never())).toBeUndefined();
    // Other domains still have their own room and line (the total line is 12).
    expect(await slots.acquire('b.example', never())).toBeTypeOf('function');
    expect(waiting).toHaveLength(4);
  });

  it('a waiter whose deadline passes leaves the line with nothing, and its place is free again', async () => {
    const slots = new DomainSlots(1, 1);
    const held = await slots.acquire('a.example', never());
    const started = performance.now();
    expect(await slots.acquire('a.example', AbortSignal.timeout(50))).toBeUndefined();
    expect(performance.now() - started).toBeGreaterThanOrEqual(40);
    const aborted = new AbortController();
    aborted.abort();
    expect(await slots.acquire('a.example', aborted.signal)).toBeUndefined();
    const next = slots.acquire('a.example', never());
    held?.();
    expect(await next).toBeTypeOf('function');
  });
});

describe('DomainSlots: background exchanges (found by review)', () => {
  it('take at most half of the slots, never wait, and leave the rest to clients', async () => {
    const slots = new DomainSlots(4, 2);
    const background = [await slots.acquire('a.example', never(), true), await slots.acquire('b.example', never(), true)];
    expect(background.every((release) => typeof release === 'function')).toBe(true);
    // Half taken: a third background exchange is refused at once, not queued.
    expect(await slots.acquire('c.example', never(), true)).toBeUndefined();
    // Clients still have the other half.
    expect(await slots.acquire('c.example', never())).toBeTypeOf('function');
    expect(await slots.acquire('d.example', never())).toBeTypeOf('function');
    background[0]?.();
    expect(await slots.acquire('c.example', never(), true)).toBeTypeOf('function');
  });

  it('a domain at its cap refuses a background exchange at once', async () => {
    const slots = new DomainSlots(10, 1);
    await slots.acquire('a.example', never());
    expect(await slots.acquire('a.example', never(), true)).toBeUndefined();
  });
});
