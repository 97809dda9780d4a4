import { afterEach, describe, expect, it, vi } from 'vitest';
import { CLOSED_GRACE_MS, MAX_EVENT_MESSAGE_BYTES, MessageScreen, UNASKED_MAX_BYTES, UNASKED_MAX_MESSAGES, UNASKED_WINDOW_MS } from '../src/relays/message-screen.js';

/** An event of NIP-01's shape (its signature is not checked here). */
const EVENT = { id: 'a'.repeat(64), pubkey: 'b'.repeat(64), created_at: 1, kind: 1, tags: [['p', 'c'.repeat(64)]], content: 'hi', sig: 'd'.repeat(128) };

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
    const event = JSON.stringify(['EVENT', 'sub:1', EVENT]);
    expect(admit(event)).toBe(event);
    // Fields without NIP-01's shapes go no further (nostr-tools' filter match throws on such tags).
    expect(admit('["EVENT","sub:1",{"id":"x"}]')).toBeUndefined();
    expect(admit(JSON.stringify(['EVENT', 'sub:1', { ...EVENT, tags: [1] }]))).toBeUndefined();
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

  it('an answer in flight for a subscription we closed is dropped unparsed and not counted, for CLOSED_GRACE_MS (found by review)', () => {
    const { subject, admit, onFlood } = screen([]);
    subject.closed('sub:9');
    const event = JSON.stringify(['EVENT', 'sub:9', { ...EVENT, content: 'x'.repeat(100_000) }]);
    const parse = vi.spyOn(JSON, 'parse');
    // 30 MB of answers in flight: more than the budget of unasked traffic, yet no flood.
    for (let n = 0; n < 300; n++) expect(admit(event)).toBeUndefined();
    expect(parse).not.toHaveBeenCalled();
    expect(onFlood).not.toHaveBeenCalled();
    // An EVENT larger than any event we store counts, closed by us or not.
    const huge = JSON.stringify(['EVENT', 'sub:9', { ...EVENT, content: 'x'.repeat(MAX_EVENT_MESSAGE_BYTES) }]);
    for (let n = 0; n < 3; n++) admit(huge);
    expect(onFlood).toHaveBeenCalledTimes(1);
  });

  it('past CLOSED_GRACE_MS, what answers a closed subscription counts again', () => {
    vi.useFakeTimers();
    try {
      const { subject, admit, onFlood } = screen([]);
      subject.closed('sub:9');
      vi.advanceTimersByTime(CLOSED_GRACE_MS);
      const event = JSON.stringify(['EVENT', 'sub:9', { ...EVENT, content: 'x'.repeat(100_000) }]);
      for (let n = 0; n < 20; n++) admit(event);
      expect(onFlood).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('MessageScreen over time (found by review)', () => {
  it(`a long-lived connection's budget is renewed every UNASKED_WINDOW_MS: a notice a minute never cuts it off`, () => {
    vi.useFakeTimers();
    try {
      const onFlood = vi.fn();
      const subject = new MessageScreen({ isOpen: () => false, onFlood });
      for (let n = 0; n < 3 * UNASKED_MAX_MESSAGES; n++) {
        subject.admit(Buffer.from('["NOTICE","hello"]'), false);
        vi.advanceTimersByTime(UNASKED_WINDOW_MS / 100);
      }
      expect(onFlood).not.toHaveBeenCalled();
      // Within one window, the same count is a flood.
      for (let n = 0; n <= UNASKED_MAX_MESSAGES; n++) subject.admit(Buffer.from('["NOTICE","hello"]'), false);
      expect(onFlood).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('pings count like messages that answer nothing', () => {
    const onFlood = vi.fn();
    const subject = new MessageScreen({ isOpen: () => false, onFlood });
    for (let n = 0; n < UNASKED_MAX_MESSAGES; n++) expect(subject.unasked(0)).toBe(true);
    expect(subject.unasked(0)).toBe(false);
    expect(onFlood).toHaveBeenCalledTimes(1);
  });
});
