import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import fc from 'fast-check';
import { bytesToHex } from 'nostr-tools/utils';
import { decode, neventEncode, noteEncode, nprofileEncode, npubEncode, nsecEncode } from 'nostr-tools/nip19';

/**
 * Raw HTTP requests for property-based fuzzing of the service (test/fuzz), and the means to send them
 * and to look for secrets in what comes back.
 *
 * Every generated request carries `secrets`: the exact nsec1… texts (lowercase, as nsecEncode wrote
 * them) hidden somewhere in it, in whatever disguise (uppercase, percent-encoded, JSON-escaped…), so
 * that a test can look for them in responses and logs afterwards. Keys are 32 bytes drawn by
 * fast-check and bech32-encoded with nostr-tools' nsecEncode, like nsecEncode(generateSecretKey())
 * but reproducible from the seed.
 */

export interface FuzzRequest {
  /** Which generator made it, for reading counterexamples. */
  kind: string;
  /** `http`: node:http's client; `raw`: the bytes of `raw` written on a socket as they are. */
  transport: 'http' | 'raw';
  method: string;
  /** The request-target as sent (path and query, or `*`, or an absolute URL). */
  target: string;
  headers: [string, string][];
  body: string;
  /** For `raw`: the whole request, deliberately malformed or beyond what node:http sends. */
  raw?: string;
  /** Every nsec1… hidden in the request (lowercase, as encoded). */
  secrets: string[];
}

export interface Exchange {
  request: FuzzRequest;
  /** Undefined when no complete response came back. */
  status?: number;
  /** Why there is no response (transport error, timeout, unparsable bytes). */
  failure?: string;
  /** Response headers as received, names lowercased, repeated ones kept. */
  headers: [string, string][];
  body: string;
  /** Log lines the server wrote between the request and a moment after its response. */
  logLines: string[];
  ms: number;
}

/** Identifiers the store holds, so that some lookups succeed. */
export interface KnownIdentifiers {
  eventIds: string[];
  pubkeys: string[];
}

// ---------------------------------------------------------------------------------------------
// Pieces: text with the secrets it hides.

interface Piece {
  text: string;
  secrets: string[];
}

const piece = (text: string, secrets: string[] = []): Piece => ({ text, secrets });
const join = (parts: readonly Piece[], separator = ''): Piece => ({
  text: parts.map((part) => part.text).join(separator),
  secrets: parts.flatMap((part) => part.secrets),
});
const wrap = (before: string, inner: Piece, after = ''): Piece => piece(before + inner.text + after, inner.secrets);
const texts = (values: readonly string[]) => fc.constantFrom(...values).map((text) => piece(text));

function hex2(code: number): string {
  return code.toString(16).toUpperCase().padStart(2, '0');
}

function utf8PercentAll(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => `%${hex2(byte)}`).join('');
}

// ---------------------------------------------------------------------------------------------
// Secret keys in every disguise.

const nsecArbitrary = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((key) => nsecEncode(key) as string);

const NSEC_FORMS: Record<string, (nsec: string) => string> = {
  plain: (s) => s,
  upper: (s) => s.toUpperCase(),
  mixedCase: (s) => [...s].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join(''),
  nostr: (s) => `nostr:${s}`,
  nostrUpper: (s) => `NOSTR:${s.toUpperCase()}`,
  padded: (s) => `  ${s}\t`,
  plus: (s) => `+${s}+`,
  wrapped: (s) => `x${s}.y`,
  percentFirst: (s) => `%6E${s.slice(1)}`,
  percentFirstLower: (s) => `%6e${s.slice(1)}`,
  percentAll: (s) => utf8PercentAll(s),
  percentDouble: (s) => `%256E${s.slice(1)}`,
  jsonEscapeFirst: (s) => `\\u006e${s.slice(1)}`,
  inUrl: (s) => `https://example.com/?key=${s}#${s}`,
};

/** Every character as \\u00XX: only where the service itself undoes such escapes (GraphQL, JSON). */
const jsonEscapeAll = (s: string) => [...s].map((c) => `\\u00${hex2(c.charCodeAt(0)).toLowerCase()}`).join('');

/** An nsec in one of its disguises. */
const nsecPiece = fc
  .tuple(nsecArbitrary, fc.constantFrom(...Object.keys(NSEC_FORMS)))
  .map(([nsec, form]) => piece((NSEC_FORMS[form] as (s: string) => string)(nsec), [nsec]));
/** An nsec that is a valid GraphQL name or header token (plain, upper or mixed case). */
const nsecName = fc
  .tuple(nsecArbitrary, fc.constantFrom('plain', 'upper', 'mixedCase'))
  .map(([nsec, form]) => piece((NSEC_FORMS[form] as (s: string) => string)(nsec), [nsec]));

// ---------------------------------------------------------------------------------------------
// Identifiers: valid, unknown, malformed, NIP-19 with bad TLVs.

const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

function bech32Polymod(values: readonly number[]): number {
  const generator = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let checksum = 1;
  for (const value of values) {
    const top = checksum >>> 25;
    checksum = ((checksum & 0x1ffffff) << 5) ^ value;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) checksum ^= generator[i] as number;
  }
  return checksum;
}

function toWords(bytes: Uint8Array): number[] {
  const words: number[] = [];
  let accumulator = 0;
  let bits = 0;
  for (const byte of bytes) {
    accumulator = ((accumulator << 8) | byte) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      words.push((accumulator >>> bits) & 31);
    }
  }
  if (bits > 0) words.push((accumulator << (5 - bits)) & 31);
  return words;
}

/** bech32 with a valid checksum around any bytes (so that only the content is wrong). */
export function bech32Encode(prefix: string, bytes: Uint8Array): string {
  const expanded = [...prefix].map((c) => c.charCodeAt(0) >> 5);
  expanded.push(0, ...[...prefix].map((c) => c.charCodeAt(0) & 31));
  const words = toWords(bytes);
  const mod = bech32Polymod([...expanded, ...words, 0, 0, 0, 0, 0, 0]) ^ 1;
  const checksum = [0, 1, 2, 3, 4, 5].map((i) => (mod >>> (5 * (5 - i))) & 31);
  return `${prefix}1${[...words, ...checksum].map((word) => BECH32[word]).join('')}`;
}

const NIP19_PREFIXES = ['npub', 'nprofile', 'note', 'nevent', 'naddr', 'nrelay', 'nsec', 'ncryptsec', 'lnurl'];

/** TLV records, some with lengths that lie, unknown types, or truncated values. */
const tlvBytes = fc
  .array(
    fc.record({
      type: fc.oneof(fc.constantFrom(0, 1, 2, 3), fc.integer({ min: 0, max: 255 })),
      value: fc.uint8Array({ maxLength: 40 }),
      lengthDelta: fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, { arbitrary: fc.integer({ min: -3, max: 3 }), weight: 1 }),
    }),
    { maxLength: 4 },
  )
  .map((records) => {
    const bytes: number[] = [];
    for (const { type, value, lengthDelta } of records) {
      bytes.push(type, Math.max(0, Math.min(255, value.length + lengthDelta)), ...value);
    }
    return Uint8Array.from(bytes);
  });

