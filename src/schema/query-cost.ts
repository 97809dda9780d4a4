import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
  valueFromASTUntyped,
} from 'graphql';
import type { LookupConfig } from '../config/env.js';
import { MAX_FOLLOWS } from '../nostr/follows.js';
import { MAX_MUTE_WORDS, MAX_TAGS_READ } from '../nostr/work-caps.js';
import { MAX_REACTION_CONTENTS } from '../store/relation-index.js';
import { RANK_WALK_LIMIT } from '../store/search-index.js';
import { FEED_SCAN_FACTOR, MAX_PAGE_SIZE, MAX_TRUSTED_COUNTED } from './paging.js';

/**
 * The cost of a GraphQL operation, in units of about 10 µs of this service's CPU (measured on a
 * 2-core machine: test/query-cost-calibration.test.ts runs every field of the schema on a large
 * world and holds each to a bound of CPU per unit), so that GRAPHQL_MAX_COST (20,000 by default)
 * bounds the work of any accepted request, whatever it selects:
 * - every field has a cost in FIELD_COSTS (a field that reads an index or the store, by what it
 *   reads), every scalar LEAF_COST (what resolving and writing a value costs);
 * - a list multiplies what is selected inside it, each item charged `item` too: `events(ids:)` and
 *   `profiles(pubkeys:)` by the number of distinct ids given (read from the literal or the
 *   variable; duplicates are answered once), `relevantProfiles` by MAX_PROFILES, a connection
 *   (`replies`, `notes`, `followers`, `following`) and `searchProfiles` by their `first` (the
 *   literal, the variable or the schema's default, counted as at most MAX_PAGE_SIZE), `byContent`
 *   by MAX_REACTION_CONTENTS: nested connections multiply;
 * - aliases and fragments count every time they select.
 * The model is checked before anything runs (use-query-limits.ts), so a refused request costs only
 * its parse. The sizes it cannot know (content, tags) are bounded as the request runs (ObjectBudget).
 *
 * A thread view (an event, its parent and root, 20 replies with their authors and stats) costs
 * 497, a profile page (a profile, its counts, 20 notes with stats) 455: see docs/configuration.md.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
  limits: LookupConfig,
): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  let operation: OperationDefinitionNode | undefined;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    else if (definition.kind === Kind.OPERATION_DEFINITION) {
      if (!operationName || definition.name?.value === operationName) operation ??= definition;
    }
  }
  const root = schema.getQueryType();
  if (!operation || !root) return 0;
  // A variable the request leaves out takes its default from the document: count that too.
  const given: Record<string, unknown> = { ...variables };
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (given[name] === undefined && definition.defaultValue) given[name] = valueFromASTUntyped(definition.defaultValue);
  }

  /** A connection's `first`, as its resolver will read it, within 1…MAX_PAGE_SIZE. */
  const pageSize = (field: GraphQLField<unknown, unknown>, selection: FieldNode): number => {
    const fallback = field.args.find((argument) => argument.name === 'first')?.defaultValue;
    const value = selection.arguments?.find((argument) => argument.name.value === 'first')?.value;
    let first: unknown = fallback;
    if (value?.kind === Kind.INT) first = Number(value.value);
    else if (value?.kind === Kind.VARIABLE) first = given[value.name.value] ?? fallback;
    if (typeof first !== 'number' || !Number.isFinite(first)) return MAX_PAGE_SIZE;
    return Math.min(Math.max(Math.trunc(first), 1), MAX_PAGE_SIZE);
  };

  /** Distinct kinds a field's `kinds` asks for (the literal, the variable or the schema's default). */
  const kindCount = (field: GraphQLField<unknown, unknown>, selection: FieldNode): number => {
    const value = selection.arguments?.find((argument) => argument.name.value === 'kinds')?.value;
    if (value) return distinctItems(value, given);
    const fallback = field.args.find((argument) => argument.name === 'kinds')?.defaultValue;
    return Array.isArray(fallback) ? Math.max(1, new Set(fallback).size) : 1;
  };

  const itemsOf = (cost: FieldCost, field: GraphQLField<unknown, unknown>, selection: FieldNode, page: number): number => {
    switch (cost.items) {
      case undefined:
        return 1;
      case 'first':
        return pageSize(field, selection);
      case 'page':
        return page;
      case 'ids':
        return distinctItems(selection.arguments?.find((argument) => LIST_ARGUMENTS.has(argument.name.value))?.value, given);
      case 'maxProfiles':
        return limits.maxProfiles;
      default:
        return cost.items;
    }
  };

  /** Whether a field reads a web of trust: a `viewer` given (or TRUST_SEEDS set, where it takes one), `trusted` not false. */
  const readsWeb = (field: GraphQLField<unknown, unknown>, selection: FieldNode): boolean => {
    const valueOf = (name: string): unknown => {
      const value = selection.arguments?.find((argument) => argument.name.value === name)?.value;
      if (value === undefined) return undefined;
      return value.kind === Kind.VARIABLE ? given[value.name.value] : valueFromASTUntyped(value);
    };
    if (field.args.some((argument) => argument.name === 'viewer')) {
      const viewer = valueOf('viewer');
      return (viewer !== undefined && viewer !== null) || (limits.trustSeeds?.length ?? 0) > 0;
    }
    return field.args.some((argument) => argument.name === 'trusted') && (field.name === 'notifications' || field.name === 'notificationCounts') && valueOf('trusted') === true;
  };

  let countsByTrust = false;
  /** `page`: the size of the page of the connection this selection is inside (its edges' number). */
  const costOf = (selectionSet: SelectionSetNode, type: GraphQLNamedType, visiting: Set<string>, page: number): number => {
    if (!isObjectType(type)) return 0;
    let total = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const field = type.getFields()[selection.name.value];
        if (!field) continue;
        const cost = costOfField(type.name, field);
        // A reader's web of trust (`viewer`, `trusted: true`, or TRUST_SEEDS where the field takes a
        // viewer): its web, and a filtered page examines up to FEED_SCAN_FACTOR times its items.
        const filtered = readsWeb(field, selection);
        const read =
          cost.read +
          (cost.perKind ?? 0) * (cost.perKind === undefined ? 0 : kindCount(field, selection)) +
          (filtered ? TRUST_WEB_COST : 0);
        // Counts by trust read and judge each event counted (schema/trust.ts countByTrust), up to
        // MAX_TRUSTED_COUNTED a request however many fields count: charged once, below.
        if (filtered && (field.name === 'notificationCounts' || field.name === 'stats')) countsByTrust = true;
        // A connection reads its page (`first` items, each charged `page`), selected or not; what
        // its edges select is multiplied by that page.
        const inside = cost.page !== undefined ? pageSize(field, selection) : page;
        const inner = selection.selectionSet ? costOf(selection.selectionSet, getNamedType(field.type), visiting, inside) : 0;
        if (cost.page !== undefined) total += read + inside * cost.page * (filtered && field.name === 'replies' ? FEED_SCAN_FACTOR : 1) + inner;
        else total += read + itemsOf(cost, field, selection, page) * ((cost.item ?? 0) + inner);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : type;
        total += on ? costOf(selection.selectionSet, on, visiting, page) : 0;
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        // A fragment spreading itself is refused by validation; never count it twice on one path.
        if (!fragment || visiting.has(name)) continue;
        const on = schema.getType(fragment.typeCondition.name.value);
        visiting.add(name);
        total += on ? costOf(fragment.selectionSet, on, visiting, page) : 0;
        visiting.delete(name);
      }
    }
    return total;
  };
  // Units are fractional (a scalar is a tenth); the total is rounded up, so every field counts.
  const total = costOf(operation.selectionSet, root, new Set(), 1);
  return Math.ceil(total + (countsByTrust ? TRUSTED_COUNT_COST : 0) - 1e-9);
}

