import { mkdirSync } from 'node:fs';
import { open, type RootDatabase } from 'lmdb';
import { type NostrEvent, serializeEvent } from '../../nostr/event.js';
import { PROFILE_KIND, replaceableAddress, replaceableKindAddress, supersedes } from '../../nostr/kinds.js';
import {
  CorruptDataError,
  type EventStore,
  type ProfileWithMark,
  type ReplaceableWithMark,
  type StoredEvent,
  type WriteOutcome,
} from '../event-store.js';
import { profileMarkKey } from '../mark-store.js';
import { markerFor, resolveEventValues } from '../replaceable-markers.js';
import { readStoredEvent } from '../stored-event.js';
import { LmdbCursorStore } from './lmdb-cursor-store.js';
import { LmdbMarkStore, type LmdbMarkStoreOptions } from './lmdb-mark-store.js';
import { inTransaction, LmdbTransactions } from './lmdb-transactions.js';

/**
 * The LMDB environment of a directory. noSubdir: false whatever the name (lmdb-js takes a path with
 * an extension, `tmp.X1y2`, for a file). On a read-only disk LMDB cannot even set up its lock file:
 * the directory is then opened read-only, so that what it holds is still served (issue 18 §8).
 */
function openEnvironment(dataDir: string): { root: RootDatabase<string, string>; readOnly: boolean } {
  const options = { path: dataDir, noSubdir: false, encoding: 'string', compression: false } as const;
  try {
    return { root: open<string, string>(options), readOnly: false };
  } catch (error) {
    if (!/read-only file system|EROFS|EACCES|permission denied/i.test((error as Error).message)) throw error;
    return { root: open<string, string>({ ...options, readOnly: true }), readOnly: true };
  }
}

/** How long close() waits for lmdb-js, which never settles after a failed commit. */
const CLOSE_PATIENCE_MS = 2000;

export type LmdbEventStoreOptions = LmdbMarkStoreOptions;

/**
 * The embedded store: LMDB in a directory (DATA_DIR), for one box without Redis. The same layout as
 * Redis (replaceable-markers.ts): `events` maps an id to its wire JSON or to a marker, `replaceable`
 * maps an address to its latest version; `marks` (lmdb-mark-store.ts) and `cursors` are databases of
 * the same environment. Writes run in one LMDB write transaction per batch; LMDB has a single writer
 * across threads and processes, so the NIP-01 rule is atomic even with `serve` and `import` running
 * side by side. Reads are memory-mapped and batched with getMany.
 */
export class LmdbEventStore implements EventStore {
  readonly marks: LmdbMarkStore;
  readonly cursors: LmdbCursorStore;
  /** Opened read-only: the directory is on a read-only disk (reads answer, every write fails). */
  readonly readOnly: boolean;
  private readonly root: RootDatabase<string, string>;
  private readonly events;
  private readonly replaceable;
  private readonly transactions: LmdbTransactions;

  constructor(
    readonly dataDir: string,
    options: LmdbEventStoreOptions = {},
  ) {
    mkdirSync(dataDir, { recursive: true });
    ({ root: this.root, readOnly: this.readOnly } = openEnvironment(dataDir));
    this.transactions = new LmdbTransactions(this.root, this.readOnly);
    // Events as bytes (UTF-8, as the 'string' encoding of earlier versions wrote them): responses embed them as they are.
    this.events = this.root.openDB<Buffer, string>({ name: 'events', encoding: 'binary' });
    this.replaceable = this.root.openDB<Buffer, string>({ name: 'replaceable', encoding: 'binary' });
    this.marks = new LmdbMarkStore(
      this.root.openDB<string, string>({ name: 'marks', encoding: 'string' }),
      this.transactions,
      options,
    );
    this.cursors = new LmdbCursorStore(this.root.openDB<string, string>({ name: 'cursors', encoding: 'string' }), this.transactions);
  }

