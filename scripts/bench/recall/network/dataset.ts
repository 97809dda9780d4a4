// The users of the simulated network and their signed events (real keys, real Schnorr signatures),
// and on which relays each event is held:
// - each user's kind 10002 lists 2–4 write relays drawn by popularity ("write" or unmarked `r` tags),
//   some also 1–2 read-only ones (`["r", url, "read"]`: nothing of theirs is there, and a service
//   that asks them for the user's events misreads NIP-65); a few users publish no list at all;
// - profile, relay list and notes go to the user's write relays; the indexer holds most relay lists
//   and some profiles; the base relays a minority of profiles, lists and notes; a few notes also sit
//   on one more relay (a client broadcast them there), which a relay hint may name;
// - some notes mention other users (`p` tags), so `/event`'s profiles map has others to find.
import { createHash } from 'node:crypto';
import { getPublicKey } from 'nostr-tools/pure';
import { finalizeEvent } from 'nostr-tools/wasm';
import { type NostrEvent, serializeEvent } from '../../../../src/nostr/event.js';
import '../../../../src/nostr/verify-event.js'; // loads the wasm signer
import type { RelayPlan } from './plan.js';
import { between, chance, pickOne, pickWeighted, type Random } from './random.js';

export const PLACEMENT = {
  withRelayList: 0.95,
  withReadRelays: 0.4,
  relayListOnIndexer: 0.9,
  profileOnIndexer: 0.3,
  relayListOnBase: 0.2,
  profileOnBase: 0.25,
  noteOnBase: 0.25,
  noteOnExtraRelay: 0.15,
  noteWithMentions: 0.3,
  writeRelays: [2, 4] as const,
  readRelays: [1, 2] as const,
  notes: [2, 4] as const,
  mentions: [1, 2] as const,
};

export interface User {
  index: number;
  pubkey: string;
  /** Where the user publishes; listed in the kind 10002 only if `relayList` exists. */
  writes: number[];
  /** Listed as read-only: nothing of the user's is there. */
  reads: number[];
  profile: NostrEvent;
  relayList: NostrEvent | undefined;
  notes: Note[];
}

export interface Note {
  event: NostrEvent;
  mentions: string[];
}

export interface Dataset {
  users: User[];
  byPubkey: Map<string, User>;
  /** Relays holding each event, by id. */
  placement: Map<string, number[]>;
  events: number;
}

const CREATED_AT = 1_700_000_000;

function sign(secretKey: Uint8Array, kind: number, created_at: number, tags: string[][], content: string): NostrEvent {
  return JSON.parse(serializeEvent(finalizeEvent({ kind, created_at, tags, content }, secretKey))) as NostrEvent;
}

export function makeDataset(random: Random, seed: number, userCount: number, plan: RelayPlan, urlOf: (relay: number) => string): Dataset {
  const placement = new Map<string, number[]>();
  const place = (event: NostrEvent, relays: number[]) => placement.set(event.id, [...new Set(relays)]);
  const weight = (relay: number) => plan.popularity.get(relay) ?? 0;
  const keys = Array.from({ length: userCount }, (_, index) => {
    const secretKey = createHash('sha256').update(`recall bench seed ${seed} user ${index}`).digest();
    return { secretKey, pubkey: getPublicKey(secretKey) };
  });
  const users: User[] = keys.map(({ secretKey, pubkey }, index) => {
    const writes = pickWeighted(random, plan.userRelays, weight, between(random, ...PLACEMENT.writeRelays));
    const others = plan.userRelays.filter((relay) => !writes.includes(relay));
    const reads = chance(random, PLACEMENT.withReadRelays) ? pickWeighted(random, others, weight, between(random, ...PLACEMENT.readRelays)) : [];
    const at = CREATED_AT + index * 10;

    const profile = sign(secretKey, 0, at, [], JSON.stringify({ name: `user-${index}`, about: `Recall bench user ${index}.`, picture: `https://example.com/${index}.png` }));
    place(profile, [
      ...writes,
      ...(chance(random, PLACEMENT.profileOnIndexer) ? [plan.indexer] : []),
      ...(chance(random, PLACEMENT.profileOnBase) ? [pickOne(random, plan.base)] : []),
    ]);

    let relayList: NostrEvent | undefined;
    if (chance(random, PLACEMENT.withRelayList)) {
      const tags = [
        ...writes.map((relay) => (chance(random, 0.5) ? ['r', urlOf(relay)] : ['r', urlOf(relay), 'write'])),
        ...reads.map((relay) => ['r', urlOf(relay), 'read']),
      ];
      relayList = sign(secretKey, 10002, at + 1, tags, '');
      place(relayList, [
        ...writes,
        ...(chance(random, PLACEMENT.relayListOnIndexer) ? [plan.indexer] : []),
        ...(chance(random, PLACEMENT.relayListOnBase) ? [pickOne(random, plan.base)] : []),
      ]);
    }
    return { index, pubkey, writes, reads, profile, relayList, notes: [] };
  });

  // Notes come after every user exists, so that any user can be mentioned.
  for (const [index, user] of users.entries()) {
    const { secretKey } = keys[index] as { secretKey: Uint8Array };
    const count = between(random, ...PLACEMENT.notes);
    for (let n = 0; n < count; n++) {
      const mentions = new Set<string>();
      if (chance(random, PLACEMENT.noteWithMentions)) {
        const wanted = between(random, ...PLACEMENT.mentions);
        while (mentions.size < wanted) {
          const other = pickOne(random, users).pubkey;
          if (other !== user.pubkey) mentions.add(other);
        }
      }
      const tags = [...mentions].map((pubkey) => ['p', pubkey]);
      const event = sign(secretKey, 1, CREATED_AT + 100_000 + index * 10 + n, tags, `Note ${n} of user ${index}.`);
      const elsewhere = plan.userRelays.filter((relay) => !user.writes.includes(relay));
      place(event, [
        ...user.writes,
        ...(chance(random, PLACEMENT.noteOnBase) ? [pickOne(random, plan.base)] : []),
        ...(chance(random, PLACEMENT.noteOnExtraRelay) ? [pickOne(random, elsewhere)] : []),
      ]);
      user.notes.push({ event, mentions: [...mentions] });
    }
  }
  return { users, byPubkey: new Map(users.map((user) => [user.pubkey, user])), placement, events: placement.size };
}
