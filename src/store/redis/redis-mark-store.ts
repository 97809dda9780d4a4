import type { MarkStore } from '../mark-store.js';
import type { RedisKeys } from './keys.js';
import { mgetBySlot } from './mget-by-slot.js';
import type { RedisCommands } from './redis-commands.js';

/** Marks in Redis: `<prefix>m:<key>`, expired by Redis itself (SET … EX): nothing to sweep. */
export class RedisMarkStore implements MarkStore {
  constructor(
    private readonly commands: RedisCommands,
    private readonly keys: RedisKeys,
  ) {}

  async set(keys: readonly string[], ttlSeconds: number, notes?: readonly string[]): Promise<void> {
    const { client } = this.commands;
    await this.commands.run(() =>
      Promise.all(keys.map((key, index) => client.set(this.keys.mark(key), markValue(notes?.[index]), 'EX', ttlSeconds))),
    );
  }

  async has(keys: readonly string[]): Promise<boolean[]> {
    const values = await this.commands.read(() => mgetBySlot(this.commands.client, keys.map(this.keys.mark)));
    return values.map((value) => value !== null);
  }

  async renote(keys: readonly string[], notes: readonly string[]): Promise<void> {
    const { client } = this.commands;
    // XX: only a mark that exists; KEEPTTL: it expires when it would have.
    await this.commands.run(() =>
      Promise.all(keys.map((key, index) => client.set(this.keys.mark(key), markValue(notes[index]), 'KEEPTTL', 'XX'))),
    );
  }

  async notes(keys: readonly string[]): Promise<(string | null)[]> {
    const values = await this.commands.read(() => mgetBySlot(this.commands.client, keys.map(this.keys.mark)));
    return values.map(markNote);
  }

  async claim(keys: readonly string[], ttlSeconds: number): Promise<boolean[]> {
    const { client } = this.commands;
    const replies = await this.commands.run(() =>
      Promise.all(keys.map((key) => client.set(this.keys.mark(key), '1', 'EX', ttlSeconds, 'NX'))),
    );
    return replies.map((reply) => reply === 'OK');
  }

  async clear(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    const { client } = this.commands;
    await this.commands.run(() => Promise.all(keys.map((key) => client.del(this.keys.mark(key)))));
  }
}

/** A mark's value: `1`, or `=<note>` when it has one. */
function markValue(note: string | undefined): string {
  return note ? `=${note}` : '1';
}

/** The note a mark's value holds (`''` for none), or null for no mark. */
export function markNote(value: Buffer | string | null | undefined): string | null {
  if (value == null) return null;
  const text = value.toString();
  return text.startsWith('=') ? text.slice(1) : '';
}
