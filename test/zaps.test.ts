import { bech32 } from '@scure/base';
import fc from 'fast-check';
import { decode as decodeBolt11 } from 'light-bolt11-decoder';
import { getEventHash, verifyEvent } from 'nostr-tools/pure';
import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { MAX_BOLT11_CHARS, MAX_ZAP_DESCRIPTION_BYTES } from '../src/nostr/work-caps.js';
import { isZapReceipt, readZapReceipt, type ZapInvalidReason, type ZapReading } from '../src/nostr/zaps.js';
import { pubkeyOf, signed } from './support/events.js';
import { invoice, sha256 } from './support/zaps.js';

/**
 * NIP-57 receipts by the rule of DESIGN "Relationships" (zaps row), every check but the provider's.
 * Invoices are made by `bolt11` (the bitcoinjs encoder, a devDependency for these tests only: the
 * decoder cannot encode, and a description-hash invoice must commit to a zap request we sign here),
 * and read back by light-bolt11-decoder as the service reads them; the BOLT 11 spec's own test
 * vectors stand beside them.
 */

const SENDER = 'zap sender';
const RECIPIENT = pubkeyOf('zap recipient');
const PROVIDER = 'zap provider';
const NOTE = 'a'.repeat(63) + '1';
const OTHER_NOTE = 'b'.repeat(63) + '2';
/** The same invoice under another human-readable part (amount), its checksum made anew: what no honest encoder writes. */
function withPrefix(paymentRequest: string, prefix: string): string {
  const { words } = bech32.decode(paymentRequest as `${string}1${string}`, false);
  return bech32.encode(prefix, words, false);
}

/** The same invoice with a tagged field put first (after the timestamp), its checksum made anew. */
function withFieldFirst(paymentRequest: string, tag: number, data: number[]): string {
  const { prefix, words } = bech32.decode(paymentRequest as `${string}1${string}`, false);
  const field = [tag, Math.floor(data.length / 32), data.length % 32, ...data];
  return bech32.encode(prefix, [...words.slice(0, 7), ...field, ...words.slice(7)], false);
}

interface ZapOptions {
  msats?: string;
  /** The request's tags; default: relays, amount, p, e. */
  requestTags?: string[][];
  requestKind?: number;
  /** The receipt's `e` (null: none). */
  receiptTarget?: string | null;
  /** Replaces the description tag's value (the invoice commits to it unless `invoiceHash` says otherwise). */
  description?: string;
  invoiceHash?: string | null;
  /** Replaces the bolt11 tag's value. */
  bolt11?: string;
  receiptTags?: (tags: string[][]) => string[][];
}

/** A signed zap request and the receipt a provider signs for it; by default every check holds. */
function zap(options: ZapOptions = {}): { request: NostrEvent; receipt: NostrEvent } {
  const msats = options.msats ?? '21000';
  const request = signed(SENDER, {
    kind: options.requestKind ?? 9734,
    created_at: 1_700_000_000,
    content: 'Zap!',
    tags: options.requestTags ?? [['relays', 'wss://relay.example'], ['amount', msats], ['p', RECIPIENT], ['e', NOTE]],
  });
  const description = options.description ?? JSON.stringify(request);
  const pr = options.bolt11 ?? invoice({ msats, descriptionHash: options.invoiceHash === undefined ? sha256(description) : options.invoiceHash });
  const target = options.receiptTarget === undefined ? NOTE : options.receiptTarget;
  let tags = [['p', RECIPIENT], ['P', pubkeyOf(SENDER)], ...(target === null ? [] : [['e', target]]), ['bolt11', pr], ['description', description]];
  if (options.receiptTags) tags = options.receiptTags(tags);
  return { request, receipt: signed(PROVIDER, { kind: 9735, created_at: 1_700_000_100, tags }) };
}

const reasonOf = (reading: ZapReading) => ('invalid' in reading ? reading.invalid : 'valid');

