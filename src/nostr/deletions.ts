import type { NostrEvent } from './event.js';
import { readCoordinate } from './kinds.js';

/** NIP-09: a deletion request. */
export const DELETION_KIND = 5;
/** NIP-62: a request to vanish. */
export const VANISH_KIND = 62;

/**
 * Kinds no deletion request removes: a deletion of a deletion does nothing (NIP-09, "Deletion
 * Request of a Deletion Request"), and a request to vanish cannot be taken back (NIP-62 has no
 * "unrequest"). Requests to vanish are kept, as NIP-62 allows, as the record of why the rest is gone.
 */
export function isUndeletableKind(kind: number): boolean {
  return kind === DELETION_KIND || kind === VANISH_KIND;
}

/**
 * Targets one deletion request may name, at most. Relays accept events of ~100 KB: a request
 * naming 10,000 ids would be 10,000 store commands; past this many, the rest are ignored.
 */
export const MAX_DELETION_TARGETS = 1000;

const HEX_ID = /^[0-9a-f]{64}$/;

export interface DeletionTargets {
  /** Ids of `e` tags: the events are deleted if their author is the request's (checked by the store). */
  ids: string[];
  /** Addresses (nostr/kinds.ts form) of `a` tags that name the request's own author. */
  addresses: string[];
}

/**
 * What a kind-5 deletion request names (NIP-09): `e` tags (event ids) and `a` tags
 * (`<kind>:<pubkey>:<d>`, replaceable or addressable kinds). An `a` tag naming another author's
 * address, a regular kind, or a malformed value is ignored: nobody deletes someone else's events.
 * Empty for any other kind.
 */
export function deletionTargets(event: NostrEvent): DeletionTargets {
  const ids = new Set<string>();
  const addresses = new Set<string>();
  if (event.kind !== DELETION_KIND) return { ids: [], addresses: [] };
  for (const tag of event.tags) {
    if (ids.size + addresses.size >= MAX_DELETION_TARGETS) break;
    const [name, value] = tag;
    if (typeof value !== 'string') continue;
    if (name === 'e' && HEX_ID.test(value)) ids.add(value);
    if (name === 'a') {
      const address = ownAddress(value, event.pubkey);
      if (address !== undefined) addresses.add(address);
    }
  }
  return { ids: [...ids], addresses: [...addresses] };
}

/** Whether a deletion request names anything it may delete (an `e` tag, or an `a` tag of its own). */
export function isDeletionRequest(targets: DeletionTargets): boolean {
  return targets.ids.length + targets.addresses.length > 0;
}

/**
 * Per event id, the pubkeys whose deletion requests among `events` name it by `e` tag: a batch that
 * holds an event and its author's deletion refuses the event whatever else named it first (the
 * record of deletions that come before their event keeps a bounded number of signers).
 */
export function deletersById(
  events: readonly NostrEvent[],
  targets: readonly DeletionTargets[] = events.map(deletionTargets),
): Map<string, Set<string>> {
  const deleters = new Map<string, Set<string>>();
  for (const [index, event] of events.entries()) {
    for (const id of targets[index]?.ids ?? []) {
      let signers = deleters.get(id);
      if (!signers) deleters.set(id, (signers = new Set()));
      signers.add(event.pubkey);
    }
  }
  return deleters;
}

/** Whether a deletion request by the event's own author names it (deletersById), and it may be deleted. */
export function deletedBy(deleters: ReadonlyMap<string, ReadonlySet<string>>, event: NostrEvent): boolean {
  return !isUndeletableKind(event.kind) && (deleters.get(event.id)?.has(event.pubkey) ?? false);
}

/** The store address an `a` tag value names, if it is well formed and the author's own. */
function ownAddress(value: string, author: string): string | undefined {
  const coordinate = readCoordinate(value);
  return coordinate?.pubkey === author ? coordinate.address : undefined;
}

/** NIP-62: the `relay` value that addresses every relay (uppercase, exactly). */
export const ALL_RELAYS = 'ALL_RELAYS';

/**
 * Whether a kind-62 request to vanish applies here (NIP-62): one of its `relay` tags is
 * `ALL_RELAYS`, or names this service (PUBLIC_URL: the same host and path, whatever the scheme:
 * `wss://` for `https://`, as clients write relay URLs).
 */
export function vanishApplies(event: NostrEvent, publicUrl?: string): boolean {
  if (event.kind !== VANISH_KIND) return false;
  const own = publicUrl === undefined ? undefined : sameServiceKey(publicUrl);
  return event.tags.some(
    ([name, value]) => name === 'relay' && typeof value === 'string' && (value === ALL_RELAYS || (own !== undefined && sameServiceKey(value) === own)),
  );
}

/** A URL reduced to what names a service: host (lowercase, port if any) and path, without a trailing slash. */
function sameServiceKey(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return undefined;
  }
  if (!['ws:', 'wss:', 'http:', 'https:'].includes(url.protocol) || url.hostname === '') return undefined;
  const secure = url.protocol === 'wss:' || url.protocol === 'https:';
  const port = url.port === '' || url.port === (secure ? '443' : '80') ? '' : `:${url.port}`;
  return `${url.hostname}${port}${url.pathname.replace(/\/+$/, '')}`;
}
