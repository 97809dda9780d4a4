import { mkdirSync } from 'node:fs';
import { open, type RootDatabase } from 'lmdb';
import { type NostrEvent, serializeEvent } from '../../nostr/event.js';
import { PROFILE_KIND, profileAddress, replaceableAddress, supersedes } from '../../nostr/kinds.js';
import {
  CorruptDataError,
  type EventStore,
  type ProfileWithMark,
  profileMarkKey,
  type StoredEvent,
  StoreUnavailableError,
  type WriteOutcome,
} from '../event-store.js';
import { markerFor, resolveEventValues } from '../replaceable-markers.js';
import { readStoredEvent } from '../stored-event.js';

/** Marks are swept every second, at most this many looked at per run (issue 18 §4: bounded work). */
const SWEEP_INTERVAL_MS = 1000;
const SWEEP_BATCH = 2000;
/** How long close() waits for lmdb-js, which never settles after a failed commit. */
const CLOSE_PATIENCE_MS = 2000;
/** A write that failed this recently, with none succeeding since, makes /readyz say writes are failing. */
const WRITE_FAILURE_WINDOW_MS = 30_000;

export interface LmdbEventStoreOptions {
  /** How often the mark sweeper runs (tests shorten it). */
  sweepIntervalMs?: number;
  sweepBatch?: number;
}

/** Inside a write transaction a put's promise only reports the commit, which `transaction()` reports too. */
function inTransaction(written: Promise<unknown>): void {
  written.catch(() => {});
}

/**
 * The embedded event index: LMDB in a directory (DATA_DIR), for one box without Redis. The same
 * layout as Redis (replaceable-markers.ts): `events` maps an id to its wire JSON or to a marker,
 * `replaceable` maps an address to its latest version. Writes run in one LMDB write transaction per
 * batch; LMDB has a single writer across threads and processes, so the NIP-01 rule is atomic even
 * with `serve` and `import` running side by side. Reads are memory-mapped and batched with getMany.
 */
export class LmdbEventStore implements EventStore {
  private readonly root: RootDatabase<string, string>;
  private readonly events;
  private readonly replaceable;
  /** Marks: key → expiry time in ms since the epoch, as text; expired entries are ignored, then removed. */
  private readonly marks;
  private readonly cursors;
  private readonly sweeper: NodeJS.Timeout;
  /** Where the mark sweeper goes on from (a rolling scan: every mark is looked at once per lap). */
  private sweepFrom: string | undefined;
  private lastWriteFailure = 0;
  private closed = false;

  constructor(
    readonly dataDir: string,
    { sweepIntervalMs = SWEEP_INTERVAL_MS, sweepBatch = SWEEP_BATCH }: LmdbEventStoreOptions = {},
  ) {
    mkdirSync(dataDir, { recursive: true });
    // noSubdir: false whatever the name: lmdb-js takes a path with an extension (`tmp.X1y2`) for a file.
    this.root = open<string, string>({ path: dataDir, noSubdir: false, encoding: 'string', compression: false });
    // Events as bytes (UTF-8, as the 'string' encoding of earlier versions wrote them): responses embed them as they are.
    this.events = this.root.openDB<Buffer, string>({ name: 'events', encoding: 'binary' });
    this.replaceable = this.root.openDB<Buffer, string>({ name: 'replaceable', encoding: 'binary' });
    this.marks = this.root.openDB<string, string>({ name: 'marks', encoding: 'string' });
    this.cursors = this.root.openDB<string, string>({ name: 'cursors', encoding: 'string' });
    this.sweeper = setInterval(() => void this.sweepExpiredMarks(sweepBatch).catch(() => {}), sweepIntervalMs);
    this.sweeper.unref();
  }

  async getEvents(ids: readonly string[]): Promise<(StoredEvent | null)[]> {
    const values = await this.read(() => this.events.getMany([...ids]));
    return resolveEventValues(ids, values, (addresses) => this.read(() => this.replaceable.getMany(addresses)));
  }

  async getProfiles(pubkeys: readonly string[]): Promise<(StoredEvent | null)[]> {
    const values = await this.read(() => this.replaceable.getMany(pubkeys.map(profileAddress)));
    return values.map((value, index) =>
      value == null ? null : readStoredEvent(value, { pubkey: pubkeys[index], kind: PROFILE_KIND }),
    );
  }

