import { GraphQLError } from 'graphql';
import { InlineJsonText, JsonText } from '../store/json-text.js';
import { builder } from './builder.js';

function outputOnly(): never {
  throw new GraphQLError('RawEvent is only ever an answer, never an argument.');
}

// `Event.json` is the event as a JSON string, which a client parses a second time and which the
// answer carries escaped (10 % larger for an /event with ten profiles, and escaped at each answer:
// BENCHMARKS.md). This scalar carries the same stored bytes as the JSON object they are.
builder.scalarType('RawEvent', {
  description:
    'A Nostr event as its NIP-01 JSON object: {"id", "pubkey", "created_at", "kind", "tags", "content", "sig"}, exactly as signed. An object in the answer, never a string; output only.',
  serialize: (value) => (value instanceof InlineJsonText ? value : new InlineJsonText((value as JsonText).bytes)),
  parseValue: outputOnly,
  parseLiteral: outputOnly,
});
