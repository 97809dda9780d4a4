import fc from 'fast-check';
import { GraphQLString } from 'graphql';
import { describe, expect, it } from 'vitest';
import { InlineJsonText, JsonText, joinJson, stringifyKeepingJsonText } from '../src/store/json-text.js';

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

  it('stringifyKeepingJsonText writes what JSON.stringify writes, byte for byte, stored texts quoted from their bytes (property)', () => {
    // Texts as the store holds them (JSON of any value) and any other valid UTF-8, controls and
    // quotes included; values that look like the placeholder (a NUL, "json-text:") among the strings.
    const text = fc.oneof(anyText, fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0001', '\u001f', '\b', 'é', '🌅', 'a') }));
    const stored = fc.oneof(fc.jsonValue().map((value) => JSON.stringify(value)), text).map((value) => new JsonText(Buffer.from(value, 'utf8')));
    // Inline (a `raw` field): written as they are, where JSON.stringify writes the parsed value.
    const inline = fc.jsonValue().map((value) => new InlineJsonText(Buffer.from(JSON.stringify(value), 'utf8')));
    const lookalike = fc.constantFrom('\u0000json-text:', '\u0000json-text:0', '"\\u0000json-text:"', '\u0000json-inline:', '"\\u0000json-inline:"');
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        text,
        lookalike,
        stored,
        inline,
        fc.integer(),
        fc.constant(null),
        fc.array(tie('value')),
        fc.dictionary(text, tie('value')),
      ),
    }));
    fc.assert(
      fc.property(value, (input) => {
        const written = stringifyKeepingJsonText({ data: input });
        expect(written.toString('utf8')).toBe(JSON.stringify({ data: input }));
        expect(written.equals(Buffer.from(JSON.stringify({ data: input }), 'utf8'))).toBe(true);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 500), seed: Number(process.env.FUZZ_SEED ?? 42) },
    );
  });

  it('quotedLatin1 is the bytes of JSON.stringify(text), one Latin-1 character per byte (property)', () => {
    fc.assert(
      fc.property(fc.oneof(anyText, fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0001', '\u007f', '\u2028', 'é', '🌅') })), (input) => {
        const quoted = new JsonText(Buffer.from(input, 'utf8')).quotedLatin1();
        expect(Buffer.from(quoted, 'latin1').equals(Buffer.from(JSON.stringify(input), 'utf8'))).toBe(true);
      }),
    );
  });

  it('an InlineJsonText is written as its bytes, beside quoted ones, and as its parsed value by JSON.stringify', () => {
    const event = '{"kind":1,"content":"\\"🌅\\u0001"}';
    const value = { a: new InlineJsonText(Buffer.from(event)), b: new JsonText(Buffer.from(event)), c: [new InlineJsonText(Buffer.from('[1, 2]'))] };
    expect(stringifyKeepingJsonText(value).toString()).toBe(`{"a":${event},"b":${JSON.stringify(event)},"c":[[1, 2]]}`);
    expect(JSON.stringify(value)).toBe(`{"a":{"kind":1,"content":"\\"🌅\\u0001"},"b":${JSON.stringify(event)},"c":[[1,2]]}`);
  });

  it('a GraphQL String serialises it to its text (how /graphql answers `json`)', () => {
    expect(GraphQLString.serialize(JsonText.of('{"kind":1,"content":"🌅"}'))).toBe('{"kind":1,"content":"🌅"}');
  });
});
