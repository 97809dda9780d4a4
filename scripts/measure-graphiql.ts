/**
 * What GraphiQL's page weighs over the wire: its bytes as rendered, gzipped and brotli-compressed
 * as the service sends them (src/http/graphql/graphiql.ts), and how long each took once.
 * `npx tsx scripts/measure-graphiql.ts`; figures in BENCHMARKS.md ("The front door").
 */
import { encodedPage, GRAPHIQL_EXAMPLE_QUERY, GRAPHIQL_TITLE } from '../src/http/graphql/graphiql.js';

const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
const html = renderGraphiQL({ title: GRAPHIQL_TITLE, defaultQuery: GRAPHIQL_EXAMPLE_QUERY });
const started = performance.now();
const page = encodedPage(html);
const gzip = await page.gzip;
const gzipMs = performance.now() - started;
const br = await page.br;
const brMs = performance.now() - started;
const mb = (bytes: number) => `${(bytes / 1_000_000).toFixed(2)} MB`;
process.stdout.write(`page ${mb(page.identity.length)}, gzip ${mb(gzip.length)} (ready after ${Math.round(gzipMs)} ms), brotli ${mb(br.length)} (ready after ${Math.round(brMs)} ms)\n`);
