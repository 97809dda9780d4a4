import type { Filter } from 'nostr-tools/filter';
import { DELETION_KIND } from '../nostr/deletions.js';
import type { NostrEvent } from '../nostr/event.js';
import { type Coordinate, coordinateOf, isReplaceableKind, PROFILE_KIND, readCoordinate, supersedes } from '../nostr/kinds.js';
import { addressMarkKey, eventMarkKey, profileMarkKey } from '../store/mark-store.js';

/**
 * The two things looked up through relays, as typed descriptions instead of prefixed strings: how
 * their key is asked of a relay, which event answers it, which of two answers wins, and how it is
 * marked. A key is an event id or a pubkey (64 lowercase hex).
 */
export interface LookupKind {
  readonly name: 'event' | 'profile' | 'address';
  /**
   * The filters that ask relays for these keys (one REQ; NIP-01 allows several filters); for events,
   * also the deletion requests naming them (NIP-09), so that a deleted note is not brought back by
   * a relay that still holds it.
   */
  filters(keys: readonly string[]): Filter[];
  /** The key an arriving event answers, if it answers one. */
  keyOf(event: NostrEvent): string;
  /** Of two events for one key, whether `candidate` wins over `held`. */
  wins(candidate: NostrEvent, held: NostrEvent): boolean;
  /** Whether the first event found for a key is its answer (no need to wait for other relays). */
  readonly firstIsFinal: boolean;
  /** The key's mark (store/mark-store.ts). */
  markKey(key: string): string;
  /**
   * For lookups whose filters also ask for the deletion requests naming their keys (NIP-09): how a
   * request's tag names a key, and who may delete it.
   */
  readonly deletions?: DeletionRule;
}

export interface DeletionRule {
  /** The key a deletion request's tag names, if it names one: an `e` tag's id, an `a` tag's coordinate. */
  keyOfTag(tag: readonly string[]): string | undefined;
  /**
   * Who may delete a key (NIP-09: only its author): for an id, the author of the event found for it
   * (undefined while none is: anyone may be); for a coordinate, the author it names.
   */
  signerOf(key: string, found: NostrEvent | undefined): string | undefined;
}

/**
 * Ids or authors per filter, at most. A GraphQL request can want thousands of profiles (100 events
 * × 100 relevant pubkeys); relays refuse oversized filters, so larger sets are split into several
 * filters of the same REQ: still one subscription per relay.
 */
export const MAX_VALUES_PER_FILTER = 500;

export const EVENT_LOOKUP: LookupKind = {
  name: 'event',
  filters: (ids) =>
    chunks(ids, MAX_VALUES_PER_FILTER).flatMap((part) => [{ ids: part }, { kinds: [DELETION_KIND], '#e': part }]),
  deletions: {
    keyOfTag: ([name, id]) => (name === 'e' ? id : undefined),
    signerOf: (_id, found) => found?.pubkey,
  },
  keyOf: (event) => event.id,
  // An id names one event: the first that verifies is the answer (NIP-01).
  wins: () => false,
  firstIsFinal: true,
  markKey: eventMarkKey,
};

export const PROFILE_LOOKUP: LookupKind = {
  name: 'profile',
  filters: (pubkeys) => chunks(pubkeys, MAX_VALUES_PER_FILTER).map((part) => ({ kinds: [PROFILE_KIND], authors: part })),
  keyOf: (event) => (event.kind === PROFILE_KIND ? event.pubkey : ''),
  // Relays may hold different versions: the newest wins (NIP-01 replaceable rule).
  wins: (candidate, held) => supersedes(candidate, held),
  firstIsFinal: false,
  markKey: profileMarkKey,
};

/**
 * The latest version at a NIP-01 coordinate (`<kind>:<pubkey>:<d>`, an naddr). Asked by kind, with
 * the authors and `d` values of that kind together (a relay may cap the filters of one REQ: a
 * hundred naddrs must not make a hundred filters); what else that brings (an author's event under
 * another's `d`) answers no key and is dropped. The newest version wins. The deletion requests
 * naming the coordinates (`a` tags, NIP-09) are asked in the same REQ, from their authors only.
 */
export const ADDRESS_LOOKUP: LookupKind = {
  name: 'address',
  filters: (keys) => {
    const byKind = new Map<number, { authors: Set<string>; ds: Set<string> }>();
    const coordinates = [...new Set(keys)].filter((key) => readCoordinate(key) !== undefined);
    for (const key of coordinates) {
      const { kind, pubkey, d } = readCoordinate(key) as Coordinate;
      const group = byKind.get(kind) ?? { authors: new Set(), ds: new Set() };
      group.authors.add(pubkey);
      group.ds.add(d);
      byKind.set(kind, group);
    }
    const versions = [...byKind].flatMap(([kind, { authors, ds }]) =>
      chunks([...authors], MAX_VALUES_PER_FILTER).flatMap((someAuthors) =>
        isReplaceableKind(kind)
          ? [{ kinds: [kind], authors: someAuthors }]
          : chunks([...ds], MAX_VALUES_PER_FILTER).map((someDs) => ({ kinds: [kind], authors: someAuthors, '#d': someDs })),
      ),
    );
    const deletions = chunks(coordinates, MAX_VALUES_PER_FILTER).map((part) => ({
      kinds: [DELETION_KIND],
      authors: [...new Set(part.map((key) => (readCoordinate(key) as Coordinate).pubkey))],
      '#a': part,
    }));
    return [...versions, ...deletions];
  },
  deletions: {
    keyOfTag: ([name, value]) => {
      const coordinate = name === 'a' && value !== undefined ? readCoordinate(value) : undefined;
      return coordinate && `${coordinate.kind}:${coordinate.pubkey}:${coordinate.d}`;
    },
    signerOf: (coordinate) => readCoordinate(coordinate)?.pubkey,
  },
  keyOf: coordinateOf,
  wins: (candidate, held) => supersedes(candidate, held),
  firstIsFinal: false,
  markKey: (coordinate) => addressMarkKey(readCoordinate(coordinate)?.address ?? coordinate),
};

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const unique = [...new Set(items)];
  const parts: T[][] = [];
  for (let start = 0; start < unique.length; start += size) parts.push(unique.slice(start, start + size));
  return parts;
}
