import { isUtf8 } from 'node:buffer';
import { type NostrEvent, serializeEvent } from '../nostr/event.js';
import { CorruptDataError, type StoredEvent } from './event-store.js';
import { JsonText } from './json-text.js';
import { unpackEvent } from './packed-event.js';

// serializeEvent writes the seven fields in NIP-01 order, so the id and pubkey sit at fixed offsets:
// {"id":"<64 hex>","pubkey":"<64 hex>","created_at":<digits>,"kind":<digits>,"tags":…,"sig":"<128 hex>"}
// Everything up to the tags is ASCII, so these are byte offsets as well as character offsets.
const ID_AT = '{"id":"'.length;
const PUBKEY_AT = ID_AT + 64 + '","pubkey":"'.length;
const CREATED_AT_AT = PUBKEY_AT + 64 + '","created_at":'.length;
const SIG_TAIL = ',"sig":"'.length + 128 + '"}'.length;

const ascii = (text: string) => Buffer.from(text, 'latin1');
const ID_OPEN = ascii('{"id":"');
const PUBKEY_OPEN = ascii('","pubkey":"');
const CREATED_AT_OPEN = ascii('","created_at":');
const KIND_OPEN = ascii(',"kind":');
const SIG_OPEN = ascii(',"sig":"');
const CLOSE = ascii('"}');
const COMMA = 0x2c;

/** True if `bytes` holds `literal` at `at`. (A plain loop: Buffer#compare's argument checks cost more for a few bytes.) */
function holdsAt(bytes: Buffer, literal: Buffer, at: number): boolean {
  if (at < 0 || at + literal.length > bytes.length) return false;
  for (let index = 0; index < literal.length; index++) {
    if (bytes[at + index] !== literal[index]) return false;
  }
  return true;
}

/** True if the bytes have the punctuation of serializeEvent's output at every fixed position. */
function hasWireShape(bytes: Buffer): boolean {
  return (
    hasWireId(bytes) &&
    holdsAt(bytes, CREATED_AT_OPEN, PUBKEY_AT + 64) &&
    holdsAt(bytes, SIG_OPEN, bytes.length - SIG_TAIL) &&
    holdsAt(bytes, CLOSE, bytes.length - CLOSE.length)
  );
}

/** Whether `bytes` hold the 64 characters of `hex` at `at` (hex: one byte per character). */
function holdsHex(bytes: Buffer, at: number, hex: string): boolean {
  if (hex.length !== 64 || bytes.length < at + 64) return false;
  for (let index = 0; index < 64; index++) if (bytes[at + index] !== hex.charCodeAt(index)) return false;
  return true;
}

/** The id and pubkey at their fixed offsets (hex: one byte per character). */
const wireId = (bytes: Buffer) => bytes.toString('latin1', ID_AT, ID_AT + 64);
const wirePubkey = (bytes: Buffer) => bytes.toString('latin1', PUBKEY_AT, PUBKEY_AT + 64);

const isDigit = (byte: number | undefined) => byte !== undefined && byte >= 0x30 && byte <= 0x39;

/** The kind, read after created_at's digits, or NaN. */
function wireKind(bytes: Buffer): number {
  let at = CREATED_AT_AT;
  while (isDigit(bytes[at])) at++;
  if (!holdsAt(bytes, KIND_OPEN, at)) return Number.NaN;
  at += KIND_OPEN.length;
  const digitsAt = at;
  let kind = 0;
  // NIP-01 kinds are below 65536: five digits at most.
  while (isDigit(bytes[at]) && at - digitsAt < 5) kind = kind * 10 + (bytes[at++] as number) - 0x30;
  return at > digitsAt && bytes[at] === COMMA ? kind : Number.NaN;
}

/**
 * An event read back from the store. The bytes are checked at once for the shape we write (cheap:
 * literal comparisons at fixed positions, and UTF-8 validity), which catches foreign or truncated
 * values; they are decoded and parsed only when a resolver needs the fields, since REST responses
 * embed the stored bytes as they are. Damage inside the text that keeps both ends intact and stays
 * valid UTF-8 is caught only when it is parsed. Stored data was verified when written; signatures are
 * not re-verified here.
 */
class StoredWireEvent implements StoredEvent {
  #event: NostrEvent | undefined;
  #pubkey: string | undefined;
  #id: string | undefined;
  #kind: number | undefined;

  constructor(
    readonly json: JsonText,
    event?: NostrEvent,
    pubkey?: string,
  ) {
    this.#event = event;
    this.#pubkey = pubkey;
  }

  /**
   * Which of the id and pubkey at their fixed offsets is not the one expected (when given), compared
   * byte by byte, or undefined; the expected strings are kept as this event's own (no string made
   * from the bytes: eleven per cached /event were 1% of its CPU).
   */
  mismatch(id: string | undefined, pubkey: string | undefined): 'id' | 'pubkey' | undefined {
    const { bytes } = this.json;
    if (id !== undefined) {
      if (!holdsHex(bytes, ID_AT, id)) return 'id';
      this.#id = id;
    }
    if (pubkey !== undefined) {
      if (!holdsHex(bytes, PUBKEY_AT, pubkey)) return 'pubkey';
      this.#pubkey = pubkey;
    }
    return undefined;
  }

  /** Read once at its fixed offset, or known already: a profile read was checked against it. */
  get pubkey(): string {
    this.#pubkey ??= wirePubkey(this.json.bytes);
    return this.#pubkey;
  }

  get id(): string {
    this.#id ??= wireId(this.json.bytes);
    return this.#id;
  }

  get kind(): number {
    this.#kind ??= wireKind(this.json.bytes);
    return this.#kind;
  }

