/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { StringOutput } from '../store/json-text.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type Maybe<T> = T | null;
export type InputMaybe<T> = Maybe<T>;
/** All built-in and custom scalars, mapped to their actual values */
export type Scalars = {
  ID: { input: string; output: string; }
  String: { input: string; output: StringOutput; }
  Boolean: { input: boolean; output: boolean; }
  Int: { input: number; output: number; }
  Float: { input: number; output: number; }
  /** An amount in millisatoshis, as a JSON number: exact for any integer from 0 to 2^53 - 1. */
  Msats: { input: unknown; output: unknown; }
  /** Seconds since the Unix epoch (NIP-01 created_at), as a JSON number. Not limited to 32 bits: any integer from 0 to 2^53 - 1. */
  Timestamp: { input: number; output: number; }
};

/** A verified Nostr event (NIP-01). */
export type Event = {
  __typename?: 'Event';
  /** The author's latest profile, if known (or, with relays, if it arrived in time). */
  author: Maybe<Profile>;
  content: Scalars['String']['output'];
  createdAt: Scalars['Timestamp']['output'];
  /** Event id: 64 lowercase hex characters. */
  id: Scalars['String']['output'];
  /** The event as NIP-01 JSON: exactly the seven fields, in NIP-01 order, with the values as signed. */
  json: Scalars['String']['output'];
  kind: Scalars['Int']['output'];
  /** The event this one replies to (NIP-10 for kind 1, NIP-22 for kind 1111); null when it is not a reply, or when that event cannot be found or was deleted. */
  parent: Maybe<Event>;
  /** Author's public key: 64 lowercase hex. */
  pubkey: Scalars['String']['output'];
  /** The latest profiles of relevantPubkeys, in that order; pubkeys without a profile are left out. */
  relevantProfiles: Array<Profile>;
  /** The author, then every pubkey the event names (p/P tags, nostr: mentions, e/q tag authors, a repost’s embedded author), deduplicated and capped. */
  relevantPubkeys: Array<Scalars['String']['output']>;
  /** Direct replies (kind 1 and kind 1111 events whose parent is this one), oldest first (by created_at, then id). `first`: 1 to 100 (else invalid_argument); `after`: a cursor from an earlier page (else invalid_cursor). */
  replies: EventConnection;
  /** The root of the thread this event replies in (NIP-10, NIP-22); null as for `parent`. */
  root: Maybe<Event>;
  /** Schnorr signature: 128 lowercase hex. */
  sig: Scalars['String']['output'];
  /** Replies, quotes, reposts, reactions and zaps of this event, counted over the servable events held. */
  stats: EventStats;
  /** Tags as signed: a list of string lists. */
  tags: Array<Array<Scalars['String']['output']>>;
};


/** A verified Nostr event (NIP-01). */
export type EventRepliesArgs = {
  after: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
};

/** A page of events: every item appears exactly once across the pages, even when many share a created_at. */
export type EventConnection = {
  __typename?: 'EventConnection';
  edges: Array<EventEdge>;
  pageInfo: PageInfo;
};

/** One event of a page, with its place in the list. */
export type EventEdge = {
  __typename?: 'EventEdge';
  /** Opaque: pass it as `after` to read the items after this one. */
  cursor: Scalars['String']['output'];
  node: Event;
};

/** What other servable events say about this one (DESIGN "Relationships"): exact counts, kept as events arrive, are replaced or are deleted. */
export type EventStats = {
  __typename?: 'EventStats';
  /** Events of any kind with a `q` tag naming this event (NIP-18). */
  quotes: Scalars['Int']['output'];
  reactions: ReactionStats;
  /** Kind 1 and kind 1111 events whose parent is this event (NIP-10, NIP-22). */
  replies: Scalars['Int']['output'];
  /** Distinct authors of kind 6 and 16 reposts whose first `e` tag is this event (NIP-18). */
  reposts: Scalars['Int']['output'];
  /** Kind 1 and kind 1111 events whose root is this event: the whole thread below it. */
  threadReplies: Scalars['Int']['output'];
  /** Zap receipts (kind 9735) whose first `e` tag is this event and whose recipient is its author or a pubkey of its `zap` tags (NIP-57 appendix G; at most 8 recipients, the author first). */
  zaps: ZapStats;
};

