import { nip19 } from 'nostr-tools';
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import type { RelayConfig } from '../src/config/env.js';
import type { NostrEvent } from '../src/nostr/event.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { getJson, startTestServer } from './support/test-server.js';
import { createTestStore } from './support/test-store.js';
import { startThirdPartyRelay, type ThirdPartyRelay } from './support/third-party-relay.js';

// The checks of fetch on miss, against a relay implementation this project did not write
// (@nostr-relay/core), as users' relays are.
useWebSocketImplementation(WebSocket);

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function relay(events: NostrEvent[]): Promise<ThirdPartyRelay> {
  const started = await startThirdPartyRelay(events);
  cleanups.push(() => started.stop());
  return started;
}

async function service(relays: Partial<RelayConfig>) {
  const store = await createTestStore();
  cleanups.push(() => store.cleanup());
  const server = await startTestServer(store.store, { relays });
  cleanups.push(() => server.close());
  return { server, store };
}

const author = profile('third-author', { name: 'Author' });
const mentioned = profile('third-mentioned', { name: 'Mentioned' });
const note = signed('third-author', {
  content: `with nostr:${nip19.npubEncode(pubkeyOf('third-mentioned'))}`,
  tags: [['e', 'a'.repeat(64), '', 'reply', pubkeyOf('third-quiet')]],
});

describe('against @nostr-relay/core', () => {
  it('a cold /event returns the event with author and mention profiles: one REQ for the id, one for the profiles', async () => {
    const source = await relay([note, author, mentioned]);
    const { server } = await service({ urls: [source.url] });
    const response = await getJson(`${server.url}/event?id=${note.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ event: note, profiles: { [author.pubkey]: author, [mentioned.pubkey]: mentioned } });
    expect(source.requests).toEqual([
      [{ ids: [note.id] }, { kinds: [5], '#e': [note.id] }],
      // Relevant-pubkey order: author, content mentions (NIP-27), then e-tag authors (NIP-10); their
      // relay lists (NIP-65) in the same REQ, for outbox discovery.
      [
        { kinds: [0], authors: [note.pubkey, pubkeyOf('third-mentioned'), pubkeyOf('third-quiet')] },
        { kinds: [10002], authors: [note.pubkey, pubkeyOf('third-mentioned'), pubkeyOf('third-quiet')] },
      ],
    ]);

    await source.stop();
    const again = await getJson(`${server.url}/event?id=${note.id}`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(response.body);
  });

  it('an unknown id is 404 within the deadline; a planted forged event is never returned', async () => {
    const forged: NostrEvent = { ...note, content: 'forged' };
    const source = await relay([forged]);
    const { server, store } = await service({ urls: [source.url], timeoutMs: 1000 });
    const started = Date.now();
    expect((await getJson(`${server.url}/event?id=${'e'.repeat(64)}`)).status).toBe(404);
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await getJson(`${server.url}/event?id=${note.id}`)).status).toBe(404);
    expect(await store.store.getEvents([note.id])).toEqual([null]);
  });

  it('every relay down: 500', async () => {
    const source = await relay([note]);
    await source.stop();
    const { server } = await service({ urls: [source.url] });
    const response = await getJson(`${server.url}/event?id=${note.id}`);
    expect(response.status).toBe(500);
    expect((response.body as { error: { code: string } }).error.code).toBe('relays_unavailable');
  });

  it('a profile edited by publishing to the relay is served fresh after PROFILE_TTL', async () => {
    const v1 = profile('third-editor', { name: 'before' }, Math.floor(Date.now() / 1000) - 60);
    const source = await relay([v1]);
    const { server } = await service({ urls: [source.url], profileTtlSeconds: 1 });
    const url = `${server.url}/user-profile?pubkey=${v1.pubkey}`;
    expect((await getJson(url)).body).toEqual({ profile: v1 });

    const v2 = profile('third-editor', { name: 'after' }, Math.floor(Date.now() / 1000));
    const client = await Relay.connect(source.url);
    await client.publish(v2 as Parameters<typeof client.publish>[0]); // the relay verifies and stores it
    client.close();
    expect((await getJson(url)).body).toEqual({ profile: v1 }); // within the TTL: as stored

    await new Promise((resolve) => setTimeout(resolve, 1100));
    await expect.poll(async () => (await getJson(url)).body, { timeout: 3000, interval: 50 }).toEqual({ profile: v2 });
  });
});