describe('a valid zap receipt', () => {
  it('reads as its target, recipient, sender, msats, request and provider', () => {
    const { request, receipt } = zap();
    expect(readZapReceipt(receipt)).toEqual({
      receiptId: receipt.id,
      provider: pubkeyOf(PROVIDER),
      recipient: RECIPIENT,
      target: NOTE,
      sender: pubkeyOf(SENDER),
      msats: 21000,
      requestId: request.id,
    });
  });

  it('a zap of a profile (no `e` in the request nor the receipt) has no target; a request without `amount` takes the invoice\'s', () => {
    const { receipt } = zap({ requestTags: [['relays', 'wss://relay.example'], ['p', RECIPIENT]], receiptTarget: null, msats: '5000' });
    const reading = readZapReceipt(receipt);
    expect(isZapReceipt(reading)).toBe(true);
    expect(reading).not.toHaveProperty('target');
    expect(reading).toMatchObject({ recipient: RECIPIENT, msats: 5000 });
  });

  it('ids and pubkeys in capitals are read in lowercase; `amount` with leading zeros is the same amount', () => {
    const { receipt } = zap({
      requestTags: [['amount', '0021000'], ['p', RECIPIENT.toUpperCase()], ['e', NOTE.toUpperCase()]],
      receiptTags: (tags) => tags.map((tag) => (tag[0] === 'p' || tag[0] === 'e' ? [tag[0], (tag[1] as string).toUpperCase()] : tag)),
    });
    expect(readZapReceipt(receipt)).toMatchObject({ recipient: RECIPIENT, target: NOTE, msats: 21000 });
  });
});

