import { Redis, type Result } from 'ioredis';
import { untilAborted } from '../../abortable.js';
import type { RedisConfig } from '../../config/env.js';
import { type NostrEvent, serializeEvent } from '../../nostr/event.js';
import { PROFILE_KIND, replaceableAddress, replaceableKindAddress } from '../../nostr/kinds.js';
import {
  type EventStore,
  type ProfileWithMark,
  type ReplaceableWithMark,
  type StoredEvent,
  StoreUnavailableError,
  type WriteOutcome,
} from '../event-store.js';
import { profileMarkKey } from '../mark-store.js';
import { markerFor, resolveEventValues } from '../replaceable-markers.js';
import { readStoredEvent, wireIdOf } from '../stored-event.js';
import { type RedisKeys, redisKeys } from './keys.js';
import { mgetBySlot, type RedisClient } from './mget-by-slot.js';
import { DELETE_IF_SCRIPT, REPLACE_SCRIPT } from './replace-script.js';
import { RedisCommands } from './redis-commands.js';
import { RedisCursorStore } from './redis-cursor-store.js';
import { markNote, RedisMarkStore } from './redis-mark-store.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    nostrReplaceEvent(
      key: string,
      json: string,
      id: string,
      createdAt: string,
    ): Result<[WriteOutcome, string], Context>;
    nostrDeleteIf(key: string, value: string): Result<number, Context>;
  }
}

/**
 * Connects to Redis for the event index. While Redis is unreachable, commands fail at once instead of
 * queueing (no request hangs), each command has a deadline, and the client keeps reconnecting in the
 * background so the service recovers by itself.
 */
export function connectRedis(config: RedisConfig): Redis {
  return new Redis(config.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: config.timeoutMs,
    connectTimeout: Math.max(config.timeoutMs, 2000),
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    // Off: auto-pipelining allocates a Pipeline per tick and cost /event ~30% of its CPU
    // (BENCHMARKS.md); commands issued together are still pipelined on the one connection.
    enableAutoPipelining: false,
  });
}

/** Resolves when the client is ready, or rejects after `timeoutMs`. */
export async function waitUntilReady(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return;
  let onReady!: () => void;
  const ready = new Promise<boolean>((resolve) => {
    onReady = () => resolve(true);
    client.once('ready', onReady);
  });
  const inTime = await untilAborted(ready, AbortSignal.timeout(timeoutMs), false);
  client.off('ready', onReady);
  if (!inTime) throw new StoreUnavailableError();
}

/** The production EventStore: the key layout of keys.ts, the replaceable rule of replace-script.ts. */
export class RedisEventStore implements EventStore {
  readonly marks: RedisMarkStore;
  readonly cursors: RedisCursorStore;
  private readonly keys: RedisKeys;
  private readonly commands: RedisCommands;

  constructor(
    private readonly client: RedisClient,
    keyPrefix: string,
  ) {
    this.keys = redisKeys(keyPrefix);
    this.commands = new RedisCommands(client);
    this.marks = new RedisMarkStore(this.commands, this.keys);
    this.cursors = new RedisCursorStore(this.commands, this.keys);
    client.defineCommand('nostrReplaceEvent', { numberOfKeys: 1, lua: REPLACE_SCRIPT });
    client.defineCommand('nostrDeleteIf', { numberOfKeys: 1, lua: DELETE_IF_SCRIPT });
  }

  async getEvents(ids: readonly string[]): Promise<(StoredEvent | null)[]> {
    const values = await this.command(() => mgetBySlot(this.client, ids.map(this.keys.event)));
    return resolveEventValues(
      ids,
      values,
      (addresses) => this.command(() => mgetBySlot(this.client, addresses.map(this.keys.replaceable))),
      // Read repair: a marker left by a writer that stopped between its two steps goes when met.
      (id, marker) => void this.client.nostrDeleteIf(this.keys.event(id), marker).catch(() => {}),
    );
  }