const badNip19 = fc.oneof(
  // Valid checksum, wrong content: TLVs of random records, raw keys of the wrong length.
  fc.tuple(fc.constantFrom(...NIP19_PREFIXES), tlvBytes).map(([prefix, bytes]) => bech32Encode(prefix, bytes)),
  fc
    .tuple(fc.constantFrom('npub', 'note'), fc.uint8Array({ maxLength: 40 }))
    .filter(([, bytes]) => bytes.length !== 32)
    .map(([prefix, bytes]) => bech32Encode(prefix, bytes)),
  // Random data part: the checksum is wrong (almost always).
  fc
    .tuple(fc.constantFrom(...NIP19_PREFIXES), fc.string({ unit: fc.constantFrom(...BECH32), maxLength: 120 }))
    .map(([prefix, data]) => `${prefix}1${data}`),
  // Letters outside the bech32 alphabet, a missing separator, a huge one.
  fc.constantFrom('npub1bio', 'npub', 'npub1', 'nprofile1', 'nevent1qqqq', 'note1' + 'q'.repeat(200), 'npub1' + 'qz'.repeat(2600)),
);

function hexArbitrary(minLength: number, maxLength: number) {
  return fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength, maxLength });
}

function knownIdentifierPiece(known: KnownIdentifiers) {
  const id = fc.constantFrom(...known.eventIds);
  const pubkey = fc.constantFrom(...known.pubkeys);
  return fc
    .oneof(
      id,
      id.map((value) => value.toUpperCase()),
      id.map((value) => noteEncode(value)),
      id.map((value) => `nostr:${noteEncode(value)}`),
      id.map((value) => neventEncode({ id: value, relays: ['wss://relay.example'] })),
      pubkey,
      pubkey.map((value) => npubEncode(value)),
      pubkey.map((value) => `nostr:${npubEncode(value)}`),
      pubkey.map((value) => nprofileEncode({ pubkey: value, relays: ['ws://127.0.0.1:1'] })),
      pubkey.map((value) => ` ${npubEncode(value)}\n`),
    )
    .map((text) => piece(text));
}

const SPECIAL_TEXTS = [
  '', ' ', '+', '%', '%zz', '%0', '%00', '%%', '%25', '%2', '%C0%AF', '%ED%A0%80', '%FF', '%E2%82', '\0',
  'null', 'undefined', 'true', '[]', '{}', '__proto__', 'constructor', 'toString', "' OR 1=1 --",
  '<script>alert(1)</script>', '../../etc/passwd', '${jndi:ldap://x}', '{{7*7}}', '\u2028\u2029', '🤙',
  'ｎｓｅｃ１', 'nsec1', 'nostr:', 'nostr:nostr:', '\uFEFF', 'a\r\nb', '0x00', '-1', '1e309',
];

/** Printable ASCII, for headers and keys. */
const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 });

const longPiece = fc
  .tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.integer({ min: 500, max: 8000 }), fc.option(nsecPiece, { nil: undefined }))
  .map(([chunk, length, secret]) => {
    const filler = chunk.repeat(Math.ceil(length / chunk.length)).slice(0, length);
    if (!secret) return piece(filler);
    const half = filler.slice(0, length >> 1);
    return join([piece(half), secret, piece(filler.slice(half.length))]);
  });

/** A value for an identifier parameter: anything from valid to hostile. */
function identifierPiece(known: KnownIdentifiers): fc.Arbitrary<Piece> {
  return fc.oneof(
    { arbitrary: knownIdentifierPiece(known), weight: 3 },
    { arbitrary: hexArbitrary(64, 64).map((text) => piece(text)), weight: 2 },
    { arbitrary: hexArbitrary(0, 70).map((text) => piece(text)), weight: 1 },
    { arbitrary: badNip19.map((text) => piece(text)), weight: 3 },
    { arbitrary: nsecPiece, weight: 5 },
    { arbitrary: texts(SPECIAL_TEXTS), weight: 2 },
    { arbitrary: fc.string({ maxLength: 30 }).map((text) => piece(text)), weight: 1 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }).map((text) => piece(text)), weight: 1 },
    { arbitrary: longPiece, weight: 1 },
  );
}

// ---------------------------------------------------------------------------------------------
// Query strings.

type Encoding = 'component' | 'form' | 'loose' | 'all' | 'raw';
const encodingArbitrary = fc.constantFrom<Encoding>('component', 'component', 'form', 'loose', 'loose', 'all', 'raw');

const UNRESERVED = /[A-Za-z0-9\-._~]/;

