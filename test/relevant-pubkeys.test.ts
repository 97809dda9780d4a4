import fc from 'fast-check';
import { nprofileEncode, npubEncode } from 'nostr-tools/nip19';
import { describe, expect, it, vi } from 'vitest';
import { serializeEvent } from '../src/nostr/event.js';
import { relevantPubkeys } from '../src/nostr/relevant-pubkeys.js';
import { relevantPubkeysOf } from '../src/store/derived-values.js';
import { toStoredEvent } from '../src/store/stored-event.js';
import { MAX_MENTIONS_READ, MAX_TAGS_READ } from '../src/nostr/work-caps.js';
import { pubkeyOf, signed } from './support/events.js';

const [author, alice, bob, carol, dave, erin] = ['author', 'alice', 'bob', 'carol', 'dave', 'erin'].map(
  pubkeyOf,
) as [string, string, string, string, string, string];
const SOME_ID = 'e'.repeat(64);

describe('relevant pubkeys of an event (DESIGN §1)', () => {
  it('1. the author comes first, even with no other pubkey', () => {
    expect(relevantPubkeys(signed('author'), 100)).toEqual([author]);
  });

  it('2. p tags (NIP-01) and P tags (NIP-22 root author), uppercase hex normalised', () => {
    const event = signed('author', {
      tags: [
        ['p', alice],
        ['P', bob.toUpperCase()],
        ['p', carol, 'wss://relay', 'mention'],
      ],
    });
    expect(relevantPubkeys(event, 100)).toEqual([author, alice, bob, carol]);
  });

  it('3. nostr:npub and nostr:nprofile in content (NIP-27, NIP-21)', () => {
    const content = `hi nostr:${npubEncode(alice)}, and nostr:${nprofileEncode({ pubkey: bob, relays: ['wss://x'] })}!`;
    expect(relevantPubkeys(signed('author', { content }), 100)).toEqual([author, alice, bob]);
  });

  it('4. the pubkey of e tags at index 4 (NIP-10) and of q tags at index 3 (NIP-18)', () => {
    const event = signed('author', {
      tags: [
        ['e', SOME_ID, 'wss://relay', 'root', alice],
        ['e', SOME_ID, '', 'reply'],
        ['q', SOME_ID, 'wss://relay', bob],
      ],
    });
    expect(relevantPubkeys(event, 100)).toEqual([author, alice, bob]);
  });

  it('5. a repost (kinds 6 and 16) names the author of its embedded event only if that event is signed', () => {
    const original = signed('alice', { content: 'original note' });
    expect(relevantPubkeys(signed('author', { kind: 6, content: serializeEvent(original) }), 100)).toEqual([
      author,
      alice,
    ]);
    expect(relevantPubkeys(signed('author', { kind: 16, content: serializeEvent(original) }), 100)).toEqual([
      author,
      alice,
    ]);
    const forged = { ...original, pubkey: bob };
    expect(relevantPubkeys(signed('author', { kind: 6, content: JSON.stringify(forged) }), 100)).toEqual([
      author,
    ]);
    // Only reposts: the same content in a note names nobody.
    expect(relevantPubkeys(signed('author', { kind: 1, content: serializeEvent(original) }), 100)).toEqual([
      author,
    ]);
  });

  it('5. a repost is verified once, not on every read: relevant pubkeys are derived once per event id', async () => {
    const verify = await import('../src/nostr/verify-event.js');
    const original = signed('alice', { content: 'verified once' });
    const repost = signed('author', { kind: 6, content: serializeEvent(original) });
    const spy = vi.spyOn(verify, 'verifyNostrEvent');
    try {
      // A new stored object each time, as every request reads one: the id is what is remembered.
      for (let read = 0; read < 5; read++) expect(relevantPubkeysOf(toStoredEvent(repost), 100)).toEqual([author, alice]);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('first-seen order across sources, deduplicated', () => {
    const event = signed('author', {
      content: `nostr:${npubEncode(carol)} nostr:${npubEncode(alice)}`,
      tags: [
        ['e', SOME_ID, '', 'root', dave],
        ['p', alice],
        ['p', author],
        ['q', SOME_ID, '', erin],
        ['p', bob],
        ['p', alice],
      ],
    });
    expect(relevantPubkeys(event, 100)).toEqual([author, alice, bob, carol, dave, erin]);
  });

  it('is capped at the maximum, the author always kept', () => {
    const tags = Array.from({ length: 150 }, (_, i) => ['p', pubkeyOf(`many-${i}`)]);
    const event = signed('author', { tags });
    const capped = relevantPubkeys(event, 100);
    expect(capped).toHaveLength(100);
    expect(capped[0]).toBe(author);
    expect(capped[99]).toBe(pubkeyOf('many-98'));
    expect(relevantPubkeys(event, 1)).toEqual([author]);
  });

  it('skips anything malformed without failing', () => {
    const event = signed('author', {
      kind: 6,
      content: `{not json nostr:npub1qqqq nostr:${npubEncode(alice).slice(0, -1)}x nostr:note1abc`,
      tags: [
        ['p'],
        ['p', ''],
        ['p', 'zz'.repeat(32)],
        ['p', `${bob}0`],
        ['P', 'npub1xyz'],
        ['e', SOME_ID, '', 'root', 'not-a-pubkey'],
        ['e'],
        ['q', SOME_ID],
        [],
        ['p', carol],
      ],
    });
    expect(relevantPubkeys(event, 100)).toEqual([author, carol]);
  });

  it('never throws on arbitrary tags and content', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.string(), { maxLength: 6 }), { maxLength: 20 }),
        fc.string(),
        fc.constantFrom(1, 6, 16),
        (tags, content, kind) => {
          const event = { ...signed('author'), kind, tags, content };
          const pubkeys = relevantPubkeys(event, 100);
          expect(pubkeys[0]).toBe(author);
          for (const pubkey of pubkeys) expect(pubkey).toMatch(/^[0-9a-f]{64}$/);
        },
      ),
    );
  });
});