/** What one field costs each time it is resolved (once per object of its parent type). */
export interface FieldCost {
  /** Units for the field itself: what it reads (an index, the store) and resolves. */
  read: number;
  /**
   * For a list: how many items it holds at most, each charged `item` plus what is selected inside:
   * the distinct `ids`/`pubkeys` given, MAX_PROFILES, its `first`, a fixed number, or (`page`) the
   * `first` of the connection it is the edges of.
   */
  items?: 'ids' | 'maxProfiles' | 'first' | 'page' | number;
  /** Units per item of a list (its read, beyond the field's own). */
  item?: number;
  /** For a connection: what each item of its page costs to read (`first` of them, whatever is selected). */
  page?: number;
  /** Units per distinct kind its `kinds` asks for (a list read per kind: a feed's, per followed author). */
  perKind?: number;
}

/** A scalar's value: resolved and written (about 1 µs). */
export const LEAF_COST = 0.1;

/**
 * A search reads up to RANK_WALK_LIMIT profiles' words in the store (store/search-index.ts), each
 * a record read and compared: charged as twice as many units, so that GRAPHQL_MAX_COST (20,000 by
 * default) allows four searches a request, not sixteen aliases of them (found by review: 1.3 s of
 * Redis for one request).
 */
export const SEARCH_COST = 2 * RANK_WALK_LIMIT;

