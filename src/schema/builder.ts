import SchemaBuilder from '@pothos/core';
import type { GraphQLContext } from './context.js';

/** Only configures the builder; the types live one per file beside it (see index.ts). */
export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  Scalars: {
    Timestamp: { Input: number; Output: number };
  };
  DefaultFieldNullability: false;
}>({
  defaultFieldNullability: false,
});

builder.queryType({});
