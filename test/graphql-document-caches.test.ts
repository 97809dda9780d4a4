import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  boundedParserCache,
  BYTES_PER_DOCUMENT,
  BYTES_PER_TOKEN,
  DOCUMENT_CACHE_BYTES,
  documentBytes,
  PARSE_ERROR_CACHE_BYTES,
} from '../src/http/graphql/document-caches.js';
import { useTestServer } from './support/test-server.js';

/**
 * What /graphql keeps of the documents clients send is bounded in bytes (document-caches.ts). Before,
 * yoga's caches were bounded by count alone: 1,200 distinct documents of 2,000 tokens had the server's
 * heap grow by a gigabyte (measured on 2026-12-03), 300 of them by about 290 MB.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterCollection(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

type Cache = { get(key: string): unknown; set(key: string, value: unknown): void; calculatedSize: number; size: number };

describe('the document caches', () => {
  it('charge a document its text and its tokens', () => {
    const text = '{ a b c }';
    // SOF { a b c } EOF
    expect(documentBytes(parse(text), text)).toBe(BYTES_PER_DOCUMENT + 2 * text.length + 7 * BYTES_PER_TOKEN);
    // Comments are tokens of the linked list too (they stay in the document's loc).
    const commented = '# why\n{ a }';
    expect(documentBytes(parse(commented), commented)).toBe(BYTES_PER_DOCUMENT + 2 * commented.length + 6 * BYTES_PER_TOKEN);
  });

  it('keep parsed documents and parse errors within their byte budgets, the newest kept', () => {
    const { documentCache, errorCache } = boundedParserCache() as { documentCache: Cache; errorCache: Cache };
    const texts = Array.from({ length: 200 }, (_, index) => `# ${index}\n{ ${'a '.repeat(1000)}}`);
    for (const text of texts) documentCache.set(text, parse(text));
    expect(documentCache.calculatedSize).toBeLessThanOrEqual(DOCUMENT_CACHE_BYTES);
    expect(documentCache.size).toBeLessThan(200);
    expect(documentCache.size).toBeGreaterThan(10);
    expect(documentCache.get(texts[199]!)).toBeDefined();
    expect(documentCache.get(texts[0]!)).toBeUndefined();

    const big = (index: number) => `# ${index} ${'x'.repeat(60_000)}\n{`;
    for (let index = 0; index < 400; index++) errorCache.set(big(index), new Error('Syntax Error'));
    expect(errorCache.calculatedSize).toBeLessThanOrEqual(PARSE_ERROR_CACHE_BYTES);
    expect(errorCache.size).toBeLessThan(400);
    expect(errorCache.get(big(399))).toBeDefined();
  });

  it('a document larger than the whole budget is not kept', () => {
    const { documentCache } = boundedParserCache() as { documentCache: Cache };
    const text = `{ ${'a '.repeat(70_000)}}`;
    documentCache.set(text, parse(text, { maxTokens: 100_000 }));
    expect(documentCache.size).toBe(0);
  });
});

describe('/graphql under many distinct large documents', () => {
  const context = useTestServer([]);

  async function post(query: string): Promise<number> {
    const response = await fetch(`${context.server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    await response.arrayBuffer();
    return response.status;
  }

  it('300 documents of 1,990 fields (refused by validation, kept parsed): the heap grows by less than 64 MB', async () => {
    const before = heapAfterCollection();
    for (let index = 0; index < 300; index++) {
      expect(await post(`# ${index}\n{ ${'__typename '.repeat(1990)}}`)).toBe(400);
    }
    const grown = heapAfterCollection() - before;
    expect(grown, `the heap grew by ${(grown / 2 ** 20).toFixed(1)} MB`).toBeLessThan(64 * 2 ** 20);
  }, 120_000);

  it('400 valid documents of 500 fields, each run twice (compiled and prepared): the heap grows by less than 64 MB', async () => {
    const before = heapAfterCollection();
    for (let index = 0; index < 400; index++) {
      const query = `# ${index}\n{ ${'__typename '.repeat(500)}}`;
      expect(await post(query)).toBe(200);
      expect(await post(query)).toBe(200);
    }
    const grown = heapAfterCollection() - before;
    expect(grown, `the heap grew by ${(grown / 2 ** 20).toFixed(1)} MB`).toBeLessThan(64 * 2 ** 20);
  }, 120_000);
});
