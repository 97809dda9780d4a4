import { supersedes } from '../nostr/kinds.js';

/**
 * What both stores keep of what deletions (NIP-09) and requests to vanish (NIP-62) removed: the
 * smallest value that enforces the rule, in the place a read already looks, so that answering
 * "deleted" costs no extra store command. Redis applies the same rules in Lua
 * (store/redis/lua-scripts.ts); the embedded store calls these functions inside its write
 * transaction.
 *
 * Under an event id (where the event's JSON or its `@address` marker would be):
 * - `x<author>`: the event with this id, by this author, was deleted (or refused as deleted). Its
 *   bytes are gone; the id and author stay, so that it is never stored again.
 * - `p<pubkey><pubkey>…`: deletion requests by these pubkeys name this id, whose event is not held
 *   (yet). When it arrives, it is refused if its author is one of them (the deletion came first);
 *   stored otherwise (a deletion by anyone else changes nothing). Kept PENDING_TTL_SECONDS (the
 *   embedded store keeps these in a database of their own, swept like marks).
 *
 * Under a replaceable or addressable address (where its latest version would be), a bar:
 * - `x<created_at>`: every version up to this time was deleted (an `a` tag, or a request to
 *   vanish); a version is stored again only if it is newer.
 * - `x<created_at>:<id>`: the version with this id was deleted (an `e` tag); older versions stay
 *   superseded by it, as they were while it was held (NIP-01), and newer ones are stored.
 */
export const TOMBSTONE_PREFIX = 'x';
export const PENDING_PREFIX = 'p';

/** How many distinct pubkeys a pending tombstone remembers (each deletion request signed by another key costs 64 bytes). */
export const MAX_PENDING_DELETERS = 16;

/**
 * How long a pending tombstone is kept: a deletion whose event is not held is remembered 30 days
 * from the last deletion naming it. `sync` follows every deletion on its relays, most of them of
 * events never indexed: without an expiry they would pile up for good (a 216-byte key each on
 * Redis, BENCHMARKS.md).
 * An event fetched later is fetched with the deletions naming it, which apply again.
 */
export const PENDING_TTL_SECONDS = 30 * 86_400;

const TOMBSTONE_BYTE = TOMBSTONE_PREFIX.charCodeAt(0);
const PENDING_BYTE = PENDING_PREFIX.charCodeAt(0);

/**
 * A read's answer for something that was deleted or vanished: a lookup answers it with
 * `event_deleted`/`profile_deleted` (404), GraphQL with null, a profiles map leaves it out.
 */
export const DELETED: Deleted = Object.freeze({ deleted: true as const, event: undefined, json: undefined });
/** (`event` and `json` read as undefined, as on a missing event: `held?.event` works for every answer.) */
export interface Deleted {
  readonly deleted: true;
  readonly event?: undefined;
  readonly json?: undefined;
}

export function isDeleted(value: unknown): value is Deleted {
  return value === DELETED;
}

export function isTombstone(value: Buffer | string): boolean {
  return typeof value === 'string' ? value.startsWith(TOMBSTONE_PREFIX) : value[0] === TOMBSTONE_BYTE;
}

export function isPending(value: Buffer | string): boolean {
  return typeof value === 'string' ? value.startsWith(PENDING_PREFIX) : value[0] === PENDING_BYTE;
}

/** `x<author>`: the id's event was deleted. */
export function deletedEventValue(author: string): string {
  return TOMBSTONE_PREFIX + author;
}

/** The author a deleted event's tombstone names. */
export function tombstoneAuthor(value: string): string {
  return value.slice(TOMBSTONE_PREFIX.length, TOMBSTONE_PREFIX.length + 64);
}

/** The pubkeys of a pending tombstone. */
export function pendingDeleters(value: string): string[] {
  const deleters: string[] = [];
  for (let at = PENDING_PREFIX.length; at + 64 <= value.length; at += 64) deleters.push(value.slice(at, at + 64));
  return deleters;
}

/** A pending tombstone with `deleter` added; unchanged when it is there already or the list is full. */
export function withPendingDeleter(value: string | undefined, deleter: string): string {
  const deleters = value === undefined ? [] : pendingDeleters(value);
  if (deleters.includes(deleter) || deleters.length >= MAX_PENDING_DELETERS) return value ?? PENDING_PREFIX;
  return PENDING_PREFIX + [...deleters, deleter].join('');
}

/** A replaceable address's bar: versions that do not supersede it are not stored. `id` is '' for "every version up to createdAt". */
export interface SlotBar {
  createdAt: number;
  id: string;
}

export function slotBarValue(bar: SlotBar): string {
  return bar.id === '' ? `${TOMBSTONE_PREFIX}${bar.createdAt}` : `${TOMBSTONE_PREFIX}${bar.createdAt}:${bar.id}`;
}

/** The bar a slot value holds, or undefined if it is not a bar. */
export function parseSlotBar(value: string): SlotBar | undefined {
  const match = /^x(\d{1,16})(?::([0-9a-f]{64}))?$/.exec(value);
  if (!match) return undefined;
  return { createdAt: Number(match[1]), id: match[2] ?? '' };
}

/** Of two bars, the one that refuses more (a version must supersede both: NIP-01's order, '' lowest). */
export function higherBar(a: SlotBar, b: SlotBar): SlotBar {
  return supersedes({ created_at: a.createdAt, id: a.id }, { created_at: b.createdAt, id: b.id }) ? a : b;
}

/**
 * What a bar says of a version arriving at its address: stored if it supersedes the bar; `deleted`
 * if the deletion covers it (its time is within an `a` tag's or a vanish's, or it is the deleted
 * version itself); `superseded` if it is older than a version that was deleted by id.
 */
export function barVerdict(candidate: { created_at: number; id: string }, bar: SlotBar): 'accepted' | 'deleted' | 'superseded' {
  if (supersedes(candidate, { created_at: bar.createdAt, id: bar.id })) return 'accepted';
  return bar.id === '' || bar.id === candidate.id ? 'deleted' : 'superseded';
}

/**
 * A write's outcome as reported for a deletion request (with something to delete) or a request to
 * vanish that applies: `applied` when new, whether stored or refused because an earlier request to
 * vanish covers it (it is applied all the same, NIP-62 removes it); a duplicate stays `duplicate`.
 */
export function requestOutcome<Outcome extends string>(outcome: Outcome, isRequest: boolean): Outcome | 'applied' {
  return isRequest && (outcome === 'stored' || outcome === 'deleted') ? 'applied' : outcome;
}

/**
 * The author index (for requests to vanish, which remove every event of a pubkey): a regular event
 * is indexed by its id, a replaceable or addressable one by its address without the pubkey
 * (`@<kind>`, `@<kind>:<d>`, `@<kind>#<hash>`), so every version shares one entry and an entry
 * stays short (Redis keeps small sorted sets compact while members are at most 64 bytes; there
 * the members sit in the author's list after a 3-byte mark, redis/author-list.ts).
 */
export function authorIndexMember(address: string, pubkey: string): string {
  return `@${address.replace(`:${pubkey}`, '')}`;
}

/** The address an author index member names (see authorIndexMember), or undefined for an event id. */
export function addressOfMember(member: string, pubkey: string): string | undefined {
  if (!member.startsWith('@')) return undefined;
  const rest = member.slice(1);
  const end = rest.search(/[:#]/);
  return end === -1 ? `${rest}:${pubkey}` : `${rest.slice(0, end)}:${pubkey}${rest.slice(end)}`;
}
