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
  /** Author's public key: 64 lowercase hex. */
  pubkey: Scalars['String']['output'];
  /** The latest profiles of relevantPubkeys, in that order; pubkeys without a profile are left out. */
  relevantProfiles: Array<Profile>;
  /** The author, then every pubkey the event names (p/P tags, nostr: mentions, e/q tag authors, a repost’s embedded author), deduplicated and capped. */
  relevantPubkeys: Array<Scalars['String']['output']>;
  /** Schnorr signature: 128 lowercase hex. */
  sig: Scalars['String']['output'];
  /** Tags as signed: a list of string lists. */
  tags: Array<Array<Scalars['String']['output']>>;
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
  /** LNURL (NIP-57). */
  lud06: Maybe<Scalars['String']['output']>;
  /** Lightning address (NIP-57). */
  lud16: Maybe<Scalars['String']['output']>;
  /** NIP-01 name. */
  name: Maybe<Scalars['String']['output']>;
  /** NIP-05 identifier, as the profile declares it: see nip05Verification. */
  nip05: Maybe<Scalars['String']['output']>;
  /** Whether the declared nip05 holds, as last checked by this service (never blocking this read: NOT_CHECKED until a first check ends). Null when the profile declares none. */
  nip05Verification: Maybe<Nip05Verification>;
  /** NIP-01 picture URL. */
  picture: Maybe<Scalars['String']['output']>;
  pubkey: Scalars['String']['output'];
  /** NIP-24 website URL. */
  website: Maybe<Scalars['String']['output']>;
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

export type RestEventQueryVariables = Exact<{
  id: string;
}>;


export type RestEventQuery = { event: { json: StringOutput, relevantProfiles: Array<{ pubkey: StringOutput, event: { json: StringOutput } }> } | null };

export type RestUserProfileQueryVariables = Exact<{
  pubkey: string;
}>;


export type RestUserProfileQuery = { profile: { event: { json: StringOutput } } | null };


export const RestEventDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"RestEvent"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"event"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"json"}},{"kind":"Field","name":{"kind":"Name","value":"relevantProfiles"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pubkey"}},{"kind":"Field","name":{"kind":"Name","value":"event"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"json"}}]}}]}}]}}]}}]} as unknown as DocumentNode<RestEventQuery, RestEventQueryVariables>;
export const RestUserProfileDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"RestUserProfile"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"pubkey"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"profile"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"pubkey"},"value":{"kind":"Variable","name":{"kind":"Name","value":"pubkey"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"event"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"json"}}]}}]}}]}}]} as unknown as DocumentNode<RestUserProfileQuery, RestUserProfileQueryVariables>;