import { afterEach, describe, expect, it, vi } from 'vitest';
import { MessageScreen, UNASKED_MAX_BYTES, UNASKED_MAX_MESSAGES } from '../src/relays/message-screen.js';

describe('MessageScreen', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  function screen(open: string[] = ['sub:1']) {
    const onFlood = vi.fn();
    const subject = new MessageScreen({ isOpen: (id) => open.includes(id), onFlood });
    const admit = (text: string) => subject.admit(Buffer.from(text), false);
    return { subject, admit, onFlood };
  }

  it('hands on an answer to an open subscription, shape-checked; drops the same for a closed one without parsing it', () => {
    const { admit } = screen();
    expect(admit('["EVENT","sub:1",{"id":"x"}]')).toBe('["EVENT","sub:1",{"id":"x"}]');
    expect(admit('["EOSE","sub:1"]')).toBe('["EOSE","sub:1"]');
    expect(admit('["CLOSED","sub:1","bye"]')).toBe('["CLOSED","sub:1","bye"]');
    expect(admit('["EVENT","sub:1",null]')).toBeUndefined();
    const parse = vi.spyOn(JSON, 'parse');
    expect(admit(`["EVENT","sub:2",{"tags":[${'["p","0"],'.repeat(1000)}["p","0"]]}]`)).toBeUndefined();
    expect(admit('["EOSE","other"]')).toBeUndefined();
    expect(admit('["OK","x",true,""]')).toBeUndefined();
    expect(admit('["COUNT","sub:1",{"count":1}]')).toBeUndefined();
    expect(admit('not json at all')).toBeUndefined();
    expect(parse).not.toHaveBeenCalled();
  });

  it('hands on a short NOTICE or AUTH, and drops a long one unparsed', () => {
    const { admit } = screen();
    expect(admit('["NOTICE","slow down"]')).toBe('["NOTICE","slow down"]');
    expect(admit('["AUTH","challenge"]')).toBe('["AUTH","challenge"]');
    const parse = vi.spyOn(JSON, 'parse');
    expect(admit(`["NOTICE","${'n'.repeat(2000)}"]`)).toBeUndefined();
    expect(parse).not.toHaveBeenCalled();
  });

  it('counts an answer of the wrong shape as unasked', () => {
    const { admit, onFlood } = screen();
    for (let n = 0; n < UNASKED_MAX_MESSAGES; n++) expect(admit('["EVENT","sub:1",null]')).toBeUndefined();
    expect(onFlood).not.toHaveBeenCalled();
    admit('["EOSE","sub:1","extra"]');
    expect(onFlood).toHaveBeenCalledTimes(1);
  });

  it('drops binary frames', () => {
    const { subject } = screen();
    expect(subject.admit(Buffer.from('["EOSE","sub:1"]'), true)).toBeUndefined();
  });

  it(`closes the connection past ${UNASKED_MAX_MESSAGES} unasked messages since our last REQ, and drops everything after`, () => {
    const { subject, admit, onFlood } = screen();
    for (let n = 0; n < UNASKED_MAX_MESSAGES; n++) admit('["EOSE","gone"]');
    expect(onFlood).not.toHaveBeenCalled();
    // Answers to open subscriptions never count.
    expect(admit('["EOSE","sub:1"]')).toBe('["EOSE","sub:1"]');
    // A REQ of ours renews the budget.
    subject.asked();
    for (let n = 0; n < UNASKED_MAX_MESSAGES; n++) admit('["EOSE","gone"]');
    expect(onFlood).not.toHaveBeenCalled();
    admit('["EOSE","gone"]');
    expect(onFlood).toHaveBeenCalledTimes(1);
    expect(admit('["EOSE","sub:1"]')).toBeUndefined();
    admit('["EOSE","gone"]');
    expect(onFlood).toHaveBeenCalledTimes(1);
  });

  it(`closes the connection past ${UNASKED_MAX_BYTES / 1024} KiB of unasked traffic: one message of the largest size is enough`, () => {
    const { admit, onFlood } = screen();
    admit(`["EVENT","gone",{"content":"${'x'.repeat(UNASKED_MAX_BYTES / 2)}"}]`);
    expect(onFlood).not.toHaveBeenCalled();
    admit(`["NOTICE","${'x'.repeat(UNASKED_MAX_BYTES / 2)}"]`);
    expect(onFlood).toHaveBeenCalledTimes(1);
    const fresh = screen();
    fresh.admit(`["EVENT","gone",{"content":"${'x'.repeat(2 * 1024 * 1024 - 100)}"}]`);
    expect(fresh.onFlood).toHaveBeenCalledTimes(1);
  });
});