function encode(text: string, encoding: Encoding): string {
  switch (encoding) {
    case 'raw':
      return text;
    case 'all':
      return utf8PercentAll(text);
    case 'loose':
      // Only what would end the parameter or the request-target: '%' and '+' stay as they are.
      return [...text].map((c) => (/[\x21-\x7e]/.test(c) && !/[&#]/.test(c) ? c : utf8PercentAll(c))).join('');
    case 'component':
    case 'form':
      return [...text]
        .map((c) => (UNRESERVED.test(c) ? c : c === ' ' && encoding === 'form' ? '+' : utf8PercentAll(c)))
        .join('');
  }
}

interface Parameter {
  key: Piece;
  value: Piece;
  encoding: Encoding;
  shape: 'pair' | 'keyOnly' | 'emptyValue' | 'valueOnly';
}

function parameterText({ key, value, encoding, shape }: Parameter): Piece {
  const k = encode(key.text, encoding);
  const v = encode(value.text, encoding);
  switch (shape) {
    case 'pair':
      return piece(`${k}=${v}`, [...key.secrets, ...value.secrets]);
    case 'keyOnly':
      return piece(k, key.secrets);
    case 'emptyValue':
      return piece(`${k}=`, key.secrets);
    case 'valueOnly':
      return piece(`=${v}`, value.secrets);
  }
}

function parameterArbitrary(key: fc.Arbitrary<Piece>, value: fc.Arbitrary<Piece>): fc.Arbitrary<Parameter> {
  return fc.record({
    key,
    value,
    encoding: encodingArbitrary,
    shape: fc.oneof(
      { arbitrary: fc.constant('pair' as const), weight: 8 },
      { arbitrary: fc.constantFrom('keyOnly' as const, 'emptyValue' as const, 'valueOnly' as const), weight: 1 },
    ),
  });
}

const querySeparator = fc.constantFrom('&', '&', '&', '&', ';', '&&', '&amp;');

function queryString(parameters: fc.Arbitrary<Parameter[]>): fc.Arbitrary<Piece> {
  return fc
    .record({ parameters, separator: querySeparator, lead: fc.constantFrom('?', '?', '?', '?&', '??', '') })
    .map(({ parameters: list, separator, lead }) => {
      if (list.length === 0) return piece(lead === '' ? '' : '?');
      return wrap(lead === '' ? '?' : lead, join(list.map(parameterText), separator));
    });
}

function restQuery(known: KnownIdentifiers): fc.Arbitrary<Piece> {
  const key = fc.oneof(
    { arbitrary: texts(['id', 'pubkey']), weight: 10 },
    {
      arbitrary: texts(['ID', 'Pubkey', 'id[]', 'id[0]', 'pubkey[a]', '__proto__', 'constructor', 'hasOwnProperty', 'query', 'variables', '', 'id ', ' id', 'i%64']),
      weight: 2,
    },
    { arbitrary: printable.map((text) => piece(text)), weight: 1 },
    { arbitrary: nsecPiece, weight: 2 },
  );
  return queryString(fc.array(parameterArbitrary(key, identifierPiece(known)), { maxLength: 4 }));
}

// ---------------------------------------------------------------------------------------------
// GraphQL documents, variables, extensions.

function graphqlString(text: string): string {
  return JSON.stringify(text); // JSON string syntax is valid GraphQL string syntax
}

/** A GraphQL value literal carrying an identifier. */
function valueLiteral(known: KnownIdentifiers): fc.Arbitrary<Piece> {
  const identifier = identifierPiece(known);
  return fc.oneof(
    { arbitrary: identifier.map((p) => piece(graphqlString(p.text), p.secrets)), weight: 8 },
    // A GraphQL string whose escapes decode to the nsec.
    {
      arbitrary: nsecArbitrary.map((nsec) => piece(`"\\u006e${nsec.slice(1)}"`, [nsec])),
      weight: 2,
    },
    {
      arbitrary: nsecArbitrary.map((nsec) => piece(`"${jsonEscapeAll(nsec)}"`, [nsec])),
      weight: 1,
    },
    { arbitrary: identifier.map((p) => piece(`"""${p.text.replace(/"""/g, '')}"""`, p.secrets)), weight: 1 },
    // Not a string: an enum-like name, a number, a list, an object, a variable that does not exist.
    { arbitrary: nsecName, weight: 2 },
    { arbitrary: texts(['1', '-1.5e3', 'null', 'true', '{}', '$undefined', '[]', '""']), weight: 1 },
    { arbitrary: identifier.map((p) => piece(`[${graphqlString(p.text)}]`, p.secrets)), weight: 1 },
    { arbitrary: identifier.map((p) => piece(`{k: ${graphqlString(p.text)}}`, p.secrets)), weight: 1 },
  );
}

const graphqlName = fc.oneof(
  { arbitrary: nsecName, weight: 4 },
  { arbitrary: fc.stringMatching(/^[_A-Za-z][_0-9A-Za-z]{0,15}$/).map((text) => piece(text)), weight: 2 },
  { arbitrary: nsecPiece, weight: 1 },
);

function graphqlDocument(known: KnownIdentifiers): fc.Arbitrary<Piece> {
  const v = valueLiteral(known);
  const t = (strings: TemplateStringsArray, ...holes: fc.Arbitrary<Piece>[]): fc.Arbitrary<Piece> =>
    fc.tuple(...holes).map((pieces) =>
      join(strings.flatMap((text, i) => (i < pieces.length ? [piece(text), pieces[i] as Piece] : [piece(text)]))),
    );
  const n = graphqlName;
  const valid = fc.oneof(
    t`{ profile(pubkey: ${v}) { pubkey name displayName about picture banner website nip05 lud06 lud16 bot event { id createdAt json } } }`,
    t`{ event(id: ${v}) { id pubkey kind content createdAt tags sig json author { name } relevantPubkeys relevantProfiles { pubkey name } } }`,
    t`{ profiles(pubkeys: [${v}, ${v}]) { pubkey name } }`,
    t`{ events(ids: [${v}]) { id kind } }`,
    t`{ a: event(id: ${v}) { id } b: profile(pubkey: ${v}) { name } }`,
    texts([
      'query Q($v: String!) { profile(pubkey: $v) { name } }',
      'query Q($v: [String!]!) { events(ids: $v) { id } }',
      'query Q($v: String) { event(id: $v) { id } }',
      'query Q($v: String!, $w: [String!]!) { profile(pubkey: $v) { name } profiles(pubkeys: $w) { name } }',
      '{ __typename }',
      '{ __schema { queryType { name } types { name kind } } }',
      'query A { __typename } query B { __typename }',
      'mutation { __typename }',
      'subscription { __typename }',
    ]),
    t`{ __type(name: ${v}) { name } }`,
  );
  const names = fc.oneof(
    t`{ ${n} }`,
    t`{ ${n}: __typename }`,
    t`{ profile(${n}: "x") { name } }`,
    t`query ${n} { __typename }`,
    t`{ ...${n} }`,
    t`fragment ${n} on Query { __typename } { ...${n} }`,
    t`{ __typename @${n} }`,
    t`query ($${n}: String) { __typename }`,
    t`query ($v: ${n}) { __typename }`,
    t`# ${n}\n{ __typename }`,
    t`{ profile(pubkey: "x") { ${n} } }`,
    t`{ event(id: "x") { author { ${n} { id } } } }`,
    t`{ event(id: "${n}`,
    t`{ profile(pubkey: ${v}) ${n}! }`,
  );
  const limits = fc.oneof(
    fc.integer({ min: 5, max: 20 }).map((depth) => piece(`{ event(id: "x") { ${'author { event { '.repeat(depth)}id${' } }'.repeat(depth)} } }`)),
    fc.integer({ min: 10, max: 40 }).map((count) => piece(`{ ${Array.from({ length: count }, (_, i) => `a${i}: __typename`).join(' ')} }`)),
    fc.integer({ min: 1500, max: 2600 }).map((count) => piece(`{ ${'__typename '.repeat(count)}}`)),
    fc.tuple(fc.integer({ min: 95, max: 130 }), v).map(([count, value]) =>
      piece(`{ events(ids: [${Array(count).fill(value.text).join(', ')}]) { id } }`, value.secrets),
    ),
    fc.integer({ min: 10, max: 80 }).map((count) => piece(`{ __typename ${'@skip(if: false) '.repeat(count)}}`)),
  );
  const random = fc.oneof(
    fc.string({ unit: fc.constantFrom(...'{}()[]:!$@.=,"\\ \n#abcnsec1qpz_ ...'), maxLength: 60 }).map((text) => piece(text)),
    fc.string({ maxLength: 60 }).map((text) => piece(text)),
    texts(['', ' ', '{', '}', '{ __typename', 'query', '"""', '{ a(b: "\\u) }', '{ a(b: "\\uD800") }', '\u0000']),
  );
  const document = fc.oneof(
    { arbitrary: valid, weight: 6 },
    { arbitrary: names, weight: 4 },
    { arbitrary: limits, weight: 1 },
    { arbitrary: random, weight: 2 },
  );
  // Broken copies: cut short, a character dropped or inserted.
  return fc
    .tuple(
      document,
      fc.oneof(
        { arbitrary: fc.constant(undefined), weight: 5 },
        { arbitrary: fc.tuple(fc.constantFrom('cut', 'drop', 'insert'), fc.nat(), fc.string({ minLength: 1, maxLength: 2 })), weight: 1 },
      ),
    )
    .map(([doc, mutation]) => {
      if (!mutation) return doc;
      const [how, position, inserted] = mutation;
      const at = doc.text.length === 0 ? 0 : position % doc.text.length;
      const text =
        how === 'cut'
          ? doc.text.slice(0, at)
          : how === 'drop'
            ? doc.text.slice(0, at) + doc.text.slice(at + 1)
            : doc.text.slice(0, at) + inserted + doc.text.slice(at);
      return piece(text, doc.secrets);
    });
}

/** A JSON string literal of `text`, written plainly or with every character as \uXXXX. */
function jsonString(text: string, unicode: boolean): string {
  if (!unicode || text.length > 300) return JSON.stringify(text);
  return `"${[...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`;
}

const jsonStringOfPiece = (p: fc.Arbitrary<Piece>) =>
  fc
    .tuple(p, fc.oneof({ arbitrary: fc.constant(false), weight: 4 }, { arbitrary: fc.constant(true), weight: 1 }))
    .map(([value, unicode]) => piece(jsonString(value.text, unicode), value.secrets));

/** Variables as JSON text: right, wrong types with an nsec, nsec as a name, or not JSON at all. */
function variablesText(known: KnownIdentifiers): fc.Arbitrary<Piece> {
  const s = jsonStringOfPiece(identifierPiece(known));
  const nsecJson = fc.oneof(
    jsonStringOfPiece(nsecPiece),
    nsecArbitrary.map((nsec) => piece(`"\\u006e${nsec.slice(1)}"`, [nsec])),
  );
  const valid = fc.oneof(
    s.map((value) => wrap('{"v":', value, '}')),
    fc.tuple(s, s).map(([a, b]) => piece(`{"v":${a.text},"w":[${b.text}]}`, [...a.secrets, ...b.secrets])),
    fc.array(s, { maxLength: 3 }).map((list) => wrap('{"v":[', join(list, ','), ']}')),
  );
  const wrongTypes = fc.oneof(
    nsecJson.map((value) => wrap('{"v":[', value, ']}')),
    nsecJson.map((value) => wrap('{"v":{"k":', value, '}}')),
    nsecJson.map((value) => piece(`{"v":[[${value.text}]],"w":${value.text}}`, value.secrets)),
    nsecJson.map((value) => wrap('{', value, ':"x"}')),
    nsecJson.map((value) => wrap('{"v":{', value, ':1}}')),
    nsecJson.map((value) => wrap('[', value, ']')),
    nsecJson,
    texts(['{"v":1}', '{"v":true}', '{"v":null}', '{"v":1e400}', '{}', 'null', '[]', '42', '"{}"', '{"__proto__":{"polluted":1}}']),
  );
  const malformed = fc.oneof(
    texts(['%', '%25', '{', '}', '{"v":', '{"v":"', '[', 'undefined', 'NaN', '{v:1}', "{'v':'x'}", '{"v":"\\x"}', '\u0000', '{"v":"\uD800"}']),
    nsecPiece,
    nsecPiece.map((value) => wrap('{"v":"', value)),
    fc.integer({ min: 1000, max: 6000 }).map((depth) => piece(`{"v":${'['.repeat(depth)}`)),
    fc.tuple(valid, fc.nat()).map(([value, cut]) => piece(value.text.slice(0, cut % Math.max(1, value.text.length)), value.secrets)),
  );
  return fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: wrongTypes, weight: 3 }, { arbitrary: malformed, weight: 3 });
}

function extensionsText(): fc.Arbitrary<Piece> {
  return fc.oneof(
    texts(['{}', '%', '{', 'null', '[]', '{"persistedQuery":{"version":1,"sha256Hash":"abc"}}']),
    nsecPiece.map((value) => piece(`{"persistedQuery":{"version":1,"sha256Hash":${JSON.stringify(value.text)}}}`, value.secrets)),
    nsecPiece.map((value) => piece(`{"x":${JSON.stringify(value.text)}}`, value.secrets)),
    nsecPiece,
  );
}

const operationNamePiece = fc.oneof(texts(['Q', 'A', 'B', '', 'null']), graphqlName, nsecPiece);

// ---------------------------------------------------------------------------------------------
// Paths, methods, headers, bodies.

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'] as const;
const RARE_METHODS = ['TRACE', 'PROPFIND', 'PURGE', 'SEARCH'];

function methodArbitrary(usual: string, usualWeight: number): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constant(usual), weight: usualWeight },
    { arbitrary: fc.constantFrom(...METHODS), weight: 4 },
    { arbitrary: fc.constantFrom(...RARE_METHODS), weight: 1 },
  );
}