describe('the NIP-57 example receipt (appendix E)', () => {
  // As published in nostr-protocol/nips 57.md, with a placeholder `sig` (the example has none).
  const example: NostrEvent = {
    id: '67b48a14fb66c60c8f9070bdeb37afdfcc3d08ad01989460448e4081eddda446',
    pubkey: '9630f464cca6a5147aa8a35f0bcdd3ce485324e732fd39e09233b1d848238f31',
    created_at: 1674164545,
    kind: 9735,
    tags: [
      ['p', '32e1827635450ebb3c5a7d12c1f8e7b2b514439ac10a67eef3d9fd9c5c68e245'],
      ['P', '97c70a44366a6535c145b333f973ea86dfdc2d7a99da618c40c64705ad98e322'],
      ['e', '3624762a1274dd9636e0c552b53086d70bc88c165bc4dc0f9e836a1eaf86c3b8'],
      [
        'bolt11',
        'lnbc10u1p3unwfusp5t9r3yymhpfqculx78u027lxspgxcr2n2987mx2j55nnfs95nxnzqpp5jmrh92pfld78spqs78v9euf2385t83uvpwk9ldrlvf6ch7tpascqhp5zvkrmemgth3tufcvflmzjzfvjt023nazlhljz2n9hattj4f8jq8qxqyjw5qcqpjrzjqtc4fc44feggv7065fqe5m4ytjarg3repr5j9el35xhmtfexc42yczarjuqqfzqqqqqqqqlgqqqqqqgq9q9qxpqysgq079nkq507a5tw7xgttmj4u990j7wfggtrasah5gd4ywfr2pjcn29383tphp4t48gquelz9z78p4cq7ml3nrrphw5w6eckhjwmhezhnqpy6gyf0',
      ],
      [
        'description',
        '{"pubkey":"97c70a44366a6535c145b333f973ea86dfdc2d7a99da618c40c64705ad98e322","content":"","id":"d9cc14d50fcb8c27539aacf776882942c1a11ea4472f8cdec1dea82fab66279d","created_at":1674164539,"sig":"77127f636577e9029276be060332ea565deaf89ff215a494ccff16ae3f757065e2bc59b2e8c113dd407917a010b3abd36c8d7ad84c0e3ab7dab3a0b0caa9835d","kind":9734,"tags":[["e","3624762a1274dd9636e0c552b53086d70bc88c165bc4dc0f9e836a1eaf86c3b8"],["p","32e1827635450ebb3c5a7d12c1f8e7b2b514439ac10a67eef3d9fd9c5c68e245"],["relays","wss://relay.damus.io","wss://nostr-relay.wlvs.space","wss://nostr.fmt.wiz.biz","wss://relay.nostr.bg","wss://nostr.oxtr.dev","wss://nostr.v0l.io","wss://brb.io","wss://nostr.bitcoiner.social","ws://monad.jb55.com:8080","wss://relay.snort.social"]]}',
      ],
      ['preimage', '5d006d2cf1e73c7148e7519a4c68adc81642ce0e25a432b2434c99f97344c15f'],
    ],
    content: '',
    sig: '0'.repeat(128),
  };

  it('as published it is not a zap: its invoice commits to another description, and its zap request does not verify', () => {
    // Its invoice decodes: 10u, 1,000,000 msats.
    expect(decodeBolt11(example.tags[3]?.[1] as string).sections.find((section) => section.name === 'amount')).toMatchObject({ value: '1000000' });
    expect(readZapReceipt(example)).toEqual({ invalid: 'description_hash_mismatch' });
    // Its zap request's id is not the hash of its fields, nor is its signature valid (the example was edited by hand).
    const request = JSON.parse(example.tags[4]?.[1] as string) as NostrEvent;
    expect(getEventHash(request)).not.toBe(request.id);
    expect(verifyEvent(request)).toBe(false);
  });

  it('the same receipt with real signatures and an invoice committing to its description is a zap of 1,000,000 msats', () => {
    // Same tags and amount (10u); our test keys stand in for the example's people, whose keys we do not have.
    const requestTags = JSON.parse(example.tags[4]?.[1] as string).tags.map((tag: string[]) => (tag[0] === 'p' ? ['p', RECIPIENT] : tag));
    const request = signed(SENDER, { kind: 9734, created_at: 1674164539, content: '', tags: requestTags });
    const description = JSON.stringify(request);
    const pr = invoice({ msats: '1000000', descriptionHash: sha256(description) });
    expect(pr.startsWith('lnbc10u1')).toBe(true);
    const tags = example.tags.map((tag) =>
      tag[0] === 'p' ? ['p', RECIPIENT] : tag[0] === 'P' ? ['P', request.pubkey] : tag[0] === 'bolt11' ? ['bolt11', pr] : tag[0] === 'description' ? ['description', description] : tag,
    );
    const receipt = signed(PROVIDER, { kind: 9735, created_at: example.created_at, tags });
    expect(readZapReceipt(receipt)).toEqual({
      receiptId: receipt.id,
      provider: receipt.pubkey,
      recipient: RECIPIENT,
      target: '3624762a1274dd9636e0c552b53086d70bc88c165bc4dc0f9e836a1eaf86c3b8',
      sender: request.pubkey,
      msats: 1_000_000,
      requestId: request.id,
    });
  });
});

