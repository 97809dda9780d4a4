import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ALL_RELAYS, deletionTargets, MAX_DELETION_TARGETS, vanishApplies } from '../src/nostr/deletions.js';
import type { NostrEvent } from '../src/nostr/event.js';
import { addressableAddress } from '../src/nostr/kinds.js';
import {
  addressOfMember,
  authorIndexMember,
  barVerdict,
  higherBar,
  parseSlotBar,
  pendingDeleters,
  slotBarValue,
  withPendingDeleter,
} from '../src/store/tombstones.js';
import { pubkeyOf, signed } from './support/events.js';

const alice = pubkeyOf('alice');
const bob = pubkeyOf('bob');
const id = 'ab'.repeat(32);

/** An unsigned event shape: these rules read tags and kinds only (the store trusts verified events). */
function draft(kind: number, tags: string[][], pubkey = alice): NostrEvent {
  return { id, pubkey, created_at: 1_700_000_000, kind, tags, content: '', sig: '0'.repeat(128) };
}

describe('NIP-09 deletion targets (nostr/deletions.ts)', () => {
  it('reads e tags (64 lowercase hex) and a tags of the author’s own replaceable or addressable addresses', () => {
    const targets = deletionTargets(
      draft(5, [
        ['e', id],
        ['e', id], // repeated: once
        ['e', id.toUpperCase()], // not lowercase hex
        ['e', 'abc'],
        ['a', `30023:${alice}:my-article`],
        ['a', `0:${alice}:`],
        ['a', `10002:${alice}:ignored-d`],
        ['a', `30023:${bob}:not-hers`],
        ['a', `1:${alice}:`], // a regular kind has no address
        ['a', `30023:${alice}`], // no d part
        ['a', `x:${alice}:d`],
        ['k', '1'],
        ['e'],
        [],
      ]),
    );
    expect(targets).toEqual({ ids: [id], addresses: [`30023:${alice}:my-article`, `0:${alice}`, `10002:${alice}`] });
  });

  it('an a tag with a d longer than 256 bytes names the same hashed address the store keeps', () => {
    const d = 'd'.repeat(1000);
    expect(deletionTargets(draft(5, [['a', `30023:${alice}:${d}`]])).addresses).toEqual([addressableAddress(30023, alice, d)]);
  });

  it('names nothing for any other kind', () => {
    expect(deletionTargets(draft(1, [['e', id]]))).toEqual({ ids: [], addresses: [] });
  });

  it(`reads at most ${MAX_DELETION_TARGETS} targets`, () => {
    const tags = Array.from({ length: 3000 }, (_, index) => ['e', index.toString(16).padStart(64, '0')]);
    expect(deletionTargets(draft(5, tags)).ids).toHaveLength(MAX_DELETION_TARGETS);
  });

  it('hostile tags (generated): never throws; every target is a hex id or an address of the author', () => {
    const tag = fc.array(fc.oneof(fc.string(), fc.constantFrom('e', 'a', id, `30023:${alice}:`, `0:${bob}:`)), { maxLength: 4 });
    fc.assert(
      fc.property(fc.array(tag, { maxLength: 30 }), (tags) => {
        const { ids, addresses } = deletionTargets(draft(5, tags));
        for (const target of ids) expect(target).toMatch(/^[0-9a-f]{64}$/);
        for (const address of addresses) expect(address.split(/[:#]/)[1]).toBe(alice);
      }),
    );
  });
});

describe('NIP-62 requests to vanish (nostr/deletions.ts)', () => {
  it('apply with a relay tag ALL_RELAYS (uppercase, exactly), or naming PUBLIC_URL in any scheme', () => {
    expect(vanishApplies(draft(62, [['relay', ALL_RELAYS]]))).toBe(true);
    expect(vanishApplies(draft(62, [['relay', 'all_relays']]))).toBe(false);
    expect(vanishApplies(draft(62, [['relay', 'wss://other.example']]))).toBe(false);
    expect(vanishApplies(draft(62, [['r', ALL_RELAYS]]))).toBe(false);
    expect(vanishApplies(draft(62, []))).toBe(false);
    expect(vanishApplies(draft(1, [['relay', ALL_RELAYS]]))).toBe(false);
    const own = 'https://lookup.example.com/';
    for (const named of ['wss://lookup.example.com', 'https://LOOKUP.example.com/', 'ws://lookup.example.com:443', 'wss://lookup.example.com:443/']) {
      expect([named, vanishApplies(draft(62, [['relay', named]]), own)]).toEqual([named, named !== 'ws://lookup.example.com:443']);
    }
    expect(vanishApplies(draft(62, [['relay', 'wss://lookup.example.com/other']]), own)).toBe(false);
    expect(vanishApplies(draft(62, [['relay', 'wss://lookup.example.com']]))).toBe(false);
  });

  it('hostile relay tags (generated) never throw', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.string(), { maxLength: 3 }), { maxLength: 10 }), fc.option(fc.webUrl()), (tags, url) => {
        expect(typeof vanishApplies(draft(62, tags), url ?? undefined)).toBe('boolean');
      }),
    );
  });
});

