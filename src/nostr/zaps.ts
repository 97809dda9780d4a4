import { createHash } from 'node:crypto';
import { decode as decodeBolt11 } from 'light-bolt11-decoder';
import type { NostrEvent } from './event.js';
import { isHex64 } from './identifiers.js';
import { verifyNostrEvent } from './verify-event.js';
import { MAX_BOLT11_CHARS, MAX_TAGS_READ, MAX_ZAP_DESCRIPTION_BYTES } from './work-caps.js';

/**
 * NIP-57 zap receipts, by the rule of ../shared/DESIGN.md ("Relationships", zaps row): every check
 * but the provider's (which needs the recipient's LNURL pay endpoint: zaps/lnurl-provider.ts), as
 * one pure function of the receipt. Anyone can sign a kind 9735 for any amount; what passes here is
 * a receipt whose invoice, zap request and tags agree, and whose figures can be counted once its
 * signer is known to be the recipient's provider.
 */

export const ZAP_REQUEST_KIND = 9734;
export const ZAP_RECEIPT_KIND = 9735;

/** What a receipt that passes every check but the provider's says. */
export interface ZapReceipt {
  /** The receipt's own id. */
  receiptId: string;
  /** Who signed the receipt: it counts only if this is the recipient's provider's `nostrPubkey`. */
  provider: string;
  /** The zapped pubkey: the receipt's first `p` tag (and its request's). */
  recipient: string;
  /** The zapped event: the receipt's first `e` tag (and its request's), if any; absent for a zap of a profile. */
  target?: string;
  /** Who zapped: the zap request's author. */
  sender: string;
  /** The invoice's amount in millisatoshis: exact (at most 2^53 - 1). */
  msats: number;
  /** The zap request's id. */
  requestId: string;
}

/**
 * Why a receipt is not a zap, one reason per rule, checked in this order (cheapest first, and the
 * invoice and its description hash before any JSON parse or signature check):
 */
export type ZapInvalidReason =
  /** Not a kind 9735. */
  | 'not_a_receipt'
  /** No `p` tag, or its first is not a pubkey. */
  | 'no_recipient'
  /** Its first `e` tag is not an event id. */
  | 'bad_target'
  /** No `bolt11` tag. */
  | 'no_invoice'
  /** A `bolt11` over MAX_BOLT11_CHARS. */
  | 'invoice_too_large'
  /** The invoice does not decode (light-bolt11-decoder). */
  | 'bad_invoice'
  /** An invoice of another network than Bitcoin's (testnet `lntb`, signet `lntbs`, regtest `lnbcrt`, simnet `lnsb`): its amount is no money. */
  | 'not_mainnet'
  /** The decoder refuses its amount: a `p` amount that is not a whole number of millisatoshis, an unknown multiplier, over 21 million BTC. */
  | 'bad_amount'
  /** An invoice without an amount, or of zero. */
  | 'no_amount'
  /** More millisatoshis than 2^53 - 1 (they could not be counted exactly). */
  | 'amount_too_large'
  /** No `description` tag. */
  | 'no_description'
  /** A `description` over MAX_ZAP_DESCRIPTION_BYTES. */
  | 'description_too_large'
  /** The invoice has no (256-bit) description hash. */
  | 'no_description_hash'
  /** The invoice's description hash is not SHA-256 of the `description` tag's value. */
  | 'description_hash_mismatch'
  /** The description is not JSON. */
  | 'request_not_json'
  /** The description is not an event of kind 9734. */
  | 'request_not_zap_request'
  /** The zap request's fields, id or signature do not verify. */
  | 'request_not_signed'
  /** The request's first `p` is not the receipt's. */
  | 'recipient_mismatch'
  /** The request's first `e` is not the receipt's (one has an `e` and the other none, or they differ). */
  | 'target_mismatch'
  /** The request's `amount` tag is not the invoice's millisatoshis. */
  | 'amount_mismatch';

export type ZapReading = ZapReceipt | { invalid: ZapInvalidReason };

/** Whether a reading is a receipt (every check but the provider's passed). */
export function isZapReceipt(reading: ZapReading): reading is ZapReceipt {
  return !('invalid' in reading);
}

const invalid = (reason: ZapInvalidReason): ZapReading => ({ invalid: reason });

/** The tags a rule reads: the first MAX_TAGS_READ (nostr/work-caps.ts). */
function tagsRead(tags: readonly string[][]): readonly string[][] {
  return tags.length > MAX_TAGS_READ ? tags.slice(0, MAX_TAGS_READ) : tags;
}

/** The first tag named `name`, if any. */
function firstTag(tags: readonly string[][], name: string): string[] | undefined {
  return tags.find((tag) => tag[0] === name);
}

/** A tag's value as a lowercase 64-hex id or pubkey; anything else undefined. */
function hex64Value(tag: string[] | undefined): string | undefined {
  const value = tag?.[1];
  return typeof value === 'string' && isHex64(value) ? value.toLowerCase() : undefined;
}

interface DecodedInvoice {
  msats: string;
  descriptionHash?: string;
}

