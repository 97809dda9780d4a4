import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseProfileMetadata } from '../src/nostr/profile-metadata.js';

const NONE = {
  name: null,
  display_name: null,
  about: null,
  picture: null,
  banner: null,
  website: null,
  nip05: null,
  lud06: null,
  lud16: null,
  bot: null,
};

describe('profile metadata (NIP-01, NIP-24)', () => {
  it('reads the known fields and ignores junk keys', () => {
    const content = JSON.stringify({
      name: 'alice',
      display_name: 'Alice 🌸',
      about: 'line\nbreak',
      picture: 'https://x/p.png',
      banner: 'https://x/b.png',
      website: 'https://alice.example',
      nip05: 'alice@example.com',
      lud06: 'lnurl1xyz',
      lud16: 'alice@wallet.example',
      bot: false,
      junk: { deep: [1, 2] },
    });
    expect(parseProfileMetadata(content)).toEqual({
      name: 'alice',
      display_name: 'Alice 🌸',
      about: 'line\nbreak',
      picture: 'https://x/p.png',
      banner: 'https://x/b.png',
      website: 'https://alice.example',
      nip05: 'alice@example.com',
      lud06: 'lnurl1xyz',
      lud16: 'alice@wallet.example',
      bot: false,
    });
  });

  it('falls back to the deprecated displayName', () => {
    expect(parseProfileMetadata('{"displayName":"Old"}').display_name).toBe('Old');
    expect(parseProfileMetadata('{"displayName":"Old","display_name":"New"}').display_name).toBe('New');
  });

  it('is null for content that is not a JSON object, and for fields of the wrong type', () => {
    for (const content of ['', 'not json', '[]', '"string"', '42', 'null', '{"name":']) {
      expect(parseProfileMetadata(content)).toEqual(NONE);
    }
    expect(parseProfileMetadata('{"name":42,"bot":"true","about":null,"picture":["x"]}')).toEqual(NONE);
  });

  it('never throws', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (content) => {
        expect(() => parseProfileMetadata(content)).not.toThrow();
      }),
    );
  });
});