const pathSegment = fc.oneof(
  fc.stringMatching(/^[a-zA-Z0-9._~-]{1,12}$/).map((text) => piece(text)),
  texts(['..', '.', '%2e%2e', '%2F', '%', '%zz', '%00', '%C0%AE', '%E2%82', '%FF', 'event', 'graphql', ';x=1', '', '%6Esec1']),
  fc.string({ unit: 'binary', maxLength: 8 }).map((text) => piece(encode(text, 'component'))),
  fc.string({ unit: 'binary', maxLength: 8 }).map((text) => piece(text)),
);

const unknownPath = fc.oneof(
  texts([
    '/', '/events', '/event/', '/EVENT', '/User-Profile', '/user-profile/', '/graphql/', '/graphiql', '/healthz/',
    '/readyz/x', '//event', '/event;id=1', '/event/..', '/%2e%2e/etc/passwd', '/%', '/%zz', '/%00', '/%2F', '/a%2Fb',
    '/%C0%AE', '/%E2%82', '/%FF', '/.env', '/favicon.ico', '/event%3Fid=x', '/user%2Dprofile', '/%67raphql',
    '/graphql%00', '/event%', '/%%', '/\u00e9', '/😀',
  ]),
  fc.array(pathSegment, { minLength: 1, maxLength: 4 }).map((segments) => wrap('/', join(segments, '/'))),
  fc.integer({ min: 100, max: 8000 }).map((length) => piece(`/${'a'.repeat(length)}`)),
);

/** A path with an nsec in it, in any disguise, in any position. */
const nsecPath = fc
  .tuple(
    fc.constantFrom('/', '/user-profile/', '/event/', '/graphql/', '/healthz/', '/x/', '/%', '//'),
    nsecPiece,
    fc.constantFrom('', '/', '/profile', '.json', '%', '%zz', '/%'),
    fc.constantFrom<Encoding>('raw', 'raw', 'loose', 'component', 'all'),
  )
  .map(([before, secret, after, encoding]) => piece(before + encode(secret.text, encoding) + after, secret.secrets));

const FORBIDDEN_HEADERS = new Set([
  'host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer',
  'proxy-connection', 'http2-settings',
]);

const CONTENT_TYPES = [
  'application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/json; charset=latin1',
  'application/json; charset=utf-16', 'application/graphql+json', 'application/graphql-response+json', 'application/graphql',
  'text/plain', 'text/plain;charset=utf-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=xyz',
  'multipart/form-data', 'application/octet-stream', 'text/html', '*/*', 'application/json; boundary', 'json', ';', '',
];

const ACCEPTS = [
  'text/html', 'text/html,application/xhtml+xml', 'application/json', 'application/graphql-response+json',
  'text/event-stream', 'multipart/mixed', '*/*', 'image/png', 'application/json;q=0', 'garbage', '',
];

/** Header values that Node allows: tab, printable ASCII, latin-1. */
const headerText = fc.string({
  unit: fc.oneof(
    { arbitrary: fc.integer({ min: 0x20, max: 0x7e }), weight: 10 },
    { arbitrary: fc.integer({ min: 0x80, max: 0xff }), weight: 1 },
    { arbitrary: fc.constant(0x09), weight: 1 },
  ).map((c) => String.fromCharCode(c)),
  maxLength: 60,
});

