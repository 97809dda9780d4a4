import { type AddressInfo, createServer, type Socket } from 'node:net';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { MAX_SUBSCRIPTIONS_PER_RELAY, RelayPool } from '../src/relays/relay-pool.js';
import { hintHostAllowed, isPublicAddress, MAX_RELAY_MESSAGE_BYTES } from '../src/relays/relay-socket.js';
import { WebSocketServer } from 'ws';
import { signed } from './support/events.js';
import { captureLogs } from './support/logs.js';
import { type LoopbackRelay, startLoopbackRelay } from './support/loopback-relay.js';

const relays: LoopbackRelay[] = [];
const pools: RelayPool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) pool.close();
  await Promise.all(relays.splice(0).map((relay) => relay.stop()));
});

async function relay(options: Parameters<typeof startLoopbackRelay>[0] = {}) {
  const started = await startLoopbackRelay(options);
  relays.push(started);
  return started;
}

function pool(allowPrivateHints = false, caps: { maxConnections?: number; configured?: string[]; connectTimeoutMs?: number } = {}) {
  const { chunks: logs, logger } = captureLogs('debug');
  const created = new RelayPool({ logger, allowPrivateHints, ...caps });
  pools.push(created);
  return { pool: created, logs };
}

const note = signed('pool-author', { content: 'hello from a relay' });
const forged: NostrEvent = { ...signed('pool-author', { content: 'original' }), content: 'forged' };