/** BOLT 11 test vectors (lightning/bolts, 11-payment-encoding.md), signed by NODE_KEY. */
const BOLT11_VECTORS = {
  donation: 'lnbc1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq8rkx3yf5tcsyz3d73gafnh3cax9rn449d9p5uxz9ezhhypd0elx87sjle52x86fux2ypatgddc6k63n7erqz25le42c4u4ecky03ylcqca784w',
  coffee2500u: 'lnbc2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5xysxxatsyp3k7enxv4jsxqzpuaztrnwngzn3kdzw5hydlzf03qdgm2hdq27cqv3agm2awhz5se903vruatfhq77w3ls4evs3ch9zw97j25emudupq63nyw24cg27h2rspfj9srp',
  hashed20m: 'lnbc20m1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqhp58yjmdan79s6qqdhdzgynm4zwqd5d7xmw5fk98klysy043l2ahrqscc6gd6ql3jrc5yzme8v4ntcewwz5cnw92tz0pc8qcuufvq7khhr8wpald05e92xw006sq94mg8v2ndf4sefvf9sygkshp5zfem29trqq2yxxz7',
  pico: 'lnbc9678785340p1pwmna7lpp5gc3xfm08u9qy06djf8dfflhugl6p7lgza6dsjxq454gxhj9t7a0sd8dgfkx7cmtwd68yetpd5s9xar0wfjn5gpc8qhrsdfq24f5ggrxdaezqsnvda3kkum5wfjkzmfqf3jkgem9wgsyuctwdus9xgrcyqcjcgpzgfskx6eqf9hzqnteypzxz7fzypfhg6trddjhygrcyqezcgpzfysywmm5ypxxjemgw3hxjmn8yptk7untd9hxwg3q2d6xjcmtv4ezq7pqxgsxzmnyyqcjqmt0wfjjq6t5v4khxxqyjw5qcqp2rzjq0gxwkzc8w6323m55m4jyxcjwmy7stt9hwkwe2qxmy8zpsgg7jcuwz87fcqqeuqqqyqqqqlgqqqqn3qq9qn07ytgrxxzad9hc4xt3mawjjt8znfv8xzscs7007v9gh9j569lencxa8xeujzkxs0uamak9aln6ez02uunw6rd2ht2sqe4hz8thcdagpleym0j',
  ignoredFields:
    'lnbc25m1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5vdhkven9v5sxyetpdeessp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygs9q5sqqqqqqqqqqqqqqqpqsq2qrqqqfppnqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqppnqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqpp4qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqhpnqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqhp4qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqspnqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqsp4qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqnp5qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqnpkqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq2jxxfsnucm4jf4zwtznpaxphce606fvhvje5x7d4gw7n73994hgs7nteqvenq8a4ml8aqtchv5d9pf7l558889hp4yyrqv6a7zpq9fgpskqhza',
  badChecksum: 'lnbc2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpquwpc4curk03c9wlrswe78q4eyqc7d8d0xqzpuyk0sg5g70me25alkluzd2x62aysf2pyy8edtjeevuv4p2d5p76r4zkmneet7uvyakky2zr4cusd45tftc9c5fh0nnqpnl2jfll544esqchsrnt',
  mixedCase: 'LNBC2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpquwpc4curk03c9wlrswe78q4eyqc7d8d0xqzpuyk0sg5g70me25alkluzd2x62aysf2pyy8edtjeevuv4p2d5p76r4zkmneet7uvyakky2zr4cusd45tftc9c5fh0nnqpnl2jfll544esqchsrny',
  badMultiplier: 'lnbc2500x1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5xysxxatsyp3k7enxv4jsxqzpujr6jxr9gq9pv6g46y7d20jfkegkg4gljz2ea2a3m9lmvvr95tq2s0kvu70u3axgelz3kyvtp2ywwt0y8hkx2869zq5dll9nelr83zzqqpgl2zg',
  subMillisatoshi:
    'lnbc2500000001p1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5xysxxatsyp3k7enxv4jsxqzpu7hqtk93pkf7sw55rdv4k9z2vj050rxdr6za9ekfs3nlt5lr89jqpdmxsmlj9urqumg0h9wzpqecw7th56tdms40p2ny9q4ddvjsedzcplva53s',
};

