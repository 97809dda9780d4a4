// A CPU profile of one `serve` under load on one route: where its time goes.
//
//   npx tsx scripts/bench/profile-lookup.ts --route user-profile|event|graphql-profile|graphql-event|feed|notifications|thread [--graphql-field raw|json] --seconds 10 [--env HOT_CACHE_MB=0,METRICS=false] [--embedded] [--no-profile] [--baseline | --ceiling] [--warmup 3] [--build dist]
//
// Imports --profiles generated profiles (and notes with K = 10 for --route event) into the Redis at
// REDIS_URL (default the local one) under a fresh prefix, or into a fresh embedded store (--embedded), starts `node --cpu-prof dist/cli/main.js
// serve` (npm run build first), loads it with autocannon for --seconds, stops it, and prints the
// heaviest functions by self time from the .cpuprofile it wrote (kept in --dir for a flame graph).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { LmdbEventStore } from '../../src/store/embedded/lmdb-event-store.js';
import { connectRedis, waitUntilReady } from '../../src/store/redis/connect.js';
import { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { deleteByPrefix, freePort } from '../../test/support/redis-server.js';
import { identity, makeNotes, makeProfiles, screenWorld } from './dataset.js';
import { cycle, graphqlLookupQueries, processCpuMs, startProcess, stop, zipf } from './harness.js';

const { values: options } = parseArgs({
  options: {
    route: { type: 'string', default: 'user-profile' },
    profiles: { type: 'string', default: '5000' },
    // Notes of --route event and the screens (fewer: each asked more often, so more answers are kept ones).
    notes: { type: 'string', default: '10000' },
    // --zipf S: keys drawn by a Zipf law of exponent S (as `npm run bench --zipf`) instead of all in turn.
    zipf: { type: 'string' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    env: { type: 'string', default: '' },
    dir: { type: 'string', default: '/tmp/prof' },
    top: { type: 'string', default: '30' },
    embedded: { type: 'boolean', default: false },
    // --no-profile: the same load without the profiler (which costs CPU itself), for an A/B of req/s and CPU µs per request.
    profile: { type: 'boolean', default: true },
    // --baseline: the hand-written handler of `npm run bench` (scripts/bench/baseline-server.mjs) instead of `serve`.
    baseline: { type: 'boolean', default: false },
    // --ceiling: the fixed-body ceiling of `npm run bench` (scripts/bench/ceiling-server.mjs), its body the size of a profile's answer.
    ceiling: { type: 'boolean', default: false },
    // --warmup S: load for S seconds before the measured window (caches filled, as `npm run bench` warms up); the profile still covers both.
    warmup: { type: 'string', default: '0' },
    // --graphql-field json: the /graphql routes ask each event as a JSON string instead of `raw` (run.ts --graphql-field).
    'graphql-field': { type: 'string', default: 'raw' },
    // --build DIR: the service's compiled code from DIR (default dist), for an A/B of two builds of one checkout.
    build: { type: 'string', default: 'dist' },
  },
  allowNegative: true,
});
const SCREENS = ['feed', 'notifications', 'thread'];
if (![...['user-profile', 'event', 'graphql-profile', 'graphql-event'], ...SCREENS].includes(options.route)) {
  throw new Error('--route: user-profile, event, graphql-profile, graphql-event, feed, notifications or thread');
}
const isScreen = SCREENS.includes(options.route);
// What `npm run bench` posts for its /graphql rows.
const { event: EVENT_QUERY, profile: PROFILE_QUERY } = graphqlLookupQueries(options['graphql-field']);
const isEventRoute = options.route === 'event' || options.route === 'graphql-event' || isScreen;
const extraEnv = Object.fromEntries(
  options.env
    .split(',')
    .filter(Boolean)
    .map((pair) => pair.split('=') as [string, string]),
);

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `prof:${Date.now()}:`;
const client = connectRedis({ url: redisUrl, timeoutMs: 10_000 });
await waitUntilReady(client, 5000);
const dataDir = mkdtempSync(join(tmpdir(), 'nostr-lookup-profile-'));
const store = options.embedded ? new LmdbEventStore(dataDir) : new RedisEventStore(client, prefix);
const identities = Array.from({ length: Number(options.profiles) }, (_, index) => identity(index));
await store.putEvents(makeProfiles(identities));
const notes = isEventRoute ? makeNotes(identities, Number(options.notes), 10, 10) : [];
for (let offset = 0; offset < notes.length; offset += 1000) await store.putEvents(notes.slice(offset, offset + 1000));
// The screens' world of `npm run bench` (run.ts).
const { viewers, roots, events: screenEvents } = isScreen ? screenWorld(identities, notes) : { viewers: [], roots: [], events: [] };
if (isScreen) await store.putEvents(screenEvents);
if (options.embedded) await store.close();
const port = await freePort();
// The ceiling's body: as long as the first profile's /user-profile answer.
const answerBytes = Buffer.byteLength(`{"profile":${JSON.stringify(makeProfiles(identities.slice(0, 1))[0])}}`);
mkdirSync(options.dir, { recursive: true });
const before = new Set(readdirSync(options.dir));
const where: Record<string, string> = options.embedded ? { REDIS_URL: '', DATA_DIR: dataDir } : { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix };
const service = await startProcess(
  [
    ...(options.profile ? ['--cpu-prof', `--cpu-prof-dir=${options.dir}`] : []),
    ...(options.baseline ? ['scripts/bench/baseline-server.mjs'] : options.ceiling ? ['scripts/bench/ceiling-server.mjs'] : [`${options.build}/cli/main.js`, 'serve']),
  ],
  { ...where, HOST: '127.0.0.1', RELAYS: '', NODE_ENV: 'production', PORT: String(port), BODY_BYTES: String(answerBytes), ...extraEnv },
  `http://127.0.0.1:${port}/${options.baseline || options.ceiling ? '' : 'healthz'}`,
);
const keys = <T>(items: readonly T[]) => (options.zipf === undefined ? cycle(items) : zipf(items, Number(options.zipf)));
const screenPaths: Record<string, string[]> = {
  feed: viewers.map((who) => `/feed?limit=20&pubkey=${who.pubkey}`),
  notifications: roots.map((root) => `/notifications?limit=20&pubkey=${root.pubkey}`),
  thread: roots.map((root) => `/thread?limit=20&id=${root.id}`),
};
const nextPath = isScreen
  ? keys(screenPaths[options.route] as string[])
  : isEventRoute
    ? keys(notes.map((note) => `/event?id=${note.id}`))
    : keys(identities.map((who) => `/user-profile?pubkey=${who.pubkey}`));
const nextPubkey = cycle(identities.map((who) => who.pubkey));
const nextId = cycle(notes.map((note) => note.id));
const posted = (query: string, variables: Record<string, string>) => ({ path: '/graphql', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
const next = (request: Record<string, unknown>) =>
  options.route === 'graphql-profile'
    ? { ...request, ...posted(PROFILE_QUERY, { pubkey: nextPubkey() }) }
    : options.route === 'graphql-event'
      ? { ...request, ...posted(EVENT_QUERY, { id: nextId() }) }
      : { ...request, path: nextPath() };
if (Number(options.warmup) > 0) {
  await autocannon({ url: `http://127.0.0.1:${port}`, connections: Number(options.connections), duration: Number(options.warmup), requests: [{ setupRequest: next }] as never });
}
const cpuBefore = processCpuMs(service.pid);
const result = await autocannon({
  url: `http://127.0.0.1:${port}`,
  connections: Number(options.connections),
  duration: Number(options.seconds),
  requests: [{ setupRequest: next }] as never,
});
const cpuMs = (processCpuMs(service.pid) ?? Number.NaN) - (cpuBefore ?? Number.NaN);
const profiledCpu = (cpuMs * 1000) / result.requests.total;
process.stderr.write(
  `${result.requests.average.toFixed(0)} req/s, ${result.non2xx} non-2xx, service CPU ${profiledCpu.toFixed(1)} µs/req\n`,
);
// What the answer cache served, against the requests (a scrape before the process stops).
if (!options.baseline && !options.ceiling) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const served = text.split('\n').find((line) => line.startsWith('nostr_lookup_hot_cache_answers_served_total'));
  process.stderr.write(`${served ?? 'no answers-served metric'}; requests ${result.requests.total}\n`);
}
await stop(service);
const admin = new Redis(redisUrl);
await deleteByPrefix(admin, prefix);
admin.disconnect();
if (!options.embedded) await store.close();
client.disconnect();
rmSync(dataDir, { recursive: true, force: true });

if (!options.profile) process.exit(0);
const written = readdirSync(options.dir).filter((name) => name.endsWith('.cpuprofile') && !before.has(name));
const profile = JSON.parse(readFileSync(join(options.dir, written[0] as string), 'utf8')) as {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
};
const counts = new Map<number, number>();
for (const sample of profile.samples) counts.set(sample, (counts.get(sample) ?? 0) + 1);
const byFunction = new Map<string, number>();
for (const node of profile.nodes) {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/nostr-lookup[^/]*\//, '').replace(/^file:\/\/\/work\/[^/]+\//, '')}:${lineNumber + 1}`;
  byFunction.set(where, (byFunction.get(where) ?? 0) + (counts.get(node.id) ?? 0));
}
const total = profile.samples.length;
for (const [where, count] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(options.top))) {
  process.stdout.write(`${((100 * count) / total).toFixed(1).padStart(5)}%  ${where}\n`);
}

// Where each request's CPU goes by concern ("what each feature costs per request"): a
// sample goes to the first group, from the innermost frame out, whose code it is in; so pino's
// frames under the request log count as the request log, the socket write under a reply as the
// socket. Measured under the profiler, which inflates the total a little.
const FEATURES: [group: string, test: (url: string, name: string) => boolean][] = [
  ['garbage collector', (_url, name) => name === '(garbage collector)'],
  ['idle', (_url, name) => name === '(idle)'],
  ['request log (pino)', (url) => /\/(pino|pino-std-serializers|sonic-boom|thread-stream)\/|\/dist\/(logger|http\/request-log)\.js/.test(url)],
  ['metrics', (url) => /\/prom-client\/|\/dist\/metrics\//.test(url)],
  ['ETags, Last-Modified, 304s', (url) => url.endsWith('/dist/http/conditional.js')],
  ['connection caps', (url) => url.endsWith('/dist/http/connection-limits.js')],
  ['rate limits', (url) => /\/dist\/http\/(rate-limits|leased-window-store)\.js/.test(url)],
  ['secret-key checks', (url) => url.endsWith('/dist/nostr/secret-keys.js')],
  ['failure log, deadlines, outage', (url) => /\/dist\/(http\/failure-log|abortable|http\/store-outage)\.js/.test(url)],
  ['hot cache', (url) => url.endsWith('/dist/store/redis/hot-cache.js')],
  ['Redis client (ioredis)', (url) => /\/(ioredis|redis-parser|standard-as-callback)\//.test(url)],
  ['store (reads, unpacking)', (url) => /\/dist\/store\//.test(url)],
  ['GraphQL execution (schema, loaders, graphql-jit, graphql-js, yoga)', (url) => /\/dist\/(schema|http\/fixed-operation|http\/graphql)\/?|\/(graphql|graphql-jit|dataloader|graphql-yoga|@graphql-yoga|@envelop|@whatwg-node|@escape\.tech)\//.test(url)],
  ['REST routes and replies', (url) => /\/dist\/http\/(routes\/|reply|rest-response|query-parameter|fast-lane)/.test(url)],
  ['socket writes and reads', (url, name) => /^(writev|writeBuffer|writeUtf8String|writeLatin1String|onStreamRead|writevGeneric)$/.test(name) || /^node:(net|internal\/stream_base_commons)$/.test(url)],
  ['Fastify', (url) => /\/(fastify|find-my-way|avvio|light-my-request|fast-json-stringify|@fastify)\//.test(url)],
  ['node:http', (url) => url.startsWith('node:_http') || url === 'node:http'],
];
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map<number, number>();
for (const node of profile.nodes as { id: number; children?: number[] }[]) for (const child of node.children ?? []) parents.set(child, node.id);
const byFeature = new Map<string, number>();
for (const [id, count] of counts) {
  let group = 'other';
  for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
    const frame = nodes.get(at)?.callFrame;
    const found = frame && FEATURES.find(([, test]) => test(frame.url, frame.functionName));
    if (found) {
      group = found[0];
      break;
    }
  }
  byFeature.set(group, (byFeature.get(group) ?? 0) + count);
}
const busy = total - (byFeature.get('idle') ?? 0);
process.stdout.write(`\nBy concern, of the busy samples (${busy} of ${total}), at ${profiledCpu.toFixed(1)} µs of CPU per request under the profiler:\n`);
for (const [group, count] of [...byFeature].filter(([group]) => group !== 'idle').sort((a, b) => b[1] - a[1])) {
  process.stdout.write(`${((100 * count) / busy).toFixed(1).padStart(5)}%  ${((profiledCpu * count) / busy).toFixed(1).padStart(5)} µs  ${group}\n`);
}
process.stdout.write(`profile: ${join(options.dir, written[0] as string)}\n`);