describe('RelayPool', () => {
  it('asks every relay in parallel and hands over only verified events that match the filter', async () => {
    const a = await relay({ events: [note] });
    const b = await relay({ events: [forged, signed('someone-else')] });
    const { pool: subject, logs } = pool();
    const seen: string[] = [];
    const result = await subject.query({
      relays: [a.url, b.url],
      filters: [{ ids: [note.id, forged.id] }],
      signal: AbortSignal.timeout(2000),
      onEvent: (event, from) => {
        seen.push(`${event.id}@${from}`);
        return false;
      },
    });
    expect(seen).toEqual([`${note.id}@${a.url}`]);
    expect(result.answered).toBe(true);
    expect(Object.fromEntries(result.outcomes)).toEqual({ [a.url]: 'eose', [b.url]: 'eose' });
    expect(a.requests).toEqual([[{ ids: [note.id, forged.id] }]]);
    expect(logs.join('')).toContain('failed verification');
  });

  it('ends the query for every relay once the answer is complete', async () => {
    const fast = await relay({ events: [note] });
    const silent = await relay({ silent: true });
    const { pool: subject } = pool();
    const started = Date.now();
    const result = await subject.query({
      relays: [fast.url, silent.url],
      filters: [{ ids: [note.id] }],
      signal: AbortSignal.timeout(5000),
      onEvent: () => true,
    });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(Object.fromEntries(result.outcomes)).toEqual({ [fast.url]: 'stopped', [silent.url]: 'stopped' });
  });

  it('a relay that never answers times out at the deadline and does not count as an answer', async () => {
    const silent = await relay({ silent: true });
    const { pool: subject } = pool();
    const started = Date.now();
    const result = await subject.query({
      relays: [silent.url],
      filters: [{ ids: [note.id] }],
      signal: AbortSignal.timeout(400),
      onEvent: () => false,
    });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(350);
    expect(took).toBeLessThan(1500);
    expect(result).toEqual({ outcomes: new Map([[silent.url, 'timeout']]), answered: false });
  });

  it('a relay that is down fails, then rests instead of being dialled on every query', async () => {
    const down = await relay();
    await down.stop();
    const { pool: subject } = pool();
    const ask = () => subject.query({ relays: [down.url], filters: [{ ids: [note.id] }], signal: AbortSignal.timeout(1000), onEvent: () => false });
    expect((await ask()).outcomes.get(down.url)).toBe('failed');
    expect((await ask()).outcomes.get(down.url)).toBe('skipped');
    await down.start();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const again = await ask();
    expect(again).toEqual({ outcomes: new Map([[down.url, 'eose']]), answered: true });
  });

  it('a relay whose WebSocket handshake never completes fails at the connect timeout (RELAY_TIMEOUT_MS), then rests; a query that ends sooner was not sent', async () => {
    const sockets: Socket[] = [];
    const blackhole = createServer((socket) => sockets.push(socket)); // accepts, never answers
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    const url = `ws://127.0.0.1:${(blackhole.address() as AddressInfo).port}/`;
    try {
      const { pool: subject } = pool(false, { connectTimeoutMs: 300 });
      // A query whose deadline comes before the connect timeout stops waiting: not sent, no strike.
      const short = await subject.query({ relays: [url], filters: [{ ids: [note.id] }], signal: AbortSignal.timeout(100), onEvent: () => false });
      expect(short.outcomes.get(url)).toBe('timeout');
      expect(subject.health.get(url)).toBeUndefined();
      const started = Date.now();
      const result = await subject.query({ relays: [url], filters: [{ ids: [note.id] }], signal: AbortSignal.timeout(400), onEvent: () => false });
      expect(Date.now() - started).toBeLessThan(1000);
      expect(result).toEqual({ outcomes: new Map([[url, 'failed']]), answered: false });
      const again = await subject.query({ relays: [url], filters: [{ ids: [note.id] }], signal: AbortSignal.timeout(400), onEvent: () => false });
      expect(again.outcomes.get(url)).toBe('skipped');
      // One attempt, one failure, however many queries waited on it.
      expect(subject.health.get(url)?.failures).toBe(1);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => blackhole.close(resolve));
    }
  });

  it('an attempt that outlives every query waiting on it still strikes the relay when it times out', async () => {
    const sockets: Socket[] = [];
    const blackhole = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    const url = `ws://127.0.0.1:${(blackhole.address() as AddressInfo).port}/`;
    try {
      const { pool: subject } = pool(true, { connectTimeoutMs: 300 });
      const result = await subject.query({ relays: [], learned: [url], filters: [{ ids: [note.id] }], signal: AbortSignal.timeout(100), onEvent: () => false });
      expect(result.outcomes.get(url)).toBe('timeout');
      await new Promise((resolve) => setTimeout(resolve, 350));
      expect(subject.health.get(url)).toMatchObject({ failures: 1, strikes: 1 });
      expect(subject.health.resting(url)).toBe(true);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => blackhole.close(resolve));
    }
  });

  it('a query called off by its caller (stop) while a relay is still connecting leaves that relay without a strike', async () => {
    const sockets: Socket[] = [];
    const blackhole = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    const url = `ws://127.0.0.1:${(blackhole.address() as AddressInfo).port}/`;
    try {
      const { pool: subject } = pool(false, { connectTimeoutMs: 2000 });
      const stop = new AbortController();
      setTimeout(() => stop.abort(), 100);
      const result = await subject.query({
        relays: [url],
        filters: [{ ids: [note.id] }],
        signal: AbortSignal.timeout(1500),
        stop: stop.signal,
        onEvent: () => false,
      });
      expect(result.outcomes.get(url)).toBe('stopped');
      expect(subject.health.resting(url)).toBe(false);
      expect(subject.health.get(url)?.strikes ?? 0).toBe(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => blackhole.close(resolve));
    }
  });

  it(`keeps at most ${MAX_SUBSCRIPTIONS_PER_RELAY} subscriptions open per relay; queries beyond wait for a slot until their deadline`, async () => {
    const silent = await relay({ silent: true });
    const { pool: subject } = pool();
    // The queries holding the slots end at 600 ms, the waiters' deadline is 300 ms: a waiter gives
    // up before any slot comes back. (With one deadline for all, a loaded machine runs the timers of
    // several milliseconds in one pass, and a slot released there may wake every waiter.)
    const queries = Array.from({ length: 25 }, (_, n) =>
      subject.query({
        relays: [silent.url],
        filters: [{ ids: [n.toString(16).padStart(64, '0')] }],
        signal: AbortSignal.timeout(n < MAX_SUBSCRIPTIONS_PER_RELAY ? 600 : 300),
        onEvent: () => false,
      }),
    );
    const outcomes = (await Promise.all(queries)).map((result) => result.outcomes.get(silent.url));
    expect(outcomes).toEqual(Array(25).fill('timeout'));
    expect(silent.maxOpenSubscriptions).toBe(MAX_SUBSCRIPTIONS_PER_RELAY);
    expect(silent.requests).toHaveLength(MAX_SUBSCRIPTIONS_PER_RELAY);

    // Slots come back: with a relay that answers, queued queries run as earlier ones finish.
    const answering = await relay({ events: [note] });
    const many = await Promise.all(
      Array.from({ length: 25 }, () =>
        subject.query({ relays: [answering.url], filters: [{ ids: [note.id] }], signal: AbortSignal.timeout(2000), onEvent: () => false }),
      ),
    );
    expect(many.every((result) => result.outcomes.get(answering.url) === 'eose')).toBe(true);
    expect(answering.requests).toHaveLength(25);
    expect(answering.maxOpenSubscriptions).toBeLessThanOrEqual(MAX_SUBSCRIPTIONS_PER_RELAY);
  });

  it('a complete answer does not wait for a relay whose slots are all taken', async () => {
    const busy = await relay({ silent: true });
    const fast = await relay({ events: [note] });
    const { pool: subject } = pool();
    // Fill every slot of the busy relay with queries that will wait for their (long) deadline.
    const filling = Array.from({ length: MAX_SUBSCRIPTIONS_PER_RELAY }, (_, n) =>
      subject.query({ relays: [busy.url], filters: [{ ids: [n.toString(16).padStart(64, '0')] }], signal: AbortSignal.timeout(1500), onEvent: () => false }),
    );
    await expect.poll(() => busy.requests.length, { timeout: 1000, interval: 10 }).toBe(MAX_SUBSCRIPTIONS_PER_RELAY);
    const started = Date.now();
    const result = await subject.query({ relays: [busy.url, fast.url], filters: [{ ids: [note.id] }], signal: AbortSignal.timeout(1400), onEvent: () => true });
    expect(Date.now() - started).toBeLessThan(500);
    expect(Object.fromEntries(result.outcomes)).toEqual({ [busy.url]: 'stopped', [fast.url]: 'stopped' });
    await Promise.all(filling);
  });

  it('refuses learned relays (hints, relay lists) at loopback unless private addresses are allowed', async () => {
    const hinted = await relay({ events: [note] });
    const query = (subject: RelayPool) =>
      subject.query({ relays: [], learned: [hinted.url], filters: [{ ids: [note.id] }], signal: AbortSignal.timeout(1000), onEvent: () => true });
    expect((await query(pool(false).pool)).outcomes.get(hinted.url)).toBe('refused');
    expect(hinted.requests).toHaveLength(0);
    const allowing = pool(true).pool;
    expect((await query(allowing)).outcomes.get(hinted.url)).toBe('stopped');
    expect(hinted.requests).toHaveLength(1);
  });

  it('holds at most MAX_RELAY_CONNECTIONS connections with room kept for configured relays; an idle learned one is closed for a new one, a busy one never (the new one waits)', async () => {
    const [a, b, c, configured] = await Promise.all([1, 2, 3, 4].map(() => relay({ silent: true })));
    const subject = pool(true, { maxConnections: 3, configured: [configured!.url] }).pool;
    const ask = (relays: string[], learned: string[], ms = 500) =>
      subject.query({ relays, learned, filters: [{ ids: [note.id] }], signal: AbortSignal.timeout(ms), onEvent: () => false });
    // Two learned relays take the two rooms that are not the configured relay's; a third waits for
    // one of them while both are busy (until its deadline here), and the configured relay still
    // gets its connection.
    const busy = ask([], [a!.url, b!.url], 600);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const [third, mine] = await Promise.all([ask([], [c!.url], 300), ask([configured!.url], [], 300)]);
    expect(third.outcomes.get(c!.url)).toBe('timeout');
    expect(c!.requests).toHaveLength(0);
    expect(mine.outcomes.get(configured!.url)).toBe('timeout');
    expect(configured!.requests).toHaveLength(1);
    expect(Object.fromEntries((await busy).outcomes)).toEqual({ [a!.url]: 'timeout', [b!.url]: 'timeout' });
    // Idle now: the least recently used learned connection makes room for the new relay.
    expect((await ask([], [c!.url], 300)).outcomes.get(c!.url)).toBe('timeout');
    expect(subject.openConnections).toBe(3);
    expect(subject.peakConnections).toBe(3);
    expect(c!.requests).toHaveLength(1);
    // Waiting for a busy one: the new relay gets its room as soon as a learned connection is idle.
    const longer = ask([], [a!.url], 500);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const [waiter] = await Promise.all([ask([], [b!.url], 1500), longer]);
    expect(waiter.outcomes.get(b!.url)).toBe('timeout');
    expect(b!.requests).toHaveLength(2);
    expect(subject.peakConnections).toBe(3);
  });

  it('one client holds at most 3/4 of the learned connections: another client still gets one while it waits', async () => {
    const silent = await Promise.all([1, 2, 3, 4, 5, 6].map(() => relay({ silent: true })));
    const other = await relay({ silent: true });
    const subject = pool(true, { maxConnections: 6 }).pool;
    const ask = (client: string, learned: string[], ms: number) =>
      subject.query({ relays: [], learned, client, filters: [{ ids: [note.id] }], signal: AbortSignal.timeout(ms), onEvent: () => false });
    // 6 learned rooms and a share of 5 (3/4, rounded up): the attacker's sixth relay waits, and the
    // room it would have taken is the victim's.
    const hog = ask('attacker', silent.map((r) => r.url), 600);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const victim = await ask('victim', [other.url], 300);
    expect(victim.outcomes.get(other.url)).toBe('timeout');
    expect(other.requests).toHaveLength(1);
    await hog;
    expect(silent.filter((r) => r.requests.length === 1)).toHaveLength(5);
    expect(subject.peakConnections).toBe(6);
  });

  it('a query of many relays is no listener leak: Node does not warn (each wait removes its listener)', async () => {
    const silent = await Promise.all(Array.from({ length: 25 }, () => relay({ silent: true })));
    const subject = pool(true, { maxConnections: 60 }).pool;
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const signal = AbortSignal.timeout(300);
      const ask = () => subject.query({ relays: [], learned: silent.map((r) => r.url), filters: [{ ids: [note.id] }], signal, onEvent: () => false });
      await Promise.all([ask(), ask(), ask()]);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('refuses a hint whose name resolves to loopback (the resolved address is checked, not the name)', async () => {
    const hinted = await relay({ events: [note] });
    const byName = `ws://localhost:${hinted.port}/`;
    const result = await pool(false).pool.query({
      relays: [],
      learned: [byName],
      filters: [{ ids: [note.id] }],
      signal: AbortSignal.timeout(1000),
      onEvent: () => true,
    });
    expect(result.answered).toBe(false);
    expect(hinted.requests).toHaveLength(0);
  });
});

