import { printSchema } from 'graphql';
import { schema } from './index.js';

/** The text of schema.graphql as checked in; test/schema-drift.test.ts fails when the two differ. */
export function printedSchema(): string {
  return `${printSchema(schema)}\n`;
}
