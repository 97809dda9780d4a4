import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { serializeEvent } from '../src/nostr/event.js';
import { verifyNostrEvent } from '../src/nostr/verify-event.js';
import { MAX_EVENT_BYTES, MAX_PROFILE_BYTES, MAX_TAGS } from '../src/nostr/work-caps.js';
import { realEvents, signed } from './support/events.js';

const tampered = JSON.parse(
  readFileSync(new URL('./fixtures/tampered-event.json', import.meta.url), 'utf8'),
) as unknown;

describe('NIP-01 verification', () => {
  it('accepts every real event of the fixtures, returning exactly the seven fields', () => {
    for (const event of realEvents()) {
      const verdict = verifyNostrEvent({ ...event, extra: 'dropped' });
      expect(verdict).toEqual({ ok: true, event });
      if (verdict.ok)
        expect(Object.keys(verdict.event)).toEqual([
          'id',
          'pubkey',
          'created_at',
          'kind',
          'tags',
          'content',
          'sig',
        ]);
    }
  });

  it('refuses the tampered event (tags edited after signing): bad id', () => {
    expect(verifyNostrEvent(tampered)).toEqual({ ok: false, reason: 'bad_id' });
  });

  it('refuses a valid id with a signature from another event: bad signature', () => {
    const a = signed('alice', { content: 'a' });
    const b = signed('alice', { content: 'b' });
    expect(verifyNostrEvent({ ...a, sig: b.sig })).toEqual({ ok: false, reason: 'bad_signature' });
    // Same id and content, but claimed by someone else.
    expect(verifyNostrEvent({ ...a, pubkey: signed('bob').pubkey })).toEqual({ ok: false, reason: 'bad_id' });
  });

  it('refuses every malformed field, naming it', () => {
    const good = signed('alice', { tags: [['t', 'x']] });
    const cases: [Record<string, unknown>, string][] = [
      [{ id: good.id.toUpperCase() }, 'id'],
      [{ id: undefined }, 'id'],
      [{ pubkey: good.pubkey.slice(2) }, 'pubkey'],
      [{ created_at: '1700000000' }, 'created_at'],
      [{ created_at: 1.5 }, 'created_at'],
      [{ created_at: -1 }, 'created_at'],
      [{ created_at: 2 ** 53 }, 'created_at'],
      [{ kind: 70000 }, 'kind'],
      [{ kind: -1 }, 'kind'],
      [{ kind: '1' }, 'kind'],
      [{ tags: [['t', 1]] }, 'tags'],
      [{ tags: ['t'] }, 'tags'],
      [{ tags: {} }, 'tags'],
      [{ content: null }, 'content'],
      [{ sig: good.sig.slice(1) }, 'sig'],
    ];
    for (const [change, field] of cases) {
      expect(verifyNostrEvent({ ...good, ...change })).toEqual({ ok: false, reason: 'bad_field', field });
    }
    for (const value of [null, 42, 'event', [good], undefined]) {
      expect(verifyNostrEvent(value)).toEqual({ ok: false, reason: 'not_an_object' });
    }
  });

  it('accepts created_at beyond 2^31, and unicode and escapes in content, as signed', () => {
    const content = 'emoji 🤙, quotes " \\ </script> \u2028 \u0000 ünïcödé 𝕏';
    const event = signed('alice', { created_at: 2 ** 31 + 12345, content });
    const verdict = verifyNostrEvent(JSON.parse(serializeEvent(event)));
    expect(verdict).toEqual({ ok: true, event });
  });

  it('no single-character change of a signed event still verifies', () => {
    const event = signed('alice', { content: 'hello', tags: [['p', signed('bob').pubkey]] });
    const text = serializeEvent(event);
    fc.assert(
      fc.property(
        fc.nat(text.length - 1),
        fc.constantFrom(...'0123456789abcdef"x '),
        (position, replacement) => {
          if (text[position] === replacement) return;
          let mutated: unknown;
          try {
            mutated = JSON.parse(text.slice(0, position) + replacement + text.slice(position + 1));
          } catch {
            return;
          }
          expect(verifyNostrEvent(mutated).ok).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('size limits (a valid event over ~945 KB was refused as bad_signature by the wasm verifier)', () => {
  // The preimage (`[0,pubkey,created_at,kind,tags,content]`) of an event with `n` characters of ASCII content is n + OVERHEAD bytes.
  const OVERHEAD = 89;
  const preimage = (event: { tags: string[][]; content: string; pubkey: string; created_at: number; kind: number }) =>
    Buffer.byteLength(JSON.stringify([0, event.pubkey, event.created_at, event.kind, event.tags, event.content]));

  it(`MAX_EVENT_BYTES (${MAX_EVENT_BYTES}) is the limit, with its own reason: one byte under is verified, one over is too_large`, () => {
    const under = signed('big', { content: 'x'.repeat(MAX_EVENT_BYTES - OVERHEAD) });
    expect(preimage(under)).toBe(MAX_EVENT_BYTES);
    expect(verifyNostrEvent(under).ok).toBe(true);
    const over = signed('big', { content: 'x'.repeat(MAX_EVENT_BYTES - OVERHEAD + 1) });
    expect(verifyNostrEvent(over)).toEqual({ ok: false, reason: 'too_large' });
    // What the wasm verifier refused as bad_signature before: a valid event of 945,600 bytes.
    expect(verifyNostrEvent(signed('big', { content: 'x'.repeat(945_500) }))).toEqual({ ok: false, reason: 'too_large' });
  });

  it('bytes, not characters: escapes and UTF-8 count (a content of control characters is six bytes each)', () => {
    const escaped = signed('big', { content: '\u0001'.repeat(Math.ceil(MAX_EVENT_BYTES / 6)) });
    expect(verifyNostrEvent(escaped)).toEqual({ ok: false, reason: 'too_large' });
    const wide = signed('big', { content: '€'.repeat(Math.ceil(MAX_EVENT_BYTES / 3)) });
    expect(verifyNostrEvent(wide)).toEqual({ ok: false, reason: 'too_large' });
    const tags = signed('big', { tags: Array.from({ length: MAX_TAGS }, () => ['t', 'x'.repeat(200)]) });
    expect(preimage(tags)).toBeGreaterThan(MAX_EVENT_BYTES);
    expect(verifyNostrEvent(tags)).toEqual({ ok: false, reason: 'too_large' });
  });

  it('near the limit, too_large exactly when the preimage is over it, whatever the characters (property: the measure is the wire form less its fixed fields)', () => {
    const tail = fc.string({ unit: fc.oneof(fc.constantFrom('x', '"', '\\', '\u0001', '\n', 'é', '€', '😀', '\u2028'), fc.string({ unit: 'binary', maxLength: 1 })), maxLength: 12 });
    fc.assert(
      fc.property(tail, fc.integer({ min: -40, max: 8 }), fc.array(fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }), { maxLength: 3 }), (end, shift, tags) => {
        const event = signed('near', { content: `${'x'.repeat(MAX_EVENT_BYTES - OVERHEAD + shift)}${end}`, tags });
        const over = preimage(event) > MAX_EVENT_BYTES;
        expect(verifyNostrEvent(event)).toEqual(over ? { ok: false, reason: 'too_large' } : { ok: true, event });
      }),
      { numRuns: 40 },
    );
  });

  it(`a profile (kind 0) over MAX_PROFILE_BYTES (${MAX_PROFILE_BYTES}) is too_large; other kinds of that size are verified`, () => {
    const content = JSON.stringify({ name: 'big', about: 'x'.repeat(MAX_PROFILE_BYTES) });
    expect(verifyNostrEvent(signed('big', { kind: 0, content }))).toEqual({ ok: false, reason: 'too_large' });
    expect(verifyNostrEvent(signed('big', { kind: 1, content })).ok).toBe(true);
    const fits = signed('big', { kind: 0, content: 'x'.repeat(MAX_PROFILE_BYTES - OVERHEAD) });
    expect(preimage(fits)).toBe(MAX_PROFILE_BYTES);
    expect(verifyNostrEvent(fits).ok).toBe(true);
    const over = signed('big', { kind: 0, content: 'x'.repeat(MAX_PROFILE_BYTES - OVERHEAD + 1) });
    expect(verifyNostrEvent(over)).toEqual({ ok: false, reason: 'too_large' });
  });

  it(`more than MAX_TAGS (${MAX_TAGS}) tags is too_many_tags, whatever their size (300,000 empty tags fit in 900 KB)`, () => {
    expect(verifyNostrEvent(signed('big', { tags: Array.from({ length: MAX_TAGS }, () => []) })).ok).toBe(true);
    expect(verifyNostrEvent(signed('big', { tags: Array.from({ length: MAX_TAGS + 1 }, () => []) }))).toEqual({ ok: false, reason: 'too_many_tags' });
  });

  it('a forged signature on a large event is still bad_signature (the size check does not hide it)', () => {
    const event = signed('big', { content: 'x'.repeat(200_000) });
    expect(verifyNostrEvent({ ...event, sig: 'a'.repeat(128) })).toEqual({ ok: false, reason: 'bad_signature' });
  });
});
