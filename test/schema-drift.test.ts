import { readFileSync } from 'node:fs';
import { defaultFieldResolver, type GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../src/schema/index.js';
import { printedSchema } from '../src/schema/print-schema.js';

describe('schema.graphql', () => {
  it('matches the Pothos schema (run `npm run schema:print` after changing src/schema)', () => {
    expect(readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8')).toBe(printedSchema());
  });
});

describe('the built schema', () => {
  const fields = (type: string) => (schema.getType(type) as GraphQLObjectType).getFields();

  it('property fields carry no resolver, so graphql-jit reads them inline (the /event fixed operation reads them for every profile)', () => {
    expect(fields('Event').json?.resolve).toBeUndefined();
    expect(fields('Profile').pubkey?.resolve).toBeUndefined();
    expect(fields('Profile').event?.resolve).toBeUndefined();
    // Fields that compute keep their resolvers.
    expect(fields('Event').relevantProfiles?.resolve).toBeTypeOf('function');
    expect(fields('Profile').name?.resolve).toBeTypeOf('function');
  });

  it('no field is left with graphql-js\' default resolver (it is what a missing resolver means)', () => {
    for (const type of Object.values(schema.getTypeMap())) {
      if (!('getFields' in type) || type.name.startsWith('__')) continue;
      for (const field of Object.values((type as GraphQLObjectType).getFields())) {
        expect(field.resolve, `${type.name}.${field.name}`).not.toBe(defaultFieldResolver);
      }
    }
  });
});
