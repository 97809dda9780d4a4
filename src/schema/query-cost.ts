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
import { RANK_WALK_LIMIT } from '../store/search-index.js';
import { MAX_PAGE_SIZE } from './paging.js';

/**
 * The cost of a GraphQL operation: how many objects (events, profiles) it may return, counting each
 * object of a list once per item. Lists multiply what is selected inside them:
 * - `events(ids:)` / `profiles(pubkeys:)`: by the number of distinct ids given (duplicates are
 *   answered once, see event.ts and profile.ts), read from the literal or the variable;
 * - `relevantProfiles` (and `relevantPubkeys`): by MAX_PROFILES, the most it can hold;
 * - a connection (`replies`): 1 for the page read, plus what is selected inside by its `first` (the
 *   literal, the variable, or the schema's default; counted as at most MAX_PAGE_SIZE, the most a
 *   page holds, anything larger being refused as it runs); `searchProfiles`: SEARCH_COST for the
 *   search, plus `first` profiles (each 1 and what is selected inside).
 * What only wraps other things costs nothing itself (WRAPPERS: a connection's edges and pageInfo,
 * the reactions inside `stats`); an event or profile inside it does. `parent`, `root` and `stats`
 * cost 1 like any object.
 * Aliases and fragments count every time they select. Scalars cost nothing (their size is bounded by
 * the response-size cap, http/graphql/use-query-limits.ts, and the work of tags, content and metadata
 * by ObjectBudget's field bytes) except `relevantPubkeys`, derived work that costs 1 like an object.
 *
 * So `events(ids: [100 ids]) { relevantProfiles { event { relevantProfiles { name } } } }` costs
 * about 100 × 100 × 100 and is refused before anything is read, while the REST-equivalent
 * `event(id:) { relevantProfiles { event { json } } }` costs about 2 × MAX_PROFILES, and
 * `replies(first: 100) { edges { node { stats { replies } } } }` 1 + 100 × (1 + 1).
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

  const listSize = (field: FieldNode): number => {
    switch (field.name.value) {
      case 'events':
      case 'profiles':
        return distinctItems(field.arguments?.find((argument) => LIST_ARGUMENTS.has(argument.name.value))?.value, given);
      case 'relevantProfiles':
        return limits.maxProfiles;
      default:
        return 1;
    }
  };

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

  const costOf = (selectionSet: SelectionSetNode, type: GraphQLNamedType, visiting: Set<string>): number => {
    if (!isObjectType(type)) return 0;
    let cost = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const field = type.getFields()[selection.name.value];
        if (!field) continue;
        // A scalar that is derived work (relevantPubkeys scans tags and content) costs what an object does.
        if (!selection.selectionSet) {
          if (DERIVED_SCALARS.has(selection.name.value)) cost += 1;
          continue;
        }
        const fieldType = getNamedType(field.type);
        const inner = costOf(selection.selectionSet, fieldType, visiting);
        if (CONNECTIONS.has(fieldType.name)) cost += 1 + pageSize(field, selection) * inner;
        // A search: what it may read (SEARCH_COST), and a list of up to `first` profiles.
        else if (PAGED_LISTS.has(selection.name.value)) cost += SEARCH_COST + pageSize(field, selection) * (1 + inner);
        else cost += listSize(selection) * ((WRAPPERS.has(fieldType.name) ? 0 : 1) + inner);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : type;
        cost += on ? costOf(selection.selectionSet, on, visiting) : 0;
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        // A fragment spreading itself is refused by validation; never count it twice on one path.
        if (!fragment || visiting.has(name)) continue;
        const on = schema.getType(fragment.typeCondition.name.value);
        visiting.add(name);
        cost += on ? costOf(fragment.selectionSet, on, visiting) : 0;
        visiting.delete(name);
      }
    }
    return cost;
  };
  return costOf(operation.selectionSet, root, new Set());
}

const LIST_ARGUMENTS = new Set(['ids', 'pubkeys']);

/** Fields that return a plain list of up to `first` objects. */
const PAGED_LISTS = new Set(['searchProfiles']);

/**
 * A search reads up to RANK_WALK_LIMIT profiles' words in the store (store/search-index.ts), each
 * a record read and compared: charged as twice as many objects, so that GRAPHQL_MAX_COST (20,000 by
 * default) allows four searches a request, not sixteen aliases of them (found by review: 1.3 s of
 * Redis for one request).
 */
export const SEARCH_COST = 2 * RANK_WALK_LIMIT;

/** Types of connections: a page whose items (edges' nodes) are multiplied by `first`. */
const CONNECTIONS = new Set(['EventConnection', 'FollowConnection']);

/**
 * Types that only wrap what the request pays for elsewhere: a connection's edges and page info (the
 * page is counted by the connection, its events by `node`, its profiles by `profile`), and the reaction figures inside `stats`
 * (counted by `stats`; byContent is capped, schema/event-stats.ts).
 */
const WRAPPERS = new Set(['EventEdge', 'FollowEdge', 'PageInfo', 'ReactionStats', 'ReactionCount']);

/** Scalar fields that are derived work, charged 1 each time they are selected (schema/event.ts charges the same). */
const DERIVED_SCALARS = new Set(['relevantPubkeys']);

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