describe('amounts, as light-bolt11-decoder reads them', () => {
  it('what the decoder returns: millisatoshis as a decimal string; a `p` amount not a multiple of 10 (a fraction of a millisatoshi) is an error', () => {
    const amount = (pr: string) => decodeBolt11(pr).sections.find((section) => section.name === 'amount');
    expect(amount(BOLT11_VECTORS.coffee2500u)).toMatchObject({ letters: '2500u', value: '250000000' });
    expect(amount(BOLT11_VECTORS.hashed20m)).toMatchObject({ letters: '20m', value: '2000000000' });
    expect(amount(BOLT11_VECTORS.pico)).toMatchObject({ letters: '9678785340p', value: '967878534' });
    expect(amount(BOLT11_VECTORS.donation)).toBeUndefined();
    expect(() => decodeBolt11(BOLT11_VECTORS.subMillisatoshi)).toThrow('Amount is outside of valid range');
    expect(() => decodeBolt11(BOLT11_VECTORS.badMultiplier)).toThrow('Not a valid multiplier for the amount');
  });

  it.each([
    // msats, the amount as the invoice writes it
    ['100000000000', '1'], // 1 BTC: no multiplier
    ['2100000000', '21m'],
    ['2100000', '21u'],
    ['2100', '21n'],
    ['21000', '210n'],
    ['1', '10p'], // one millisatoshi is ten pico-bitcoin
    ['21', '210p'],
    ['9007199254740991', '90071992547409910p'], // 2^53 - 1: the most that counts exactly
  ])('%s msats written %s: counted exactly', (msats, written) => {
    const { receipt } = zap({ msats });
    expect((receipt.tags.find((tag) => tag[0] === 'bolt11')?.[1] as string).startsWith(`lnbc${written}1`)).toBe(true);
    expect(readZapReceipt(receipt)).toMatchObject({ msats: Number(msats) });
  });

  it('the same invoice rewritten with each multiplier reads as its amount (the checksum made anew; invoice signatures are not checked)', () => {
    const { request } = zap({ requestTags: [['p', RECIPIENT], ['e', NOTE]] });
    const description = JSON.stringify(request);
    const base = invoice({ msats: '1000', descriptionHash: sha256(description) });
    for (const [prefix, msats] of [['lnbc3', 300_000_000_000], ['lnbc3m', 300_000_000], ['lnbc3u', 300_000], ['lnbc3n', 300], ['lnbc30p', 3], ['lnbc2500u', 250_000_000]] as const) {
      const { receipt } = zap({ requestTags: [['p', RECIPIENT], ['e', NOTE]], description, bolt11: withPrefix(base, prefix) });
      expect(readZapReceipt(receipt), prefix).toMatchObject({ msats });
    }
  });

  it.each([
    ['15p: 1.5 millisatoshis', 'lnbc15p', 'bad_amount'],
    ['1p', 'lnbc1p', 'bad_amount'],
    ['an unknown multiplier', 'lnbc3x', 'bad_amount'],
    ['zero', 'lnbc0n', 'no_amount'],
    ['2^53 msats', 'lnbc90071992547409920p', 'amount_too_large'],
    ['21 million BTC', 'lnbc21000000', 'amount_too_large'],
    ['more than 21 million BTC', 'lnbc21000001', 'bad_amount'],
    ['no amount', 'lnbc', 'no_amount'],
  ])('%s (%s) → %s', (_label, prefix, reason) => {
    const { request } = zap({ requestTags: [['p', RECIPIENT], ['e', NOTE]] });
    const description = JSON.stringify(request);
    const pr = withPrefix(invoice({ msats: '1000', descriptionHash: sha256(description) }), prefix);
    expect(readZapReceipt(zap({ requestTags: [['p', RECIPIENT], ['e', NOTE]], description, bolt11: pr }).receipt)).toEqual({ invalid: reason });
  });

  it('BOLT 11 spec vectors: a sub-millisatoshi amount and an invalid multiplier are bad amounts; no amount is not a zap; bad checksums and mixed case do not decode', () => {
    const read = (pr: string) => reasonOf(readZapReceipt(zap({ bolt11: pr }).receipt));
    expect(read(BOLT11_VECTORS.subMillisatoshi)).toBe('bad_amount');
    expect(read(BOLT11_VECTORS.badMultiplier)).toBe('bad_amount');
    expect(read(BOLT11_VECTORS.donation)).toBe('no_amount');
    expect(read(BOLT11_VECTORS.badChecksum)).toBe('bad_invoice');
    expect(read(BOLT11_VECTORS.mixedCase)).toBe('bad_invoice');
    // Amounts that decode reach the later checks: these commit to other descriptions.
    expect(read(BOLT11_VECTORS.pico)).toBe('no_description_hash');
    expect(read(BOLT11_VECTORS.hashed20m)).toBe('description_hash_mismatch');
    // Spec-valid, but light-bolt11-decoder cannot read fields of the wrong length whose padding is
    // not whole bytes: such an invoice is not a zap (no zap provider writes one).
    expect(() => decodeBolt11(BOLT11_VECTORS.ignoredFields)).toThrow();
    expect(read(BOLT11_VECTORS.ignoredFields)).toBe('bad_invoice');
  });

  it.each([
    ['testnet', 'lntb1m'],
    ['signet', 'lntbs1m'],
    ['regtest', 'lnbcrt1m'],
    ['simnet', 'lnsb1m'],
  ])('an invoice of %s (%s) is not a zap: its amount is no money', (_network, prefix) => {
    const { request } = zap({ requestTags: [['p', RECIPIENT], ['e', NOTE]] });
    const description = JSON.stringify(request);
    const pr = withPrefix(invoice({ msats: '1000', descriptionHash: sha256(description) }), prefix);
    expect(readZapReceipt(zap({ requestTags: [['p', RECIPIENT], ['e', NOTE]], description, bolt11: pr }).receipt)).toEqual({ invalid: 'not_mainnet' });
  });

  it('an `h` field of the wrong length is skipped (BOLT 11): the 256-bit one after it is the description hash', () => {
    const { request } = zap();
    const description = JSON.stringify(request);
    const pr = invoice({ msats: '21000', descriptionHash: sha256(description) });
    // 53 words (265 bits) of zeros, before every other field.
    const decoy = withFieldFirst(pr, 23, Array.from({ length: 53 }, () => 0));
    const sections = decodeBolt11(decoy).sections as { name: string; value?: unknown }[];
    expect(sections.filter((section) => section.name === 'description_hash').map((section) => section.value)).toEqual([
      '00'.repeat(33),
      sha256(description),
    ]);
    expect(readZapReceipt(zap({ description, bolt11: decoy }).receipt)).toMatchObject({ msats: 21000 });
    // Only the decoy: no description hash.
    expect(readZapReceipt(zap({ description, bolt11: withFieldFirst(invoice({ msats: '21000', descriptionHash: null }), 23, Array.from({ length: 53 }, () => 0)) }).receipt)).toEqual({
      invalid: 'no_description_hash',
    });
  });
});