describe('hostile relay messages', () => {
  it('garbage, wrong shapes and foreign subscriptions are ignored; the valid event and EOSE still count', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    wss.on('connection', (socket) => {
      socket.on('message', (data) => {
        const [type, subscription] = JSON.parse(String(data)) as [string, string];
        if (type !== 'REQ') return;
        const hostile = [
          'not json',
          '',
          '[]',
          '{}',
          '["EVENT"]',
          `["EVENT",${JSON.stringify(subscription)}]`,
          `["EVENT",${JSON.stringify(subscription)},null]`,
          `["EVENT",${JSON.stringify(subscription)},"a string"]`,
          `["EVENT",${JSON.stringify(subscription)},{"id":5,"kind":"one"}]`,
          `["EVENT",${JSON.stringify(subscription)},${JSON.stringify({ ...note, tags: 'not a list' })}]`,
          `["EVENT",${JSON.stringify(subscription)},${JSON.stringify(forged)}]`,
          `["EVENT","someone-else",${JSON.stringify(note)}]`,
          '["EOSE"]',
          '["EOSE","someone-else"]',
          '["CLOSED","someone-else","x"]',
          '["NOTICE",{"not":"a string"}]',
          '["OK",null,null,null]',
          '["AUTH",123]',
          '["COUNT","x",{"count":"many"}]',
          `["UNKNOWN",${JSON.stringify(subscription)}]`,
          `["EVENT",${JSON.stringify(subscription)},${JSON.stringify(note)}]`,
          `["EOSE",${JSON.stringify(subscription)}]`,
        ];
        for (const message of hostile) socket.send(message);
      });
    });
    const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`;
    try {
      const { pool: subject } = pool();
      const seen: NostrEvent[] = [];
      const result = await subject.query({
        relays: [url],
        filters: [{ ids: [note.id, forged.id] }],
        signal: AbortSignal.timeout(2000),
        onEvent: (event) => {
          seen.push(event);
          return false;
        },
      });
      expect(seen).toEqual([note]);
      expect(result).toEqual({ outcomes: new Map([[url, 'eose']]), answered: true });
    } finally {
      for (const client of wss.clients) client.terminate();
      await new Promise((resolve) => wss.close(resolve));
    }
  });

  it('a message above the size limit closes that connection: the relay did not answer', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    wss.on('connection', (socket) => {
      socket.on('message', (data) => {
        const [, subscription] = JSON.parse(String(data)) as [string, string];
        socket.send(`["EVENT",${JSON.stringify(subscription)},{"content":"${'x'.repeat(MAX_RELAY_MESSAGE_BYTES)}"}]`);
      });
    });
    const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`;
    try {
      const result = await pool().pool.query({ relays: [url], filters: [{ ids: [note.id] }], signal: AbortSignal.timeout(2000), onEvent: () => false });
      expect(result).toEqual({ outcomes: new Map([[url, 'closed']]), answered: false });
    } finally {
      for (const client of wss.clients) client.terminate();
      await new Promise((resolve) => wss.close(resolve));
    }
  });
});

