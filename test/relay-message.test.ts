import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRelayMessage, readMessageHead } from '../src/relays/relay-message.js';

// NIP-01 relay-to-client messages (plus NIP-42 AUTH and NIP-45 COUNT).
describe('isRelayMessage', () => {
  it.each([
    ['["EVENT","sub:1",{"id":"x"}]'],
    ['["EOSE","sub:1"]'],
    ['["CLOSED","sub:1","error: too many filters"]'],
    ['["NOTICE","slow down"]'],
    ['["OK","abc",true,""]'],
    ['["AUTH","challenge"]'],
    ['["COUNT","sub:1",{"count":3}]'],
  ])('accepts %s', (message) => {
    expect(isRelayMessage(message)).toBe(true);
  });

  it.each([
    ['not json'],
    [''],
    ['{}'],
    ['[]'],
    ['["EVENT"]'],
    ['["EVENT","sub:1"]'],
    ['["EVENT","sub:1",null]'],
    ['["EVENT","sub:1",[1,2]]'],
    ['["EVENT","sub:1","event"]'],
    ['["EVENT",1,{"id":"x"}]'],
    ['["EVENT","sub:1",{},"extra"]'],
    ['["EOSE"]'],
    ['["CLOSED","sub:1"]'],
    ['["NOTICE",{"x":1}]'],
    ['["OK",null,null,null]'],
    ['["AUTH",123]'],
    ['["COUNT","x",{"count":"many"}]'],
    ['["REQ","sub:1",{}]'],
    [' ["EOSE","sub:1"]'],
  ])('refuses %j', (message) => {
    expect(isRelayMessage(message)).toBe(false);
  });

  it('refuses what is not text (binary frames)', () => {
    expect(isRelayMessage(Buffer.from('["EOSE","sub:1"]'))).toBe(false);
    expect(isRelayMessage(undefined)).toBe(false);
  });

  it('never throws, whatever arrives (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.jsonValue().map((value) => JSON.stringify(value))), (data) => {
        expect(typeof isRelayMessage(data)).toBe('boolean');
      }),
    );
  });

  it('accepts every well-formed EVENT and EOSE (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.dictionary(fc.string(), fc.jsonValue()), (subscription, event) => {
        expect(isRelayMessage(JSON.stringify(['EVENT', subscription, event]))).toBe(true);
        expect(isRelayMessage(JSON.stringify(['EOSE', subscription]))).toBe(true);
      }),
    );
  });
});

describe('readMessageHead (the scan before any parse)', () => {
  it.each([
    ['["EVENT","sub:1",{"id":"x"}]', { type: 'EVENT', id: 'sub:1' }],
    ['["EOSE","sub:1"]', { type: 'EOSE', id: 'sub:1' }],
    ['[ "EVENT" ,\n\t"sub:1" , {}]', { type: 'EVENT', id: 'sub:1' }],
    // Escapes are unescaped as JSON.parse would: an id is the same however it is written.
    ['["EVENT","sub\\u003a1",{}]', { type: 'EVENT', id: 'sub:1' }],
    ['["EVENT","a\\"b",{}]', { type: 'EVENT', id: 'a"b' }],
    ['["NOTICE","slow down"]', { type: 'NOTICE', id: 'slow down' }],
    // Not a string, or longer than an id may be (64): no id.
    ['["EVENT",5,{}]', { type: 'EVENT', id: undefined }],
    [`["NOTICE","${'n'.repeat(65)}"]`, { type: 'NOTICE', id: undefined }],
    [`["NOTICE","${'n'.repeat(10_000)}"]`, { type: 'NOTICE', id: undefined }],
    ['["EOSE"]', { type: 'EOSE', id: undefined }],
    // Unfinished or invalid strings.
    ['["EVENT","sub:1', { type: 'EVENT', id: undefined }],
    ['["EVENT","a\\x",{}]', { type: 'EVENT', id: undefined }],
    ['["EVENT","a\nb",{}]', { type: 'EVENT', id: undefined }],
  ])('reads %j', (text, head) => {
    expect(readMessageHead(text)).toEqual(head);
  });

  it.each([[''], ['not json'], ['{}'], ['[]'], ['[5,"x"]'], ['["EVENT'], [`["${'E'.repeat(17)}","x"]`], [`${' '.repeat(600)}["EOSE","x"]`]])(
    'reads nothing from %j',
    (text) => {
      expect(readMessageHead(text)).toBeUndefined();
    },
  );

  it('never throws, whatever arrives (property)', () => {
    // Any text, and text that starts as a relay message does (where the scan goes furthest).
    const front = fc.constantFrom('[', '["', '["EVENT",', '["EVENT","', '["EVENT","sub:1', '[ "EOSE" , "', '["EVENT","\\');
    const texts = fc.oneof(fc.string({ unit: 'binary' }), fc.tuple(front, fc.string({ unit: 'binary' })).map(([head, rest]) => head + rest));
    fc.assert(
      fc.property(texts, (text) => {
        const head = readMessageHead(text);
        expect(head === undefined || typeof head.type === 'string').toBe(true);
      }),
    );
  });

  it('reads exactly the subscription id of any EVENT, EOSE or CLOSED that JSON.stringify writes, indented or not (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('EVENT', 'EOSE', 'CLOSED'),
        fc.string({ unit: 'binary', maxLength: 64 }),
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.constantFrom(undefined, 2),
        (type, id, event, indent) => {
          const message = type === 'EOSE' ? [type, id] : [type, id, type === 'EVENT' ? event : 'reason'];
          expect(readMessageHead(JSON.stringify(message, null, indent))).toEqual({ type, id: id.length <= 64 ? id : undefined });
        },
      ),
    );
  });

  it('reads no id longer than 64 characters, so none of the scan is unbounded (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 65, maxLength: 2000 }), (id) => {
        expect(readMessageHead(JSON.stringify(['EVENT', id, {}]))).toEqual({ type: 'EVENT', id: undefined });
      }),
    );
  });
});
