import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/errors.js';
import { GRAPHIQL_TITLE } from '../../src/http/graphql/graphiql.js';
import { REQUEST_LOG_MAX_DELAY_MS } from '../../src/logger.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { LmdbEventStore } from '../../src/store/embedded/lmdb-event-store.js';
import { profile, pubkeyOf, realEvents, signed } from '../support/events.js';
import {
  createSender,
  describeExchange,
  describeRequest,
  describeResponse,
  type Exchange,
  type FuzzRequest,
  findSecret,
  fuzzRequestArbitrary,
  type Leak,
  SecretIndex,
  type Sender,
  truncate,
} from '../support/fuzz-requests.js';
import { startTestServer, type TestServer, type TestServerOptions } from '../support/test-server.js';
import { createTestStore } from '../support/test-store.js';

/**
 * Property-based HTTP fuzzing (fast-check) of the whole service, on both stores: every route, every
 * method, hostile headers, query strings, GraphQL documents and bodies, nsec1… secret keys hidden
 * everywhere. Deterministic: FUZZ_SEED (default 42) picks the requests; FUZZ_RUNS (default 800) is
 * the number of generated requests per store (FUZZ_RUNS=10000 for a long run). FUZZ_DUMP=<file> writes
 * every exchange (request, response, log lines) as JSON Lines, one file per store (`<file>.<store>`).
 *
 * Each property is its own fast-check run over the same seeded stream of requests, so that one bug
 * does not hide another and each failure comes with its own shrunk counterexample. A request is sent
 * once: the exchange (response and the log lines written meanwhile) is kept and the next property
 * checks the same exchange.
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 800);
const SEED = Number(process.env.FUZZ_SEED ?? 42);
const TIMEOUT_MS = 120_000 + RUNS * 60;
const JSON_TYPE = 'application/json; charset=utf-8';
// The server's growth is bounded (document-caches.ts, the hot and answer caches); the harness keeps
// every exchange and every log line it captured, about 4 KB a request (a heap snapshot, 2026-12-03).
const MAX_RSS_GROWTH = 300 * 1024 * 1024 + RUNS * 4 * 1024;

const alice = profile('fuzz-alice', { name: 'alice', about: 'emoji 🤙 "quotes" \\ </script>', nip05: 'a@b.example' });
const note = signed('fuzz-bob', {
  content: `hello nostr:npub1 and ${pubkeyOf('fuzz-alice')}`,
  tags: [['p', pubkeyOf('fuzz-alice')], ['e', 'f'.repeat(64), '', 'root', pubkeyOf('fuzz-carol')]],
});
const SEED_EVENTS: NostrEvent[] = [alice, note, ...realEvents()];
const requests = fuzzRequestArbitrary({
  eventIds: SEED_EVENTS.map((event) => event.id),
  pubkeys: [...new Set(SEED_EVENTS.map((event) => event.pubkey)), pubkeyOf('nobody')],
});

interface Harness {
  name: string;
  server: TestServer;
  sender: Sender;
  /** Every exchange so far, by request: each request is sent once (but see test 6). */
  exchanges: Map<string, Exchange>;
  /** Requests sent, repeats included. */
  sent: number;
  rssBefore: number;
  started: number;
  close(): Promise<void>;
}

