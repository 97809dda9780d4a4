import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { importEvents } from '../src/import/import-events.js';
import { UNPARSED, verifyInput, VerifyPool } from '../src/import/verify-pool.js';
import { eventOfWireForm, mayHaveTag, type NostrEvent, serializeEvent, wireFormOf } from '../src/nostr/event.js';
import { relationEdgesOf } from '../src/nostr/relationships.js';
import { followKeysOf, followsOf } from '../src/nostr/follows.js';
import { verifyNostrEvent } from '../src/nostr/verify-event.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { createTestStore } from './support/test-store.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 30);

/** Inputs of every kind a file or a relay can hand `import`: valid events, damaged ones, anything. */
function hostileInputs(): fc.Arbitrary<unknown[]> {
  const valid = fc.integer({ min: 0, max: 1000 }).map((n) => signed(`pool ${n}`, { created_at: 1_700_000_000 + n, content: `note ${n}` }));
  const damaged = fc.tuple(valid, fc.constantFrom('id', 'pubkey', 'sig', 'content', 'created_at', 'kind', 'tags'), fc.anything()).map(([event, field, value]) => ({ ...event, [field]: value }));
  const resigned = valid.map((event) => ({ ...event, content: `${event.content}!` }));
  const prototypes = valid.map((event) => JSON.parse(`{"__proto__":{"ok":true},${serializeEvent(event).slice(1)}`) as unknown);
  return fc.array(fc.oneof(valid, damaged, resigned, prototypes, fc.anything(), fc.jsonValue()), { maxLength: 40 });
}