function headerArbitrary(): fc.Arbitrary<[string, Piece]> {
  const h = (name: string, value: fc.Arbitrary<Piece>) => value.map((v): [string, Piece] => [name, v]);
  const nsecOrText = fc.oneof(nsecPiece, headerText.map((text) => piece(text)));
  return fc.oneof(
    h(
      'x-request-id',
      fc.oneof(
        nsecName,
        nsecPiece,
        nsecPiece.map((value) => wrap('req-', value)),
        nsecPiece.map((value) => wrap(':', value, '.')),
        texts(['abc-123', 'a'.repeat(64), 'a'.repeat(65), '', ' ', 'ä', 'id with spaces', '../../x', '{"a":1}']),
      ),
    ),
    h('accept', fc.oneof(texts(ACCEPTS), nsecPiece.map((value) => wrap('text/html;q=', value)))),
    h('origin', fc.oneof(texts(['https://evil.example', 'null', 'http://127.0.0.1']), nsecPiece.map((value) => wrap('https://', value)))),
    h('access-control-request-method', fc.oneof(texts(['GET', 'POST', 'PUT', 'DELETE', '']), nsecPiece)),
    h(
      'access-control-request-headers',
      fc.oneof(
        nsecPiece,
        nsecPiece.map((value) => wrap('x-request-id, ', value)),
        texts(['x-custom', 'content-type', 'x-request-id, authorization', '']),
      ),
    ),
    h(
      'content-type',
      fc.oneof(
        texts(CONTENT_TYPES),
        nsecPiece.map((value) => wrap('application/json; charset=', value)),
        nsecPiece.map((value) => wrap('application/json; x="', value, '"')),
      ),
    ),
    h('cookie', nsecOrText.map((value) => wrap('session=', value))),
    h('authorization', nsecOrText.map((value) => wrap('Bearer ', value))),
    h('referer', nsecOrText.map((value) => wrap('https://app.example/?k=', value))),
    h('x-forwarded-for', fc.oneof(texts(['1.2.3.4', '::1, 10.0.0.1', 'unknown']), nsecPiece)),
    h('user-agent', nsecOrText),
    h('accept-encoding', texts(['gzip', 'br', 'deflate, gzip;q=1.0, *;q=0.5', 'identity;q=0'])),
    h('if-none-match', nsecOrText),
    h('range', texts(['bytes=0-10', 'bytes=-1', 'bytes=abc'])),
    h('x-http-method-override', fc.constantFrom(...METHODS).map((text) => piece(text))),
    h('x-long', fc.integer({ min: 100, max: 4000 }).map((length) => piece('v'.repeat(length)))),
    // Any token as a name (an nsec too), any allowed text as a value.
    fc
      .tuple(fc.oneof(fc.stringMatching(/^[a-z][a-z0-9!#$%&'*+.^_`|~-]{0,24}$/).map((text) => piece(text)), nsecName), nsecOrText)
      .filter(([name]) => !FORBIDDEN_HEADERS.has(name.text.toLowerCase()))
      .map(([name, value]): [string, Piece] => [name.text, piece(value.text, [...name.secrets, ...value.secrets])]),
  );
}

/** Header names may carry secrets too: they travel in the piece of the value. */
function headersArbitrary(maxLength = 5) {
  return fc.array(headerArbitrary(), { maxLength }).map((pairs) => ({
    headers: pairs.map(([name, value]): [string, string] => [name, value.text]),
    secrets: pairs.flatMap(([, value]) => value.secrets),
  }));
}

// ---------------------------------------------------------------------------------------------
// Requests by route.

interface Parts {
  kind: string;
  method: string;
  target: Piece;
  headers: { headers: [string, string][]; secrets: string[] };
  body?: Piece;
  contentType?: string;
}

function finish({ kind, method, target, headers, body, contentType }: Parts): FuzzRequest {
  const all = contentType === undefined ? headers.headers : [['content-type', contentType] as [string, string], ...headers.headers];
  // node:http refuses characters outside \x21-\xff in a path; those requests go raw, as they are.
  const needsRaw = /[^\x21-\x7e]/.test(target.text);
  // Only the secrets still whole in what is sent (a broken copy of a document may have cut one).
  const sent = [target.text, ...all.flat(), body?.text ?? ''].join('\n');
  const secrets = [...new Set([...target.secrets, ...headers.secrets, ...(body?.secrets ?? [])])].filter((nsec) =>
    containsSecret(sent, nsec),
  );
  const request: FuzzRequest = {
    kind,
    transport: needsRaw ? 'raw' : 'http',
    method,
    target: target.text,
    headers: all,
    body: body?.text ?? '',
    secrets,
  };
  if (needsRaw) request.raw = rawRequest(request);
  return request;
}

function rawRequest({ method, target, headers, body }: Pick<FuzzRequest, 'method' | 'target' | 'headers' | 'body'>): string {
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', ...headers.map(([name, value]) => `${name}: ${value}`)];
  if (body !== '') lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  lines.push('Connection: close');
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

function restRequests(known: KnownIdentifiers): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      method: methodArbitrary('GET', 14),
      path: fc.oneof(
        { arbitrary: texts(['/event', '/user-profile']), weight: 12 },
        { arbitrary: texts(['/%65vent', '/user%2Dprofile', '/event/', '/Event']), weight: 1 },
      ),
      query: restQuery(known),
      headers: headersArbitrary(),
      body: fc.option(identifierPiece(known), { freq: 8, nil: undefined }),
    })
    .map(({ method, path, query, headers, body }) =>
      finish({ kind: 'rest', method, target: join([path, query]), headers, body }),
    );
}

function graphqlGetRequests(known: KnownIdentifiers): fc.Arbitrary<FuzzRequest> {
  const graphqlParameter = (key: string, value: fc.Arbitrary<Piece>) =>
    parameterArbitrary(fc.constant(piece(key)), value).map((parameter) => [parameter]);
  const none = fc.constant<Parameter[]>([]);
  const optional = (key: string, value: fc.Arbitrary<Piece>, weight: number) =>
    fc.oneof({ arbitrary: graphqlParameter(key, value), weight }, { arbitrary: none, weight: 10 - weight });
  const parameters = fc
    .tuple(
      fc.oneof(
        { arbitrary: graphqlParameter('query', graphqlDocument(known)), weight: 9 },
        {
          arbitrary: fc
            .tuple(graphqlParameter('query', graphqlDocument(known)), graphqlParameter('query', graphqlDocument(known)))
            .map(([a, b]) => [...a, ...b]),
          weight: 1,
        },
        { arbitrary: none, weight: 1 },
      ),
      optional('variables', variablesText(known), 6),
      optional('operationName', operationNamePiece, 2),
      optional('extensions', extensionsText(), 2),
      fc.array(parameterArbitrary(fc.oneof(printable.map((text) => piece(text)), nsecPiece), identifierPiece(known)), { maxLength: 1 }),
      fc.boolean(),
    )
    .map(([query, variables, operationName, extensions, extra, reversed]) => {
      const list = [...query, ...variables, ...operationName, ...extensions, ...extra];
      return reversed ? list.reverse() : list;
    });
  return fc
    .record({
      method: methodArbitrary('GET', 14),
      query: queryString(parameters),
      headers: headersArbitrary(),
    })
    .map(({ method, query, headers }) =>
      finish({ kind: 'graphql-get', method, target: wrap('/graphql', query), headers }),
    );
}

function graphqlPostRequests(known: KnownIdentifiers): fc.Arbitrary<FuzzRequest> {
  const document = graphqlDocument(known);
  const variables = variablesText(known);
  const field = (name: string, value: fc.Arbitrary<Piece>, weight: number) =>
    fc.oneof({ arbitrary: value.map((v) => wrap(`"${name}":`, v)), weight }, { arbitrary: fc.constant(undefined), weight: 10 - weight });
  const jsonBody = fc
    .tuple(
      field(
        'query',
        fc.oneof(
          { arbitrary: jsonStringOfPiece(document), weight: 10 },
          { arbitrary: texts(['123', 'null', '[]', '{}', 'true']), weight: 1 },
          { arbitrary: jsonStringOfPiece(document).map((value) => wrap('[', value, ']')), weight: 1 },
        ),
        9,
      ),
      field(
        'variables',
        fc.oneof(
          { arbitrary: variables.filter((value) => isJson(value.text)), weight: 4 },
          { arbitrary: jsonStringOfPiece(variables), weight: 1 }, // variables as a string of JSON
        ),
        6,
      ),
      field('operationName', jsonStringOfPiece(operationNamePiece), 2),
      field('extensions', extensionsText().filter((value) => isJson(value.text)), 2),
      fc.boolean(),
    )
    .map(([query, variables, operationName, extensions, reversed]) => {
      const present = [query, variables, operationName, extensions].filter((value): value is Piece => value !== undefined);
      return wrap('{', join(reversed ? present.reverse() : present, ','), '}');
    });
  const body = fc.oneof(
    { arbitrary: jsonBody, weight: 10 },
    { arbitrary: fc.array(jsonBody, { minLength: 1, maxLength: 3 }).map((list) => wrap('[', join(list, ','), ']')), weight: 1 },
    {
      arbitrary: fc.tuple(jsonBody, fc.nat()).map(([value, cut]) => piece(value.text.slice(0, cut % Math.max(1, value.text.length)), value.secrets)),
      weight: 2,
    },
    { arbitrary: fc.tuple(jsonBody, fc.constantFrom('}', ',', ' x', '\u0000')).map(([value, tail]) => wrap('', value, tail)), weight: 1 },
    { arbitrary: document, weight: 2 }, // application/graphql, or not JSON at all
    {
      arbitrary: fc
        .tuple(document, variables)
        .map(([doc, vars]) => piece(`query=${encode(doc.text, 'form')}&variables=${encode(vars.text, 'loose')}`, [...doc.secrets, ...vars.secrets])),
      weight: 1,
    },
    { arbitrary: fc.oneof(nsecPiece, texts(['', ' ', 'null', '%', '--xyz--'])), weight: 1 },
    {
      arbitrary: document.map((doc) =>
        piece(`--xyz\r\nContent-Disposition: form-data; name="operations"\r\n\r\n{"query":${JSON.stringify(doc.text)}}\r\n--xyz--\r\n`, doc.secrets),
      ),
      weight: 1,
    },
  );
  return fc
    .record({
      method: methodArbitrary('POST', 16),
      query: fc.oneof({ arbitrary: fc.constant(piece('')), weight: 8 }, { arbitrary: restQuery(known), weight: 1 }),
      contentType: fc.oneof(
        { arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8'), weight: 8 },
        { arbitrary: fc.constantFrom(...CONTENT_TYPES), weight: 3 },
        { arbitrary: fc.constant(undefined), weight: 1 },
      ),
      headers: headersArbitrary(3),
      body,
    })
    .map(({ method, query, contentType, headers, body: content }) =>
      finish({ kind: 'graphql-post', method, target: wrap('/graphql', query), headers, body: content, contentType }),
    );
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function otherRouteRequests(known: KnownIdentifiers): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      kind: fc.constantFrom('health', 'unknown-path', 'nsec-path', 'nsec-path', 'absolute-form'),
      method: methodArbitrary('GET', 10),
      health: texts(['/healthz', '/readyz']),
      unknown: unknownPath,
      secretPath: nsecPath,
      absolute: texts(['/event', '/user-profile', '/graphql', '/healthz', '/nowhere']),
      query: fc.oneof({ arbitrary: fc.constant(piece('')), weight: 2 }, { arbitrary: restQuery(known), weight: 1 }),
      headers: headersArbitrary(),
    })
    .map(({ kind, method, health, unknown, secretPath, absolute, query, headers }) => {
      const path =
        kind === 'health' ? health : kind === 'unknown-path' ? unknown : kind === 'nsec-path' ? secretPath : wrap('http://127.0.0.1', absolute);
      return finish({ kind, method, target: join([path, query]), headers });
    });
}

function preflightRequests(known: KnownIdentifiers): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      path: fc.oneof(texts(['/event', '/user-profile', '/graphql', '/healthz', '/nowhere']), nsecPath),
      query: fc.oneof({ arbitrary: fc.constant(piece('')), weight: 2 }, { arbitrary: restQuery(known), weight: 1 }),
      method: fc.oneof(texts(['GET', 'POST', 'HEAD', 'PUT']), nsecPiece),
      requestHeaders: fc.oneof(
        nsecPiece,
        nsecPiece.map((value) => wrap('content-type, x-request-id, ', value)),
        texts(['content-type', 'x-custom', '', 'a'.repeat(3000)]),
      ),
      origin: fc.oneof(texts(['https://evil.example', 'null']), nsecPiece.map((value) => wrap('https://', value, '.example'))),
      headers: headersArbitrary(2),
    })
    .map(({ path, query, method, requestHeaders, origin, headers }) =>
      finish({
        kind: 'preflight',
        method: 'OPTIONS',
        target: join([path, query]),
        headers: {
          headers: [
            ['origin', origin.text],
            ['access-control-request-method', method.text],
            ['access-control-request-headers', requestHeaders.text],
            ...headers.headers,
          ],
          secrets: [...origin.secrets, ...method.secrets, ...requestHeaders.secrets, ...headers.secrets],
        },
      }),
    );
}

