// The lookup list, the same for every run: profiles, nevents with an author (half with one relay
// hint), bare ids, and /event lookups whose profiles map is judged. No pubkey appears in two lookups
// (author or mention), so every lookup is cold (nothing it needs was fetched by another one) and
// every REQ can be attributed to the one lookup whose ids or pubkeys it names.
import * as nip19 from 'nostr-tools/nip19';
import type { Note, User } from '../network/dataset.js';
import type { Network } from '../network/network.js';
import { chance, pickOne, type Random, shuffled } from '../network/random.js';
import type { Availability, Reachability } from './reachable.js';

export type LookupKind = 'profile' | 'nevent' | 'bare' | 'map';
export const LOOKUP_KINDS: LookupKind[] = ['profile', 'nevent', 'bare', 'map'];

export interface ExpectedProfile extends Availability {
  pubkey: string;
  id: string;
}

export interface Lookup extends Availability {
  kind: LookupKind;
  path: string;
  /** Ids and pubkeys this lookup's relay queries may name. */
  keys: string[];
  /** Relays its hints name. */
  hints: number[];
  /** The id the answer must carry: the event, or for `profile` the kind 0. */
  wantId: string;
  /** `map`: the profiles the map should hold (author and mentions). */
  profiles: ExpectedProfile[];
  /** `bare`: held by a live base relay, the only ones a bare id can reach. */
  onLiveBase?: boolean;
}

export type Counts = Record<LookupKind, number>;

/** The sample sizes of the issue for 2,000 users (400, 400, 200, 200), scaled to the users. */
export function countsFor(users: number): Counts {
  const scaled = (share: number) => Math.max(1, Math.round(users * share));
  return { profile: scaled(0.2), nevent: scaled(0.2), bare: scaled(0.1), map: scaled(0.1) };
}

export const HINTED_SHARE = 0.5;

export function sampleLookups(random: Random, network: Network, reach: Reachability, counts: Counts): Lookup[] {
  const { users, byPubkey, placement } = network.dataset;
  const used = new Set<string>();
  const notes = shuffled(
    random,
    users.flatMap((user) => user.notes.map((note) => ({ note, author: user }))),
  );
  /** Up to `count` notes passing `accept` whose author and mentions are in no lookup yet. */
  const takeNotes = (count: number, accept: (note: Note) => boolean) => {
    const taken: { note: Note; author: User }[] = [];
    for (const candidate of notes) {
      if (taken.length >= count) break;
      const pubkeys = [candidate.author.pubkey, ...candidate.note.mentions];
      if (!accept(candidate.note) || pubkeys.some((pubkey) => used.has(pubkey))) continue;
      for (const pubkey of pubkeys) used.add(pubkey);
      taken.push(candidate);
    }
    return taken;
  };
  const keysOf = (note: Note, author: User) => [note.event.id, author.pubkey, ...note.mentions];
  const lookups: Lookup[] = [];

  for (const { note, author } of takeNotes(counts.map, (candidate) => candidate.mentions.length > 0)) {
    const id = note.event.id;
    const profiles = [author.pubkey, ...note.mentions].map((pubkey) => {
      const user = byPubkey.get(pubkey) as User;
      return { pubkey, id: user.profile.id, ...reach.profile(user) };
    });
    const path = `/event?id=${nip19.neventEncode({ id, author: author.pubkey })}`;
    lookups.push({ kind: 'map', path, keys: keysOf(note, author), hints: [], wantId: id, profiles, ...reach.event(id, author, []) });
  }
  for (const { note, author } of takeNotes(counts.nevent, () => true)) {
    const id = note.event.id;
    // A hint names a relay that was given the event: live now, or not.
    const hints = chance(random, HINTED_SHARE) ? [pickOne(random, placement.get(id) ?? [])] : [];
    const path = `/event?id=${nip19.neventEncode({ id, author: author.pubkey, relays: hints.map(network.urlOf) })}`;
    lookups.push({ kind: 'nevent', path, keys: keysOf(note, author), hints, wantId: id, profiles: [], ...reach.event(id, author, hints) });
  }
  for (const { note, author } of takeNotes(counts.bare, () => true)) {
    const id = note.event.id;
    lookups.push({
      kind: 'bare',
      path: `/event?id=${id}`,
      keys: keysOf(note, author),
      hints: [],
      wantId: id,
      profiles: [],
      onLiveBase: reach.onLiveBase(id),
      ...reach.event(id, author, []),
    });
  }
  const free = shuffled(random, users.filter((user) => !used.has(user.pubkey))).slice(0, counts.profile);
  for (const user of free) {
    lookups.push({
      kind: 'profile',
      path: `/user-profile?pubkey=${user.pubkey}`,
      keys: [user.pubkey],
      hints: [],
      wantId: user.profile.id,
      profiles: [],
      ...reach.profile(user),
    });
  }
  // Mixed, as a real client's traffic is.
  return shuffled(random, lookups);
}
