import type { DocumentNode } from 'graphql';
import type { YogaServerOptions } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';

/**
 * What the GraphQL layer keeps of the documents clients send, bounded in bytes as well as in number.
 *
 * yoga keeps the last 1,024 parsed documents and 1,024 parse errors by query text, and a document
 * holds every token of its text (each AST node's `loc` links them) with its validation result and,
 * once run twice, its compiled code: about 520 heap bytes a token, measured on 2026-12-03 (1,200
 * distinct 500-token documents run twice each: 260 KB a document; 2,000-token ones: 0.96 MB). By
 * count alone, a client sending 1,024 distinct documents of armor's 2,000 tokens had the server
 * hold a gigabyte. Each cache here charges a document its text and its tokens, and drops the least
 * recently used past its budget; a document larger than the whole budget is parsed and not kept.
 */

/** Heap bytes a token of a kept document costs (its Token, AST node, Location and share of the validation and compiled code). */
export const BYTES_PER_TOKEN = 520;
/**
 * What every kept document costs besides its tokens (its validation result, its entries in the
 * caches; measured: the fuzz suite's short documents held about 110 KB each at 70 tokens).
 */
export const BYTES_PER_DOCUMENT = 32 * 1024;
/** yoga's parsed documents (the validation result and compiled code go with each: WeakMaps keyed by the document). */
export const DOCUMENT_CACHE_BYTES = 32 * 2 ** 20;
/** yoga's parse errors: each holds its query text. */
export const PARSE_ERROR_CACHE_BYTES = 8 * 2 ** 20;
/** How long yoga keeps an entry (its own default). */
const TTL_MS = 3_600_000;
const MAX_ENTRIES = 1024;

type ParserAndValidationCacheOptions = Exclude<NonNullable<YogaServerOptions<object, object>['parserAndValidationCache']>, boolean>;

/** What keeping `document`, parsed from `text`, costs the heap: its text (two bytes a code unit at worst) and its tokens. */
export function documentBytes(document: DocumentNode, text: string): number {
  let tokens = 0;
  for (let token = document.loc?.startToken ?? null; token; token = token.next) tokens++;
  return BYTES_PER_DOCUMENT + 2 * text.length + tokens * BYTES_PER_TOKEN;
}

/** yoga's parser and validation cache with byte budgets (createYoga's `parserAndValidationCache`). */
export function boundedParserCache(): ParserAndValidationCacheOptions {
  return {
    documentCache: new LRUCache<string, DocumentNode>({
      max: MAX_ENTRIES,
      maxSize: DOCUMENT_CACHE_BYTES,
      sizeCalculation: (document, text) => documentBytes(document, text),
      ttl: TTL_MS,
    }),
    errorCache: new LRUCache<string, object>({
      max: MAX_ENTRIES,
      maxSize: PARSE_ERROR_CACHE_BYTES,
      // The error keeps the text (its source) and little else.
      sizeCalculation: (_error, text) => 2 * text.length + 1024,
      ttl: TTL_MS,
    }),
    validationCache: true,
  };
}
