import { createHash } from 'node:crypto';
import bolt11 from 'bolt11';
import type { NostrEvent } from '../../src/nostr/event.js';
import { pubkeyOf, signed } from './events.js';

/**
 * NIP-57 test receipts. Invoices are made by `bolt11` (the bitcoinjs encoder, a devDependency for
 * tests only: the decoder cannot encode, and a description-hash invoice must commit to a zap request
 * signed here), and read back by light-bolt11-decoder as the service reads them.
 */

/** The secret key that signs test invoices (BOLT 11's examples use it too; the decoder does not check invoice signatures). */
const NODE_KEY = 'e126f68f7eafcc8b74f54d269fe206be715000f94dac067d1c04a8ca3b2db734';

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

export interface InvoiceOptions {
  msats?: string;
  /** The `h` field (sha256 hex); `null`: a plain `d` description instead. */
  descriptionHash?: string | null;
}

/** A signed BOLT 11 invoice for `msats` (none: no amount) committing to `descriptionHash`. */
export function invoice({ msats, descriptionHash }: InvoiceOptions): string {
  const tags = [
    { tagName: 'payment_hash', data: '01'.repeat(32) },
    { tagName: 'payment_secret', data: '11'.repeat(32) },
    descriptionHash === null ? { tagName: 'description', data: 'a plain description' } : { tagName: 'purpose_commit_hash', data: descriptionHash ?? '00'.repeat(32) },
  ];
  const encoded = bolt11.encode({ ...(msats === undefined ? {} : { millisatoshis: msats }), timestamp: 1_700_000_000, tags });
  const { paymentRequest } = bolt11.sign(encoded, NODE_KEY);
  if (!paymentRequest) throw new Error('bolt11 did not sign');
  return paymentRequest;
}

export interface ReceiptOptions {
  /** Who zaps (a name for signed()). */
  sender: string;
  /** Who is zapped (a name). */
  recipient: string;
  /** Who signs the receipt (a name): counts only if it is the recipient's provider. */
  provider: string;
  /** The zapped event's id; none: a zap of the profile. */
  target?: string;
  msats?: number;
  /** Distinguishes receipts that are otherwise alike (a second zap of the same amount). */
  at?: number;
}

/** A valid receipt (every check but the provider's holds) of a zap request signed by `sender`. */
export function zapReceipt({ sender, recipient, provider, target, msats = 21000, at = 1_700_000_100 }: ReceiptOptions): NostrEvent {
  const e = target === undefined ? [] : [['e', target]];
  const request = signed(sender, {
    kind: 9734,
    created_at: at - 1,
    content: '',
    tags: [['relays', 'wss://relay.example'], ['amount', String(msats)], ['p', pubkeyOf(recipient)], ...e],
  });
  const description = JSON.stringify(request);
  const pr = invoice({ msats: String(msats), descriptionHash: sha256(description) });
  return signed(provider, {
    kind: 9735,
    created_at: at,
    tags: [['p', pubkeyOf(recipient)], ['P', pubkeyOf(sender)], ...e, ['bolt11', pr], ['description', description]],
  });
}

/**
 * One receipt per rule of DESIGN's zaps row that it breaks (and nothing else), all for `target` and
 * `recipient`, signed by `provider`: none of them is a zap.
 */
export function brokenReceipts({ sender, recipient, provider, target, at = 1_700_000_100 }: Omit<ReceiptOptions, 'msats'> & { target: string }): Record<string, NostrEvent> {
  const msats = 21_000;
  const requestOf = (tags: string[][], kind = 9734) => signed(sender, { kind, created_at: at - 1, content: '', tags });
  const goodTags = [['relays', 'wss://relay.example'], ['amount', String(msats)], ['p', pubkeyOf(recipient)], ['e', target]];
  const receiptOf = (description: string, options: { bolt11?: string | null; msats?: number | null; hash?: string; receiptTags?: string[][] } = {}) => {
    const pr =
      options.bolt11 === undefined
        ? invoice({ ...(options.msats === null ? {} : { msats: String(options.msats ?? msats) }), descriptionHash: options.hash ?? sha256(description) })
        : options.bolt11;
    const tags = options.receiptTags ?? [['p', pubkeyOf(recipient)], ['e', target]];
    return signed(provider, { kind: 9735, created_at: at, tags: [...tags, ...(pr === null ? [] : [['bolt11', pr]]), ['description', description]] });
  };
  const good = JSON.stringify(requestOf(goodTags));
  const unsigned = JSON.parse(good) as NostrEvent;
  unsigned.sig = `${unsigned.sig.slice(0, -2)}${unsigned.sig.endsWith('00') ? '11' : '00'}`;
  return {
    no_invoice: receiptOf(good, { bolt11: null }),
    bad_invoice: receiptOf(good, { bolt11: 'lnbc1notaninvoice' }),
    no_amount: receiptOf(good, { msats: null }),
    description_hash_mismatch: receiptOf(good, { hash: sha256(`${good} `) }),
    description_too_large: receiptOf(JSON.stringify({ ...JSON.parse(good), padding: 'x'.repeat(65 * 1024) })),
    request_not_json: receiptOf('{"kind":9734,'),
    request_not_zap_request: receiptOf(JSON.stringify(requestOf(goodTags, 1))),
    request_not_signed: receiptOf(JSON.stringify(unsigned)),
    recipient_mismatch: receiptOf(JSON.stringify(requestOf(goodTags.map((tag) => (tag[0] === 'p' ? ['p', pubkeyOf(`${recipient} else`)] : tag))))),
    target_mismatch: receiptOf(JSON.stringify(requestOf(goodTags.map((tag) => (tag[0] === 'e' ? ['e', 'f'.repeat(64)] : tag))))),
    amount_mismatch: receiptOf(JSON.stringify(requestOf(goodTags.map((tag) => (tag[0] === 'amount' ? ['amount', String(msats + 1)] : tag))))),
    no_recipient: receiptOf(good, { receiptTags: [['e', target]] }),
  };
}

/** A LUD-06 pay endpoint's answer that allows zaps signed by `nostrPubkey` (NIP-57 appendix C), with `overrides`. */
export const lnurlPayResponse = (nostrPubkey: string, overrides: Record<string, unknown> = {}) => ({
  tag: 'payRequest',
  callback: 'https://example.com/lnurlp/callback',
  minSendable: 1000,
  maxSendable: 100_000_000,
  metadata: '[["text/plain","zaps"]]',
  allowsNostr: true,
  nostrPubkey,
  ...overrides,
});
