import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { GraphiQLOptions } from 'graphql-yoga';
import Negotiator from 'negotiator';

/**
 * GraphiQL served whole by the service: `@graphql-yoga/render-graphiql` inlines its
 * scripts, styles and editor workers into the page, so nothing is fetched from a CDN and the page
 * works offline. yoga's default page loads all of that from unpkg.com, which shows a blank
 * "Loading…" page without internet.
 */

/** What GraphiQL opens with: this service's two questions, on events of the sample (README). */
export const GRAPHIQL_EXAMPLE_QUERY = `# Nostr lookup: events with the profiles of their people, and profiles.
# Event ids: hex, note1…, nevent1… or naddr1…; pubkeys: hex, npub1…, nprofile1… or a NIP-05 name@domain.
# The ids below are in the sample (bin/nostr-lookup import sample/events.jsonl).
# Press the run button (or Ctrl-Enter).
# (No operation name: GraphiQL would send a stale one with a query typed over this one in a hurry.)

{
  event(id: "note16lptvzfanhar73ftsuw63vefpfppt8dke5yylutme4kxuf0u9grqly6uq3") {
    id
    kind
    createdAt
    content
    author {
      name
      displayName
    }
    relevantProfiles {
      pubkey
      displayName
      nip05
      nip05Verification {
        status
      }
    }
  }
  profile(pubkey: "npub1zuuajd7u3sx8xu92yav9jwxpr839cs0kc3q6t56vd5u9q033xmhsk6c2uc") {
    name
    about
    picture
    nip05
  }
}
`;

export const GRAPHIQL_TITLE = 'Nostr lookup — GraphiQL';

const pages = new Map<string, Promise<string>>();

/**
 * The page, rendered once per set of options (about 9 MB: the whole GraphiQL bundle): building the
 * string per request would cost more than any lookup. The bundle is loaded on the first request for
 * the page, not at start: with GraphiQL off (production) it is never loaded, and loaded it costs
 * the process well over 100 MB of memory (measured in the long fuzz run: 357 → 190 MB of growth).
 */
export function renderOfflineGraphiQL(options: GraphiQLOptions): Promise<string> {
  const key = JSON.stringify(options ?? {});
  let page = pages.get(key);
  if (page === undefined) {
    page = import('@graphql-yoga/render-graphiql').then(({ renderGraphiQL }) => {
      const html = renderGraphiQL(options);
      latest = encodedPage(html);
      return html;
    });
    pages.set(key, page);
  }
  return page;
}

/** The page as sent: its bytes, compressed once each way (in the thread pool), and its ETag. */
interface EncodedPage {
  etag: string;
  identity: Buffer;
  gzip: Promise<Buffer>;
  br: Promise<Buffer>;
  /** The brotli bytes once made (1.8 s of a thread-pool thread): until then a client that takes gzip gets it. */
  brReady?: Buffer;
}

/** The encodings the page is sent in, smallest first. */
const ENCODINGS = ['br', 'gzip', 'identity'];

/** The page last rendered (one set of options per service). */
let latest: EncodedPage | undefined;

const gzipped = promisify(gzip);
const brotli = promisify(brotliCompress);

/**
 * 9 MB of page (all of GraphiQL and its editor inlined), measured: 2.43 MB gzipped (level 9, 0.45 s
 * once), 1.92 MB with brotli (quality 6, 1.8 s once); 11 would save 0.2 MB for 31 s.
 */
export function encodedPage(html: string): EncodedPage {
  const identity = Buffer.from(html);
  const page: EncodedPage = {
    etag: `"graphiql-${createHash('sha256').update(identity).digest('hex').slice(0, 32)}"`,
    identity,
    gzip: gzipped(identity, { level: 9 }),
    br: brotli(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 6, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length } }),
  };
  page.br.then((bytes) => (page.brReady = bytes), () => {});
  page.gzip.catch(() => {});
  return page;
}

/**
 * How GraphiQL's page goes to one request: 304 for the ETag the client holds (a reload costs a round
 * trip, no body), else the smallest encoding it accepts that is ready (brotli, gzip, else none).
 * Undefined before the page was rendered.
 */
export async function graphiqlAnswer(headers: { 'accept-encoding'?: string; 'if-none-match'?: string }): Promise<{ status: 200 | 304; headers: Record<string, string>; body?: Buffer } | undefined> {
  const page = latest;
  if (!page) return undefined;
  // Ties go to the smaller (negotiator's `preferred`, which its types omit): a browser's
  // "gzip, deflate, br" gets brotli.
  const negotiator = new Negotiator({ headers }) as Negotiator & { encodings(available: string[], options: { preferred: string[] }): string[] };
  const accepted = negotiator.encodings(ENCODINGS, { preferred: ENCODINGS });
  const encoding = accepted.find((name) => name !== 'br' || page.brReady !== undefined) ?? 'identity';
  // An ETag per encoding: each is a representation of its own (a shared cache must not answer a
  // gzip-only client's revalidation with brotli bytes).
  const etag = `${page.etag.slice(0, -1)}-${encoding}"`;
  const common = { etag, 'cache-control': 'no-cache', vary: 'accept, accept-encoding' };
  if (headers['if-none-match']?.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) return { status: 304, headers: common };
  const body = encoding === 'br' ? (page.brReady as Buffer) : encoding === 'gzip' ? await page.gzip : page.identity;
  return {
    status: 200,
    headers: { ...common, 'content-type': 'text/html; charset=utf-8', ...(encoding === 'br' || encoding === 'gzip' ? { 'content-encoding': encoding } : {}) },
    body,
  };
}