/** Requests node:http would not send: broken request lines, headers, framing, sizes. */
function malformedRequests(): fc.Arbitrary<FuzzRequest> {
  const target = fc.oneof(
    texts(['/event?id=x', '/user-profile', '/graphql?query={__typename}', '/healthz', '/']),
    nsecPiece.map((value) => wrap('/user-profile?pubkey=', value)),
    nsecPath,
  );
  return fc
    .record({
      template: fc.constantFrom(
        'space-in-target', 'utf8-target', 'nul-in-target', 'bad-method', 'lowercase-method', 'http10', 'http-version',
        'no-colon-header', 'nul-in-header', 'obs-fold', 'bare-lf', 'cl-and-te', 'bad-chunked', 'bad-content-length',
        'double-content-length', 'huge-header', 'huge-url', 'many-headers', 'h2-preface', 'garbage-line', 'upgrade',
        'no-host', 'two-hosts',
      ),
      target,
      secret: nsecPiece,
      size: fc.integer({ min: 16_500, max: 40_000 }),
    })
    .map(({ template, target: t, secret, size }) => {
      const s = secret.text;
      const host = 'Host: 127.0.0.1\r\n';
      const close = 'Connection: close\r\n';
      let raw: string;
      let method = 'GET';
      let secrets = [...t.secrets, ...secret.secrets];
      switch (template) {
        case 'space-in-target':
          raw = `GET /user-profile?pubkey=${s} and more HTTP/1.1\r\n${host}${close}\r\n`;
          break;
        case 'utf8-target':
          raw = `GET ${t.text}é😀?x=ü${s} HTTP/1.1\r\n${host}${close}\r\n`;
          break;
        case 'nul-in-target':
          raw = `GET ${t.text}\0${s} HTTP/1.1\r\n${host}${close}\r\n`;
          break;
        case 'bad-method':
          method = 'N$EC';
          raw = `N$EC ${t.text} HTTP/1.1\r\n${host}${close}\r\n`;
          break;
        case 'lowercase-method':
          method = 'get';
          raw = `get ${t.text} HTTP/1.1\r\n${host}${close}\r\n`;
          break;
        case 'http10':
          raw = `GET ${t.text} HTTP/1.0\r\n\r\n`;
          break;
        case 'http-version':
          raw = `GET ${t.text} HTTP/9.${s.length}\r\n${host}${close}\r\n`;
          break;
        case 'no-colon-header':
          raw = `GET ${t.text} HTTP/1.1\r\n${host}${s}\r\n${close}\r\n`;
          break;
        case 'nul-in-header':
          raw = `GET ${t.text} HTTP/1.1\r\n${host}x-a: ${s}\0\r\n${close}\r\n`;
          break;
        case 'obs-fold':
          raw = `GET ${t.text} HTTP/1.1\r\n${host}x-request-id: a\r\n ${s}\r\n${close}\r\n`;
          break;
        case 'bare-lf':
          raw = `GET ${t.text} HTTP/1.1\n${host.trim()}\nx-request-id: ${s}\n${close.trim()}\n\n`;
          break;
        case 'cl-and-te':
          method = 'POST';
          raw = `POST ${t.text} HTTP/1.1\r\n${host}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n${close}\r\n0\r\n\r\n`;
          break;
        case 'bad-chunked':
          method = 'POST';
          raw = `POST /graphql HTTP/1.1\r\n${host}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n${close}\r\nzz\r\n${s}\r\n0\r\n\r\n`;
          break;
        case 'bad-content-length':
          method = 'POST';
          raw = `POST /graphql HTTP/1.1\r\n${host}Content-Length: -${s.length}\r\n${close}\r\n${s}`;
          break;
        case 'double-content-length':
          method = 'POST';
          raw = `POST /graphql HTTP/1.1\r\n${host}Content-Length: 2\r\nContent-Length: ${s.length}\r\n${close}\r\n${s}`;
          break;
        case 'huge-header':
          raw = `GET ${t.text} HTTP/1.1\r\n${host}x-big: ${s.repeat(Math.ceil(size / s.length))}\r\n${close}\r\n`;
          break;
        case 'huge-url':
          raw = `GET /user-profile?pubkey=${s}&pad=${'p'.repeat(size)} HTTP/1.1\r\n${host}${close}\r\n`;
          break;
        case 'many-headers':
          raw = `GET ${t.text} HTTP/1.1\r\n${host}${Array.from({ length: 2100 }, (_, i) => `x-h${i}: ${i === 7 ? s : 'v'}\r\n`).join('')}${close}\r\n`;
          break;
        case 'h2-preface':
          method = 'PRI';
          raw = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
          secrets = [];
          break;
        case 'garbage-line':
          raw = `\r\n${s}\r\n\r\n`;
          break;
        case 'no-host':
          raw = `GET ${t.text} HTTP/1.1\r\n${close}\r\n`;
          break;
        case 'two-hosts':
          raw = `GET ${t.text} HTTP/1.1\r\n${host}Host: ${s}.example\r\n${close}\r\n`;
          break;
        case 'upgrade':
          raw = `GET ${t.text} HTTP/1.1\r\n${host}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nx-request-id: ${s}\r\n\r\n`;
          break;
        default:
          throw new Error(`unknown template ${template}`);
      }
      // Only the secrets that are really in the bytes sent.
      secrets = [...new Set(secrets)].filter((nsec) => containsSecret(raw, nsec));
      return {
        kind: `malformed:${template}`,
        transport: 'raw' as const,
        method,
        target: raw.slice(raw.indexOf(' ') + 1, raw.indexOf(' HTTP/')) || raw.slice(0, 40),
        headers: [],
        body: '',
        raw,
        secrets,
      };
    });
}

