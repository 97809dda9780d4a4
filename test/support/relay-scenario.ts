import { afterEach } from 'vitest';
import type { RelayConfig } from '../../src/config/env.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { type LoopbackRelay, startLoopbackRelay } from './loopback-relay.js';
import { startTestServer, type TestServer } from './test-server.js';
import { createTestStore, type TestStore } from './test-store.js';
import { startThirdPartyRelay, type ThirdPartyRelay } from './third-party-relay.js';

/**
 * Relays, stores and servers started for one test and stopped after it, in reverse order: every test
 * gets its own, since relay traffic is what the tests count. Call once per test file.
 */
export function relayScenario(defaults: Partial<RelayConfig> = {}) {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    /** Registers something to stop after the test. */
    cleanups,
    async relay(options: Parameters<typeof startLoopbackRelay>[0] = {}): Promise<LoopbackRelay> {
      const started = await startLoopbackRelay(options);
      cleanups.push(() => started.stop());
      return started;
    },
    async thirdParty(events: NostrEvent[]): Promise<ThirdPartyRelay> {
      const started = await startThirdPartyRelay(events);
      cleanups.push(() => started.stop());
      return started;
    },
    /** A store (seeded) and a server on it, with `relays` over the scenario's defaults. */
    async service(relays: Partial<RelayConfig>, seed: NostrEvent[] = []): Promise<{ server: TestServer; store: TestStore }> {
      const store = await createTestStore();
      cleanups.push(() => store.cleanup());
      if (seed.length > 0) await store.store.putEvents(seed);
      const server = await startTestServer(store.store, { relays: { ...defaults, ...relays } });
      cleanups.push(() => server.close());
      return { server, store };
    },
  };
}