describe('one receipt per broken rule (DESIGN zaps row), each with its reason', () => {
  const otherKind = signed(SENDER, { kind: 1, content: 'not a zap request', tags: [['p', RECIPIENT]] });
  const goodRequest = zap().request;
  const tampered = JSON.stringify({ ...goodRequest, content: 'Zap! (edited)' });
  const badSignature = (() => {
    // The id of its fields, but another event's signature.
    const event = { ...goodRequest, content: 'Zap? (re-hashed)' };
    return JSON.stringify({ ...event, id: getEventHash(event) });
  })();

  const cases: [string, ZapOptions | (() => NostrEvent), ZapInvalidReason][] = [
    ['a kind 1', () => signed(PROVIDER, { kind: 1, tags: zap().receipt.tags }), 'not_a_receipt'],
    ['no `p` tag', { receiptTags: (tags) => tags.filter((tag) => tag[0] !== 'p') }, 'no_recipient'],
    ['a `p` that is not a pubkey (an npub)', { receiptTags: (tags) => tags.map((tag) => (tag[0] === 'p' ? ['p', 'npub1xyz'] : tag)) }, 'no_recipient'],
    ['a first `e` that is not an event id', { receiptTags: (tags) => tags.map((tag) => (tag[0] === 'e' ? ['e', 'note1xyz'] : tag)) }, 'bad_target'],
    ['no `bolt11` tag', { receiptTags: (tags) => tags.filter((tag) => tag[0] !== 'bolt11') }, 'no_invoice'],
    ['an invoice over MAX_BOLT11_CHARS', { bolt11: `lnbc1${'q'.repeat(MAX_BOLT11_CHARS)}` }, 'invoice_too_large'],
    ['an invoice that does not decode', { bolt11: 'lnbc1notaninvoice' }, 'bad_invoice'],
    ['not an invoice at all', { bolt11: '' }, 'bad_invoice'],
    ['an invoice without an amount', { msats: undefined, bolt11: BOLT11_VECTORS.donation }, 'no_amount'],
    ['no `description` tag', { receiptTags: (tags) => tags.filter((tag) => tag[0] !== 'description') }, 'no_description'],
    ['a description over 64 KiB (bytes, not characters)', { description: 'é'.repeat(MAX_ZAP_DESCRIPTION_BYTES / 2 + 1) }, 'description_too_large'],
    ['an invoice with a plain description, no hash', { invoiceHash: null }, 'no_description_hash'],
    ['an invoice committing to another description', { invoiceHash: sha256('something else') }, 'description_hash_mismatch'],
    ['a description one space longer than the one the invoice commits to', { receiptTags: (tags) => tags.map((tag) => (tag[0] === 'description' ? ['description', `${tag[1]} `] : tag)) }, 'description_hash_mismatch'],
    ['a zap request that is not JSON', { description: 'Zap!' }, 'request_not_json'],
    ['a zap request of kind 1', { description: JSON.stringify(otherKind) }, 'request_not_zap_request'],
    ['a zap request that is an array', { description: '[9734]' }, 'request_not_zap_request'],
    ['a zap request that is null', { description: 'null' }, 'request_not_zap_request'],
    ['a zap request edited after signing (bad id)', { description: tampered }, 'request_not_signed'],
    ['a zap request with another\'s signature', { description: badSignature }, 'request_not_signed'],
    ['a zap request without a signature', { description: JSON.stringify({ ...goodRequest, sig: undefined }) }, 'request_not_signed'],
    ['a zap request to another pubkey', { requestTags: [['amount', '21000'], ['p', pubkeyOf('someone else')], ['e', NOTE]] }, 'recipient_mismatch'],
    ['a zap request without `p`', { requestTags: [['amount', '21000'], ['e', NOTE]] }, 'recipient_mismatch'],
    ['a zap request for another event', { requestTags: [['amount', '21000'], ['p', RECIPIENT], ['e', OTHER_NOTE]] }, 'target_mismatch'],
    ['a zap request for an event, its receipt for none', { receiptTarget: null }, 'target_mismatch'],
    ['a zap request for no event, its receipt for one', { requestTags: [['amount', '21000'], ['p', RECIPIENT]] }, 'target_mismatch'],
    ['a zap request for another amount', { requestTags: [['amount', '21001'], ['p', RECIPIENT], ['e', NOTE]] }, 'amount_mismatch'],
    ['a zap request in sats instead of msats', { requestTags: [['amount', '21'], ['p', RECIPIENT], ['e', NOTE]] }, 'amount_mismatch'],
    ['a zap request with an amount that is not a number', { requestTags: [['amount', '21000.0'], ['p', RECIPIENT], ['e', NOTE]] }, 'amount_mismatch'],
    ['a zap request with an empty amount tag', { requestTags: [['amount'], ['p', RECIPIENT], ['e', NOTE]] }, 'amount_mismatch'],
  ];

  it.each(cases)('%s → %s', (_label, build, reason) => {
    const receipt = typeof build === 'function' ? build() : zap(build).receipt;
    expect(readZapReceipt(receipt)).toEqual({ invalid: reason });
  });

  it('every reason is covered above', () => {
    const covered = new Set(cases.map(([, , reason]) => reason));
    for (const reason of [
      'not_a_receipt', 'no_recipient', 'bad_target', 'no_invoice', 'invoice_too_large', 'bad_invoice', 'no_amount', 'no_description',
      'description_too_large', 'no_description_hash', 'description_hash_mismatch', 'request_not_json', 'request_not_zap_request',
      'request_not_signed', 'recipient_mismatch', 'target_mismatch', 'amount_mismatch',
    ] satisfies ZapInvalidReason[]) {
      expect(covered.has(reason), reason).toBe(true);
    }
    // bad_amount, amount_too_large and not_mainnet: above, with the amounts and networks.
  });

  it('a description of exactly 64 KiB is read (and a zap, if it is a zap request); one byte more is not', () => {
    const { request } = zap();
    const json = JSON.stringify(request);
    const padded = json.slice(0, -1) + ' '.repeat(MAX_ZAP_DESCRIPTION_BYTES - Buffer.byteLength(json)) + '}';
    expect(Buffer.byteLength(padded)).toBe(MAX_ZAP_DESCRIPTION_BYTES);
    expect(isZapReceipt(readZapReceipt(zap({ description: padded }).receipt))).toBe(true);
    const over = json.slice(0, -1) + ' '.repeat(MAX_ZAP_DESCRIPTION_BYTES + 1 - Buffer.byteLength(json)) + '}';
    expect(readZapReceipt(zap({ description: over }).receipt)).toEqual({ invalid: 'description_too_large' });
  });
});