/** A page of pubkeys: every item appears exactly once across the pages. */
export type FollowConnection = {
  __typename?: 'FollowConnection';
  edges: Array<FollowEdge>;
  pageInfo: PageInfo;
  /** Items in the whole list, not only this page. */
  totalCount: Scalars['Int']['output'];
};

/** One pubkey of a follow list, with its place in the list. */
export type FollowEdge = {
  __typename?: 'FollowEdge';
  /** Opaque: pass it as `after` to read the items after this one. */
  cursor: Scalars['String']['output'];
  /** The pubkey's latest profile; null when none is known (a pubkey without a profile still follows and is followed). */
  profile: Maybe<Profile>;
  /** 64 lowercase hex. */
  pubkey: Scalars['String']['output'];
};

/** The public entries of a pubkey's latest servable mute list (NIP-51 kind 10000), each once, in the order the list first names them; empty lists when it has none. Private (encrypted) entries cannot be read and are not here. */
export type MuteList = {
  __typename?: 'MuteList';
  /** `e` tags: events hidden, with every event whose root or parent they are (64 lowercase hex). */
  events: Array<Scalars['String']['output']>;
  /** `t` tags, lower case: events with that hashtag are hidden. */
  hashtags: Array<Scalars['String']['output']>;
  /** `p` tags: authors hidden (64 lowercase hex). */
  pubkeys: Array<Scalars['String']['output']>;
  /** `word` tags, NFKC and lower case: events whose content holds one (NFKC, lower case) are hidden. */
  words: Array<Scalars['String']['output']>;
};

/** What the domain of a profile's declared NIP-05 identifier says about it. */
export type Nip05Status =
  /** The domain maps the name to another pubkey or does not know it, or the declared value is not a NIP-05 identifier. */
  | 'MISMATCH'
  /** Not checked yet: a check has started in the background; ask again shortly. */
  | 'NOT_CHECKED'
  /** The domain could not be asked: unreachable, too slow, redirected, not a public address, or no valid nostr.json. */
  | 'UNREACHABLE'
  /** The domain's nostr.json maps the name to this profile's pubkey. */
  | 'VERIFIED';

/** The service's own check of a profile's nip05 (NIP-05), made in the background after a read and repeated at most once per NIP05_TTL: what the profile claims about itself proves nothing. */
export type Nip05Verification = {
  __typename?: 'Nip05Verification';
  /** When the domain was asked; null if it was not (NOT_CHECKED, or a value that is no identifier). */
  checkedAt: Maybe<Scalars['Timestamp']['output']>;
  status: Nip05Status;
};

/** Where a page ends, and whether more follow. */
export type PageInfo = {
  __typename?: 'PageInfo';
  /** The cursor of this page's last item (pass it as `after` for the next page); null when the page is empty. */
  endCursor: Maybe<Scalars['String']['output']>;
  /** True when items follow this page: ask again with `after: endCursor`. */
  hasNextPage: Scalars['Boolean']['output'];
};

