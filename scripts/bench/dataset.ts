// A signed dataset for the benchmarks: profiles, and notes that each name K relevant pubkeys
// (the author plus K-1 p-tagged pubkeys, all with profiles). Deterministic keys, real signatures.
import { createHash } from 'node:crypto';
import { getPublicKey } from 'nostr-tools/pure';
import { finalizeEvent } from 'nostr-tools/wasm';
import { ALL_RELAYS, DELETION_KIND, VANISH_KIND } from '../../src/nostr/deletions.js';
import { type NostrEvent, serializeEvent } from '../../src/nostr/event.js';
import '../../src/nostr/verify-event.js'; // loads the wasm signer

export interface Identity {
  secretKey: Uint8Array;
  pubkey: string;
}

export function identity(index: number): Identity {
  const secretKey = createHash('sha256').update(`bench identity ${index}`).digest();
  return { secretKey, pubkey: getPublicKey(secretKey) };
}

function sign(who: Identity, kind: number, created_at: number, tags: string[][], content: string): NostrEvent {
  const event = finalizeEvent({ kind, created_at, tags, content }, who.secretKey);
  return JSON.parse(serializeEvent(event)) as NostrEvent;
}

/** `count` identities with a kind-0 profile each, of a realistic size (~400 bytes of content). */
export function makeProfiles(identities: Identity[]): NostrEvent[] {
  return identities.map((who, index) =>
    sign(who, 0, 1_700_000_000 + index, [], JSON.stringify({
      name: `bench-${index}`,
      display_name: `Bench User ${index} ✨`,
      about: `Generated for the benchmark. ${'Nostr is a simple, open protocol. '.repeat(6)}`,
      picture: `https://example.com/avatars/${index}.png`,
      nip05: `bench-${index}@example.com`,
      lud16: `bench-${index}@wallet.example.com`,
    })),
  );
}

/**
 * `count` notes, each by a random identity and p-tagging k-1 other random identities (the authors
 * drawn from `authors` if given: one author with many notes).
 */
export function makeNotes(identities: Identity[], count: number, k: number, seed: number, authors = identities): NostrEvent[] {
  let state = seed;
  const random = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const pick = (from = identities) => from[Math.floor(random() * from.length)] as Identity;
  const notes: NostrEvent[] = [];
  for (let n = 0; n < count; n++) {
    const author = pick(authors);
    const tagged = new Set<string>();
    while (tagged.size < k - 1) {
      const other = pick().pubkey;
      if (other !== author.pubkey) tagged.add(other);
    }
    const tags = [...tagged].map((pubkey) => ['p', pubkey]);
    notes.push(sign(author, 1, 1_700_100_000 + n, tags, `Benchmark note ${n} with ${k} relevant pubkeys. GM 🌅`));
  }
  return notes;
}

/** A deletion request (NIP-09, kind 5) per target, by `author`, naming `id` in one `e` tag; the n-th at `at + n`. */
export function makeDeletions(targets: { author: Identity; id: string }[], at: number): NostrEvent[] {
  return targets.map(({ author, id }, n) => sign(author, DELETION_KIND, at + n, [['e', id]], ''));
}

/** A request to vanish (NIP-62, kind 62) from every relay. */
export function makeVanish(who: Identity, at: number): NostrEvent {
  return sign(who, VANISH_KIND, at, [['relay', ALL_RELAYS]], '');
}

/** `count` event ids that no event has (hex of a hash). */
export function unseenIds(count: number, seed: number): string[] {
  return Array.from({ length: count }, (_, n) => createHash('sha256').update(`bench unseen id ${seed} ${n}`).digest('hex'));
}

export const hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** `size` pubkeys to follow, in popularity rank order. */
export function followedPool(size: number): string[] {
  return Array.from({ length: size }, (_, n) => hex(`followed ${n}`));
}

/**
 * Signed follow lists (kind 3) by identity(0…): each follows `follows` distinct pubkeys of the
 * pool, drawn with popularity ~ 1/rank (a log-uniform rank is a Zipf(1) draw), the same every run.
 */
export function makeFollowLists(lists: number, follows: number, pool: string[]): NostrEvent[] {
  let state = 28;
  const random = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const draw = () => pool[Math.min(pool.length - 1, Math.floor(pool.length ** random()) - 1)] as string;
  return Array.from({ length: lists }, (_, n) => {
    const chosen = new Set<string>();
    while (chosen.size < follows) chosen.add(draw());
    const event = finalizeEvent({ kind: 3, created_at: 1_700_000_000 + n, tags: [...chosen].map((pubkey) => ['p', pubkey]), content: '' }, identity(n).secretKey);
    return JSON.parse(serializeEvent(event)) as NostrEvent;
  });
}

/**
 * The screens' world (GET /feed, /notifications, /thread) over identities that have profiles:
 * each of `viewers` follows `follows` identities (a kind-3 list, NIP-02), whose notes make its home
 * feed; each of `roots` gets `replies` direct replies (NIP-10 marked `e` root, the root's author
 * p-tagged) from other identities, which make its thread and notify its author.
 */
export function makeScreenWorld(identities: Identity[], viewers: Identity[], follows: number, roots: NostrEvent[], replies: number): NostrEvent[] {
  const lists = viewers.map((viewer, n) => {
    const followed = Array.from({ length: follows }, (_, index) => identities[(n * 7 + index * 13) % identities.length] as Identity).filter((who) => who !== viewer);
    return sign(viewer, 3, 1_700_000_000, [...new Set(followed.map((who) => who.pubkey))].map((pubkey) => ['p', pubkey]), '');
  });
  const answers = roots.flatMap((root, n) =>
    Array.from({ length: replies }, (_, index) => {
      const author = identities[(n * 31 + index * 17 + 1) % identities.length] as Identity;
      return sign(author, 1, root.created_at + 60 + index, [['e', root.id, '', 'root'], ['p', root.pubkey]], `Reply ${index} to note ${n}. Agreed 🤙`);
    }),
  );
  return [...lists, ...answers];
}

/** The screens' world of the benches (run.ts, profile-lookup.ts): 50 viewers following 100 each, 200 threads of 5 replies. */
export const SCREEN_WORLD = { viewers: 50, follows: 100, roots: 200, replies: 5 } as const;

/** SCREEN_WORLD over `identities` (the first are the viewers) and `notes` (the first are the threads' roots). */
export function screenWorld(identities: Identity[], notes: NostrEvent[]): { viewers: Identity[]; roots: NostrEvent[]; events: NostrEvent[] } {
  const viewers = identities.slice(0, SCREEN_WORLD.viewers);
  const roots = notes.slice(0, SCREEN_WORLD.roots);
  return { viewers, roots, events: makeScreenWorld(identities, viewers, SCREEN_WORLD.follows, roots, SCREEN_WORLD.replies) };
}
