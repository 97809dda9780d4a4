// What one simulated relay holds, indexed by id and by author: a relay answers thousands of REQs
// over thousands of events, and a scan per filter (as test/support/loopback-relay.ts does) would make
// the bench process, not the service, the slow part. Results follow NIP-01 as that relay does:
// matching events, newest first, at most `limit`.
import { type Filter, matchFilter } from 'nostr-tools/filter';
import type { NostrEvent } from '../../../../src/nostr/event.js';

type Matchable = Parameters<typeof matchFilter>[1];

export class EventIndex {
  private readonly byId = new Map<string, NostrEvent>();
  private readonly byAuthor = new Map<string, NostrEvent[]>();

  add(event: NostrEvent): void {
    if (this.byId.has(event.id)) return;
    this.byId.set(event.id, event);
    const authored = this.byAuthor.get(event.pubkey);
    if (authored) authored.push(event);
    else this.byAuthor.set(event.pubkey, [event]);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  get size(): number {
    return this.byId.size;
  }

  find(filter: Filter, defaultLimit = Number.POSITIVE_INFINITY): NostrEvent[] {
    let candidates: NostrEvent[];
    if (filter.ids) candidates = filter.ids.flatMap((id) => this.byId.get(id) ?? []);
    else if (filter.authors) candidates = filter.authors.flatMap((author) => this.byAuthor.get(author) ?? []);
    else candidates = [...this.byId.values()];
    return candidates
      .filter((event) => matchFilter(filter, event as Matchable))
      .sort((a, b) => b.created_at - a.created_at)
      .slice(0, filter.limit ?? defaultLimit);
  }
}