/** Every kind of request, weighted toward the routes that take input. */
export function fuzzRequestArbitrary(known: KnownIdentifiers): fc.Arbitrary<FuzzRequest> {
  return fc
    .oneof(
      { arbitrary: restRequests(known), weight: 30 },
      { arbitrary: graphqlGetRequests(known), weight: 18 },
      { arbitrary: graphqlPostRequests(known), weight: 22 },
      { arbitrary: otherRouteRequests(known), weight: 16 },
      { arbitrary: preflightRequests(known), weight: 6 },
      { arbitrary: malformedRequests(), weight: 8 },
    )
    .map((request) => Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) }));
}

// ---------------------------------------------------------------------------------------------
// Describing requests and responses.

export function truncate(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length)}… (${text.length} chars)`;
}

export function describeRequest(request: FuzzRequest): string {
  const lines = [`${request.kind} via ${request.transport}: ${request.method} ${truncate(JSON.stringify(request.target), 400)}`];
  if (request.raw !== undefined) lines.push(`  raw: ${truncate(JSON.stringify(request.raw), 600)}`);
  else {
    for (const [name, value] of request.headers) lines.push(`  ${name}: ${truncate(JSON.stringify(value), 200)}`);
    if (request.body !== '') lines.push(`  body: ${truncate(JSON.stringify(request.body), 600)}`);
  }
  lines.push(`  secrets sent: ${request.secrets.length === 0 ? '(none)' : request.secrets.join(', ')}`);
  return lines.join('\n');
}

export function describeResponse(exchange: Exchange): string {
  if (exchange.status === undefined) return `no response: ${exchange.failure ?? 'unknown'}`;
  const headers = exchange.headers.map(([name, value]) => `  ${name}: ${truncate(value, 200)}`).join('\n');
  return `HTTP ${exchange.status}\n${headers}\n  body: ${truncate(JSON.stringify(exchange.body), 700)}`;
}

export function describeExchange(exchange: Exchange): string {
  return `request:\n${describeRequest(exchange.request)}\nresponse: ${describeResponse(exchange)}`;
}

// ---------------------------------------------------------------------------------------------
// Looking for secrets.

/**
 * The text lowercased, and again with percent-escapes and \\uXXXX escapes (behind any number of
 * backslashes) undone, repeatedly, as long as that changes something (at most 4 times).
 */
function views(text: string): string[] {
  const all = [text.toLowerCase()];
  for (let pass = 0; pass < 4; pass++) {
    const last = all[all.length - 1] as string;
    if (!last.includes('%') && !last.includes('\\u')) break;
    const next = last
      .replace(/\\+u([0-9a-f]{4})/g, (_, code: string) => String.fromCharCode(parseInt(code, 16)))
      .replace(/%([0-9a-f]{2})/g, (_, code: string) => String.fromCharCode(parseInt(code, 16)))
      .toLowerCase();
    if (next === last) break;
    all.push(next);
  }
  return all;
}

const secretHex = new Map<string, string | undefined>();

/**
 * The key of an nsec in hex, if it looks random enough to search for: keys that fast-check shrank
 * toward zero (`0000…0001`) would match any run of zeros in the generated input.
 */
function hexOf(nsec: string): string | undefined {
  if (!secretHex.has(nsec)) {
    const hex = bytesToHex(decode(nsec as `nsec1${string}`).data as Uint8Array);
    secretHex.set(nsec, new Set(hex).size >= 10 ? hex : undefined);
  }
  return secretHex.get(nsec);
}

/** The forms of a secret that must never come back: the nsec, its data part, the key in hex. */
function leakForms(nsec: string): string[] {
  const hex = hexOf(nsec);
  const data = nsec.slice('nsec1'.length).toLowerCase();
  return hex === undefined ? [data] : [data, hex]; // the data part is in the nsec: no need to look for both
}

/**
 * Whether `nsec` was sent in `text`: whole (`nsec1` and its data part), in any case, possibly behind
 * percent- or \\u-escapes.
 */
export function containsSecret(text: string, nsec: string): boolean {
  const whole = nsec.toLowerCase();
  return views(text).some((view) => view.includes(whole));
}

export interface Leak {
  nsec: string;
  /** Found only once percent- or \\u-escapes were undone. */
  escaped: boolean;
  /** The text around it (in the view where it was found). */
  snippet: string;
}

function leakAt(nsec: string, view: string, index: number, escaped: boolean, width: number): Leak {
  const snippet = view.slice(Math.max(0, index - 60), index + width + 20);
  return { nsec, escaped, snippet: `…${snippet}…` };
}

/**
 * Where a secret of `secrets` comes back in `text`: its data part (so the nsec too, in any case) or
 * its key in hex, literally or behind percent- or \\u-escapes.
 */
export function findSecret(text: string, secrets: readonly string[]): Leak | undefined {
  if (secrets.length === 0) return undefined;
  const all = views(text);
  for (const nsec of secrets) {
    for (const form of leakForms(nsec)) {
      for (const [i, view] of all.entries()) {
        const index = view.indexOf(form);
        if (index !== -1) return leakAt(nsec, view, index, i > 0, form.length);
      }
    }
  }
  return undefined;
}

/**
 * Every secret sent so far, indexed by its data part and its hex key, to search many log lines for
 * thousands of secrets at once.
 */
export class SecretIndex {
  private readonly byForm = new Map<string, string>();
  private readonly secrets = new Set<string>();

  add(nsec: string): void {
    this.secrets.add(nsec);
    for (const form of leakForms(nsec)) this.byForm.set(form, nsec);
  }

  get size(): number {
    return this.secrets.size;
  }

  /** The secrets that come back in `text`, one leak each. */
  find(text: string): Leak[] {
    const found = new Map<string, Leak>();
    for (const [i, view] of views(text).entries()) {
      for (const [pattern, width] of [[/[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{58,}/g, 58], [/[0-9a-f]{64,}/g, 64]] as const) {
        for (const match of view.matchAll(pattern)) {
          for (let offset = 0; offset + width <= match[0].length; offset++) {
            const nsec = this.byForm.get(match[0].slice(offset, offset + width));
            if (nsec !== undefined && !found.has(nsec)) found.set(nsec, leakAt(nsec, view, match.index + offset, i > 0, width));
          }
        }
      }
    }
    return [...found.values()];
  }
}

// ---------------------------------------------------------------------------------------------
// Sending.

export interface Sender {
  send(request: FuzzRequest): Promise<Omit<Exchange, 'logLines' | 'request'>>;
  close(): void;
}

const TIMEOUT_MS = 10_000;

export function createSender(baseUrl: string): Sender {
  const { hostname, port } = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });

  const viaHttp = (request: FuzzRequest, retry: boolean): Promise<Omit<Exchange, 'logLines' | 'request'>> =>
    new Promise((resolve) => {
      const started = performance.now();
      // With headers as an array, node:http adds no Host: it is ours to send.
      const headers: string[] = ['host', `${hostname}:${port}`, ...request.headers.flat()];
      if (request.body !== '') headers.push('content-length', String(Buffer.byteLength(request.body)));
      let settled = false;
      const done = (result: Omit<Exchange, 'logLines' | 'request' | 'ms'>) => {
        if (settled) return;
        settled = true;
        resolve({ ...result, ms: performance.now() - started });
      };
      let client: ReturnType<typeof httpRequest>;
      try {
        client = httpRequest({ host: hostname, port, method: request.method, path: request.target, headers, agent });
      } catch (error) {
        done({ headers: [], body: '', failure: `node:http refused to send it: ${String(error)}` });
        return;
      }
      client.setTimeout(TIMEOUT_MS, () => client.destroy(new Error(`no response within ${TIMEOUT_MS} ms`)));
      client.on('response', (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done({ status: response.statusCode, headers: pairs(response.rawHeaders), body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', (error) => done({ headers: [], body: '', failure: `response broken: ${error.message}` }));
      });
      client.on('error', (error: Error & { code?: string }) => {
        if (settled) return;
        // A kept-alive socket the server had closed: the documented race, try once on a new one.
        if (retry && client.reusedSocket && error.code === 'ECONNRESET') {
          settled = true;
          void viaHttp(request, false).then(resolve);
          return;
        }
        // node:http could not parse the answer (a body after a HEAD response, say): read it raw.
        if (error.code?.startsWith('HPE_')) {
          settled = true;
          void viaSocket(request).then(resolve);
          return;
        }
        done({ headers: [], body: '', failure: `${error.code ?? ''} ${error.message}` });
      });
      client.end(request.body === '' ? undefined : request.body);
    });

  const viaSocket = (request: FuzzRequest): Promise<Omit<Exchange, 'logLines' | 'request'>> =>
    new Promise((resolve) => {
      const started = performance.now();
      const socket = connect(Number(port), hostname);
      const chunks: Buffer[] = [];
      let settled = false;
      const head = request.method.toUpperCase() === 'HEAD';
      const done = (result: Omit<Exchange, 'logLines' | 'request' | 'ms'>) => {
        if (settled) return;
        settled = true;
        socket.destroy();
        resolve({ ...result, ms: performance.now() - started });
      };
      socket.setTimeout(TIMEOUT_MS, () => done({ headers: [], body: '', failure: `no response within ${TIMEOUT_MS} ms` }));
      socket.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        const parsed = parseResponse(Buffer.concat(chunks), head, false);
        if (parsed) done(parsed);
      });
      const atEnd = () => {
        const parsed = parseResponse(Buffer.concat(chunks), head, true);
        done(parsed ?? { headers: [], body: '', failure: `connection closed after ${Buffer.concat(chunks).length} bytes without a complete response: ${JSON.stringify(truncate(Buffer.concat(chunks).toString('latin1'), 200))}` });
      };
      socket.on('end', atEnd);
      socket.on('close', atEnd);
      socket.on('error', (error: Error & { code?: string }) => {
        const parsed = parseResponse(Buffer.concat(chunks), head, true);
        done(parsed ?? { headers: [], body: '', failure: `${error.code ?? ''} ${error.message}` });
      });
      socket.write(Buffer.from(request.raw ?? rawRequest(request), 'utf8'));
    });

  return {
    send: (request) => (request.transport === 'raw' ? viaSocket(request) : viaHttp(request, true)),
    close: () => agent.destroy(),
  };
}

function pairs(raw: readonly string[]): [string, string][] {
  const result: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) result.push([(raw[i] as string).toLowerCase(), raw[i + 1] as string]);
  return result;
}

/** One HTTP/1.x response from the bytes so far; undefined while incomplete. */
function parseResponse(bytes: Buffer, head: boolean, ended: boolean): Omit<Exchange, 'logLines' | 'request' | 'ms'> | undefined {
  let offset = 0;
  for (;;) {
    const end = bytes.indexOf('\r\n\r\n', offset);
    if (end === -1) return undefined;
    const lines = bytes.subarray(offset, end).toString('latin1').split('\r\n');
    const match = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (!match) return ended ? { headers: [], body: '', failure: `not an HTTP response: ${JSON.stringify(truncate(lines[0] ?? '', 100))}` } : undefined;
    const status = Number(match[1]);
    const headers = lines.slice(1).map((line): [string, string] => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
    });
    const bodyStart = end + 4;
    if (status >= 100 && status < 200) {
      offset = bodyStart; // 100 Continue: the real response follows
      continue;
    }
    const header = (name: string) => headers.find(([key]) => key === name)?.[1];
    if (head || status === 204 || status === 304) return { status, headers, body: '' };
    const rest = bytes.subarray(bodyStart);
    if (header('transfer-encoding')?.toLowerCase() === 'chunked') {
      const body = dechunk(rest);
      if (body === undefined) return ended ? { status, headers, body: rest.toString('utf8') } : undefined;
      return { status, headers, body };
    }
    const length = header('content-length');
    if (length !== undefined) {
      if (rest.length < Number(length)) return ended ? { status, headers, body: rest.toString('utf8'), failure: undefined } : undefined;
      return { status, headers, body: rest.subarray(0, Number(length)).toString('utf8') };
    }
    return ended ? { status, headers, body: rest.toString('utf8') } : undefined;
  }
}

function dechunk(bytes: Buffer): string | undefined {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', offset);
    if (lineEnd === -1) return undefined;
    const size = parseInt(bytes.subarray(offset, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) return undefined;
    if (size === 0) return Buffer.concat(parts).toString('utf8');
    if (bytes.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}