const STORES: { name: string; options: TestServerOptions; open(): Promise<{ server: TestServer; close(): Promise<void> }> }[] = [
  {
    // Production-like: GraphiQL off.
    name: 'redis',
    options: {},
    async open() {
      const store = await createTestStore();
      await store.store.putEvents(SEED_EVENTS);
      const server = await startTestServer(store.store, this.options);
      return {
        server,
        close: async () => {
          await server.close();
          await store.cleanup();
        },
      };
    },
  },
  {
    // Development-like: GraphiQL on, so `accept: text/html` on /graphql gets the page.
    name: 'embedded (LMDB)',
    options: { graphql: { graphiql: true } },
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-fuzz-'));
      const store = new LmdbEventStore(dir);
      await store.putEvents(SEED_EVENTS);
      const server = await startTestServer(store, this.options);
      // GraphiQL's bundle is loaded on the first request for the page (graphiql.ts), once, for
      // well over 100 MB: loaded here, before the RSS baseline, so that check 7 measures what
      // requests leave behind, not that one-time load.
      await fetch(`${server.url}/graphql`, { headers: { accept: 'text/html' } }).then((response) => response.arrayBuffer());
      return {
        server,
        close: async () => {
          await server.close();
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

function requestKey(request: FuzzRequest): string {
  return JSON.stringify([request.transport, request.method, request.target, request.headers, request.body, request.raw]);
}

const logLinesOf = (chunks: readonly string[]) => chunks.flatMap((chunk) => chunk.split('\n')).filter((line) => line !== '');

/** The exchange of `request`: sent now, unless it was sent before (or `again`). */
async function exchangeFor(harness: Harness, request: FuzzRequest, again = false): Promise<Exchange> {
  const key = requestKey(request);
  const known = harness.exchanges.get(key);
  if (known && !again) return known;
  const before = harness.server.logs.length;
  const response = await harness.sender.send(request);
  harness.sent++;
  await new Promise((resolve) => setImmediate(resolve));
  const exchange: Exchange = { request, ...response, logLines: logLinesOf(harness.server.logs.slice(before)) };
  // The GraphiQL page is one static, vendored bundle (9 MB, render-graphiql), the same for every
  // request: its source comments name node_modules paths of GraphiQL's own build. Kept as a marker
  // (holding a copy per request would be gigabytes); test/graphql-api.test.ts checks the page.
  if (exchange.status === 200 && exchange.body.slice(0, 300).includes(`<title>${GRAPHIQL_TITLE}</title>`)) exchange.body = `[the GraphiQL page: ${exchange.body.length} characters]`;
  if (!known) harness.exchanges.set(key, exchange);
  return exchange;
}

/** One fast-check run over the seeded stream of requests; `check` names what is wrong, if anything. */
async function fuzz(harness: Harness, check: (exchange: Exchange) => string | undefined): Promise<void> {
  await fc.assert(
    fc.asyncProperty(requests, async (request) => {
      const exchange = await exchangeFor(harness, request);
      const problem = check(exchange);
      if (problem !== undefined) throw new Error(`${problem}\nresponse: ${describeResponse(exchange)}`);
    }),
    { numRuns: RUNS, seed: SEED },
  );
}

const header = (exchange: Exchange, name: string): string | undefined => {
  const values = exchange.headers.filter(([key]) => key === name).map(([, value]) => value);
  return values.length === 0 ? undefined : values.join(', ');
};

/** The path a request names, percent-decoded (leniently), without scheme and host. */
function pathOf(request: FuzzRequest): string {
  const path = request.target.replace(/^https?:\/\/[^/?#]*/i, '').split(/[?#]/, 1)[0] ?? '';
  return path.replace(/%([0-9a-f]{2})/gi, (_, code: string) => String.fromCharCode(parseInt(code, 16)));
}

/** Requests the /graphql route answers (GraphQL error shape): the methods it takes, 405 for PUT/PATCH/DELETE. Every other response is REST-shaped. */
function isGraphqlEndpoint(request: FuzzRequest): boolean {
  return pathOf(request) === '/graphql' && ['GET', 'POST', 'OPTIONS', 'HEAD', 'PUT', 'PATCH', 'DELETE'].includes(request.method);
}

function parseJson(text: string): { value?: unknown; error?: string } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return { error: String(error) };
  }
}

// ---------------------------------------------------------------------------------------------
// The properties, each a function of one exchange.

/** 1. Every request gets a complete response, and none is a 5xx (no store or relay can fail here). */
function checkNoServerError(exchange: Exchange): string | undefined {
  if (exchange.status === undefined) return `no complete HTTP response: ${exchange.failure ?? '?'}`;
  if (exchange.status >= 500) return `status ${exchange.status}: no 5xx is documented when the store and relays are fine`;
  return undefined;
}

/** 2. Our responses are JSON with the right content-type; our errors have exactly the error shape. */
function checkErrorShape(exchange: Exchange): string | undefined {
  const { status, request, body } = exchange;
  if (status === undefined) return undefined; // property 1
  const contentType = header(exchange, 'content-type');
  const head = request.method === 'HEAD';
  if (isGraphqlEndpoint(request)) {
    // yoga's answers follow GraphQL over HTTP; only their JSON must be JSON.
    if (!head && body !== '' && /json/i.test(contentType ?? '')) {
      const parsed = parseJson(body);
      if (parsed.error) return `GraphQL response with content-type ${contentType} is not JSON (${parsed.error})`;
    }
    return undefined;
  }
  if (status === 204) return body === '' ? undefined : `a 204 with a body`;
  if (contentType !== JSON_TYPE) return `content-type is ${JSON.stringify(contentType)}, not "${JSON_TYPE}"`;
  if (head) return body === '' ? undefined : 'a HEAD response with a body';
  const parsed = parseJson(body);
  if (parsed.error) return `body is not JSON (${parsed.error})`;
  if (status < 400) return undefined;
  const value = parsed.value as { error?: Record<string, unknown> } | null;
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).join() !== 'error') {
    return 'error body is not exactly {"error": {…}}';
  }
  const error = value.error;
  if (typeof error !== 'object' || error === null || Object.keys(error).sort().join() !== 'code,message,status') {
    return 'error body is not exactly {"error": {"status", "code", "message"}}';
  }
  if (error.status !== status) return `error.status ${String(error.status)} is not the HTTP status ${status}`;
  if (typeof error.code !== 'string' || !Object.hasOwn(ERRORS, error.code)) return `error.code ${JSON.stringify(error.code)} is not in the ERRORS table`;
  if (ERRORS[error.code as keyof typeof ERRORS].status !== status) return `error.code ${error.code} is not a ${status} in the ERRORS table`;
  if (typeof error.message !== 'string' || error.message === '') return 'error.message is not a non-empty string';
  return undefined;
}

const INTERNALS: [RegExp, string][] = [
  [/\bat [^\s"'(]{1,200} \((?:\/|file:|node:)/, 'a stack frame'],
  [/(?:\n|\\n)\s*at [\w$.<>[\]]+ /, 'a stack frame'],
  [/\/work\//, 'a file path (/work/)'],
  [new RegExp(process.cwd().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'the project directory'],
  [/node_modules/, 'node_modules'],
  [/\.ts:/, 'a .ts: position'],
  [/\.[cm]?js:\d+:\d+/, 'a .js:line:column position'],
  [/file:\/\//, 'a file:// URL'],
  [/\bsrc\/[\w/.-]+\.[jt]s\b/, 'a source file'],
];

/** 3. No stack trace or file path in any body or header. */
function checkNoInternals(exchange: Exchange): string | undefined {
  const places: [string, string][] = [['body', exchange.body], ...exchange.headers.map(([name, value]): [string, string] => [`header ${name}`, value])];
  for (const [where, text] of places) {
    for (const [pattern, what] of INTERNALS) {
      const match = pattern.exec(text);
      if (match) return `${what} in the ${where}: …${truncate(text.slice(Math.max(0, match.index - 80), match.index + 120), 240)}…`;
    }
  }
  return undefined;
}

/** 4. No secret key that was sent comes back, in the body or in any header (x-request-id included). */
function checkNoSecretInResponse(exchange: Exchange): string | undefined {
  const { secrets } = exchange.request;
  const places: [string, string][] = [
    ...exchange.headers.map(([name, value]): [string, string] => [`header ${name}`, `${name}: ${value}`]),
    ['body', exchange.body],
  ];
  for (const [where, text] of places) {
    const leak = findSecret(text, secrets);
    if (leak) {
      const how = leak.escaped ? ' (once percent- or \\u-escapes are undone)' : '';
      return `the secret key ${leak.nsec} that was sent comes back in the ${where}${how}: ${leak.snippet}`;
    }
  }
  return undefined;
}

/** 5. A client error (4xx) is never logged at level error (or fatal). */
function checkClientErrorNotLoggedAsError(exchange: Exchange): string | undefined {
  const { status } = exchange;
  if (status === undefined || status < 400 || status >= 500) return undefined;
  const requestId = header(exchange, 'x-request-id');
  for (const line of exchange.logLines) {
    const parsed = parseJson(line).value as { level?: unknown; reqId?: unknown } | undefined;
    if (parsed?.level !== 'error' && parsed?.level !== 'fatal') continue;
    // A line of another request (one with another id) is not this one's.
    if (parsed.reqId !== undefined && requestId !== undefined && parsed.reqId !== requestId) continue;
    return `a ${status} was logged at level ${String(parsed.level)}: ${truncate(line, 600)}`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------

describe.each(STORES)('HTTP fuzzing, $name store', (store) => {
  const harness = {} as Harness;

  beforeAll(async () => {
    const { server, close } = await store.open();
    Object.assign(harness, {
      name: store.name,
      server,
      sender: createSender(server.url),
      exchanges: new Map(),
      sent: 0,
      rssBefore: process.memoryUsage().rss,
      started: performance.now(),
      close,
    });
  });

  afterAll(async () => {
    harness.sender?.close();
    await harness.close?.();
    if (!harness.exchanges) return;
    if (process.env.FUZZ_DUMP) {
      const lines = [...harness.exchanges.values()].map((exchange) => JSON.stringify(exchange));
      lines.push(JSON.stringify({ allLogLines: logLinesOf(harness.server.logs) }));
      writeFileSync(`${process.env.FUZZ_DUMP}.${store.name.split(' ')[0]}`, `${lines.join('\n')}\n`);
    }
    const statuses = new Map<string, number>();
    for (const { status } of harness.exchanges.values()) {
      const key = String(status ?? 'none');
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    }
    const seconds = ((performance.now() - harness.started) / 1000).toFixed(1);
    console.log(
      `fuzz ${store.name}: ${harness.sent} requests sent, ${harness.exchanges.size} distinct (FUZZ_RUNS=${RUNS}, FUZZ_SEED=${SEED}) in ${seconds} s; statuses of the distinct ones ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
    );
  });

  it('1. every request gets a complete response, and no response is a 5xx', { timeout: TIMEOUT_MS }, async () => {
    await fuzz(harness, checkNoServerError);
  });

  it(
    '2. /event, /user-profile, unknown paths and every non-GraphQL error: JSON content-type, errors exactly {"error":{"status","code","message"}}',
    { timeout: TIMEOUT_MS },
    async () => {
      await fuzz(harness, checkErrorShape);
    },
  );

  it('3. no stack trace or file path in any body or header', { timeout: TIMEOUT_MS }, async () => {
    await fuzz(harness, checkNoInternals);
  });

  it('4. no secret key that was sent comes back in a body or a header (x-request-id included)', { timeout: TIMEOUT_MS }, async () => {
    await fuzz(harness, checkNoSecretInResponse);
  });

  it('5. a client error (4xx) is never logged at level error', { timeout: TIMEOUT_MS }, async () => {
    await fuzz(harness, checkClientErrorNotLoggedAsError);
  });

  it('6. no secret key that was sent appears in any log line', { timeout: TIMEOUT_MS }, async () => {
    // Every request of the stream is sent, whatever the runs above stopped at, and one that the
    // stream repeats is sent again (so FUZZ_RUNS requests at least); then the request log, written in
    // batches up to REQUEST_LOG_MAX_DELAY_MS late, is all there.
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(requests, async (request) => {
        const key = requestKey(request);
        await exchangeFor(harness, request, seen.has(key));
        seen.add(key);
      }),
      { numRuns: RUNS, seed: SEED },
    );
    expect(harness.sent).toBeGreaterThanOrEqual(RUNS);
    await new Promise((resolve) => setTimeout(resolve, REQUEST_LOG_MAX_DELAY_MS + 100));

    const index = new SecretIndex();
    const byRequestId = new Map<string, Exchange[]>();
    const senders = new Map<string, Exchange>();
    for (const exchange of harness.exchanges.values()) {
      const requestId = header(exchange, 'x-request-id');
      if (requestId !== undefined) byRequestId.set(requestId, [...(byRequestId.get(requestId) ?? []), exchange]);
      for (const secret of exchange.request.secrets) {
        index.add(secret);
        const known = senders.get(secret);
        if (!known || describeRequest(exchange.request).length < describeRequest(known.request).length) senders.set(secret, exchange);
      }
    }
    expect(index.size).toBeGreaterThan(RUNS / 4); // the generator does hide secrets

    const leaks = new Map<string, { count: number; line: string; leak: Leak; exchange: Exchange }>();
    for (const line of logLinesOf(harness.server.logs)) {
      const parsed = parseJson(line).value as { msg?: unknown; reqId?: unknown; url?: unknown } | undefined;
      for (const leak of index.find(line)) {
        // The request of the line (by its id, and its URL when several share the id), else the
        // shortest request that sent this secret.
        const sharing = (typeof parsed?.reqId === 'string' ? byRequestId.get(parsed.reqId) : undefined) ?? [];
        const candidates = sharing.filter((exchange) => exchange.request.secrets.includes(leak.nsec));
        const own = candidates.find((exchange) => exchange.request.target === parsed?.url) ?? candidates[0];
        const exchange = own ?? (senders.get(leak.nsec) as Exchange);
        const kind = `${exchange.request.kind}, log message ${JSON.stringify(parsed?.msg ?? '(not JSON)')}${leak.escaped ? ', escaped' : ''}`;
        const known = leaks.get(kind);
        if (known) known.count++;
        else leaks.set(kind, { count: 1, line, leak, exchange });
      }
    }
    const report = [...leaks]
      .map(
        ([kind, { count, line, leak, exchange }]) =>
          `● ${count}× ${kind}\n  ${leak.nsec}${leak.escaped ? ' (once percent- or \\u-escapes are undone)' : ''} in the log: ${leak.snippet}\n  log line: ${truncate(line, 400)}\n${describeExchange(exchange)}`,
      )
      .join('\n\n');
    expect(leaks.size, `secret keys that were sent appear in the log (${leaks.size} kinds of leak):\n\n${report}\n`).toBe(0);
  });

  it('7. the process is alive afterwards: /healthz 200, /readyz 200, RSS grew by less than 300 MB (and 4 KB a request the harness keeps)', async () => {
    const health = await fetch(`${harness.server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.text()).toBe('{"status":"ok"}');
    const ready = await fetch(`${harness.server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toBe('{"status":"ready"}');
    const grown = process.memoryUsage().rss - harness.rssBefore;
    expect(grown, `RSS grew by ${(grown / 2 ** 20).toFixed(0)} MB over ${harness.exchanges.size} requests`).toBeLessThan(MAX_RSS_GROWTH);
  });
});