  async getProfilesWithMarks(pubkeys: readonly string[]): Promise<ProfileWithMark[]> {
    const [profiles, marked] = await Promise.all([this.getProfiles(pubkeys), this.hasMarks(pubkeys.map(profileMarkKey))]);
    return profiles.map((profile, index) => ({ profile, marked: marked[index] === true }));
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

  async setMarks(keys: readonly string[], ttlSeconds: number): Promise<void> {
    const expires = String(Date.now() + ttlSeconds * 1000);
    await this.write(() => {
      for (const key of keys) inTransaction(this.marks.put(key, expires));
    });
  }

  async hasMarks(keys: readonly string[]): Promise<boolean[]> {
    const now = Date.now();
    const values = await this.read(() => this.marks.getMany([...keys]));
    const expired = keys.filter((_, index) => values[index] != null && Number(values[index]) <= now);
    if (expired.length > 0) void this.removeExpiredMarks(expired).catch(() => {}); // lazy clean-up
    return values.map((value) => value != null && Number(value) > now);
  }

  /**
   * Removes marks that are still expired when the write transaction runs: another writer may have
   * set the same mark again since it was read, and that fresh entry must stay.
   */
  private removeExpiredMarks(keys: readonly string[]): Promise<void> {
    return this.write(() => {
      const now = Date.now();
      for (const key of keys) {
        const expires = this.marks.get(key);
        if (expires !== undefined && Number(expires) <= now) inTransaction(this.marks.remove(key));
      }
    });
  }

  async claimMarks(keys: readonly string[], ttlSeconds: number): Promise<boolean[]> {
    // Read and set in one write transaction: LMDB serialises writers, across processes too.
    return this.write(() => {
      const now = Date.now();
      const expires = String(now + ttlSeconds * 1000);
      return keys.map((key) => {
        const held = this.marks.get(key);
        if (held !== undefined && Number(held) > now) return false;
        inTransaction(this.marks.put(key, expires));
        return true;
      });
    });
  }

  async clearMarks(keys: readonly string[]): Promise<void> {
    await this.write(() => {
      for (const key of keys) inTransaction(this.marks.remove(key));
    });
  }

  async getCursor(name: string): Promise<string | undefined> {
    return (await this.read(async () => this.cursors.get(name))) ?? undefined;
  }

  async setCursor(name: string, value: string): Promise<void> {
    await this.write(() => {
      inTransaction(this.cursors.put(name, value));
    });
  }

  async ping(): Promise<void> {
    await this.read(async () => this.root.get('ping'));
  }

  /** How many marks the directory holds, expired or not (for tests and the soak run). */
  markCount(): number {
    return this.marks.getKeysCount();
  }

  /** True while writes fail (a full or read-only disk) and reads go on: /readyz says so. */
  writesFailing(): boolean {
    return Date.now() - this.lastWriteFailure < WRITE_FAILURE_WINDOW_MS;
  }

  /**
   * The mark sweeper: expired marks are removed even if nobody reads them again, so the directory
   * does not grow with every distinct id ever asked (issue 18 §4). A rolling scan of at most `batch`
   * marks per run, the removal in one write transaction that checks each mark is still expired.
   * Returns how many were removed.
   */
  async sweepExpiredMarks(batch: number = SWEEP_BATCH): Promise<number> {
    if (this.closed) return 0;
    const now = Date.now();
    const expired: string[] = [];
    let last: string | undefined;
    let seen = 0;
    for (const { key, value } of this.marks.getRange({ start: this.sweepFrom, limit: batch })) {
      seen += 1;
      last = key;
      if (Number(value) <= now) expired.push(key);
    }
    // A short page means the end was reached: the next lap starts from the first mark.
    this.sweepFrom = seen < batch || last === undefined ? undefined : `${last}\u0000`;
    if (expired.length > 0) await this.removeExpiredMarks(expired);
    return expired.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
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

  /** One LMDB write transaction: atomic, and serialised with every other writer of the directory. */
  private async write<T>(action: () => T): Promise<T> {
    try {
      const result = await this.root.transaction(action);
      this.lastWriteFailure = 0;
      return result;
    } catch (error) {
      this.lastWriteFailure = Date.now();
      // lmdb-js rejects a second promise with the cause of a failed commit, which nobody else awaits.
      (error as { commitError?: Promise<unknown> }).commitError?.catch(() => {});
      throw new StoreUnavailableError({ cause: error });
    }
  }

  private async read<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw new StoreUnavailableError({ cause: error });
    }
  }
}
