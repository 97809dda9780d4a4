import type { AddressInfo } from 'node:net';
import { nip19 } from 'nostr-tools';
import { describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { LEARNED_IDLE_MS } from '../../src/relays/relay-pool.js';
import { signed } from '../support/events.js';
import { relayScenario } from '../support/relay-scenario.js';
import { getJson } from '../support/test-server.js';

/**
 * A hinted relay that answers a REQ with EOSE and then keeps sending. Driven as
 * an attacker would, through the HTTP service with one nevent whose hint names the relay; the
 * service runs in this process, so process.cpuUsage() is what the flood costs it (and what the
 * flooding relay costs to run, which is small: it sends one prepared buffer again and again).
 */

const { cleanups, relay, service } = relayScenario({ allowPrivateHints: true });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long the flood is watched after the request is answered. */
const WINDOW_MS = 2500;

/** Just under ws' maxPayload (2 MiB): the largest message the service accepts at all. */
const FLOOD_MESSAGE_CHARS = 2 * 1024 * 1024 - 1024;

const stored = signed('flood-stored', { content: 'already in the index' });
const wanted = signed('flood-wanted', { content: 'on no relay' });

/**
 * - `closed`: EVENTs for the subscription the service opened, after its EOSE (closed by then);
 * - `unknown`: EVENTs for a subscription id the service never opened;
 * - `notice`: NOTICEs;
 * - `quiet`: EOSE and then nothing (the connection should still not be kept long);
 * - `preeose`: no EOSE, but EVENTs for the open subscription that fail verification, each of 400 KB
 *   (under the size of the largest event we store), until the deadline (found by review).
 */
type Flood = 'closed' | 'unknown' | 'notice' | 'quiet' | 'preeose';

/**
 * An event whose JSON is costly to parse (a few hundred thousand tiny tags, as JSON.parse of a 2 MB
 * message costs most that way), as one message of just under 2 MiB.
 */
function floodMessage(flood: Flood, subscription: string): Buffer {
  if (flood === 'notice') return Buffer.from(JSON.stringify(['NOTICE', 'n'.repeat(FLOOD_MESSAGE_CHARS)]));
  const head = JSON.stringify(['EVENT', flood === 'unknown' ? 'never-opened' : subscription, { ...wanted, tags: [] }]);
  const tag = '["p","0"],';
  const room = (flood === 'preeose' ? 400_000 : FLOOD_MESSAGE_CHARS) - head.length;
  const tags = tag.repeat(Math.floor(room / tag.length)).slice(0, -1);
  return Buffer.from(head.replace('"tags":[]', `"tags":[${tags}]`));
}

interface FloodingRelay {
  url: string;
  /** Connections accepted, and open now. */
  connections: number;
  open: number;
  /** Bytes the relay wrote to its sockets (accepted by the kernel). */
  sent: number;
  /** When the last connection closed. */
  closedAt: number;
}

async function startFloodingRelay(flood: Flood): Promise<FloodingRelay> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const state: FloodingRelay = {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`,
    connections: 0,
    open: 0,
    sent: 0,
    closedAt: 0,
  };
  wss.on('connection', (socket) => {
    state.connections += 1;
    state.open += 1;
    let flooding = false;
    socket.on('error', () => {});
    socket.on('close', () => {
      state.open -= 1;
      state.closedAt = Date.now();
    });
    socket.on('message', (data) => {
      const [type, subscription] = JSON.parse(String(data)) as [string, string];
      if (type !== 'REQ') return;
      if (flood !== 'preeose') socket.send(JSON.stringify(['EOSE', subscription]));
      if (flood === 'quiet' || flooding) return;
      flooding = true;
      const message = floodMessage(flood, subscription);
      // One message at a time, the next once the last is written: as fast as the reader takes them.
      const pump = () => {
        if (socket.readyState !== WebSocket.OPEN) return;
        socket.send(message, { binary: false }, (error) => {
          if (error) return;
          state.sent += message.length;
          pump();
        });
      };
      pump();
    });
  });
  cleanups.push(async () => {
    for (const client of wss.clients) client.terminate();
    await new Promise((resolve) => wss.close(resolve));
  });
  return state;
}

interface Watched {
  /** CPU time (user + system) of this process over the window, ms. */
  cpuMs: number;
  /** Latencies of lookups of an already-stored event by another client during the window, ms. */
  latencies: number[];
}

/** Watches WINDOW_MS from now: CPU, and another client's cached lookups (one every 50 ms). */
async function watch(serverUrl: string): Promise<Watched> {
  const cpu = process.cpuUsage();
  const latencies: number[] = [];
  const until = Date.now() + WINDOW_MS;
  while (Date.now() < until) {
    const started = performance.now();
    const response = await getJson(`${serverUrl}/event?id=${stored.id}`);
    latencies.push(performance.now() - started);
    expect(response.status).toBe(200);
    await sleep(50);
  }
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, latencies };
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length * fraction)] ?? 0;
}

describe('a hinted relay that keeps sending after it answered', () => {
  for (const flood of ['closed', 'unknown', 'notice'] as const) {
    it(`floods of 2 MB ${flood === 'notice' ? 'NOTICEs' : `EVENTs for a ${flood === 'closed' ? 'closed' : 'never opened'} subscription`} after EOSE: closed at once, the relay rests, the flood costs little CPU and cached lookups stay fast`, async () => {
      const configured = await relay();
      const attacker = await startFloodingRelay(flood);
      const { server } = await service({ urls: [configured.url] }, [stored]);
      const nevent = nip19.neventEncode({ id: wanted.id, relays: [attacker.url] });

      // Another client's lookups of a stored event run all along (after one that warms the paths
      // up); the attacker's request starts with them.
      expect((await getJson(`${server.url}/event?id=${stored.id}`)).status).toBe(200);
      const watching = watch(server.url);
      try {
        expect((await getJson(`${server.url}/event?id=${nevent}`)).status).toBe(404);
        const answered = Date.now();
        // The service closes the connection at its first flooding message, and the relay rests (1 s
        // after a first flood, doubling with each): the same hint again is not dialled.
        await expect.poll(() => attacker.open, { timeout: 1000, interval: 10 }).toBe(0);
        expect(attacker.closedAt - answered).toBeLessThan(1000);
        expect(server.pool?.health.resting(attacker.url)).toBe(true);
        expect(server.pool?.health.get(attacker.url)?.floods).toBe(1);
        expect((await getJson(`${server.url}/event?id=${nevent}`)).status).toBe(404);
        expect(attacker.connections).toBe(1);
      } finally {
        // (Its lookups would otherwise outlive the server if an expectation above failed.)
        await watching.catch(() => undefined);
      }
      const watched = await watching;
      // Little was taken from it before it was cut off.
      expect(attacker.sent).toBeLessThan(16 * 1024 * 1024);
      // What the window cost: the flood next to nothing (another client's lookups take most of it),
      // and those lookups as fast as ever.
      expect(watched.cpuMs).toBeLessThan(1000);
      expect(percentile(watched.latencies, 0.5)).toBeLessThan(50);
      expect(percentile(watched.latencies, 0.9)).toBeLessThan(250);
    });
  }

  it('a hinted relay that floods its answer with events that fail verification, before any EOSE: cut off after a few, the relay rests (found by review: 2.5 s of CPU per request)', async () => {
    const configured = await relay();
    const attacker = await startFloodingRelay('preeose');
    const { server } = await service({ urls: [configured.url] }, [stored]);
    const nevent = nip19.neventEncode({ id: wanted.id, relays: [attacker.url] });
    const cpu = process.cpuUsage();
    expect((await getJson(`${server.url}/event?id=${nevent}`)).status).toBe(404);
    const used = process.cpuUsage(cpu);
    await expect.poll(() => attacker.open, { timeout: 1000, interval: 10 }).toBe(0);
    expect(server.pool?.health.resting(attacker.url)).toBe(true);
    // MAX_INVALID_EVENTS_PER_QUERY of 400 KB, and what was in flight: not a deadline's worth.
    expect(attacker.sent).toBeLessThan(40 * 400_000);
    expect((used.user + used.system) / 1000).toBeLessThan(1000);
  });

  it('a hinted relay that answered and went quiet is not kept connected for long after the request', async () => {
    const configured = await relay();
    const attacker = await startFloodingRelay('quiet');
    const { server } = await service({ urls: [configured.url] }, [stored]);
    const nevent = nip19.neventEncode({ id: wanted.id, relays: [attacker.url] });
    expect((await getJson(`${server.url}/event?id=${nevent}`)).status).toBe(404);
    const answered = Date.now();
    await expect.poll(() => attacker.open, { timeout: LEARNED_IDLE_MS + 2000, interval: 50 }).toBe(0);
    expect(attacker.closedAt - answered).toBeLessThan(LEARNED_IDLE_MS + 1500);
    // An ordinary relay: it answered, so it does not rest. The configured relay's connection stays.
    expect(server.pool?.health.resting(attacker.url)).toBe(false);
    await expect.poll(() => server.pool?.openConnections, { timeout: 1000, interval: 10 }).toBe(1);
  });
});