  async getEvents(ids: readonly string[]): Promise<(StoredEvent | null)[]> {
    const values = await this.read(() => this.events.getMany([...ids]));
    return resolveEventValues(ids, values, (addresses) => this.read(() => this.replaceable.getMany(addresses)));
  }

  getProfiles(pubkeys: readonly string[]): Promise<(StoredEvent | null)[]> {
    return this.getReplaceable(PROFILE_KIND, pubkeys);
  }

  async getReplaceable(kind: number, pubkeys: readonly string[]): Promise<(StoredEvent | null)[]> {
    const values = await this.read(() => this.replaceable.getMany(pubkeys.map((pubkey) => replaceableKindAddress(kind, pubkey))));
    return values.map((value, index) => (value == null ? null : readStoredEvent(value, { pubkey: pubkeys[index], kind })));
  }

  async getProfilesWithMarks(pubkeys: readonly string[]): Promise<ProfileWithMark[]> {
    const read = await this.getReplaceableWithMarks(PROFILE_KIND, pubkeys, profileMarkKey);
    return read.map(({ event, marked, note }) => ({ profile: event, marked, note }));
  }

  async getReplaceableWithMarks(kind: number, pubkeys: readonly string[], markKeyOf: (pubkey: string) => string): Promise<ReplaceableWithMark[]> {
    const [events, notes] = await Promise.all([this.getReplaceable(kind, pubkeys), this.marks.notes(pubkeys.map(markKeyOf))]);
    return events.map((event, index) => {
      const note = notes[index] ?? null;
      return { event, marked: note !== null, note };
    });
  }

  putEvents(events: readonly NostrEvent[]): Promise<WriteOutcome[]> {
    return this.write(() =>
      events.map((event) => {
        // One event the store refuses is skipped, never the whole batch (issue 18 §4).
        try {
          return this.putEvent(event);
        } catch {
          return 'rejected';
        }
      }),
    );
  }

  /**
   * Runs inside the write transaction: what it reads is what the transaction will overwrite. Inside a
   * transaction, put/remove apply at once; the promises they return only signal the commit, which
   * `transaction()` already awaits, hence `void`.
   */
  private putEvent(event: NostrEvent): WriteOutcome {
    const json = Buffer.from(serializeEvent(event));
    const address = replaceableAddress(event);
    if (address === undefined) {
      if (this.events.get(event.id) !== undefined) return 'duplicate';
      inTransaction(this.events.put(event.id, json));
      return 'stored';
    }
    const held = this.heldVersion(address);
    if (held?.id === event.id) {
      inTransaction(this.events.put(event.id, Buffer.from(markerFor(address)))); // heal a missing marker
      return 'duplicate';
    }
    if (held && !supersedes(event, held)) return 'superseded';
    inTransaction(this.replaceable.put(address, json));
    inTransaction(this.events.put(event.id, Buffer.from(markerFor(address))));
    if (held?.id) inTransaction(this.events.remove(held.id));
    return held ? 'replaced' : 'stored';
  }

  /** The version an address holds; a value that is not an event we wrote counts as replaceable. */
  private heldVersion(address: string): { id: string; created_at: number } | undefined {
    const value = this.replaceable.get(address);
    if (value === undefined) return undefined;
    try {
      const { id, created_at } = readStoredEvent(value, {}).event;
      return { id, created_at };
    } catch (error) {
      if (error instanceof CorruptDataError) return { id: '', created_at: Number.NEGATIVE_INFINITY };
      throw error;
    }
  }

  async ping(): Promise<void> {
    await this.read(async () => this.root.get('ping'));
  }

  writesFailing(): boolean {
    return this.transactions.writesFailing();
  }

  async close(): Promise<void> {
    this.marks.stop();
    // After a failed commit (a full disk) lmdb-js' close never settles: give it a moment, then go.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.root.close().catch(() => {}),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_PATIENCE_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  private write<T>(action: () => T): Promise<T> {
    return this.transactions.write(action);
  }

  private read<T>(run: () => Promise<T> | T): Promise<T> {
    return this.transactions.read(run);
  }
}