/**
 * A note search: up to SEARCH_READS_PER_PAGE reads of the index (schema/note-search.ts), each
 * SCAN_PER_SHARD units of work (a posting looked at, a lookup, a range read) in each of
 * NOTE_SEARCH_SHARDS shards at most: up to 128,000 commands of scripts, charged as twice a profile
 * search, so that GRAPHQL_MAX_COST (20,000 by default) allows two a request.
 */
export const NOTE_SEARCH_COST = 2 * SEARCH_COST;

/**
 * A reader's web of trust (store/trust-webs.ts): held and shared by every request once built, so
 * charged as its lists read (the reader's two) and a share of a build; a cold build (up to 1,000
 * lists of hop 1) is bounded apart: one web per request, two builds at once per process.
 */
export const TRUST_WEB_COST = 100;

/** Counts by trust (`notificationCounts(trusted: true)`, `stats(viewer:)`): up to MAX_TRUSTED_COUNTED events a request read and judged (an event each, as a filtered page's examined items). */
export const TRUSTED_COUNT_COST = MAX_TRUSTED_COUNTED * 2;

/** Reading one event by id (a store read, parsed; about 20 µs). */
const EVENT_READ = 2;
/** A connection's page: its index read (the events or profiles of its items are charged per item). */
const PAGE_READ = 4;
/** One author's list of one kind read by a feed (a range read of a few positions: about ? µs). */
const AUTHOR_LIST_READ = 1;

const PROFILE_FIELDS: Record<string, FieldCost> = {
  // A page of pubkeys from the follow index (about 3 µs an edge); their profiles are FollowEdge.profile.
  followers: { read: PAGE_READ, page: 1 },
  following: { read: PAGE_READ, page: 1 },
  followersCount: { read: 3 },
  followingCount: { read: 3 },
  // A page of the author's list, then its events by id.
  notes: { read: 2 * PAGE_READ, page: EVENT_READ },
  // Its follow and mute lists (read once a request), then a read of every followed author's list
  // per kind (schema/feed.ts: the most a follow list names, MAX_FOLLOWS), then up to
  // FEED_SCAN_FACTOR events examined per item.
  feed: { read: 2 * PAGE_READ, perKind: MAX_FOLLOWS * AUTHOR_LIST_READ, page: FEED_SCAN_FACTOR * EVENT_READ },
  // The mute list, read, and parsed once per event (up to MAX_TAGS_READ tags: nostr/mutes.ts).
  muted: { read: 5 * EVENT_READ },
  // The mute list, a range read per type (store/notification-index.ts), then up to
  // FEED_SCAN_FACTOR events examined per item.
  notifications: { read: 5 * EVENT_READ + 2 * PAGE_READ, page: FEED_SCAN_FACTOR * EVENT_READ },
  // A range count per type: seven (about 150 µs measured with another suite on the second core).
  notificationCounts: { read: 5 },
};

/**
 * Every field that is not a plain scalar of what its parent already holds, by `Type.field`
 * (test/query-cost-calibration.test.ts fails on a field of the schema missing here, and on one
 * whose measured CPU per unit is over its bound).
 */
