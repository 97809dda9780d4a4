import type { NostrEvent } from '../nostr/event.js';
import { isDeleted } from '../store/tombstones.js';
import type { GraphQLContext } from './context.js';
import { loadAvailable } from './loaders.js';

/**
 * The latest servable lists of a pubkey of these replaceable kinds (follows, mutes), read as
 * `following` reads its list: through the addresses loader (with relays, asked of them when the
 * index has none), its bytes charged once a request as any value derived from an event.
 */
export async function latestLists(pubkey: string, kinds: readonly number[], context: GraphQLContext): Promise<(NostrEvent | null)[]> {
  const found = await loadAvailable(
    context.loaders.addresses,
    kinds.map((kind) => `${kind}:${pubkey}:`),
  );
  return found.map((held) => {
    if (!held || isDeleted(held)) return null;
    context.budget.chargeDerived(held);
    return held.event;
  });
}