const REASONS = new Set<string>([
  'not_a_receipt', 'no_recipient', 'bad_target', 'no_invoice', 'invoice_too_large', 'bad_invoice', 'not_mainnet', 'bad_amount', 'no_amount', 'amount_too_large',
  'no_description', 'description_too_large', 'no_description_hash', 'description_hash_mismatch', 'request_not_json', 'request_not_zap_request',
  'request_not_signed', 'recipient_mismatch', 'target_mismatch', 'amount_mismatch',
]);

/** A receipt-shaped object with these tags (its own signature is not what readZapReceipt checks). */
const receiptWith = (base: NostrEvent, tags: string[][]): NostrEvent => ({ ...base, tags });

describe('hostile receipts never throw (fast-check)', () => {
  const runs = Number(process.env.FUZZ_RUNS ?? 2000);
  const valid = zap();
  const validTags = valid.receipt.tags;

  it('any tags: a reading with a known reason, never an exception', () => {
    const tagName = fc.constantFrom('p', 'P', 'e', 'bolt11', 'description', 'amount', 'x');
    const tag = fc.tuple(tagName, fc.array(fc.string({ unit: 'binary' }), { maxLength: 3 })).map(([name, values]) => [name, ...values]);
    fc.assert(
      fc.property(fc.array(fc.oneof(tag, fc.array(fc.string(), { maxLength: 3 }), fc.constantFrom(...validTags)), { maxLength: 8 }), (tags) => {
        const reading = readZapReceipt(receiptWith(valid.receipt, tags));
        if ('invalid' in reading) expect(REASONS.has(reading.invalid)).toBe(true);
      }),
      { numRuns: runs },
    );
  });

  it('any invoice string, and real invoices with a character changed: a reason, never an exception', () => {
    const real = validTags.find((tag) => tag[0] === 'bolt11')?.[1] as string;
    const mutated = fc.tuple(fc.nat(real.length - 1), fc.constantFrom(...'qpzry9x8gf2tvdw0s3jn54khce6mua7l1IOb-')).map(([index, char]) => real.slice(0, index) + char + real.slice(index + 1));
    const prefixed = fc.tuple(fc.stringMatching(/^ln[a-z0-9]{0,12}$/), fc.string()).map(([prefix, rest]) => `${prefix}1${rest}`);
    fc.assert(
      fc.property(fc.oneof(fc.string(), mutated, prefixed, fc.constantFrom(...Object.values(BOLT11_VECTORS))), (pr) => {
        const reading = readZapReceipt(receiptWith(valid.receipt, validTags.map((tag) => (tag[0] === 'bolt11' ? ['bolt11', pr] : tag))));
        if ('invalid' in reading) expect(REASONS.has(reading.invalid)).toBe(true);
      }),
      { numRuns: runs },
    );
  });

  it('any description the invoice commits to (JSON or not, a zap request with any field replaced): a reason, never an exception', () => {
    const request = valid.request as unknown as Record<string, unknown>;
    const field = fc.constantFrom('id', 'pubkey', 'created_at', 'kind', 'tags', 'content', 'sig', '__proto__');
    const edited = fc.tuple(field, fc.anything()).map(([name, value]) => JSON.stringify({ ...request, [name]: value }));
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), edited), (description) => {
        const { receipt } = zap({ description });
        const reading = readZapReceipt(receipt);
        // Valid only if the seven signed fields are the request's (an extra field is dropped).
        if ('invalid' in reading) expect(REASONS.has(reading.invalid)).toBe(true);
        else expect(reading.requestId).toBe(valid.request.id);
      }),
      // Each run signs an invoice.
      { numRuns: Math.min(runs, 300) },
    );
  });
});
