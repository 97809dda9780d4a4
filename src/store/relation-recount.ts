import type { NostrEvent } from '../nostr/event.js';
import { followsOf } from '../nostr/follows.js';
import { profileWords } from '../nostr/profile-search.js';
import { isDislike, isLike, isNoteKind, relationEdgesOf } from '../nostr/relationships.js';
import { compareNotes, contentKey, type RelatedEvent, type RelationStats, type ReplyPosition, statsFromTally, storedSizeOf, TALLY } from './relation-index.js';
import { sortZapGroups, type ZapGroup, type ZapSubject, zapEntriesOf, zapGroupKey } from './zap-index.js';

/**
 * Every figure of the relationship index computed from scratch, from the servable events alone, by
 * sets rather than counters: the independent answer that `relations check` and the property tests
 * hold the maintained figures against.
 */
export interface Recount {
  stats: Map<string, RelationStats>;
  replies: Map<string, ReplyPosition[]>;
  /** The zap groups of every subject zapped (zap-index.ts), in sortZapGroups order, with each recipient's receipts and each group's senders. */
  zaps: Map<ZapSubject, RecountedZaps>;
  /** followed pubkey → its followers, sorted */
  followers: Map<string, string[]>;
  /** author → how many pubkeys its list follows (authors of lists that follow someone) */
  following: Map<string, number>;
  /** `<author>:<kind>` → the author's events of that kind, newest first (compareNotes) */
  notes: Map<string, ReplyPosition[]>;
  /** pubkey → the words of its profile (nostr/profile-search.ts), for every servable profile */
  profileWords: Map<string, string[]>;
  /** target → the events that relate to it (RelationIndex.relatedIds) as `<id> <size>`, sorted */
  related: Map<string, string[]>;
}

interface Gathered {
  replies: ReplyPosition[];
  threadReplies: number;
  quotes: number;
  reposters: Set<string>;
  /** content → authors */
  reactions: Map<string, Set<string>>;
}

export interface RecountedZaps {
  groups: ZapGroup[];
  /** recipient → receipts, whoever signed them */
  receipts: Map<string, number>;
  /** group key → its senders */
  senders: Map<string, Set<string>>;
}

/**
 * `only`: the events are those that relate to one target (schema/trusted-stats.ts): its figures,
 * replies and zaps are recounted by the same rule, and what concerns the store as a whole (follows,
 * notes, profile words, the related lists, sizes) is left out.
 */