/** The latest kind-0 event of a pubkey and its metadata. Metadata fields are null when absent, not strings, or when the content is not a JSON object. */
export type Profile = {
  __typename?: 'Profile';
  /** NIP-01 about. */
  about: Maybe<Scalars['String']['output']>;
  /** NIP-24 banner URL. */
  banner: Maybe<Scalars['String']['output']>;
  /** NIP-24: true if the profile says it is automated. */
  bot: Maybe<Scalars['Boolean']['output']>;
  /** NIP-24 display_name (or the deprecated displayName). */
  displayName: Maybe<Scalars['String']['output']>;
  /** The kind-0 event itself. */
  event: Event;
  /** The home feed of this pubkey: events of `kinds` (default 1, 6, 16; validated as `notes`' kinds, else invalid_argument) whose author is in its latest servable follow list (NIP-02), newest first, then by id; every event once across pages, an author dropped from the list gone from the next page. Kind 1 replies (a parent by NIP-10) only with `replies: true`. The pubkey's own public mutes (`muted`) always apply. A page examines at most 5 × `first` events: when more than that in a row are filtered out, the page holds fewer than `first` (even none) with `hasNextPage` true and `endCursor` after the events it passed over. `hasNextPage` says that events of the followed authors follow, not that one of them will be shown. `trusted`: the reader's web of trust, once it is available; today it filters nothing. `first`: 1 to 100 (else invalid_argument); `after`: a cursor from an earlier page of a feed (else invalid_cursor). No follow list: an empty feed. */
  feed: EventConnection;
  /** Who follows this pubkey (authors whose latest follow list names it), by pubkey ascending. `first`: 1 to 100 (else invalid_argument); `after`: a cursor from an earlier page (else invalid_cursor). */
  followers: FollowConnection;
  /** Distinct authors whose latest servable follow list (kind 3) names this pubkey. */
  followersCount: Scalars['Int']['output'];
  /** Who this pubkey follows: its latest follow list's pubkeys, in the order the list names them. `first`: 1 to 100 (else invalid_argument); `after`: a cursor from an earlier page (else invalid_cursor). */
  following: FollowConnection;
  /** Distinct pubkeys this pubkey's latest servable follow list (kind 3) names. */
  followingCount: Scalars['Int']['output'];
  /** LNURL (NIP-57). */
  lud06: Maybe<Scalars['String']['output']>;
  /** Lightning address (NIP-57). */
  lud16: Maybe<Scalars['String']['output']>;
  /** What this pubkey muted in public (NIP-51 kind 10000, its latest servable list): its own feed applies it. */
  muted: MuteList;
  /** NIP-01 name. */
  name: Maybe<Scalars['String']['output']>;
  /** NIP-05 identifier, as the profile declares it: see nip05Verification. */
  nip05: Maybe<Scalars['String']['output']>;
  /** Whether the declared nip05 holds, as last checked by this service (never blocking this read: NOT_CHECKED until a first check ends). Null when the profile declares none. */
  nip05Verification: Maybe<Nip05Verification>;
  /** Events this pubkey wrote of the given kinds (default: kind 1 notes; 1 to 20 distinct kinds, none replaceable (0, 3, 10000–19999), ephemeral (20000–29999) or zap receipts (9735), else invalid_argument), newest first, then by id; an addressable kind lists its latest versions only. `first`: 1 to 100 (else invalid_argument); `after`: a cursor from an earlier page of notes (else invalid_cursor). */
  notes: EventConnection;
  /** NIP-01 picture URL. */
  picture: Maybe<Scalars['String']['output']>;
  pubkey: Scalars['String']['output'];
  /** NIP-24 website URL. */
  website: Maybe<Scalars['String']['output']>;
  /** Zap receipts (kind 9735) whose first `p` tag is this pubkey: zaps of its events and of the profile itself. */
  zapsReceived: ZapStats;
};


/** The latest kind-0 event of a pubkey and its metadata. Metadata fields are null when absent, not strings, or when the content is not a JSON object. */
export type ProfileFeedArgs = {
  after: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  kinds?: InputMaybe<Array<Scalars['Int']['input']>>;
  replies?: InputMaybe<Scalars['Boolean']['input']>;
  trusted?: InputMaybe<Scalars['Boolean']['input']>;
};


/** The latest kind-0 event of a pubkey and its metadata. Metadata fields are null when absent, not strings, or when the content is not a JSON object. */
export type ProfileFollowersArgs = {
  after: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
};


/** The latest kind-0 event of a pubkey and its metadata. Metadata fields are null when absent, not strings, or when the content is not a JSON object. */
export type ProfileFollowingArgs = {
  after: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
};


/** The latest kind-0 event of a pubkey and its metadata. Metadata fields are null when absent, not strings, or when the content is not a JSON object. */
export type ProfileNotesArgs = {
  after: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  kinds?: InputMaybe<Array<Scalars['Int']['input']>>;
};

