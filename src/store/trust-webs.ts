import { LookupError } from '../errors.js';
import type { NostrEvent } from '../nostr/event.js';
import { FOLLOW_LIST_KIND } from '../nostr/follows.js';
import type { Mutes } from '../nostr/mutes.js';
import { type TrustWeb, WebBuilder } from '../nostr/web-of-trust.js';
import { CorruptDataError, type EventStore, type StoredEvent } from './event-store.js';
import { isDeleted } from './tombstones.js';

/**
 * Webs of trust held in memory (nostr/web-of-trust.ts), one per reader (or set of TRUST_SEEDS),
 * shared by every request of the process. A web is built once from the index: the readers' own
 * lists (read by the request, through its loaders: with relays, asked of them when the index has
 * none) and the follow lists of their hop 1, read from the index in batches. It is kept true:
 * - the readers' lists are part of its key (their ids), so a reader's new follow or mute list is a
 *   new web at its next read;
 * - the store's log of list changes (store/list-changes.ts) is read at most every POLL_MS, before a
 *   web is used: a web whose hop 1 changed its follow list is dropped, and built again by its next
 *   read. A build that such a change overtakes answers its own request and is not kept;
 * - a web is built again after MAX_WEB_AGE_MS whatever the log says (a change it missed).
 * Bounded by MAX_WEB_BYTES (least recently used first); at most MAX_BUILDS build at once and
 * MAX_WAITING_BUILDS wait (past them a new reader is refused, webs_busy).
 * Building does not charge a request's cost (a web of 200,000 members is read from up to 1,000
 * lists once, then shared); a request names at most one reader (schema/trust.ts).
 */

/** How often the log of list changes is read, at most: a change is seen by reads this long after it. */
export const POLL_MS = 250;

/** Bytes of members held for all webs (8 a member): the least recently used go past it. */
export const MAX_WEB_BYTES = 64 * 1024 * 1024;

/**
 * A web is built again after this long whatever the log said: a change the log missed (a writer
 * that stopped between storing a list and logging it) is seen within it.
 */
export const MAX_WEB_AGE_MS = 5 * 60_000;

/**
 * What a held web costs beyond its members, counted against MAX_WEB_BYTES: its entry and key, and
 * each pubkey of its hop 1 (the set a change is matched against). Without it, webs of readers who
 * follow nobody (8 bytes of members each) could fill the process by the million.
 */
const ENTRY_BYTES = 512;
const HOP_ONE_BYTES = 96;

/** Hop-1 follow lists read per store call while a web is built. */
const HOP_BATCH = 250;

/** Builds going on at once; others wait their turn (a build reads up to 1,000 lists of 500 follows). */
const MAX_BUILDS = 2;

/** Builds waiting their turn, at most: past it, a new viewer is refused (webs_busy) rather than queued without end. */
export const MAX_WAITING_BUILDS = 16;

/** The lists of the readers a web is asked for, as the request read them. */
export interface ReaderLists {
  readers: readonly string[];
  followLists: readonly (NostrEvent | null)[];
  muteLists: readonly (NostrEvent | null)[];
  /** mutesOf each mute list (the request's, so that it is parsed once a request). */
  mutes: readonly (Mutes | null)[];
}

interface Held {
  web: Promise<TrustWeb>;
  /** Its members' bytes, once built (8 a member). */
  memberBytes: number;
  /** The readers and their hop 1: a change of one of their follow lists drops the web. */
  dependsOn: ReadonlySet<string>;
  bytes: number;
  builtAt: number;
}

