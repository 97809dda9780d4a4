import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_WRITE_RELAYS_PER_LIST, readRelaysOf, RELAY_LIST_KIND, writeRelaysOf } from '../src/nostr/relay-list.js';
import { MAX_RELAY_LIST_TAGS_READ, MAX_TAGS_READ } from '../src/nostr/work-caps.js';
import { parseRelayUrl } from '../src/relays/relay-url.js';

const list = (tags: string[][], kind = RELAY_LIST_KIND) => ({ kind, tags });

describe('parseRelayUrl keeps its length limit after normalising', () => {
  it('a URL that percent-encoding or normalising lengthens past 512 characters is refused, so every result parses again', () => {
    expect(parseRelayUrl(`wss://a.com?${'x'.repeat(500)}`)).toBeUndefined();
    expect(parseRelayUrl(`wss://a.com/${'a b'.repeat(104)}`)).toBeUndefined();
    const kept = parseRelayUrl(`wss://a.com/${'x'.repeat(400)}`);
    expect(kept).toBe(`wss://a.com/${'x'.repeat(400)}`);
    expect(parseRelayUrl(kept as string)).toBe(kept);
  });
});

describe('writeRelaysOf', () => {
  it('NIP-65: kind 10002 is the relay list kind', () => {
    expect(RELAY_LIST_KIND).toBe(10002);
  });

  it('NIP-65: `r` tags without a marker or marked `write` are write relays, `read`-marked ones are not, in the author’s order', () => {
    const tags = [
      ['r', 'wss://both.example'],
      ['r', 'wss://reads.example', 'read'],
      ['r', 'wss://writes.example', 'write'],
      ['r', 'wss://also-both.example'],
    ];
    expect(writeRelaysOf(list(tags))).toEqual(['wss://both.example/', 'wss://writes.example/', 'wss://also-both.example/']);
  });

  it('NIP-65: an empty marker counts as no marker; any other marker (not exactly `write`) is not a write relay', () => {
    const tags = [
      ['r', 'wss://empty-marker.example', ''],
      ['r', 'wss://upper.example', 'WRITE'],
      ['r', 'wss://both-word.example', 'both'],
      ['r', 'wss://spaced.example', ' write'],
      ['r', 'wss://extra.example', 'write', 'more'],
    ];
    expect(writeRelaysOf(list(tags))).toEqual(['wss://empty-marker.example/', 'wss://extra.example/']);
  });

  it('NIP-65: only `r` tags name relays; other tags and `r` tags without a URL are ignored', () => {
    const tags = [
      ['p', 'wss://p-tag.example'],
      ['R', 'wss://capital.example'],
      ['relay', 'wss://relay-tag.example'],
      [' r', 'wss://spaced-name.example'],
      ['r'],
      [],
      ['r', 'wss://kept.example'],
    ];
    expect(writeRelaysOf(list(tags))).toEqual(['wss://kept.example/']);
  });

  it('NIP-65: entries are normalised by parseRelayUrl (lowercase host, no default port, no trailing slash, sorted query, no fragment)', () => {
    const tags = [
      ['r', 'wss://Relay.Example.COM:443/'],
      ['r', '  ws://plain.example:80/  '],
      ['r', 'wss://path.example/nostr/'],
      ['r', 'wss://query.example/?b=2&a=1#fragment'],
      ['r', 'wss://port.example:7777'],
    ];
    expect(writeRelaysOf(list(tags))).toEqual([
      'wss://relay.example.com/',
      'ws://plain.example/',
      'wss://path.example/nostr',
      'wss://query.example/?a=1&b=2',
      'wss://port.example:7777/',
    ]);
  });

  it('NIP-65: entries that are not ws(s) URLs, carry credentials, lack a host or exceed 512 characters are skipped', () => {
    const atLimit = `wss://long.example/${'x'.repeat(512 - 'wss://long.example/'.length)}`;
    const overLimit = `${atLimit}x`;
    expect(atLimit).toHaveLength(512);
    const tags = [
      ['r', 'https://http.example'],
      ['r', 'http://http.example'],
      ['r', 'relay.example'],
      ['r', 'wss://user:secret@credentials.example'],
      ['r', 'wss://user@username.example'],
      ['r', 'wss://'],
      ['r', ''],
      ['r', '   '],
      ['r', 'not a url'],
      ['r', overLimit],
      ['r', atLimit],
      ['r', 'wss://good.example'],
    ];
    expect(writeRelaysOf(list(tags))).toEqual([atLimit, 'wss://good.example/']);
  });

  it('NIP-65: a relay named twice (in any spelling) is kept once, at its first position', () => {
    const tags = [
      ['r', 'wss://first.example'],
      ['r', 'wss://dup.example'],
      ['r', 'WSS://DUP.example:443/'],
      ['r', 'wss://second.example', 'write'],
      ['r', 'wss://dup.example/', 'write'],
      ['r', 'wss://first.example/'],
    ];
    expect(writeRelaysOf(list(tags))).toEqual(['wss://first.example/', 'wss://dup.example/', 'wss://second.example/']);
  });

  it(`NIP-65: at most MAX_WRITE_RELAYS_PER_LIST (${MAX_WRITE_RELAYS_PER_LIST}) write relays, the first ones of the list`, () => {
    const urls = Array.from({ length: 40 }, (_, n) => `wss://relay${n}.example/`);
    const result = writeRelaysOf(list(urls.map((url) => ['r', url])));
    expect(result).toEqual(urls.slice(0, MAX_WRITE_RELAYS_PER_LIST));
    expect(MAX_WRITE_RELAYS_PER_LIST).toBe(12);
  });

  it('NIP-65: skipped entries, read relays and duplicates do not use up the cap', () => {
    const urls = Array.from({ length: MAX_WRITE_RELAYS_PER_LIST + 1 }, (_, n) => `wss://relay${n}.example/`);
    const tags = [
      ...Array.from({ length: 100 }, (_, n) => ['r', `https://junk${n}.example`]),
      ...Array.from({ length: 100 }, (_, n) => ['r', `wss://read${n}.example`, 'read']),
      ...Array.from({ length: 100 }, () => ['r', urls[0] as string]),
      ...urls.map((url) => ['r', url]),
    ];
    expect(writeRelaysOf(list(tags))).toEqual(urls.slice(0, MAX_WRITE_RELAYS_PER_LIST));
  });

  it('NIP-65: an event of another kind has no write relays', () => {
    const tags = [['r', 'wss://relay.example']];
    expect(writeRelaysOf(list(tags))).toEqual(['wss://relay.example/']);
    for (const kind of [0, 1, 3, 10001, 10003, 10050, 30002]) expect(writeRelaysOf(list(tags, kind))).toEqual([]);
  });

  it('NIP-65: a relay list without tags has no write relays', () => {
    expect(writeRelaysOf(list([]))).toEqual([]);
  });

  it('NIP-65: hostile tag arrays never throw; the result is capped, duplicate-free, and every entry is a fixed point of parseRelayUrl', () => {
    // URL-shaped text, kept short: normalisation may lengthen a URL (percent-encoding), and these
    // must stay clear of the 512-character limit for the fixed-point check to be meaningful.
    const urlish = fc
      .tuple(
        fc.constantFrom('ws://', 'wss://', 'WSS://', 'Ws://', ' wss://', 'https://', 'wss:', 'wss://user:pw@', 'wss://u@', ''),
        fc.oneof(fc.domain(), fc.constantFrom('relay.example', 'RELAY.example', 'relay.example:443', 'relay.example:80', '[::1]', '127.0.0.1', '')),
        fc.constantFrom('', '/', '//', '/nostr/', '/a/../b', '?b=1&a=2', '#frag', ':0', ':99999'),
        fc.string({ maxLength: 6 }),
      )
      .map((parts) => parts.join('').slice(0, 40));
    const text = fc.oneof(
      urlish,
      fc.string(),
      fc.string({ unit: 'binary', maxLength: 20 }),
      fc.constantFrom('r', 'read', 'write', '', 'WRITE'),
      fc.integer({ min: 450, max: 2000 }).map((n) => `wss://long.example/${'x'.repeat(n)}`),
    );
    const tag = fc.oneof(
      fc.array(text, { maxLength: 5 }),
      fc.tuple(fc.constant('r'), urlish),
      fc.tuple(fc.constant('r'), urlish, fc.constantFrom('read', 'write', '', 'other')),
      fc.tuple(fc.constant('r'), text, text),
    );
    const tags = fc.oneof({ weight: 4, arbitrary: fc.array(tag, { maxLength: 60 }) }, { weight: 1, arbitrary: fc.array(tag, { minLength: 500, maxLength: 3000 }) });
    fc.assert(
      fc.property(tags, fc.constantFrom(RELAY_LIST_KIND, RELAY_LIST_KIND, RELAY_LIST_KIND, 3, 10001), (tags, kind) => {
        const result = writeRelaysOf({ kind, tags });
        if (kind !== RELAY_LIST_KIND) expect(result).toEqual([]);
        expect(result.length).toBeLessThanOrEqual(MAX_WRITE_RELAYS_PER_LIST);
        expect(new Set(result).size).toBe(result.length);
        for (const url of result) {
          expect(parseRelayUrl(url)).toBe(url);
          expect(url.startsWith('ws://') || url.startsWith('wss://')).toBe(true);
          expect(url.length).toBeLessThanOrEqual(512);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('NIP-65: a hostile list yields exactly the distinct parsed write entries, in order (model check)', () => {
    const entry = fc.tuple(
      fc.constantFrom('r', 'r', 'r', 'p', 'R'),
      fc.constantFrom('wss://a.example', 'wss://A.example/', 'ws://b.example:80', 'wss://c.example/x/', 'https://d.example', 'wss://u:p@e.example', 'junk', `wss://f.example/${'y'.repeat(600)}`),
      fc.constantFrom(undefined, '', 'read', 'write', 'both'),
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), (entries) => {
        const tags = entries.map(([name, url, marker]) => (marker === undefined ? [name, url] : [name, url, marker]));
        const expected: string[] = [];
        for (const [name, url, marker] of entries) {
          if (name !== 'r' || (marker !== undefined && marker !== '' && marker !== 'write')) continue;
          const parsed = parseRelayUrl(url);
          if (parsed !== undefined && !expected.includes(parsed)) expected.push(parsed);
        }
        expect(writeRelaysOf(list(tags))).toEqual(expected.slice(0, MAX_WRITE_RELAYS_PER_LIST));
      }),
      { numRuns: 300 },
    );
  });
});

describe('a relay list is bounded work (90,000 junk `r` tags cost 410–480 ms per lookup)', () => {
  it(`only the first MAX_RELAY_LIST_TAGS_READ (${MAX_RELAY_LIST_TAGS_READ}) \`r\` tags are read: a relay after them is not found`, () => {
    const junk = Array.from({ length: MAX_RELAY_LIST_TAGS_READ }, (_, n) => ['r', `junk-${n}`]);
    expect(writeRelaysOf(list([...junk.slice(1), ['r', 'wss://last.example']]))).toEqual(['wss://last.example/']);
    expect(writeRelaysOf(list([...junk, ['r', 'wss://past.example']]))).toEqual([]);
  });

  it(`only the first MAX_TAGS_READ (${MAX_TAGS_READ}) tags are looked at, whatever they are`, () => {
    const other = Array.from({ length: MAX_TAGS_READ }, () => ['t', 'x']);
    expect(writeRelaysOf(list([...other, ['r', 'wss://past.example']]))).toEqual([]);
  });

  it('90,000 junk entries take a few milliseconds, not half a second', () => {
    const junk = list(Array.from({ length: 90_000 }, (_, n) => ['r', `junk-${n}`]));
    const started = process.cpuUsage();
    for (let n = 0; n < 10; n++) expect(writeRelaysOf(junk)).toEqual([]);
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000 / 10).toBeLessThan(50);
  });
});

describe('readRelaysOf (the inbox the relationship fill asks)', () => {
  it('NIP-65: `r` tags without a marker or marked `read` are read relays, `write`-marked ones are not, in the author’s order', () => {
    const tags = [
      ['r', 'wss://both.example'],
      ['r', 'wss://reads.example', 'read'],
      ['r', 'wss://writes.example', 'write'],
      ['r', 'wss://empty-marker.example', ''],
      ['r', 'wss://odd-marker.example', 'inbox'],
      ['r', 'https://not-a-relay.example', 'read'],
      ['r', 'wss://READS.example/', 'read'],
    ];
    expect(readRelaysOf(list(tags))).toEqual(['wss://both.example/', 'wss://reads.example/', 'wss://empty-marker.example/']);
    expect(readRelaysOf(list(tags, 3))).toEqual([]);
  });

  it(`is bounded as writeRelaysOf is: at most ${MAX_WRITE_RELAYS_PER_LIST} relays, whatever the list holds`, () => {
    const urls = Array.from({ length: 40 }, (_, index) => `wss://r${index}.example/`);
    expect(readRelaysOf(list(urls.map((url) => ['r', url, 'read'])))).toEqual(urls.slice(0, MAX_WRITE_RELAYS_PER_LIST));
  });
});
