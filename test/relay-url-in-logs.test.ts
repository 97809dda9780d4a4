import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/env.js';
import { RelaySync } from '../src/fill/relay-sync.js';
import { relayUrlForLog, relayUrlsForLog } from '../src/relays/relay-url.js';
import { startService } from '../src/service.js';
import { signed } from './support/events.js';
import { captureLogs } from './support/logs.js';
import { startLoopbackRelay } from './support/loopback-relay.js';
import { freePort } from './support/redis-server.js';
import { createTestStore, storeEnv } from './support/test-store.js';

/**
 * A configured relay's URL may carry an access token (RELAYS=wss://relay.example/?token=…): the log
 * names relays by scheme, host and path only, as /metrics labels do.
 */

const SECRET = 's3cr3t-t0ken';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('relay URLs in the log', () => {
  it('name no user info, query or fragment', () => {
    expect(relayUrlForLog(`wss://user:${SECRET}@relay.example:4443/nostr/?token=${SECRET}#${SECRET}`)).toBe('wss://relay.example:4443/nostr/');
    expect(relayUrlForLog(`wss://relay.example/?token=${SECRET}`)).toBe('wss://relay.example/');
    // A token as a path segment: shown as a short hash, so two such relays are still told apart.
    const token = `${SECRET}-0123456789abcdef`;
    const inPath = relayUrlForLog(`wss://relay.example/v1/${token}`);
    expect(inPath).toMatch(/^wss:\/\/relay\.example\/v1\/…[0-9a-f]{4}$/);
    expect(inPath).not.toBe(relayUrlForLog(`wss://relay.example/v1/${token}x`));
    expect(relayUrlForLog(`not a url ${SECRET}`)).not.toContain(SECRET);
    expect(relayUrlsForLog(`NOTICE from wss://relay.example/?token=${SECRET}: slow down; then ws://u:${SECRET}@other.example/x`)).toBe(
      'NOTICE from wss://relay.example/ slow down; then ws://other.example/x',
    );
  });

  it('a run of serve and sync with token URLs (answering, down, dropping connections) never logs the token', async () => {
    const note = signed('relay-url-logs', { content: 'asked through a relay with a token' });
    const relay = await startLoopbackRelay({ events: [note] });
    cleanups.push(() => relay.stop());
    const down = `ws://127.0.0.1:${await freePort()}/?token=${SECRET}`;
    const withToken = `${relay.url}?token=${SECRET}#${SECRET}`;
    const testStore = await createTestStore();
    cleanups.push(() => testStore.cleanup());
    const { lines, logger } = captureLogs('debug');
    const config = loadConfig({
      ...storeEnv(testStore.prefix),
      PORT: '0',
      HOST: '127.0.0.1',
      RELAYS: `${withToken},${down}`,
      INDEXER_RELAYS: down,
      RELAY_TIMEOUT_MS: '1500',
    });
    expect(config.relays.urls.some((url) => url.includes(SECRET))).toBe(true);

    // serve: the start line, a lookup answered by one relay while the other is down (it rests).
    const service = await startService(config, logger);
    cleanups.push(() => service.close());
    const address = service.app.server.address();
    if (typeof address !== 'object' || address === null) throw new Error('no address');
    expect((await fetch(`http://127.0.0.1:${address.port}/event?id=${note.id}`)).status).toBe(200);
    const missing = signed('relay-url-logs', { content: 'nowhere' });
    await fetch(`http://127.0.0.1:${address.port}/event?id=${missing.id}`);

    // sync: started, connected, then the relay drops every connection.
    const sync = new RelaySync({ relays: config.relays.urls, kinds: [1], store: testStore.store, logger, firstSince: 0 });
    sync.start();
    cleanups.push(() => sync.stop());
    await expect.poll(() => lines.some((line) => line.includes('sync connected')), { timeout: 10_000 }).toBe(true);
    await relay.stop();
    await expect.poll(() => lines.filter((line) => line.includes('sync connection lost')).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);

    const named = (message: string) => lines.filter((line) => line.includes(message));
    // The lines that name relays were written, naming them without the token.
    for (const message of ['fetching misses from relays', 'relay resting', 'sync started', 'sync connected', 'sync connection lost']) {
      expect(named(message).length, message).toBeGreaterThan(0);
    }
    const leaking = lines.filter((line) => line.includes(SECRET) || line.includes('token='));
    expect(leaking).toEqual([]);
    expect(named('sync connected')[0]).toContain(`"relay":"${relay.url}"`);
  });
});