/** A pubkey, whether or not it has a profile: its profile, follows and notes. */
export type Pubkey = {
  __typename?: 'Pubkey';
  /** The home feed of this pubkey: events of `kinds` (default 1, 6, 16; validated as `notes`' kinds, else invalid_argument) whose author is in its latest servable follow list (NIP-02), newest first, then by id; every event once across pages, an author dropped from the list gone from the next page. Kind 1 replies (a parent by NIP-10) only with `replies: true`. The pubkey's own public mutes (`muted`) always apply. A page examines at most 5 × `first` events: when more than that in a row are filtered out, the page holds fewer than `first` (even none) with `hasNextPage` true and `endCursor` after the events it passed over. `hasNextPage` says that events of the followed authors follow, not that one of them will be shown. `trusted`: the reader's web of trust, once it is available; today it filters nothing. `first`: 1 to 100 (else invalid_argument); `after`: a cursor from an earlier page of a feed (else invalid_cursor). No follow list: an empty feed. */
  feed: EventConnection;
  /** Who follows this pubkey (authors whose latest follow list names it), by pubkey ascending. `first`: 1 to 100 (else invalid_argument); `after`: a cursor from an earlier page (else invalid_cursor). */
  followers: FollowConnection;
  /** Distinct authors whose latest servable follow list (kind 3) names this pubkey. */
  followersCount: Scalars['Int']['output'];
  /** Who this pubkey follows: its latest follow list's pubkeys, in the order the list names them. `first`: 1 to 100 (else invalid_argument); `after`: a cursor from an earlier page (else invalid_cursor). */
  following: FollowConnection;
  /** Distinct pubkeys this pubkey's latest servable follow list (kind 3) names. */
  followingCount: Scalars['Int']['output'];
  /** What this pubkey muted in public (NIP-51 kind 10000, its latest servable list): its own feed applies it. */
  muted: MuteList;
  /** Events this pubkey wrote of the given kinds (default: kind 1 notes; 1 to 20 distinct kinds, none replaceable (0, 3, 10000–19999), ephemeral (20000–29999) or zap receipts (9735), else invalid_argument), newest first, then by id; an addressable kind lists its latest versions only. `first`: 1 to 100 (else invalid_argument); `after`: a cursor from an earlier page of notes (else invalid_cursor). */
  notes: EventConnection;
  /** The pubkey's latest profile, read as `profile(pubkey:)` reads it; null when none is known, or it was deleted or its author asked to vanish, and null with an error when it could not be read (relays_unavailable, rate_limited…). */
  profile: Maybe<Profile>;
  /** 64 lowercase hex. */
  pubkey: Scalars['String']['output'];
};


/** A pubkey, whether or not it has a profile: its profile, follows and notes. */
export type PubkeyFeedArgs = {
  after: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  kinds?: InputMaybe<Array<Scalars['Int']['input']>>;
  replies?: InputMaybe<Scalars['Boolean']['input']>;
  trusted?: InputMaybe<Scalars['Boolean']['input']>;
};


/** A pubkey, whether or not it has a profile: its profile, follows and notes. */
export type PubkeyFollowersArgs = {
  after: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
};


/** A pubkey, whether or not it has a profile: its profile, follows and notes. */
export type PubkeyFollowingArgs = {
  after: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
};


/** A pubkey, whether or not it has a profile: its profile, follows and notes. */
export type PubkeyNotesArgs = {
  after: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  kinds?: InputMaybe<Array<Scalars['Int']['input']>>;
};

export type Query = {
  __typename?: 'Query';
  /** One event by id (hex, note1… or nevent1…), or the latest version of a replaceable or addressable event by naddr1…, optionally prefixed nostr:. Null if unknown, or if its author deleted it (NIP-09) or asked to vanish (NIP-62). */
  event: Maybe<Event>;
  /** Events by id or naddr, as `event`, in the order given, one entry per distinct event (a repeated id is answered once, at its first place); null where unknown or deleted. At most MAX_LIST_LENGTH ids. */
  events: Array<Maybe<Event>>;
  /** The latest profile of a pubkey: hex, npub1… or nprofile1…, optionally prefixed nostr:, or a NIP-05 name@domain (resolved at https://domain/.well-known/nostr.json; errors nip05_not_found, nip05_unresolvable). Null if none, or if it was deleted (NIP-09) or its author asked to vanish (NIP-62). */
  profile: Maybe<Profile>;
  /** Latest profiles of pubkeys, in the order given, one entry per distinct pubkey (a repeated pubkey is answered once, at its first place); null where none or deleted. At most MAX_LIST_LENGTH pubkeys. */
  profiles: Array<Maybe<Profile>>;
  /** A pubkey, named as `profile` takes it (hex, npub1…, nprofile1…, nostr:…, NIP-05 name@domain), whether or not it has a profile: for the follows and notes of a pubkey that never published one. Never null for a valid pubkey; null with an error for an argument that names none (invalid_pubkey, secret_key_refused, nip05_not_found, nip05_unresolvable). */
  pubkey: Maybe<Pubkey>;
  /** Profiles whose name, display_name or nip05 has, for every word of the query, a word that starts with it (Unicode NFKC, lower case; words are split on anything that is not a letter, a mark or a digit, in the query too, so `jack@cash` asks for `jack` and `cash`), ranked by the followers the index holds, descending, then by pubkey. A search looks at 2,000 profiles at most: a page may be short. `query`: 1 to 64 Unicode code points (else invalid_search); one of only emoji, punctuation or white space finds nothing. `first`: 1 to 100 (else invalid_argument). Costs 4,000 plus its profiles in the cost model. */
  searchProfiles: Array<Profile>;
};