export const FIELD_COSTS: Readonly<Record<string, FieldCost>> = {
  'Query.event': { read: EVENT_READ },
  'Query.events': { read: 0, items: 'ids', item: EVENT_READ },
  'Query.profile': { read: 1 },
  'Query.profiles': { read: 0, items: 'ids', item: 1 },
  'Query.pubkey': { read: LEAF_COST },
  'Query.searchProfiles': { read: SEARCH_COST, items: 'first', item: 1 },
  // Up to SEARCH_READS_PER_PAGE reads of every shard of the note search index, each looking at
  // SCAN_PER_SHARD postings at most (a set lookup each per other word), the prefix's expansion,
  // then up to FEED_SCAN_FACTOR events examined per item.
  'Query.searchNotes': { read: NOTE_SEARCH_COST, page: FEED_SCAN_FACTOR * EVENT_READ },
  'Event.author': { read: 1 },
  // The pubkey at its offset in the stored event: what resolving an object costs.
  'Event.authorPubkey': { read: LEAF_COST },
  // The parent's or root's id from the tags, then that event by id.
  'Event.parent': { read: 1 + EVENT_READ },
  'Event.root': { read: 1 + EVENT_READ },
  // Derived once per event per request (its bytes charged by ObjectBudget).
  'Event.relevantPubkeys': { read: 2 },
  'Event.relevantProfiles': { read: 2, items: 'maxProfiles', item: 1 },
  'Event.replies': { read: PAGE_READ, page: EVENT_READ },
  'Event.stats': { read: 2 },
  // Copied into the answer, whole (their bytes also count against MAX_RESPONSE_BYTES as they run);
  // json and raw are the stored bytes as they are, tags and content are decoded.
  'Event.tags': { read: 2 },
  'Event.content': { read: 1 },
  'Event.json': { read: 0.5 },
  'Event.raw': { read: 0.5 },
  'EventConnection.edges': { read: 0, items: 'page' },
  'EventConnection.pageInfo': { read: 0 },
  'EventEdge.node': { read: 0 },
  'EventStats.reactions': { read: 0 },
  // The zap index of the event and its recipients' providers (about 60 µs).
  'EventStats.zaps': { read: 6 },
  'ReactionStats.byContent': { read: 0, items: MAX_REACTION_CONTENTS },
  'NotificationConnection.edges': { read: 0, items: 'page' },
  'NotificationConnection.pageInfo': { read: 0 },
  'NotificationEdge.node': { read: 0 },
  'Notification.event': { read: 0 },
  // The target's id from the event's tags, then that event by id.
  'Notification.target': { read: 1 + EVENT_READ },
  'FollowConnection.edges': { read: 0, items: 'page' },
  'FollowConnection.pageInfo': { read: 0 },
  'FollowConnection.totalCount': { read: 3 },
  'FollowEdge.profile': { read: 2 },
  // The profile's own event, held already: what resolving an object costs.
  'Profile.event': { read: 1 },
  ...Object.fromEntries(Object.entries(PROFILE_FIELDS).map(([name, cost]) => [`Profile.${name}`, cost])),
  ...Object.fromEntries(Object.entries(PROFILE_FIELDS).map(([name, cost]) => [`Pubkey.${name}`, cost])),
  // Lists of strings as long as a mute list may make them (nostr/mutes.ts), each written out.
  'MuteList.pubkeys': { read: 0, items: MAX_TAGS_READ, item: LEAF_COST },
  'MuteList.events': { read: 0, items: MAX_TAGS_READ, item: LEAF_COST },
  'MuteList.hashtags': { read: 0, items: MAX_TAGS_READ, item: LEAF_COST },
  'MuteList.words': { read: 0, items: MAX_MUTE_WORDS, item: LEAF_COST },
  'Profile.zapsReceived': { read: 3 },
  'Profile.nip05Verification': { read: 1 },
  'Pubkey.profile': { read: 1 },
  // Its web (TRUST_WEB_COST), then a membership test.
  'Profile.trusts': { read: TRUST_WEB_COST },
  'Pubkey.trusts': { read: TRUST_WEB_COST },
};

const LEAF: FieldCost = { read: LEAF_COST };

/** A field's cost: its entry, else a scalar's. */
export function fieldCost(type: string, field: string): FieldCost {
  return FIELD_COSTS[`${type}.${field}`] ?? LEAF;
}

/** fieldCost by the schema's field object, found once (the model runs on every request). */
const COSTS_BY_FIELD = new WeakMap<object, FieldCost>();
function costOfField(type: string, field: GraphQLField<unknown, unknown>): FieldCost {
  let cost = COSTS_BY_FIELD.get(field);
  if (cost === undefined) COSTS_BY_FIELD.set(field, (cost = fieldCost(type, field.name)));
  return cost;
}

const LIST_ARGUMENTS = new Set(['ids', 'pubkeys']);

/** Distinct strings of a list argument (a literal, or a variable), 1 for anything else. */
function distinctItems(value: ValueNode | undefined, variables: Readonly<Record<string, unknown>> | null | undefined): number {
  if (!value) return 1;
  if (value.kind === Kind.VARIABLE) {
    const given = variables?.[value.name.value];
    return Array.isArray(given) ? Math.max(1, new Set(given.map(String)).size) : 1;
  }
  if (value.kind === Kind.LIST) {
    const items = value.values.map((item) => (item.kind === Kind.STRING ? item.value : JSON.stringify(item)));
    return Math.max(1, new Set(items).size);
  }
  return 1;
}