  getProfiles(pubkeys: readonly string[]): Promise<(StoredEvent | null)[]> {
    return this.getReplaceable(PROFILE_KIND, pubkeys);
  }

  async getReplaceable(kind: number, pubkeys: readonly string[]): Promise<(StoredEvent | null)[]> {
    const keys = pubkeys.map((pubkey) => this.keys.replaceable(replaceableKindAddress(kind, pubkey)));
    const values = await this.command(() => mgetBySlot(this.client, keys));
    return values.map((value, index) => (value === null ? null : readStoredEvent(value, { pubkey: pubkeys[index], kind })));
  }

  async getProfilesWithMarks(pubkeys: readonly string[]): Promise<ProfileWithMark[]> {
    const read = await this.getReplaceableWithMarks(PROFILE_KIND, pubkeys, profileMarkKey);
    return read.map(({ event, marked, note }) => ({ profile: event, marked, note }));
  }

  async getReplaceableWithMarks(kind: number, pubkeys: readonly string[], markKeyOf: (pubkey: string) => string): Promise<ReplaceableWithMark[]> {
    // Events and their marks in one MGET (one per hash slot on Cluster): freshness costs no extra command.
    const keys = pubkeys.map((pubkey) => this.keys.replaceable(replaceableKindAddress(kind, pubkey)));
    for (const pubkey of pubkeys) keys.push(this.keys.mark(markKeyOf(pubkey)));
    const values = await this.command(() => mgetBySlot(this.client, keys));
    return pubkeys.map((pubkey, index) => {
      const value = values[index];
      const note = markNote(values[pubkeys.length + index]);
      return { event: value == null ? null : readStoredEvent(value, { pubkey, kind }), marked: note !== null, note };
    });
  }

  putEvents(events: readonly NostrEvent[]): Promise<WriteOutcome[]> {
    // Issued together without waiting, so they travel pipelined on the connection.
    return this.command(() => Promise.all(events.map((event) => this.putEvent(event))));
  }

  private async putEvent(event: NostrEvent): Promise<WriteOutcome> {
    const json = serializeEvent(event);
    const address = replaceableAddress(event);
    if (address === undefined) {
      const reply = await this.client.set(this.keys.event(event.id), json, 'NX');
      return reply === 'OK' ? 'stored' : 'duplicate';
    }
    const [outcome, previousId] = await this.client.nostrReplaceEvent(
      this.keys.replaceable(address),
      json,
      event.id,
      String(event.created_at),
    );
    if (outcome === 'superseded') return outcome;
    // The marker makes the event findable by id. Written after the slot (they may sit on different
    // cluster nodes), so a reader can meet a marker whose version was replaced meanwhile: getEvents
    // checks the id. Rewritten on `duplicate` to heal a write that stopped between the two steps.
    const marker = markerFor(address);
    const eventKey = this.keys.event(event.id);
    const slotKey = this.keys.replaceable(address);
    const written = this.client.set(eventKey, marker);
    const cleanup = outcome === 'replaced' ? this.client.del(this.keys.event(previousId)) : undefined;
    // Then the slot is read again. A newer version written meanwhile by another writer, whose
    // clean-up ran before this marker landed, would leave it dangling (issue 18 §8): seeing the newer
    // version, this writer removes its own marker. On one connection the three commands travel in
    // order, in one round trip; on a cluster the read waits for the marker.
    const heldAfter = this.client instanceof Redis ? this.client.getBuffer(slotKey) : written.then(() => this.client.getBuffer(slotKey));
    const [, , held] = await Promise.all([written, cleanup, heldAfter]);
    if (held === null || wireIdOf(held) !== event.id) {
      await this.client.nostrDeleteIf(eventKey, marker);
    }
    return outcome;
  }

  /** Redis fails reads and writes together: ping() tells. */
  writesFailing(): boolean {
    return false;
  }

  async ping(): Promise<void> {
    await this.command(() => this.client.ping());
  }

  async close(): Promise<void> {
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  private command<T>(send: () => Promise<T>): Promise<T> {
    return this.commands.run(send);
  }
}
