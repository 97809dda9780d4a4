import { NostrRelay } from '@nostr-relay/core';
import { type Event, EventRepository, type EventRepositoryUpsertResult, type Filter } from '@nostr-relay/common';
import { Validator } from '@nostr-relay/validator';
import { matchFilter } from 'nostr-tools/filter';
import { WebSocketServer } from 'ws';
import type { NostrEvent } from '../../src/nostr/event.js';
import { replaceableAddress, supersedes } from '../../src/nostr/kinds.js';

/**
 * A relay whose protocol side nobody on this project wrote: @nostr-relay/core handles REQ, CLOSE,
 * EVENT (verifying what clients publish), EOSE and live broadcast; @nostr-relay/validator checks every
 * message. Only the storage below is ours, in memory: NIP-01's replaceable rule, newest first.
 * `seed` puts events in storage directly, so a test can plant one the relay would have refused.
 */
class MemoryRepository extends EventRepository {
  readonly events: Event[] = [];

  isSearchSupported(): boolean {
    return false;
  }

  upsert(event: Event): EventRepositoryUpsertResult {
    if (this.events.some((held) => held.id === event.id)) return { isDuplicate: true };
    const address = replaceableAddress(event as NostrEvent);
    if (address !== undefined) {
      const index = this.events.findIndex((held) => replaceableAddress(held as NostrEvent) === address);
      const held = this.events[index];
      if (held && !supersedes(event, held)) return { isDuplicate: true };
      if (held) this.events.splice(index, 1);
    }
    this.events.push(event);
    return { isDuplicate: false };
  }

  find(filter: Filter): Event[] {
    return this.events
      .filter((event) => matchFilter(filter as Parameters<typeof matchFilter>[0], event as Parameters<typeof matchFilter>[1]))
      .sort((a, b) => b.created_at - a.created_at)
      .slice(0, filter.limit ?? 500);
  }

  async destroy(): Promise<void> {}
}

export interface ThirdPartyRelay {
  readonly url: string;
  /** Every REQ's filters, as the relay received them. */
  readonly requests: unknown[][];
  seed(...events: NostrEvent[]): void;
  stop(): Promise<void>;
}

export async function startThirdPartyRelay(events: NostrEvent[] = []): Promise<ThirdPartyRelay> {
  const repository = new MemoryRepository();
  for (const event of events) repository.upsert(event as Event);
  const relay = new NostrRelay(repository);
  const validator = new Validator();
  const requests: unknown[][] = [];
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  wss.on('connection', (socket) => {
    relay.handleConnection(socket);
    socket.on('message', async (data) => {
      try {
        const message = await validator.validateIncomingMessage(data);
        if (message[0] === 'REQ') requests.push(message.slice(2));
        await relay.handleMessage(socket, message);
      } catch (error) {
        socket.send(JSON.stringify(['NOTICE', (error as Error).message]));
      }
    });
    socket.on('close', () => relay.handleDisconnect(socket));
  });
  const address = wss.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `ws://127.0.0.1:${port}/`,
    requests,
    seed: (...seeded) => {
      for (const event of seeded) repository.upsert(event as Event);
    },
    stop: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await relay.destroy();
    },
  };
}
