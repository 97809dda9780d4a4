import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printedSchema } from '../src/schema/print-schema.js';

describe('schema.graphql', () => {
  it('matches the Pothos schema (run `npm run schema:print` after changing src/schema)', () => {
    expect(readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8')).toBe(printedSchema());
  });
});
