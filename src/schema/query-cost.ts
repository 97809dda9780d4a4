import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { LookupConfig } from '../config/env.js';

/**
 * The cost of a GraphQL operation: how many objects (events, profiles) it may return, counting each
 * object of a list once per item. Lists multiply what is selected inside them:
 * - `events(ids:)` / `profiles(pubkeys:)`: by the number of distinct ids given (duplicates are
 *   answered once, see event.ts and profile.ts), read from the literal or the variable;
 * - `relevantProfiles` (and `relevantPubkeys`): by MAX_PROFILES, the most it can hold.
 * Aliases and fragments count every time they select. Scalars cost nothing (their size is bounded by
 * the response-size cap, http/graphql/use-query-limits.ts, and the work of tags, content and metadata
 * by ObjectBudget's field bytes) except `relevantPubkeys`, derived work that costs 1 like an object.
 *
 * So `events(ids: [100 ids]) { relevantProfiles { event { relevantProfiles { name } } } }` costs
 * about 100 × 100 × 100 and is refused before anything is read, while the REST-equivalent
 * `event(id:) { relevantProfiles { event { json } } }` costs about 2 × MAX_PROFILES.
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
    if (given[name] === undefined && definition.defaultValue) given[name] = literalValue(definition.defaultValue);
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
        cost += listSize(selection) * (1 + costOf(selection.selectionSet, fieldType, visiting));
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

/** Scalar fields that are derived work, charged 1 each time they are selected (schema/event.ts charges the same). */
const DERIVED_SCALARS = new Set(['relevantPubkeys']);

/** A literal as a plain value (only lists and strings matter here). */
function literalValue(value: ValueNode): unknown {
  if (value.kind === Kind.LIST) return value.values.map(literalValue);
  if (value.kind === Kind.STRING) return value.value;
  return JSON.stringify(value);
}

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