export function recountRelations(servable: Iterable<NostrEvent>, only?: string): Recount {
  const byTarget = new Map<string, Gathered>();
  const seen = new Set<string>();
  // subject → group key → the group's receipts' senders (with repeats) and millisatoshis
  const zapped = new Map<ZapSubject, Map<string, { senders: string[]; msats: bigint }>>();
  const followersOf = new Map<string, Set<string>>();
  const following = new Map<string, number>();
  const notes = new Map<string, ReplyPosition[]>();
  const words = new Map<string, string[]>();
  const related = new Map<string, Set<string>>();
  const relates = (target: string, event: NostrEvent) => {
    if (only !== undefined) return;
    const ids = related.get(target) ?? new Set<string>();
    related.set(target, ids.add(relatedFigure({ id: event.id, bytes: storedSizeOf(event) })));
  };
  // What concerns the store as a whole: profile words, the authors' note lists, follows.
  const gatherStoreWide = (event: NostrEvent) => {
    if (event.kind === 0) words.set(event.pubkey, profileWords(event));
    if (isNoteKind(event.kind)) {
      const list = `${event.pubkey}:${event.kind}`;
      const listed = notes.get(list) ?? [];
      notes.set(list, listed);
      listed.push({ createdAt: event.created_at, id: event.id, bytes: storedSizeOf(event) });
    }
    const follows = followsOf(event);
    if (follows.length > 0) following.set(event.pubkey, (following.get(event.pubkey) ?? 0) + follows.length);
    for (const followed of follows) {
      const set = followersOf.get(followed) ?? new Set<string>();
      followersOf.set(followed, set);
      set.add(event.pubkey);
    }
  };
  // With `only`, a reply's size is not read (its place in the list is not compared).
  const sizeOf = (event: NostrEvent) => (only === undefined ? storedSizeOf(event) : 0);
  for (const event of servable) {
    if (seen.has(event.id)) continue;
    seen.add(event.id);
    if (only === undefined) gatherStoreWide(event);
    for (const { subject, sender, msats, ...group } of zapEntriesOf(event)) {
      if (only !== undefined && subject !== `e${only}`) continue;
      if (subject.startsWith('e')) relates(subject.slice(1), event);
      const groups = zapped.get(subject) ?? new Map<string, { senders: string[]; msats: bigint }>();
      zapped.set(subject, groups);
      const receipts = groups.get(zapGroupKey(group)) ?? { senders: [], msats: 0n };
      groups.set(zapGroupKey(group), receipts);
      receipts.senders.push(sender);
      receipts.msats += BigInt(msats);
    }
    for (const edge of relationEdgesOf(event)) {
      if (only !== undefined && edge.target !== only) continue;
      relates(edge.target, event);
      let gathered = byTarget.get(edge.target);
      if (!gathered) {
        gathered = { replies: [], threadReplies: 0, quotes: 0, reposters: new Set(), reactions: new Map() };
        byTarget.set(edge.target, gathered);
      }
      if (edge.reply) gathered.replies.push({ createdAt: event.created_at, id: event.id, bytes: sizeOf(event) });
      if (edge.threadReply) gathered.threadReplies += 1;
      if (edge.quote) gathered.quotes += 1;
      if (edge.repost) gathered.reposters.add(event.pubkey);
      if (edge.reaction !== undefined) {
        const authors = gathered.reactions.get(edge.reaction) ?? new Set<string>();
        authors.add(event.pubkey);
        gathered.reactions.set(edge.reaction, authors);
      }
    }
  }
  const stats = new Map<string, RelationStats>();
  const replies = new Map<string, ReplyPosition[]>();
  for (const [target, gathered] of byTarget) {
    const pubkeys = new Set<string>();
    const likes = new Set<string>();
    const dislikes = new Set<string>();
    for (const [content, authors] of gathered.reactions) {
      for (const author of authors) {
        pubkeys.add(author);
        if (isLike(content)) likes.add(author);
        if (isDislike(content)) dislikes.add(author);
      }
    }
    // Distinct authors per content key (long contents share one, with no entry), cut and ordered as the stores do.
    const byKey = new Map<string, Set<string>>();
    for (const [content, authors] of gathered.reactions) {
      const key = contentKey(content);
      const union = byKey.get(key) ?? new Set<string>();
      for (const author of authors) union.add(author);
      byKey.set(key, union);
    }
    const tally = new Map<string, number>([
      [TALLY.replies, gathered.replies.length],
      [TALLY.threadReplies, gathered.threadReplies],
      [TALLY.quotes, gathered.quotes],
      [TALLY.reposts, gathered.reposters.size],
      [TALLY.reactionPubkeys, pubkeys.size],
      [TALLY.likes, likes.size],
      [TALLY.dislikes, dislikes.size],
    ]);
    stats.set(target, statsFromTally(tally, [...byKey].map(([key, authors]) => [key, authors.size] as [string, number])));
    if (gathered.replies.length > 0) replies.set(target, gathered.replies.sort(comparePositions));
  }
  const zaps = new Map<ZapSubject, RecountedZaps>();
  for (const [subject, groups] of zapped) {
    const receipts = new Map<string, number>();
    const senders = new Map<string, Set<string>>();
    const listed: ZapGroup[] = [];
    for (const [key, { senders: all, msats }] of groups) {
      const recipient = key.slice(0, 64);
      receipts.set(recipient, (receipts.get(recipient) ?? 0) + all.length);
      senders.set(key, new Set(all));
      listed.push({ recipient, provider: key.slice(64), count: all.length, msats: msats.toString(), senders: new Set(all).size });
    }
    zaps.set(subject, { groups: sortZapGroups(listed), receipts, senders });
  }
  const followers = new Map([...followersOf].map(([followed, set]) => [followed, [...set].sort()] as [string, string[]]));
  for (const listed of notes.values()) listed.sort(compareNotes);
  const relatedIds = new Map([...related].map(([target, ids]) => [target, [...ids].sort()] as [string, string[]]));
  return { stats, replies, zaps, followers, following, notes, profileWords: words, related: relatedIds };
}

/** A related event as `relations check` compares it (RelationIndex.relatedIds). */
export const relatedFigure = ({ id, bytes }: RelatedEvent): string => `${id} ${bytes}`;

export function comparePositions(a: ReplyPosition, b: ReplyPosition): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