describe('import verifies on threads of its own (verify-pool.ts)', () => {
  const pool = new VerifyPool(2);
  afterAll(() => pool.close());

  it('runs threads, and its verdicts are verifyNostrEvent’s for any input, in order (property)', async () => {
    expect(pool.threads).toBe(2);
    await fc.assert(
      fc.asyncProperty(hostileInputs(), async (values) => {
        const verdicts = await pool.verify(values);
        expect(verdicts).toEqual(values.map(verifyNostrEvent));
      }),
      { numRuns: RUNS },
    );
  });

  it('given the JSON texts the values were parsed from, the threads parse those and answer the same verdicts (property)', async () => {
    await fc.assert(
      fc.asyncProperty(hostileInputs(), fc.infiniteStream(fc.boolean()), async (drawn, withText) => {
        // As readEventInput hands them: a value parsed from its text, or (an element of an array) a value alone.
        const texts = drawn.map((value) => {
          const text = JSON.stringify(value);
          return text !== undefined && withText.next().value ? text : undefined;
        });
        const values = drawn.map((value, index) => (texts[index] === undefined ? value : JSON.parse(texts[index] as string)));
        const verdicts = await pool.verify(values, texts);
        expect(verdicts).toEqual(values.map(verifyNostrEvent));
      }),
      { numRuns: RUNS },
    );
  });

  it('what a thread hands back beside a valid verdict is what the main thread would make itself: the wire form, and a follow list’s follows as bytes (property)', async () => {
    const pubkeyValue = fc.oneof(
      fc.integer({ min: 0, max: 30 }).map((n) => pubkeyOf(`followed ${n}`)),
      fc.integer({ min: 0, max: 30 }).map((n) => pubkeyOf(`followed ${n}`).toUpperCase()),
      fc.constantFrom('', 'ab', `${'0'.repeat(63)}\u0130`, 'g'.repeat(64), `${'a'.repeat(63)}`),
      fc.string(),
    );
    const tag = fc.oneof(
      pubkeyValue.map((value) => ['p', value]),
      pubkeyValue.map((value) => ['p', value, 'wss://relay.example', 'pet name']),
      fc.tuple(fc.constantFrom('e', 'q', 't', 'P'), fc.string()).map(([name, value]) => [name, value]),
      fc.constant(['p'] as string[]),
    );
    const event = fc.tuple(fc.constantFrom(1, 3, 3, 10002), fc.array(tag, { maxLength: 40 }), fc.string(), fc.integer({ min: 0, max: 50 })).map(([kind, tags, content, n]) =>
      signed(`prepared ${n}`, { kind, tags, content, created_at: 1_700_000_000 + n }),
    );
    // The text as a file may hold it: the wire form itself, spaced out, fields in another order, an extra field.
    const written = fc.tuple(event, fc.constantFrom('wire', 'spaced', 'reordered', 'extra')).map(([value, form]) => {
      if (form === 'wire') return { value, text: serializeEvent(value) };
      if (form === 'spaced') return { value, text: JSON.stringify(value, null, 1) };
      if (form === 'reordered') {
        const { sig, ...rest } = value;
        return { value, text: JSON.stringify({ sig, ...rest }) };
      }
      return { value, text: JSON.stringify({ ...value, seen_on: ['wss://relay.example'] }) };
    });
    await fc.assert(
      fc.asyncProperty(fc.array(written, { maxLength: 30 }), async (inputs) => {
        const verdicts = await pool.verify(
          inputs.map(({ text }) => JSON.parse(text) as unknown),
          inputs.map(({ text }) => text),
        );
        verdicts.forEach((verdict, index) => {
          expect(verdict.ok).toBe(true);
          if (!verdict.ok) return;
          // A fresh copy has nothing remembered: serializeEvent and followKeysOf compute it.
          const fresh = structuredClone(inputs[index]?.value) as NostrEvent;
          expect(serializeEvent(verdict.event)).toBe(serializeEvent(fresh));
          expect(Buffer.from(followKeysOf(verdict.event)).toString('hex')).toBe(Buffer.from(followKeysOf(fresh)).toString('hex'));
          expect(followsOf(verdict.event)).toEqual(followsOf(fresh));
        });
      }),
      { numRuns: RUNS },
    );
  });

  it('inputs left unparsed (UNPARSED, their text alone): the thread parses them; verdicts are verifyNostrEvent’s of the parsed text, `unreadable` where it is not JSON, and the event equals it (property)', async () => {
    const texts = fc.oneof(
      hostileInputs().map((values) => values.map((value) => JSON.stringify(value) ?? 'undefined')),
      fc.array(fc.oneof(fc.string(), fc.constantFrom('{"id": truncated}', '{', '{}', '{"__proto__":{}}', '{"tags":[["q"]]}')), { maxLength: 10 }),
    );
    await fc.assert(
      fc.asyncProperty(texts, async (drawn) => {
        const expected = drawn.map((text) => {
          try {
            return verifyNostrEvent(JSON.parse(text));
          } catch {
            return { ok: false, reason: 'unreadable' };
          }
        });
        const verdicts = await pool.verify(drawn.map(() => UNPARSED), drawn);
        expect(verdicts).toEqual(expected);
        // Without a thread, the same.
        expect(drawn.map((text) => verifyInput(UNPARSED, text))).toEqual(expected);
      }),
      { numRuns: RUNS },
    );
  });

  it('unparsed inputs given as their bytes: the same verdicts as their text; a valid one keeps the bytes as its wire form only when they are its wire form in UTF-8 (property)', async () => {
    const event = fc.tuple(fc.constantFrom(1, 3), fc.string(), fc.integer({ min: 0, max: 50 })).map(([kind, content, n]) =>
      signed(`bytes ${n}`, { kind, tags: [['p', pubkeyOf(`bytes followed ${n}`)]], content, created_at: 1_700_000_000 + n }),
    );
    const replacement = serializeEvent(signed('bytes replacement', { content: '\ufffd' }));
    const input = fc.oneof(
      event.map((value) => ({ value, bytes: Buffer.from(serializeEvent(value)), kept: true })),
      event.map((value) => ({ value, bytes: Buffer.from(JSON.stringify(value, null, 1)), kept: false })),
      // Not UTF-8 where the event has U+FFFD: decoded, it is the event; its bytes are not its wire form.
      fc.constant({ value: JSON.parse(replacement) as NostrEvent, bytes: Buffer.from(replacement.replace('\ufffd', '\u0000'), 'utf8').fill(0xff, replacement.indexOf('\ufffd'), replacement.indexOf('\ufffd') + 1), kept: false }),
      fc.string().map((text) => ({ value: undefined, bytes: Buffer.from(text), kept: false })),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(input, { maxLength: 20 }), async (inputs) => {
        const verdicts = await pool.verify(inputs.map(() => UNPARSED), inputs.map(({ bytes }) => bytes));
        const expected = inputs.map(({ bytes }) => verifyInput(UNPARSED, bytes.toString('utf8')));
        expect(verdicts).toEqual(expected);
        verdicts.forEach((verdict, index) => {
          const { value, bytes, kept } = inputs[index] as (typeof inputs)[number];
          if (!verdict.ok) return;
          expect(verdict.event).toEqual(value);
          const wire = wireFormOf(verdict.event);
          expect(Buffer.isBuffer(wire), `kept ${String(kept)}`).toBe(kept);
          expect(Buffer.from(wire).toString('utf8')).toBe(serializeEvent(structuredClone(value) as NostrEvent));
          if (kept) expect(wire).toEqual(bytes);
        });
        // Without a thread, the same verdicts.
        expect(inputs.map(({ bytes }) => verifyInput(UNPARSED, bytes))).toEqual(expected);
      }),
      { numRuns: RUNS },
    );
  });

  it('an unparsed follow list comes back with its tags unread: parsed from its wire form when first read, and equal to the event in every form', async () => {
    const follows = Array.from({ length: 50 }, (_, n) => ['p', pubkeyOf(`lazy ${n}`)]);
    const list = signed('lazy lister', { kind: 3, tags: follows, content: '{"wss://relay.example":{"read":true}}' });
    const note = signed('lazy quoter', { kind: 1, tags: [['q', list.id], ['p', list.pubkey]], content: 'quoting' });
    const [listVerdict, noteVerdict] = await pool.verify([UNPARSED, UNPARSED], [serializeEvent(list), JSON.stringify(note, null, 1)]);
    if (!listVerdict?.ok || !noteVerdict?.ok) throw new Error('expected valid verdicts');
    const lazy = listVerdict.event;
    // A rule reading q tags (relationEdgesOf) passes over the list without parsing its tags.
    expect(relationEdgesOf(lazy)).toEqual([]);
    expect(followsOf(lazy)).toEqual(follows.map(([, pubkey]) => pubkey));
    expect(typeof Object.getOwnPropertyDescriptor(lazy, 'tags')?.get).toBe('function');
    // Read once, they are the event's, and stay what they were.
    expect(Object.keys(lazy)).toEqual(['id', 'pubkey', 'created_at', 'kind', 'tags', 'content', 'sig']);
    expect(lazy.tags).toEqual(list.tags);
    expect(lazy.tags).toBe(lazy.tags);
    expect(Object.getOwnPropertyDescriptor(lazy, 'tags')?.get).toBeUndefined();
    expect(lazy).toEqual(list);
    expect(serializeEvent(lazy)).toBe(serializeEvent(list));
    // A note quoting it: its tags are read (the text had a `q` tag).
    expect(relationEdgesOf(noteVerdict.event)).toEqual([{ target: list.id, reply: false, threadReply: false, quote: true, repost: false }]);
    expect(noteVerdict.event).toEqual(note);
  });

  it('copies of an unparsed event read its tags: spread, JSON and structured copies are whole', async () => {
    const list = signed('lazy copies', { kind: 3, tags: [['p', pubkeyOf('copied')], ['t', 'x']] });
    for (const copy of [(event: NostrEvent) => ({ ...event }), (event: NostrEvent) => JSON.parse(JSON.stringify(event)) as unknown, structuredClone]) {
      const [verdict] = await pool.verify([UNPARSED], [serializeEvent(list)]);
      if (!verdict?.ok) throw new Error('expected a valid verdict');
      expect(copy(verdict.event)).toEqual(list);
    }
  });

  it('mayHaveTag is false only for an event with no tag of that name (property, names of any characters)', () => {
    const name = fc.oneof(fc.constantFrom('q', 'e', 'p', 'Q', 'q"', '\\', ''), fc.string({ maxLength: 3 }));
    fc.assert(
      fc.property(fc.array(fc.array(fc.oneof(name, fc.string()), { maxLength: 3 }), { maxLength: 8 }), fc.string(), name, (tags, content, asked) => {
        const event = signed('may have', { kind: 3, tags, content });
        const lazy = eventOfWireForm(event, serializeEvent(event));
        const has = tags.some((tag) => tag[0] === asked);
        if (has) expect(mayHaveTag(lazy, asked)).toBe(true);
        // Without a known wire form, always true (nothing to tell from).
        expect(mayHaveTag(structuredClone(event), asked)).toBe(true);
        // With one and no such text anywhere in it, false.
        if (!serializeEvent(event).includes(`[${JSON.stringify(asked)}`)) expect(mayHaveTag(lazy, asked)).toBe(false);
      }),
      { numRuns: RUNS * 10 },
    );
  });

  it('a value the structured copy refuses (nested past its depth) is verified on the main thread: a verdict, no failure', async () => {
    let deep: unknown = 'end';
    for (let depth = 0; depth < 200_000; depth++) deep = [deep];
    const note = signed('pool deep', { content: 'beside a deep value' });
    const verdicts = await pool.verify([deep, note]);
    expect(verdicts).toEqual([{ ok: false, reason: 'not_an_object' }, { ok: true, event: note }]);
  });

  it('inputs too large to store, many of them: each counted too_large (verified a few megabytes at a time)', async () => {
    const store = await createTestStore();
    try {
      const big = (n: number) => serializeEvent(signed('pool big', { created_at: 1_700_000_000 + n, content: 'x'.repeat(300 * 1024) }));
      const summary = await importEvents(Readable.from(Array.from({ length: 60 }, (_, n) => `${big(n)}\n`)), store.store);
      expect(summary).toMatchObject({ read: 60, stored: 0 });
      expect(summary.invalid).toEqual({ too_large: 60 });
    } finally {
      await store.cleanup();
    }
  });

  it('an import larger than a verification batch counts every event as the main thread would, and stores the valid ones', async () => {
    const store = await createTestStore();
    try {
      const notes = Array.from({ length: 700 }, (_, n) => signed(`pool author ${n % 50}`, { created_at: 1_700_000_000 + n, content: `n${n}` }));
      const lines = [
        ...notes.map((note, n) => serializeEvent(n % 7 === 0 ? { ...note, content: 'forged' } : note)),
        ...Array.from({ length: 30 }, (_, n) => serializeEvent(profile(`pool author ${n}`, { name: `a${n}` }))),
        '{"not":"an event"}',
        'not json',
        JSON.stringify(signed('pool eph', { kind: 20001 })),
      ];
      const summary = await importEvents(Readable.from([lines.join('\n')]), store.store, { batchSize: 100 });
      const forged = notes.filter((_, n) => n % 7 === 0).length;
      expect(summary).toMatchObject({ read: 732, stored: 700 - forged + 30, ephemeral: 1, unreadableLines: 1 });
      expect(summary.invalid).toEqual({ bad_id: forged, 'bad_field:id': 1 });
      const held = await store.store.getEvents(notes.map((note) => note.id));
      expect(held.filter((event) => event !== null)).toHaveLength(700 - forged);
    } finally {
      await store.cleanup();
    }
  });
});