  /** Whether the JSON was parsed already (parsing again costs nothing). */
  get parsed(): boolean {
    return this.#event !== undefined;
  }

  get event(): NostrEvent {
    if (this.#event === undefined) {
      try {
        this.#event = JSON.parse(this.json.toString()) as NostrEvent;
      } catch {
        throw new CorruptDataError('unparseable event');
      }
    }
    return this.#event;
  }
}

/**
 * Bytes that will not change for as long as they live (the hot cache's copies), and which of them
 * passed the checks: a cached event is checked once, not on every request that reads it (the
 * checks, the UTF-8 scan above all, were 5% of a cached /event's CPU). Each read still gets an
 * object of its own (what it parses is not kept beyond it: HOT_CACHE_MB counts the bytes only).
 * Only bytes registered here are remembered: a store may hand back a buffer it reuses.
 */
const checkOnceBytes = new WeakSet<Buffer>();
const passed = new WeakSet<Buffer>();

/** Registers bytes that are never written again: readStoredEvent checks them once. */
export function checkOnce(bytes: Buffer): void {
  checkOnceBytes.add(bytes);
}

type Expected = { id?: string; pubkey?: string; kind?: number };

export function readStoredEvent(bytes: Buffer, expect: Expected): StoredEvent {
  if (passed.has(bytes)) return expected(new StoredWireEvent(new JsonText(bytes)), expect);
  const json = unpackEvent(bytes);
  const stored = expected(readWireEvent(json), expect);
  // Packed bytes are never registered (the cache keeps events unpacked): `json` is `bytes` here.
  if (json === bytes && checkOnceBytes.has(bytes)) passed.add(bytes);
  return stored;
}

/** The event, if it is what the reader expects under the key it read (else the data is corrupt). */
function expected(stored: StoredWireEvent, expect: Expected): StoredWireEvent {
  const mismatch = stored.mismatch(expect.id, expect.pubkey);
  if (mismatch) throw new CorruptDataError(`${mismatch} mismatch`);
  if (expect.kind !== undefined && stored.kind !== expect.kind) throw new CorruptDataError('kind mismatch');
  return stored;
}

function readWireEvent(bytes: Buffer): StoredWireEvent {
  if (!hasWireShape(bytes)) throw new CorruptDataError('not an event we wrote');
  // What we write is valid UTF-8 (JSON.stringify escapes lone surrogates); the bytes go out as they are.
  if (!isUtf8(bytes)) throw new CorruptDataError('not UTF-8');
  return new StoredWireEvent(new JsonText(bytes));
}

/** A verified event as the index would hold it (for events that arrive from relays, not from the store). */
export function toStoredEvent(event: NostrEvent): StoredEvent {
  return new StoredWireEvent(JsonText.of(serializeEvent(event)), event, event.pubkey);
}

/** The created_at after its fixed offset in bytes a store holds (digits only, as serializeEvent wrote them). */
export function wireCreatedAtOf(bytes: Buffer): number {
  let at = CREATED_AT_AT;
  let seconds = 0;
  while (isDigit(bytes[at])) seconds = seconds * 10 + (bytes[at++] as number) - 0x30;
  return seconds;
}

/** Where the id ends in serializeEvent's output: the bytes wireIdOf reads are the first this many. */
export const WIRE_ID_END = ID_AT + 64;

/** The id at its fixed offset in bytes a store holds (what serializeEvent wrote), without parsing. */
export function wireIdOf(bytes: Buffer): string {
  return wireId(bytes);
}

/** Whether `bytes` start as serializeEvent's output does, with an id at its fixed offset (copyWireId). */
export function hasWireId(bytes: Buffer): boolean {
  return holdsAt(bytes, ID_OPEN, 0) && holdsAt(bytes, PUBKEY_OPEN, ID_AT + 64);
}

/** The same id's 64 bytes, copied into `target` at `offset` (no string made). */
export function copyWireId(bytes: Buffer, target: Buffer, offset: number): void {
  bytes.copy(target, offset, ID_AT, ID_AT + 64);
}

/** The id of a stored event, read from its fixed offset without decoding or parsing. */
export function storedEventId(stored: StoredEvent): string {
  return stored instanceof StoredWireEvent ? stored.id : wireId(stored.json.bytes);
}

/** The pubkey of a stored event, read from its fixed offset without decoding or parsing. */
export function storedEventPubkey(stored: StoredEvent): string {
  return stored instanceof StoredWireEvent ? stored.pubkey : wirePubkey(stored.json.bytes);
}

/**
 * Whether reading `stored.event` would parse its JSON now: what a request is charged for
 * (schema/object-budget.ts). Events from relays arrive parsed.
 */
export function needsParse(stored: StoredEvent): boolean {
  return stored instanceof StoredWireEvent && !stored.parsed;
}

/** The created_at of a stored event, from its bytes without parsing them (or from the event if parsed). */
export function storedEventCreatedAt(stored: StoredEvent): number {
  return needsParse(stored) ? wireCreatedAtOf(stored.json.bytes) : stored.event.created_at;
}

/** The kind of a stored event, from its bytes without parsing them (or from the event if parsed). */
export function storedEventKind(stored: StoredEvent): number {
  if (!needsParse(stored)) return stored.event.kind;
  const kind = wireKind(stored.json.bytes);
  return Number.isNaN(kind) ? stored.event.kind : kind;
}

/** The signature of a stored event: the 128 hex characters before its closing `"}`. */
export function storedEventSig(stored: StoredEvent): string {
  if (!needsParse(stored)) return stored.event.sig;
  const { bytes } = stored.json;
  return bytes.toString('latin1', bytes.length - SIG_TAIL + SIG_OPEN.length, bytes.length - CLOSE.length);
}