describe('relevant pubkeys are bounded work (13,000 junk mentions cost 100 ms per read)', () => {
  const mention = (name: string) => `nostr:${npubEncode(pubkeyOf(name))}`;
  const junk = `nostr:npub1${'q'.repeat(58)}`;

  it(`content: only the first MAX_MENTIONS_READ (${MAX_MENTIONS_READ}) mentions are decoded, valid or not`, () => {
    const before = signed('caps-author', { content: `${`${junk} `.repeat(MAX_MENTIONS_READ - 1)}${mention('caps-seen')}` });
    expect(relevantPubkeys(before, 100)).toEqual([pubkeyOf('caps-author'), pubkeyOf('caps-seen')]);
    const after = signed('caps-author', { content: `${`${junk} `.repeat(MAX_MENTIONS_READ)}${mention('caps-unseen')}` });
    expect(relevantPubkeys(after, 100)).toEqual([pubkeyOf('caps-author')]);
  });

  it(`tags: only the first MAX_TAGS_READ (${MAX_TAGS_READ}) tags are read`, () => {
    const filler = Array.from({ length: MAX_TAGS_READ - 1 }, () => ['t', 'x']);
    const within = signed('caps-author', { tags: [...filler, ['p', pubkeyOf('caps-seen')]] });
    expect(relevantPubkeys(within, 100)).toEqual([pubkeyOf('caps-author'), pubkeyOf('caps-seen')]);
    const past = signed('caps-author', { tags: [...filler, ['t', 'x'], ['p', pubkeyOf('caps-unseen')], ['e', 'a'.repeat(64), '', '', pubkeyOf('caps-unseen')]] });
    expect(relevantPubkeys(past, 100)).toEqual([pubkeyOf('caps-author')]);
  });

  it('a mention of a megabyte is not decoded (nostr-tools refuses bech32 over 5,000 characters)', () => {
    const event = signed('caps-author', { content: `nostr:npub1${'q'.repeat(1_000_000)}` });
    const started = process.cpuUsage();
    expect(relevantPubkeys(event, 100)).toEqual([pubkeyOf('caps-author')]);
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(50);
  });
});
