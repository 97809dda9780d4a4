import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type NostrEvent, serializeEvent } from '../src/nostr/event.js';
import { CorruptDataError } from '../src/store/event-store.js';
import { checkOnce, readStoredEvent, storedEventId, storedEventPubkey, toStoredEvent } from '../src/store/stored-event.js';
import { anyEvent } from './support/event-arbitraries.js';
import { profile, signed } from './support/events.js';

/** Events of any shape NIP-01 allows (the store checks shape, not signatures). */
const anyStoredEvent = anyEvent({ maxTags: 8 });

const bytesOf = (event: NostrEvent) => Buffer.from(serializeEvent(event), 'utf8');

describe('stored events: read back from the store as bytes', () => {
  it('any event we serialise reads back with the same bytes, fields, id, pubkey and kind', () => {
    fc.assert(
      fc.property(anyStoredEvent, (event) => {
        const bytes = bytesOf(event);
        const stored = readStoredEvent(bytes, { id: event.id, pubkey: event.pubkey, kind: event.kind });
        expect(stored.json.bytes.equals(bytes)).toBe(true);
        expect(String(stored.json)).toBe(serializeEvent(event));
        expect(stored.event).toEqual(JSON.parse(serializeEvent(event)));
        expect(storedEventId(stored)).toBe(event.id);
        expect(storedEventPubkey(stored)).toBe(event.pubkey);
        // Read without an expected pubkey (an event by id), and as a relay's event: the same pubkey.
        expect(storedEventPubkey(readStoredEvent(bytes, {}))).toBe(event.pubkey);
        expect(storedEventPubkey(toStoredEvent(event))).toBe(event.pubkey);
      }),
    );
  });

  it('hostile bytes (random, truncated, or one byte changed) are either an event we wrote or CorruptDataError', () => {
    const mutated = fc
      .tuple(anyStoredEvent, fc.nat(), fc.integer({ min: 0, max: 255 }), fc.boolean())
      .map(([event, position, byte, truncate]) => {
        const bytes = bytesOf(event);
        const at = position % bytes.length;
        if (truncate) return bytes.subarray(0, at);
        bytes[at] = byte;
        return bytes;
      });
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 400 }).map((array) => Buffer.from(array)), mutated), (bytes) => {
        try {
          const stored = readStoredEvent(bytes, {});
          // Accepted: then it has our shape and is valid UTF-8, and it goes out unchanged.
          expect(stored.json.bytes.equals(bytes)).toBe(true);
          expect(Buffer.from(String(stored.json), 'utf8').equals(bytes)).toBe(true);
        } catch (error) {
          expect(error).toBeInstanceOf(CorruptDataError);
        }
      }),
    );
  });

  it('refuses another id, pubkey or kind than the key promised', () => {
    const kind0 = profile('pia', { name: 'pia' });
    const bytes = bytesOf(kind0);
    expect(() => readStoredEvent(bytes, { id: 'f'.repeat(64) })).toThrow('id mismatch');
    expect(() => readStoredEvent(bytes, { pubkey: 'f'.repeat(64) })).toThrow('pubkey mismatch');
    expect(() => readStoredEvent(bytes, { kind: 1 })).toThrow('kind mismatch');
    expect(readStoredEvent(bytes, { id: kind0.id, pubkey: kind0.pubkey, kind: 0 }).event).toEqual(kind0);
  });

  it('bytes that never change (checkOnce: the hot cache) are checked once, still refuse another id, pubkey or kind, and each read gets an object of its own', () => {
    const kind0 = profile('pia', { name: 'pia' });
    const bytes = bytesOf(kind0);
    checkOnce(bytes);
    const first = readStoredEvent(bytes, { pubkey: kind0.pubkey, kind: 0 });
    // Not shared across reads: what one request parses is not kept beyond it.
    const second = readStoredEvent(bytes, { id: kind0.id });
    expect(second).not.toBe(first);
    expect(second.json.bytes).toBe(bytes);
    expect(() => readStoredEvent(bytes, { id: 'f'.repeat(64) })).toThrow('id mismatch');
    expect(() => readStoredEvent(bytes, { pubkey: 'f'.repeat(64) })).toThrow('pubkey mismatch');
    expect(() => readStoredEvent(bytes, { kind: 1 })).toThrow('kind mismatch');
    expect(readStoredEvent(bytes, {}).event).toEqual(kind0);
    expect(readStoredEvent(bytesOf(kind0), {}).event).toEqual(kind0);
    // Registered bytes that are not an event are refused on every read, never remembered as good.
    const broken = Buffer.from(bytes.subarray(0, bytes.length - 1));
    checkOnce(broken);
    expect(() => readStoredEvent(broken, {})).toThrow(CorruptDataError);
    expect(() => readStoredEvent(broken, {})).toThrow(CorruptDataError);
  });

  it('reads the kind only from its place after created_at, digits only, at most five', () => {
    const note = signed('quinn', { kind: 1 });
    const text = serializeEvent(note);
    const withKind = (kind: string) => Buffer.from(text.replace('"kind":1,', `"kind":${kind},`), 'utf8');
    expect(readStoredEvent(withKind('65535'), { kind: 65_535 }).json.bytes.length).toBeGreaterThan(0);
    for (const kind of ['100000', '', '-1', '1.0', '"1"', '01x']) {
      expect(() => readStoredEvent(withKind(kind), { kind: 1 }), kind).toThrow(CorruptDataError);
    }
  });

  it('an event from a relay (toStoredEvent) carries the same bytes as one read from the store', () => {
    fc.assert(
      fc.property(anyStoredEvent, (event) => {
        const fromRelay = toStoredEvent(event);
        expect(fromRelay.json.bytes.equals(bytesOf(event))).toBe(true);
        expect(fromRelay.event).toBe(event);
      }),
    );
  });
});
