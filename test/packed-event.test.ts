import { deflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { serializeEvent } from '../src/nostr/event.js';
import { CorruptDataError } from '../src/store/event-store.js';
import { packEvent, unpackEvent } from '../src/store/packed-event.js';
import { RedisEventStore } from '../src/store/redis/redis-event-store.js';
import { readStoredEvent } from '../src/store/stored-event.js';
import { anyEvent } from './support/event-arbitraries.js';
import { signed } from './support/events.js';
import { createTestStore, type TestStore } from './support/test-store.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const anyNote = anyEvent({ maxTags: 12, maxContent: 2000 });

describe('packed events (store/packed-event.ts): how Redis holds a regular event', () => {
  it('any event packs and unpacks to its JSON, byte for byte; packed only when smaller; the head stays where the scripts read it (property)', () => {
    fc.assert(
      fc.property(anyNote, (event) => {
        const json = serializeEvent(event);
        const packed = packEvent(json);
        const bytes = typeof packed === 'string' ? Buffer.from(packed) : packed;
        expect(bytes.length).toBeLessThanOrEqual(Buffer.byteLength(json));
        expect(unpackEvent(bytes).equals(Buffer.from(json))).toBe(true);
        // The Lua scripts read the id at 8–71, the pubkey at 84–147, created_at and kind after them.
        const head = json.slice(0, json.indexOf('"tags":'));
        expect(bytes.subarray(0, head.length).toString()).toBe(head);
        expect(readStoredEvent(bytes, { id: event.id, pubkey: event.pubkey, kind: event.kind }).event).toEqual(JSON.parse(json));
      }),
      { numRuns: RUNS },
    );
  });

  it('a note of real size is packed, about half of its tail saved', () => {
    const note = signed('packer', { content: 'Nostr is a simple, open protocol that enables global, decentralized, and censorship-resistant social media. '.repeat(3), tags: [['p', 'a'.repeat(64)], ['t', 'nostr']] });
    const json = serializeEvent(note);
    const packed = packEvent(json);
    expect(Buffer.isBuffer(packed)).toBe(true);
    expect((packed as Buffer).length).toBeLessThan(Buffer.byteLength(json) * 0.8);
    // Even a bare reaction gains (its hex signature deflates).
    const reaction = serializeEvent(signed('packer', { kind: 7, content: '+' }));
    expect((packEvent(reaction) as Buffer).length).toBeLessThan(Buffer.byteLength(reaction));
  });

  it('hostile values (random, a damaged tail, a bomb past the largest event) unpack to themselves or an event, never throw; a damaged packed value is refused as corrupt', () => {
    const json = serializeEvent(signed('packer', { content: 'x'.repeat(600) }));
    const packed = packEvent(json) as Buffer;
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 600 }).map((array) => Buffer.from(array)), fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, byte]) => {
        const damaged = Buffer.from(packed);
        damaged[at % damaged.length] = byte;
        return damaged;
      })), (value) => {
        const unpacked = unpackEvent(value);
        expect(Buffer.isBuffer(unpacked)).toBe(true);
        try {
          readStoredEvent(value, {});
        } catch (error) {
          expect(error).toBeInstanceOf(CorruptDataError);
        }
      }),
      { numRuns: RUNS },
    );
    const head = packed.subarray(0, packed.indexOf(0x01, 150) + 1);
    const bomb = Buffer.concat([head, deflateRawSync(Buffer.alloc(64 * 1024 * 1024, 0x20))]);
    expect(unpackEvent(bomb)).toBe(bomb);
    expect(() => readStoredEvent(bomb, {})).toThrow(CorruptDataError);
  });

  describe('on Redis', () => {
    let store: TestStore;
    afterAll(() => store?.cleanup());

    it('a note is held packed (smaller than its JSON) and read back as its JSON; a plain value written before is read as it is', async () => {
      store = await createTestStore();
      const note = signed('packed on redis', { content: 'a note long enough to be worth packing, '.repeat(10) });
      expect(await store.store.putEvents([note])).toEqual(['stored']);
      const admin = await store.connectAdmin();
      try {
        const held = (await admin.getBuffer(`${store.prefix}e:${note.id}`)) as Buffer;
        expect(held.length).toBeLessThan(Buffer.byteLength(serializeEvent(note)));
        expect(held.includes(Buffer.from(note.content))).toBe(false);
        expect((await store.store.getEvents([note.id]))[0]).toMatchObject({ event: note });
        const [read] = await store.store.getEvents([note.id]);
        expect(String((read as { json: unknown }).json)).toBe(serializeEvent(note));
        // REDIS_PACK_EVENTS=false (a rolling upgrade): written plain, read alike.
        const plainStore = new RedisEventStore(store.client, store.prefix, { packEvents: false });
        const plain = signed('packed on redis', { content: 'written plain while older versions still read, '.repeat(10) });
        expect(await plainStore.putEvents([plain])).toEqual(['stored']);
        expect(String(await admin.get(`${store.prefix}e:${plain.id}`))).toBe(serializeEvent(plain));
        expect((await store.store.getEvents([plain.id]))[0]).toMatchObject({ event: plain });
        const older = signed('packed on redis', { content: 'written plain by an earlier version, '.repeat(10) });
        await admin.set(`${store.prefix}e:${older.id}`, serializeEvent(older));
        expect((await store.store.getEvents([older.id]))[0]).toMatchObject({ event: older });
      } finally {
        admin.disconnect();
      }
    });
  });
});