describe('tombstone values (store/tombstones.ts)', () => {
  it('a slot bar round-trips; anything else is not a bar', () => {
    expect(parseSlotBar(slotBarValue({ createdAt: 1_700_000_000, id: '' }))).toEqual({ createdAt: 1_700_000_000, id: '' });
    expect(parseSlotBar(slotBarValue({ createdAt: 5, id }))).toEqual({ createdAt: 5, id });
    for (const junk of ['x', 'x12:', 'x12:zz', '{"id":"', `x1:${id}x`, 'y12']) expect(parseSlotBar(junk)).toBeUndefined();
  });

  it('the higher of two bars is the one that refuses more (NIP-01 order; an a-tag bar beats an e-tag bar of the same second)', () => {
    expect(higherBar({ createdAt: 10, id }, { createdAt: 10, id: '' })).toEqual({ createdAt: 10, id: '' });
    expect(higherBar({ createdAt: 11, id }, { createdAt: 10, id: '' })).toEqual({ createdAt: 11, id });
    expect(barVerdict({ created_at: 10, id: 'ff'.repeat(32) }, { createdAt: 10, id: '' })).toBe('deleted');
    expect(barVerdict({ created_at: 11, id }, { createdAt: 10, id: '' })).toBe('accepted');
    expect(barVerdict({ created_at: 9, id: '00'.repeat(32) }, { createdAt: 10, id })).toBe('superseded');
    expect(barVerdict({ created_at: 10, id }, { createdAt: 10, id })).toBe('deleted');
    expect(barVerdict({ created_at: 10, id: '00'.repeat(32) }, { createdAt: 10, id })).toBe('accepted');
  });

  it('a pending deletion keeps each signer once, 16 at most', () => {
    let value: string | undefined;
    for (let index = 0; index < 20; index++) value = withPendingDeleter(value, pubkeyOf(`k${index % 18}`));
    const deleters = pendingDeleters(value as string);
    expect(deleters).toHaveLength(16);
    expect(new Set(deleters).size).toBe(16);
    expect(withPendingDeleter(value, deleters[0] as string)).toBe(value);
  });

  it('an author index member names its address back (generated kinds and d tags)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 30000, max: 39999 }), fc.string({ maxLength: 300 }), (kind, d) => {
        const address = addressableAddress(kind, alice, d);
        expect(addressOfMember(authorIndexMember(address, alice), alice)).toBe(address);
      }),
    );
    expect(addressOfMember(authorIndexMember(`0:${alice}`, alice), alice)).toBe(`0:${alice}`);
    expect(addressOfMember(id, alice)).toBeUndefined();
  });

  it('signed deletions read the same as drafts', () => {
    const request = signed('alice', { kind: 5, tags: [['e', id]] });
    expect(deletionTargets(request).ids).toEqual([id]);
  });
});
