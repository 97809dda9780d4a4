import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRelayMessage } from '../src/relays/relay-message.js';

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
