import { GraphQLError, Kind } from 'graphql';
import { builder } from './builder.js';

function asTimestamp(value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  throw new GraphQLError('Timestamp must be a non-negative whole number of seconds no larger than 2^53 - 1.');
}

// GraphQL's Int is 32-bit, and NIP-01 `created_at` may exceed 2^31: this scalar carries any
// non-negative integer JavaScript holds exactly, as a JSON number.
builder.scalarType('Timestamp', {
  description:
    'Seconds since the Unix epoch (NIP-01 created_at), as a JSON number. Not limited to 32 bits: any integer from 0 to 2^53 - 1.',
  serialize: asTimestamp,
  parseValue: asTimestamp,
  parseLiteral: (node) => {
    if (node.kind !== Kind.INT) throw new GraphQLError('Timestamp must be an integer literal.');
    return asTimestamp(Number(node.value));
  },
});
