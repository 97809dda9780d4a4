import fc from 'fast-check';
import { GraphQLString } from 'graphql';
import { describe, expect, it } from 'vitest';
import { JsonText, joinJson } from '../src/store/json-text.js';

const anyText = fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }));

describe('JsonText: stored JSON kept as bytes', () => {
  it('joinJson writes strings and stored texts as the UTF-8 of their concatenation', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(anyText, fc.boolean()), { maxLength: 12 }), (pieces) => {
        const parts = pieces.map(([text, stored]) => (stored ? new JsonText(Buffer.from(text, 'utf8')) : text));
        const expected = Buffer.from(parts.map(String).join(''), 'utf8');
        expect(joinJson(parts).equals(expected)).toBe(true);
      }),
    );
  });

  it('decodes once, on demand, whichever way it is read; JsonText.of keeps the string it was made from', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const bytes = Buffer.from(text, 'utf8');
        const decoded = bytes.toString('utf8');
        const json = new JsonText(bytes);
        expect(json.toString()).toBe(decoded);
        expect(json.valueOf()).toBe(decoded);
        expect(JSON.stringify({ json })).toBe(JSON.stringify({ json: decoded }));
        const made = JsonText.of(text);
        expect(made.toString()).toBe(text);
        expect(made.bytes.equals(bytes)).toBe(true);
      }),
    );
  });

  it('a GraphQL String serialises it to its text (how /graphql answers `json`)', () => {
    expect(GraphQLString.serialize(JsonText.of('{"kind":1,"content":"🌅"}'))).toBe('{"kind":1,"content":"🌅"}');
  });
});
