import SchemaBuilder from '@pothos/core';
import type { JsonText, StringOutput } from '../store/json-text.js';
import type { GraphQLContext } from './context.js';

/** Only configures the builder; the types live one per file beside it (see index.ts). */
export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  Scalars: {
    // A String field may resolve to stored JSON text (JsonText): GraphQL serialises it through
    // valueOf(); the REST routes' fixed operations keep its bytes (src/http/fixed-operation.ts).
    String: { Input: string; Output: StringOutput };
    Timestamp: { Input: number; Output: number };
    // Stored event JSON sent as the object it is (raw-event.ts).
    RawEvent: { Input: never; Output: JsonText };
    Msats: { Input: number; Output: number };
  };
  DefaultFieldNullability: false;
}>({
  defaultFieldNullability: false,
});

builder.queryType({});
