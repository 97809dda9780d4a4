import { randomBytes } from 'node:crypto';
/**
 * An event's JSON text held as the UTF-8 bytes the store returned. The REST routes write these bytes
 * into the response as they are; the string is decoded only when something reads it (a GraphQL
 * `String` field serialises it through `valueOf()`, a resolver parses it). Decoding every profile
 * into a string and encoding the response back into bytes cost the `/event` route about a tenth of its
 * CPU (BENCHMARKS.md).
 */
export class JsonText {
  #string: string | undefined;

  constructor(readonly bytes: Buffer) {}

  static of(text: string): JsonText {
    const json = new JsonText(Buffer.from(text, 'utf8'));
    json.#string = text;
    return json;
  }

  toString(): string {
    this.#string ??= this.bytes.toString('utf8');
    return this.#string;
  }

  valueOf(): string {
    return this.toString();
  }

  /** The text as JSON.stringify writes it, or, inside stringifyKeepingJsonText, a placeholder. */
  toJSON(): string {
    if (collecting) {
      collecting.push(this);
      return PLACEHOLDER;
    }
    return this.toString();
  }

  /**
   * The text as a JSON string literal, quotes included, as a Latin-1 string of its UTF-8 bytes (one
   * character per byte): JSON.stringify escapes `"`, `\` and control characters, which are single
   * bytes in UTF-8, and leaves every other character as it is, so escaping the bytes read as Latin-1
   * and writing the result back as Latin-1 gives the bytes of JSON.stringify(text), all in native code.
   */
  quotedLatin1(): string {
    return JSON.stringify(this.bytes.toString('latin1'));
  }

  /** What a QuotedJson writes for this text: its string literal, one Latin-1 character per byte (InlineJsonText: its bytes). */
  written(): string | Buffer {
    return this.quotedLatin1();
  }

  /** The bytes it is sent as, at most, read from its length alone (a `\u0001` is six bytes). */
  roughSentBytes(): number {
    return 6 * this.bytes.length + 2;
  }

  /** A fresh text of the same sort over the same bytes (without the string a read decoded). */
  fresh(): JsonText {
    return new JsonText(this.bytes);
  }

  /** The placeholder stringifyKeepingJsonText finds it by. */
  get placeholderLiteral(): string {
    return PLACEHOLDER_LITERAL;
  }
}

/**
 * Stored event JSON sent as the JSON value it is, not as a string (GraphQL's `raw`, a `RawEvent`):
 * its bytes go into the answer as they are, as the REST routes send them. JSON.stringify outside
 * the kept-answer writer (yoga's own answers) gets the parsed object.
 */
export class InlineJsonText extends JsonText {
  override toJSON(): string {
    if (collecting) {
      collecting.push(this);
      return INLINE_PLACEHOLDER;
    }
    return JSON.parse(this.toString()) as string;
  }

  override written(): Buffer {
    return this.bytes;
  }

  override roughSentBytes(): number {
    return this.bytes.length;
  }

  override fresh(): InlineJsonText {
    return new InlineJsonText(this.bytes);
  }

  override get placeholderLiteral(): string {
    return INLINE_PLACEHOLDER_LITERAL;
  }
}

/**
 * What JsonText#toJSON writes while stringifyKeepingJsonText runs: a string no value can hold (a NUL
 * and 128 random bits drawn at start, never sent), so each occurrence in the output is a JsonText
 * (and of the second, an InlineJsonText).
 */
const NONCE = randomBytes(16).toString('hex');
const PLACEHOLDER = `\u0000json-text:${NONCE}`;
const PLACEHOLDER_LITERAL = JSON.stringify(PLACEHOLDER);
const INLINE_PLACEHOLDER = `\u0000json-inline:${NONCE}`;
const INLINE_PLACEHOLDER_LITERAL = JSON.stringify(INLINE_PLACEHOLDER);
/** The JsonTexts met by the JSON.stringify under way, in output order (JSON.stringify is synchronous). */
let collecting: JsonText[] | undefined;

/**
 * A JSON body in pieces: the text between stored JSON texts, and the texts, each written as a JSON
 * string from its stored bytes when the body is written (writeQuotedJson), or as they are for an
 * InlineJsonText. A kept GraphQL answer is
 * held so (answer-cache.ts): its texts are the hot cache's own values, not copies of them.
 */
export interface QuotedJson {
  /** The literal text before, between and after the texts: one more than `texts`. */
  readonly between: readonly string[];
  readonly texts: readonly JsonText[];
}

/**
 * JSON.stringify(value) as pieces, every JsonText inside left as a piece of its own (a string
 * literal once written: GraphQL's `json` is a String, where the REST routes splice the text itself
 * with joinJson).
 */
export function quoteKeepingJsonText(value: unknown): QuotedJson {
  const texts: JsonText[] = [];
  collecting = texts;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } finally {
    collecting = undefined;
  }
  if (json === undefined) throw new TypeError('not a JSON value');
  if (texts.length === 0) return { between: [json], texts };
  const between: string[] = [];
  let from = 0;
  for (const text of texts) {
    // The texts come in output order: the next placeholder of this one's sort is its own.
    const literal = text.placeholderLiteral;
    const at = json.indexOf(literal, from);
    // Cannot happen (one placeholder per toJSON call); if it did, the plain way is still right.
    if (at < 0) return { between: [JSON.stringify(value)], texts: [] };
    between.push(json.slice(from, at));
    from = at + literal.length;
  }
  between.push(json.slice(from));
  return { between, texts };
}

/**
 * The bytes of a QuotedJson, in one allocation: each text escaped from its stored bytes
 * (quotedLatin1), an InlineJsonText's bytes as they are.
 */
export function writeQuotedJson({ between, texts }: QuotedJson): Buffer {
  if (texts.length === 0) return Buffer.from(between[0] as string);
  const written = texts.map((text) => text.written());
  let length = 0;
  for (const text of between) length += Buffer.byteLength(text);
  for (const text of written) length += text.length;
  const body = Buffer.allocUnsafe(length);
  let offset = body.write(between[0] as string, 0);
  for (let index = 0; index < written.length; index++) {
    const text = written[index] as string | Buffer;
    offset += typeof text === 'string' ? body.write(text, offset, 'latin1') : text.copy(body, offset);
    offset += body.write(between[index + 1] as string, offset);
  }
  return body;
}

/**
 * `Buffer.from(JSON.stringify(value))`, byte for byte, except that every JsonText inside is written
 * as a JSON string from its stored bytes (quotedLatin1): not decoded from UTF-8 and encoded back. For
 * /graphql answers that select `json`.
 */
export function stringifyKeepingJsonText(value: unknown): Buffer {
  return writeQuotedJson(quoteKeepingJsonText(value));
}

/** What a `String` field of a fixed operation (src/http/fixed-operation.ts) yields: event JSON stays bytes. */
export type StringOutput = string | JsonText;

/** The UTF-8 bytes a piece adds to a body. */
export function byteLengthOf(part: StringOutput): number {
  return typeof part === 'string' ? Buffer.byteLength(part) : part.bytes.length;
}

/**
 * JSON pieces (literal syntax, keys, stored JSON texts) joined into one response body: one allocation,
 * each stored text copied, never decoded.
 */
export function joinJson(parts: readonly StringOutput[]): Buffer {
  let length = 0;
  for (const part of parts) length += byteLengthOf(part);
  const body = Buffer.allocUnsafe(length);
  let offset = 0;
  for (const part of parts) {
    if (typeof part === 'string') offset += body.write(part, offset);
    else offset += part.bytes.copy(body, offset);
  }
  return body;
}
