import type { CursorStore } from '../cursor-store.js';
import type { RedisKeys } from './keys.js';
import type { RedisCommands } from './redis-commands.js';

/** Cursors in Redis: `<prefix>c:<name>`. */
export class RedisCursorStore implements CursorStore {
  constructor(
    private readonly commands: RedisCommands,
    private readonly keys: RedisKeys,
  ) {}

  async get(name: string): Promise<string | undefined> {
    return (await this.commands.run(() => this.commands.client.get(this.keys.cursor(name)))) ?? undefined;
  }

  async set(name: string, value: string): Promise<void> {
    await this.commands.run(() => this.commands.client.set(this.keys.cursor(name), value));
  }
}
