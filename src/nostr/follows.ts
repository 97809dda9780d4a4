import type { NostrEvent } from './event.js';
import { decodeHex64 } from './identifiers.js';
import { MAX_TAGS_READ } from './work-caps.js';

/**
 * Who follows whom (NIP-02; DESIGN "Relationships", following and followers rows), written once
 * here: the store indexes these follows (store/follow-index.ts) and the recount
 * (store/relation-recount.ts) derives the same figures from the events themselves. Only an
 * author's latest servable kind 3 counts: the store keeps no other (an older list arriving later is
 * superseded and never stored), and relates a list when it is stored and unrelates it when it is
 * replaced, deleted or vanished.
 */

export const FOLLOW_LIST_KIND = 3;

/** The most pubkeys a follow list follows (followsOf reads MAX_TAGS_READ tags): a home feed merges at most this many authors. */
export const MAX_FOLLOWS = MAX_TAGS_READ;

/**
 * The pubkeys a follow list follows: its `p` tags' values that are pubkeys (64 hex digits, read in
 * any case, kept lowercase), each once, in the order they first appear; anything else is skipped.
 * A list naming its own author follows its author. Empty for any other kind. Reads the first
 * MAX_TAGS_READ tags (stored events have no more: nostr/work-caps.ts MAX_TAGS). The rule is
 * followKeysOf's; this is its answer in hex.
 */
export function followsOf(event: Pick<NostrEvent, 'kind' | 'tags'>): string[] {
  const found = followKeysOf(event);
  const keys = Buffer.from(found.buffer, found.byteOffset, found.byteLength);
  const follows: string[] = [];
  for (let at = 0; at < keys.length; at += 32) follows.push(keys.toString('hex', at, at + 32));
  return follows;
}

/** followKeysOf made elsewhere (rememberFollowKeys), by event. */
const knownFollowKeys = new WeakMap<Pick<NostrEvent, 'kind' | 'tags'>, Uint8Array>();

/**
 * followsOf as the stores write it, 32 bytes a pubkey in the same order, in a buffer of its own (it
 * may be moved to another thread). An import's verification thread computes it beside its check
 * (rememberFollowKeys), so that the thread that stores a list of a thousand follows does not read
 * its tags again. The values are decoded all at once when they are all pubkeys (one hex decode of
 * their concatenation: a decode per value cost more in calls than in decoding), each on its own
 * otherwise; then duplicates are dropped by their bytes (a string per follow to compare by was a
 * third of the time).
 */
export function followKeysOf(event: Pick<NostrEvent, 'kind' | 'tags'>): Uint8Array {
  const known = knownFollowKeys.get(event);
  if (known) return known;
  if (event.kind !== FOLLOW_LIST_KIND) return new Uint8Array(0);
  const { tags } = event;
  const read = Math.min(tags.length, MAX_TAGS_READ);
  const keys = Buffer.from(new ArrayBuffer(32 * read));
  const values: string[] = [];
  let mayBeKeys = true;
  for (let index = 0; index < read; index++) {
    const tag = tags[index] as string[];
    const value = tag[1];
    if (tag[0] !== 'p' || typeof value !== 'string') continue;
    if (value.length !== 64) mayBeKeys = false;
    values.push(value);
  }
  let count = 0;
  const joined = mayBeKeys ? values.join('') : '';
  // All ASCII (Node's hex decoder reads a wider character by its low byte), and all hex: the
  // decode stops at the first pair that is not.
  if (mayBeKeys && Buffer.byteLength(joined, 'utf8') === joined.length && keys.write(joined, 0, 'hex') === 32 * values.length) {
    count = values.length;
  } else {
    for (const value of values) if (decodeHex64(value, keys, 32 * count)) count++;
  }
  return keys.subarray(0, 32 * withoutDuplicateKeys(keys, count));
}

/**
 * Drops the later copies of any key of `count` keys of 32 bytes (their first copies kept in order,
 * moved to the front); returns how many are left. A table probed by each key's first 4 bytes
 * (pubkeys are hashes: uniform), and anyone can list keys sharing them: past MAX_PROBES steps, the
 * rest are compared as strings (V8's seeded hash), so that a list costs linear time whatever it names.
 */
function withoutDuplicateKeys(keys: Buffer, count: number): number {
  let bits = 4;
  while (1 << bits < 2 * count) bits++;
  const table = new Int32Array(1 << bits);
  const mask = (1 << bits) - 1;
  let kept = 0;
  let asStrings: Set<string> | undefined;
  for (let index = 0; index < count; index++) {
    const at = 32 * index;
    let duplicate = false;
    if (asStrings) {
      const name = keys.toString('latin1', at, at + 32);
      duplicate = asStrings.has(name);
      if (!duplicate) asStrings.add(name);
    } else {
      let slot = keys.readUInt32BE(at) >>> (32 - bits);
      let steps = 0;
      for (let entry = table[slot] as number; entry !== 0; entry = table[slot] as number) {
        if (sameKey(keys, 32 * (entry - 1), at)) {
          duplicate = true;
          break;
        }
        slot = (slot + 1) & mask;
        if (++steps > MAX_PROBES) {
          asStrings = new Set();
          for (let held = 0; held < kept; held++) asStrings.add(keys.toString('latin1', 32 * held, 32 * held + 32));
          const name = keys.toString('latin1', at, at + 32);
          duplicate = asStrings.has(name);
          if (!duplicate) asStrings.add(name);
          break;
        }
      }
      if (!duplicate && !asStrings) table[slot] = kept + 1;
    }
    if (duplicate) continue;
    if (kept !== index) keys.copyWithin(32 * kept, at, at + 32);
    kept++;
  }
  return kept;
}

/** Steps of withoutDuplicateKeys' table before the rest of a list is compared as strings. */
const MAX_PROBES = 16;

function sameKey(keys: Buffer, a: number, b: number): boolean {
  for (let index = 0; index < 32; index++) if (keys[a + index] !== keys[b + index]) return false;
  return true;
}

/** Records `keys`, made by followKeysOf on another thread from this very event. */
export function rememberFollowKeys(event: Pick<NostrEvent, 'kind' | 'tags'>, keys: Uint8Array): void {
  knownFollowKeys.set(event, keys);
}

/** Pubkeys (64 hex digits each) as 32 bytes each, in one buffer of its own (it may be handed to another thread). */
export function pubkeyBytes(pubkeys: readonly string[]): Uint8Array {
  const bytes = Buffer.from(new ArrayBuffer(32 * pubkeys.length));
  pubkeys.forEach((pubkey, index) => bytes.write(pubkey, 32 * index, 'hex'));
  return bytes;
}

/** What a follow list changes when it replaces another of its author: the pubkeys it adds and drops. */
export interface FollowChanges {
  added: string[];
  removed: string[];
  /** The change in how many pubkeys the author follows. */
  following: number;
}

/**
 * The difference between two follow lists of one author (the list a newer one replaces): most
 * replacements add or drop one pubkey of hundreds, and writing only that keeps a replacement's
 * cost to its change. Undefined unless both are follow lists.
 */
export function followChanges(previous: Pick<NostrEvent, 'kind' | 'tags'>, next: Pick<NostrEvent, 'kind' | 'tags'>): FollowChanges | undefined {
  if (previous.kind !== FOLLOW_LIST_KIND || next.kind !== FOLLOW_LIST_KIND) return undefined;
  const before = followsOf(previous);
  const after = followsOf(next);
  const had = new Set(before);
  const has = new Set(after);
  return { added: after.filter((pubkey) => !had.has(pubkey)), removed: before.filter((pubkey) => !has.has(pubkey)), following: after.length - before.length };
}
