import { byteLengthOf, type StringOutput } from '../../store/json-text.js';
import type { QueryParameter } from './rest-lookup.js';

/** A screen's paging parameters: `limit` (1 to `most`, `fallback` when left out) of `what`, and `after`. */
export function pageParameters(what: string, fallback: number, most: number): QueryParameter[] {
  return [
    { name: 'limit', required: false, description: `${what} on the page: 1 to ${most} (default ${fallback}).`, examples: [String(fallback)] },
    { name: 'after', required: false, description: 'The `next` of the previous page, as it came (else 400 invalid_cursor).' },
  ];
}

/** An event a screen shows, with the profiles of its relevant pubkeys (the fixed operations' selection). */
export interface Shown {
  json: StringOutput;
  relevantProfiles: ReadonlyArray<{ pubkey: StringOutput; event: { json: StringOutput } }>;
}

/** `[event,event,…]`'s inside: the stored JSON of each, as it is. */
export function pushEvents(parts: StringOutput[], events: readonly Shown[]): void {
  events.forEach((shown, index) => {
    if (index > 0) parts.push(',');
    parts.push(shown.json);
  });
}

/**
 * `{pubkey: profile,…}`'s inside: the latest profile of every relevant pubkey of every event shown,
 * in the order they are shown (each event's author first), each pubkey once, as /event's map: a
 * pubkey without a profile is absent. It stops before the profile that would take the body past
 * `maxResponseBytes`, counting the events already in it: the events are always there.
 */
export function pushProfiles(parts: StringOutput[], shown: readonly Shown[], maxResponseBytes: number): void {
  const seen = new Set<string>();
  let bytes = shown.reduce((sum, { json }) => sum + byteLengthOf(json), 0);
  let separator = '';
  for (const { relevantProfiles } of shown) {
    for (const { pubkey, event: profile } of relevantProfiles) {
      const key = String(pubkey);
      if (seen.has(key)) continue;
      bytes += byteLengthOf(profile.json) + 70;
      if (bytes > maxResponseBytes) return;
      seen.add(key);
      // A pubkey is 64 lowercase hex characters (read from the stored event): nothing to escape.
      parts.push(`${separator}"${key}":`, profile.json);
      separator = ',';
    }
  }
}

/** A page's `next`: its end cursor as a JSON string while more follow, else null. */
export function nextCursor({ hasNextPage, endCursor }: { hasNextPage: boolean; endCursor: StringOutput | null }): string {
  return hasNextPage && endCursor !== null ? JSON.stringify(String(endCursor)) : 'null';
}
