import { defaultFieldResolver, type GraphQLSchema, isObjectType } from 'graphql';
import { builder } from './builder.js';
import './timestamp.js';
import './raw-event.js';
import './event.js';
import './event-stats.js';
import './event-connection.js';
import './event-relations.js';
import './profile.js';
import './event-author.js';
import './zap-stats.js';
import './follows.js';
import './notes.js';
import './feed.js';
import './notifications.js';
import './search.js';
import './note-search.js';
import './trust.js';

/**
 * Pothos gives exposed fields (`t.expose*`: a property of the parent, nothing else) graphql-js'
 * default resolver. Without a resolver, graphql-js reads the property just the same, and graphql-jit
 * (the REST routes' fixed operations) reads it inline instead of calling a resolver with a fresh
 * resolve-info object, response path and callbacks: for each of the three fields of every profile of
 * an `/event`, that was ~40% of the fixed operation's CPU at K = 50 (BENCHMARKS.md).
 */
function withPropertyFieldsInline(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.resolve === defaultFieldResolver) field.resolve = undefined;
    }
  }
  return schema;
}

/** The one GraphQL schema: REST routes and /graphql both execute against it. */
export const schema = withPropertyFieldsInline(builder.toSchema({ sortSchema: true }));
