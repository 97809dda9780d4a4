import { builder } from './builder.js';
import './timestamp.js';
import './event.js';
import './profile.js';

/** The one GraphQL schema: REST routes and /graphql both execute against it. */
export const schema = builder.toSchema({ sortSchema: true });