describe('isPublicAddress (the relay-hint address policy)', () => {
  it.each([
    ['127.0.0.1'], ['127.1.2.3'], ['10.0.0.1'], ['172.16.5.4'], ['192.168.1.1'], ['169.254.169.254'],
    ['100.100.100.200'], ['0.0.0.0'], ['255.255.255.255'], ['224.0.0.1'], ['::1'], ['::'], ['fe80::1'],
    ['fd00:ec2::254'], ['fc00::1'], ['::ffff:127.0.0.1'], ['::ffff:169.254.169.254'], ['2002:7f00:1::'],
    // IPv4-compatible IPv6 (::/96, deprecated): ::7f00:1 is 127.0.0.1; other non-global IPv6.
    ['::7f00:1'], ['::a00:1'], ['::a9fe:a9fe'], ['64:ff9b::7f00:1'], ['5f00::1'], ['3fff::1'], ['100::1'],
    ['not-an-address'], [''],
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([['1.1.1.1'], ['93.184.216.34'], ['2606:4700:4700::1111'], ['::ffff:8.8.8.8']])('allows %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each([
    ['ws://2130706433/'], ['ws://0x7f000001/'], ['ws://127.1/'], ['ws://0177.0.0.1/'], ['ws://[::1]/'],
    ['ws://[::ffff:127.0.0.1]/'], ['wss://169.254.169.254/latest'], ['ws://10.0.0.1:7777/'], ['ws://0.0.0.0/'],
    ['ws://[::7f00:1]/'], ['ws://[::127.0.0.1]/'],
  ])('refuses the IP-literal hint %s, however it is spelled', (url) => {
    expect(hintHostAllowed(url)).toBe(false);
  });

  it('lets names through to the resolver check, and public literals through', () => {
    expect(hintHostAllowed('wss://relay.example.com/')).toBe(true);
    expect(hintHostAllowed('wss://1.1.1.1/')).toBe(true);
    expect(hintHostAllowed('wss://[2606:4700:4700::1111]/')).toBe(true);
  });

  it('refuses every address in 10/8, 127/8, 169.254/16 and 192.168/16 (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(10, 127, 169, 192), fc.nat(255), fc.nat(255), fc.nat(255), (first, b, c, d) => {
        const second = first === 169 ? 254 : first === 192 ? 168 : b;
        return !isPublicAddress(`${first}.${second}.${c}.${d}`);
      }),
    );
  });
});
