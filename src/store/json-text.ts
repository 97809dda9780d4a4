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

  toJSON(): string {
    return this.toString();
  }
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