export type QueryEventArgs = {
  id: Scalars['String']['input'];
};


export type QueryEventsArgs = {
  ids: Array<Scalars['String']['input']>;
};


export type QueryProfileArgs = {
  pubkey: Scalars['String']['input'];
};


export type QueryProfilesArgs = {
  pubkeys: Array<Scalars['String']['input']>;
};


export type QueryPubkeyArgs = {
  pubkey: Scalars['String']['input'];
};


export type QuerySearchProfilesArgs = {
  first?: InputMaybe<Scalars['Int']['input']>;
  query: Scalars['String']['input'];
};

/** How many distinct authors reacted with one content. */
export type ReactionCount = {
  __typename?: 'ReactionCount';
  /** The reaction as signed: an emoji, a `:shortcode:` (NIP-30), `+`, `-` or empty. */
  content: Scalars['String']['output'];
  /** Distinct authors of servable reactions with this content. */
  pubkeys: Scalars['Int']['output'];
};

/** NIP-25 reactions: kind 7 events whose last `e` tag is the event. Every figure counts distinct authors. */
export type ReactionStats = {
  __typename?: 'ReactionStats';
  /** One entry per distinct content, by count descending, then content ascending (by its UTF-8 bytes): the first 50 only (pubkeys counts every author). A content over 256 bytes counts its author but has no entry. */
  byContent: Array<ReactionCount>;
  /** Distinct authors who reacted `-`. */
  dislikes: Scalars['Int']['output'];
  /** Distinct authors who reacted `+` or with empty content. */
  likes: Scalars['Int']['output'];
  /** Distinct authors who reacted, with any content. */
  pubkeys: Scalars['Int']['output'];
};

/** NIP-57 zaps, by DESIGN's rule: a receipt counts when its invoice, its zap request and its tags agree and it is signed by the `nostrPubkey` of the zapped pubkey's own LNURL pay endpoint (its profile's lud16, else lud06), as the service last checked it. */
export type ZapStats = {
  __typename?: 'ZapStats';
  /** Valid receipts. */
  count: Scalars['Int']['output'];
  /** Their invoices' amounts, summed, in millisatoshis. */
  msats: Scalars['Msats']['output'];
  /** Receipts that pass every check but the provider's, which has not answered yet (checked in the background after a read): they move to the other figures when it answers, or leave this one when it refuses. */
  pending: Scalars['Int']['output'];
  /** Distinct zap-request authors among the valid receipts. */
  senders: Scalars['Int']['output'];
};

export type RestEventQueryVariables = Exact<{
  id: string;
}>;


export type RestEventQuery = { event: { json: StringOutput, relevantProfiles: Array<{ pubkey: StringOutput, event: { json: StringOutput } }> } | null };

export type RestFeedQueryVariables = Exact<{
  pubkey: string;
  first: number;
  after: string | null | undefined;
}>;


export type RestFeedQuery = { pubkey: { feed: { edges: Array<{ node: { json: StringOutput, relevantProfiles: Array<{ pubkey: StringOutput, event: { json: StringOutput } }> } }>, pageInfo: { hasNextPage: boolean, endCursor: StringOutput | null } } } | null };

export type RestThreadQueryVariables = Exact<{
  id: string;
  first: number;
  after: string | null | undefined;
}>;


