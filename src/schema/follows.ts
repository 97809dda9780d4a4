import { followsOf } from '../nostr/follows.js';
import type { FollowCounts } from '../store/follow-index.js';
import { isDeleted } from '../store/tombstones.js';
import { builder } from './builder.js';
import { PageInfoRef, type PageInfo } from './event-connection.js';
import { loadAvailable } from './loaders.js';
import { decodeFollowerCursor, decodeFollowingCursor, encodeFollowerCursor, encodeFollowingCursor, MAX_PAGE_SIZE, pageSizeOf } from './paging.js';
import { type FieldsOfPubkey, ProfileRef, PubkeyRef, toProfile } from './profile.js';

/**
 * Who follows whom (NIP-02; DESIGN "Relationships", following and followers rows): the
 * counts and both lists of a profile. Counts and followers come from the follow index
 * (store/follow-index.ts), maintained as lists arrive, are replaced or deleted; what a pubkey
 * follows is read from its latest follow list itself, in the list's order.
 */

/** `first` of follow connections when the query does not say. */
export const DEFAULT_FOLLOW_PAGE_SIZE = 50;

interface FollowEdge {
  cursor: string;
  pubkey: string;
}

interface FollowConnection {
  edges: FollowEdge[];
  pageInfo: PageInfo;
  totalCount: number;
}

const FollowEdgeRef = builder.objectRef<FollowEdge>('FollowEdge').implement({
  description: 'One pubkey of a follow list, with its place in the list.',
  fields: (t) => ({
    cursor: t.exposeString('cursor', { description: 'Opaque: pass it as `after` to read the items after this one.' }),
    pubkey: t.exposeString('pubkey', { description: '64 lowercase hex.' }),
    profile: t.field({
      type: ProfileRef,
      nullable: true,
      description: "The pubkey's latest profile; null when none is known (a pubkey without a profile still follows and is followed).",
      // Null too where it could not be read (loadAvailable: relays unavailable, rate limited): the
      // page of follows is the answer, each edge's profile a courtesy that must not fail it.
      resolve: async ({ pubkey }, _args, { loaders, budget }) => {
        budget.charge(1);
        const [found] = await loadAvailable(loaders.profiles, [pubkey]);
        return toProfile(found ?? null, budget.derivedCharger);
      },
    }),
  }),
});

const FollowConnectionRef = builder.objectRef<FollowConnection>('FollowConnection').implement({
  description: 'A page of pubkeys: every item appears exactly once across the pages.',
  fields: (t) => ({
    edges: t.expose('edges', { type: [FollowEdgeRef] }),
    pageInfo: t.expose('pageInfo', { type: PageInfoRef }),
    totalCount: t.exposeInt('totalCount', { description: 'Items in the whole list, not only this page.' }),
  }),
});

/** On Profile and on Pubkey (a pubkey without a profile follows and is followed all the same). */
const followFields: FieldsOfPubkey = (t) => ({
  followersCount: t.int({
    description: 'Distinct authors whose latest servable follow list (kind 3) names this pubkey.',
    resolve: async (profile, _args, { loaders }) => (await loaders.followerCounts.load(profile.pubkey)).followers,
  }),
  followingCount: t.int({
    description: "Distinct pubkeys this pubkey's latest servable follow list (kind 3) names.",
    resolve: async (profile, _args, { loaders }) => (await loaders.followCounts.load(profile.pubkey)).following,
  }),
  followers: t.field({
    type: FollowConnectionRef,
    description: `Who follows this pubkey (authors whose latest follow list names it), by pubkey ascending. \`first\`: 1 to ${MAX_PAGE_SIZE} (else invalid_argument); \`after\`: a cursor from an earlier page (else invalid_cursor).`,
    args: { first: t.arg.int({ defaultValue: DEFAULT_FOLLOW_PAGE_SIZE }), after: t.arg.string() },
    resolve: async (profile, { first, after }, { loaders, budget }) => {
      const size = pageSizeOf(first);
      const from = after === null || after === undefined ? null : decodeFollowerCursor(after);
      budget.charge(1);
      const [pubkeys, counts] = await Promise.all([loaders.followerPages.load({ pubkey: profile.pubkey, after: from, first: size + 1 }), loaders.followerCounts.load(profile.pubkey)]);
      const edges = pubkeys.slice(0, size).map((pubkey) => ({ cursor: encodeFollowerCursor(pubkey), pubkey }));
      return connection(edges, pubkeys.length > size, counts);
    },
  }),
  following: t.field({
    type: FollowConnectionRef,
    description: `Who this pubkey follows: its latest follow list's pubkeys, in the order the list names them. \`first\`: 1 to ${MAX_PAGE_SIZE} (else invalid_argument); \`after\`: a cursor from an earlier page (else invalid_cursor).`,
    args: { first: t.arg.int({ defaultValue: DEFAULT_FOLLOW_PAGE_SIZE }), after: t.arg.string() },
    resolve: async (profile, { first, after }, { loaders, budget }) => {
      const size = pageSizeOf(first);
      const from = after === null || after === undefined ? null : decodeFollowingCursor(after);
      budget.charge(1);
      // As an naddr of kind 3 is read: the index, else (with relays) the author's relays.
      const [held] = await loadAvailable(loaders.addresses, [`3:${profile.pubkey}:`]);
      if (!held || isDeleted(held)) return connection([], false, { followers: 0, following: 0 });
      budget.chargeDerived(held);
      const follows = followsOf(held.event);
      // After the cursor's pubkey where the list has it now, else after its place.
      let start = 0;
      if (from) {
        const found = follows.indexOf(from.pubkey);
        start = found >= 0 ? found + 1 : Math.min(from.position + 1, follows.length);
      }
      const edges = follows.slice(start, start + size).map((pubkey, index) => ({ cursor: encodeFollowingCursor(start + index, pubkey), pubkey }));
      return { edges, pageInfo: { hasNextPage: start + size < follows.length, endCursor: edges.at(-1)?.cursor ?? null }, totalCount: follows.length };
    },
  }),
});
builder.objectFields(ProfileRef, followFields);
builder.objectFields(PubkeyRef, followFields);

function connection(edges: FollowEdge[], hasNextPage: boolean, counts: FollowCounts): FollowConnection {
  return { edges, pageInfo: { hasNextPage, endCursor: edges.at(-1)?.cursor ?? null }, totalCount: counts.followers };
}