/** The invoice's amount (as the decoder's decimal string of millisatoshis) and description hash, or why not. */
function readInvoice(bolt11: string): DecodedInvoice | ZapInvalidReason {
  let sections: readonly { name: string; value?: unknown }[];
  try {
    sections = decodeBolt11(bolt11).sections;
  } catch (error) {
    // The decoder's amount errors ('Amount is outside of valid range' for a sub-millisatoshi `p`
    // amount or one over 21 million BTC; 'Not a valid multiplier for the amount'), else a malformed invoice.
    return /amount/i.test((error as Error | undefined)?.message ?? '') ? 'bad_amount' : 'bad_invoice';
  }
  // BOLT 11: `lnbc` is Bitcoin; the decoder also reads testnet, signet, regtest and simnet invoices.
  const network = sections.find((section) => section.name === 'coin_network') as { value?: { bech32?: unknown } } | undefined;
  if (network?.value?.bech32 !== 'bc') return 'not_mainnet';
  const amount = sections.find((section) => section.name === 'amount')?.value;
  if (typeof amount !== 'string' || !/^\d+$/.test(amount) || BigInt(amount) === 0n) return 'no_amount';
  if (BigInt(amount) > BigInt(Number.MAX_SAFE_INTEGER)) return 'amount_too_large';
  // BOLT 11: a reader skips an `h` field whose length is not 52 words (256 bits); the decoder keeps
  // every one, so the first of 32 bytes is the invoice's description hash.
  const hash = sections.find((section) => section.name === 'description_hash' && typeof section.value === 'string' && /^[0-9a-f]{64}$/.test(section.value));
  return hash ? { msats: amount, descriptionHash: hash.value as string } : { msats: amount };
}

/**
 * NIP-57 appendix G: who an event's zaps go to. Its `zap` tags (`["zap", <pubkey>, <relay>,
 * <weight>]`) split them between the pubkeys they name; the author is a recipient whether or not
 * it is named. Distinct, lowercase, the author first, at most `max` (the first tags read).
 */
export function zapRecipientsOf(event: Pick<NostrEvent, 'pubkey' | 'tags'>, max: number): string[] {
  const recipients = new Set([event.pubkey]);
  for (const tag of tagsRead(event.tags)) {
    if (recipients.size >= max) break;
    if (tag[0] !== 'zap') continue;
    const pubkey = hex64Value(tag);
    if (pubkey !== undefined) recipients.add(pubkey);
  }
  return [...recipients];
}

/** Whether an `amount` tag's value is `msats` (a decimal string), leading zeros aside. */
function sameAmount(value: string | undefined, msats: string): boolean {
  return typeof value === 'string' && /^\d+$/.test(value) && value.replace(/^0+(?=\d)/, '') === msats;
}

/**
 * Reads a zap receipt: a {@link ZapReceipt} when every check but the provider's holds, else the
 * first rule it breaks. Pure and total: hostile input (any tags, any strings) gives a reason, never
 * an exception, and its work is bounded (MAX_BOLT11_CHARS, MAX_ZAP_DESCRIPTION_BYTES, MAX_TAGS_READ).
 * `receipt` is a verified event (its own id and signature are not checked again).
 */
export function readZapReceipt(receipt: NostrEvent): ZapReading {
  if (receipt.kind !== ZAP_RECEIPT_KIND) return invalid('not_a_receipt');
  // Read once per event object: the zap index, the notification index and a page's zap check all
  // ask, and a reading checks the request's signature (events are not changed once made).
  let reading = readings.get(receipt);
  if (reading === undefined) readings.set(receipt, (reading = readReceipt(receipt)));
  return reading;
}

const readings = new WeakMap<NostrEvent, ZapReading>();

function readReceipt(receipt: NostrEvent): ZapReading {
  const tags = tagsRead(receipt.tags);
  const recipient = hex64Value(firstTag(tags, 'p'));
  if (recipient === undefined) return invalid('no_recipient');
  const eTag = firstTag(tags, 'e');
  const target = hex64Value(eTag);
  if (eTag !== undefined && target === undefined) return invalid('bad_target');

  const bolt11 = firstTag(tags, 'bolt11')?.[1];
  if (typeof bolt11 !== 'string') return invalid('no_invoice');
  if (bolt11.length > MAX_BOLT11_CHARS) return invalid('invoice_too_large');
  const invoice = readInvoice(bolt11);
  if (typeof invoice === 'string') return invalid(invoice);

  const description = firstTag(tags, 'description')?.[1];
  if (typeof description !== 'string') return invalid('no_description');
  // UTF-8 bytes are at least UTF-16 units: the length alone refuses most oversized ones unencoded.
  if (description.length > MAX_ZAP_DESCRIPTION_BYTES || Buffer.byteLength(description, 'utf8') > MAX_ZAP_DESCRIPTION_BYTES) {
    return invalid('description_too_large');
  }
  if (invoice.descriptionHash === undefined) return invalid('no_description_hash');
  if (createHash('sha256').update(description, 'utf8').digest('hex') !== invoice.descriptionHash) return invalid('description_hash_mismatch');

  let parsed: unknown;
  try {
    parsed = JSON.parse(description);
  } catch {
    return invalid('request_not_json');
  }
  if (typeof parsed !== 'object' || parsed === null || (parsed as { kind?: unknown }).kind !== ZAP_REQUEST_KIND) return invalid('request_not_zap_request');
  const verdict = verifyNostrEvent(parsed);
  if (!verdict.ok) return invalid('request_not_signed');
  const request = verdict.event;

  const requestTags = tagsRead(request.tags);
  if (hex64Value(firstTag(requestTags, 'p')) !== recipient) return invalid('recipient_mismatch');
  // NIP-57: the receipt carries the request's `e`, if it has one, and only then.
  const requestETag = firstTag(requestTags, 'e');
  if ((requestETag === undefined ? undefined : (hex64Value(requestETag) ?? '')) !== target) return invalid('target_mismatch');
  const amountTag = firstTag(requestTags, 'amount');
  if (amountTag !== undefined && !sameAmount(amountTag[1], invoice.msats)) return invalid('amount_mismatch');

  return {
    receiptId: receipt.id,
    provider: receipt.pubkey,
    recipient,
    ...(target === undefined ? {} : { target }),
    sender: request.pubkey,
    msats: Number(invoice.msats),
    requestId: request.id,
  };
}