export type RestThreadQuery = { event: { id: StringOutput, json: StringOutput, root: { id: StringOutput, json: StringOutput, relevantProfiles: Array<{ pubkey: StringOutput, event: { json: StringOutput } }> } | null, parent: { id: StringOutput, json: StringOutput, parent: { id: StringOutput, json: StringOutput, parent: { id: StringOutput, json: StringOutput, parent: { id: StringOutput, json: StringOutput, relevantProfiles: Array<{ pubkey: StringOutput, event: { json: StringOutput } }> } | null, relevantProfiles: Array<{ pubkey: StringOutput, event: { json: StringOutput } }> } | null, relevantProfiles: Array<{ pubkey: StringOutput, event: { json: StringOutput } }> } | null, relevantProfiles: Array<{ pubkey: StringOutput, event: { json: StringOutput } }> } | null, stats: { replies: number, threadReplies: number, quotes: number, reposts: number, reactions: { pubkeys: number, likes: number, dislikes: number, byContent: Array<{ content: StringOutput, pubkeys: number }> }, zaps: { count: number, msats: unknown, senders: number, pending: number } }, replies: { edges: Array<{ node: { id: StringOutput, json: StringOutput, relevantProfiles: Array<{ pubkey: StringOutput, event: { json: StringOutput } }> } }>, pageInfo: { hasNextPage: boolean, endCursor: StringOutput | null } }, relevantProfiles: Array<{ pubkey: StringOutput, event: { json: StringOutput } }> } | null };

export type ThreadShownFragment = { id: StringOutput, json: StringOutput, relevantProfiles: Array<{ pubkey: StringOutput, event: { json: StringOutput } }> };

export type RestUserProfileQueryVariables = Exact<{
  pubkey: string;
}>;


export type RestUserProfileQuery = { profile: { event: { json: StringOutput } } | null };

export const ThreadShownFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ThreadShown"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Event"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"json"}},{"kind":"Field","name":{"kind":"Name","value":"relevantProfiles"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pubkey"}},{"kind":"Field","name":{"kind":"Name","value":"event"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"json"}}]}}]}}]}}]} as unknown as DocumentNode<ThreadShownFragment, unknown>;
export const RestEventDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"RestEvent"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"event"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"json"}},{"kind":"Field","name":{"kind":"Name","value":"relevantProfiles"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pubkey"}},{"kind":"Field","name":{"kind":"Name","value":"event"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"json"}}]}}]}}]}}]}}]} as unknown as DocumentNode<RestEventQuery, RestEventQueryVariables>;
export const RestFeedDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"RestFeed"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"pubkey"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pubkey"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"pubkey"},"value":{"kind":"Variable","name":{"kind":"Name","value":"pubkey"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"feed"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"json"}},{"kind":"Field","name":{"kind":"Name","value":"relevantProfiles"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pubkey"}},{"kind":"Field","name":{"kind":"Name","value":"event"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"json"}}]}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]}}]} as unknown as DocumentNode<RestFeedQuery, RestFeedQueryVariables>;
export const RestThreadDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"RestThread"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"event"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ThreadShown"}},{"kind":"Field","name":{"kind":"Name","value":"root"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ThreadShown"}}]}},{"kind":"Field","name":{"kind":"Name","value":"parent"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ThreadShown"}},{"kind":"Field","name":{"kind":"Name","value":"parent"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ThreadShown"}},{"kind":"Field","name":{"kind":"Name","value":"parent"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ThreadShown"}},{"kind":"Field","name":{"kind":"Name","value":"parent"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ThreadShown"}}]}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"stats"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"replies"}},{"kind":"Field","name":{"kind":"Name","value":"threadReplies"}},{"kind":"Field","name":{"kind":"Name","value":"quotes"}},{"kind":"Field","name":{"kind":"Name","value":"reposts"}},{"kind":"Field","name":{"kind":"Name","value":"reactions"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pubkeys"}},{"kind":"Field","name":{"kind":"Name","value":"likes"}},{"kind":"Field","name":{"kind":"Name","value":"dislikes"}},{"kind":"Field","name":{"kind":"Name","value":"byContent"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"content"}},{"kind":"Field","name":{"kind":"Name","value":"pubkeys"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"zaps"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"msats"}},{"kind":"Field","name":{"kind":"Name","value":"senders"}},{"kind":"Field","name":{"kind":"Name","value":"pending"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"replies"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ThreadShown"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ThreadShown"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Event"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"json"}},{"kind":"Field","name":{"kind":"Name","value":"relevantProfiles"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pubkey"}},{"kind":"Field","name":{"kind":"Name","value":"event"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"json"}}]}}]}}]}}]} as unknown as DocumentNode<RestThreadQuery, RestThreadQueryVariables>;
export const RestUserProfileDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"RestUserProfile"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"pubkey"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"profile"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"pubkey"},"value":{"kind":"Variable","name":{"kind":"Name","value":"pubkey"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"event"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"json"}}]}}]}}]}}]} as unknown as DocumentNode<RestUserProfileQuery, RestUserProfileQueryVariables>;