export class TrustWebs {
  /** By key (readers and their lists' ids), least recently used first. */
  private readonly held = new Map<string, Held>();
  private heldBytes = 0;
  private cursor: string | null = null;
  private polledAt = -Infinity;
  private polling: Promise<void> | undefined;
  private building = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly store: EventStore,
    private readonly options: { pollMs?: number; maxBytes?: number; maxAgeMs?: number } = {},
  ) {}

  /** Webs held now, and the bytes counted for them (members and bookkeeping: for tests and the bench). */
  get stats(): { webs: number; bytes: number; memberBytes: number } {
    let memberBytes = 0;
    for (const entry of this.held.values()) memberBytes += entry.memberBytes;
    return { webs: this.held.size, bytes: this.heldBytes, memberBytes };
  }

  /**
   * The web of these readers: held, else built from the index. `mayWait`: never refused for want of
   * a turn (TRUST_SEEDS, which every read without a viewer needs), only queued.
   */
  async web(lists: ReaderLists, { mayWait = false, onMissing }: { mayWait?: boolean; onMissing?: (pubkeys: string[]) => void } = {}): Promise<TrustWeb> {
    await this.fresh();
    const key = keyOf(lists);
    const found = this.held.get(key);
    if (found && Date.now() - found.builtAt < (this.options.maxAgeMs ?? MAX_WEB_AGE_MS)) {
      this.held.delete(key);
      this.held.set(key, found);
      return found.web;
    }
    if (found) this.remove(key, found);
    const builder = new WebBuilder(lists.readers, lists.followLists, lists.mutes);
    const entry: Held = { web: this.build(builder, mayWait, onMissing), dependsOn: builder.hopOne, bytes: 0, memberBytes: 0, builtAt: Date.now() };
    this.held.set(key, entry);
    try {
      const web = await entry.web;
      // Still held (no change dropped it meanwhile): its bytes count from now on.
      if (this.held.get(key) === entry) {
        entry.memberBytes = web.bytes;
        entry.bytes = web.bytes + ENTRY_BYTES + HOP_ONE_BYTES * entry.dependsOn.size;
        this.heldBytes += entry.bytes;
        this.evict(key);
      }
      return web;
    } catch (error) {
      if (this.held.get(key) === entry) this.held.delete(key);
      throw error;
    }
  }

  /** Reads the log of list changes if it was last read POLL_MS ago or more, and drops the webs it concerns. */
  private async fresh(): Promise<void> {
    if (Date.now() - this.polledAt < (this.options.pollMs ?? POLL_MS)) return;
    this.polling ??= this.poll().finally(() => {
      this.polling = undefined;
    });
    await this.polling;
  }

  private async poll(): Promise<void> {
    const startedAt = Date.now();
    try {
      const changes = await this.store.relations.listChanges(this.cursor);
      const first = this.cursor === null;
      this.cursor = changes.cursor;
      // Before the first read of the log, nothing was built from it: nothing to drop but what is
      // held (nothing, but for a store that failed: below).
      if ('all' in changes || first) this.dropAll();
      else if (changes.pubkeys.length > 0) this.drop(new Set(changes.pubkeys));
      this.polledAt = startedAt;
    } catch (error) {
      // Unknown whether anything changed: nothing held is trusted, and the log is read from now on.
      this.dropAll();
      this.cursor = null;
      throw error;
    }
  }

  private drop(pubkeys: ReadonlySet<string>): void {
    for (const [key, entry] of this.held) {
      for (const pubkey of pubkeys) {
        if (entry.dependsOn.has(pubkey)) {
          this.remove(key, entry);
          break;
        }
      }
    }
  }

  private dropAll(): void {
    for (const [key, entry] of this.held) this.remove(key, entry);
  }

  private remove(key: string, entry: Held): void {
    this.held.delete(key);
    this.heldBytes -= entry.bytes;
  }

  /** Drops the least recently used webs past the bound, never `newest` (a web larger than the bound alone is held until the next is built). */
  private evict(newest: string): void {
    const max = this.options.maxBytes ?? MAX_WEB_BYTES;
    for (const [key, entry] of this.held) {
      if (this.heldBytes <= max) return;
      if (key !== newest) this.remove(key, entry);
    }
  }

  /** Reads the hop-1 lists a batch at a time, each batch's follows kept as member values only (WebBuilder). */
  private async build(builder: WebBuilder, mayWait: boolean, onMissing?: (pubkeys: string[]) => void): Promise<TrustWeb> {
    await this.turn(mayWait);
    try {
      const hopOne = [...builder.hopOne];
      // Hop 1 without a list in the index (never one that was deleted): for the relays, where asked.
      const missing: string[] = [];
      for (let at = 0; at < hopOne.length; at += HOP_BATCH) {
        const batch = hopOne.slice(at, at + HOP_BATCH);
        const found = await this.store.getReplaceable(FOLLOW_LIST_KIND, batch);
        found.forEach((held, index) => {
          if (held === null) missing.push(batch[index] as string);
          else if (!isDeleted(held)) builder.addLists([readOnce(held)]);
        });
      }
      if (missing.length > 0) onMissing?.(missing);
      return builder.finish();
    } finally {
      // The turn goes straight to the next waiting build, if any (so that none starts between).
      const next = this.waiting.shift();
      if (next) next();
      else this.building--;
    }
  }

  /** Waits for a build's turn (MAX_BUILDS at once, MAX_WAITING_BUILDS waiting, but for `mayWait`). */
  private async turn(mayWait: boolean): Promise<void> {
    if (this.building < MAX_BUILDS) {
      this.building++;
      return;
    }
    if (!mayWait && this.waiting.length >= MAX_WAITING_BUILDS) throw new LookupError('webs_busy');
    // Handed over by a build that ends (build's finally): `building` stays as it is.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
}

/**
 * A list's event parsed for its follows alone, and not kept by the stored event (whose getter keeps
 * what it parses): a build reads up to 1,000 lists of 500 follows, and lists kept alive until their
 * batch was done made most of the build's time garbage collection.
 */
function readOnce(held: StoredEvent): Pick<NostrEvent, 'kind' | 'tags'> {
  try {
    return JSON.parse(held.json.bytes.toString('utf8')) as NostrEvent;
  } catch {
    throw new CorruptDataError('unparseable event');
  }
}

/** A web's key: its readers, and the ids of the lists it was built from (a new list: a new key). */
function keyOf({ readers, followLists, muteLists }: ReaderLists): string {
  return [...readers, ...followLists.map((list) => list?.id ?? '-'), ...muteLists.map((list) => list?.id ?? '-')].join(' ');
}
