// `npm run bench`: the REST routes and GraphQL against a hand-written baseline and a ceiling, side by
// side in one run, with one load generator (autocannon) and one concurrency. Writes docs/benchmarks/last-run.md (--output); BENCHMARKS.md keeps the current figures by hand.
//
//   npm run bench -- --k 1,10,50 --profiles 10000 --notes 20000 --duration 15 --connections 32 --rounds 3
//
// --duration is the measured time per target, split into --rounds interleaved rounds.
//
// The same dataset is also served from the embedded store (LMDB, no Redis) by a second service.
//
// Uses REDIS_URL if set, else starts a private redis-server. The service runs as users run it
// (`node dist/cli/main.js serve`, default configuration), so `npm run build` first (the script does),
// except RELAYS= (empty): the figures are those of lookups the index answers, not of public relays.
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { join } from 'node:path';
import { LmdbEventStore } from '../../src/store/embedded/lmdb-event-store.js';
import { connectRedis, waitUntilReady } from '../../src/store/redis/connect.js';
import { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { deleteByPrefix, freePort, type PrivateRedis, startPrivateRedis } from '../../test/support/redis-server.js';
import { runClusterBench } from './cluster.js';
import { identity, makeNotes, makeProfiles, SCREEN_WORLD, screenWorld } from './dataset.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import {
  cycle,
  graphqlLookupQueries,
  log,
  zipf,
  localRedisPid,
  measureInterleaved,
  peakRssMiB,
  type Row,
  startProcess,
  stop,
  type Target,
  totalCommands,
  waitForHttp,
} from './harness.js';

const { values: options } = parseArgs({
  options: {
    k: { type: 'string', default: '1,10,50' },
    profiles: { type: 'string', default: '10000' },
    notes: { type: 'string', default: '20000' },
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '3' },
    // Seconds of load on each target before its first round (caches filled).
    warmup: { type: 'string', default: '2' },
    output: { type: 'string', default: 'docs/benchmarks/last-run.md' },
    // Keys drawn by a Zipf law of this exponent instead of cycling through all (1.1).
    zipf: { type: 'string' },
    // One Redis against a 3-master Redis Cluster instead: scripts/bench/cluster.ts.
    cluster: { type: 'boolean', default: false },
    // The field the /graphql rows ask each event as: `raw` (the JSON object, as REST sends it) or `json` (a string).
    'graphql-field': { type: 'string', default: 'raw' },
    // --no-screens: without the screen routes' groups (GET /feed, /notifications, /thread).
    screens: { type: 'boolean', default: true },
  },
  allowNegative: true,
});


const ks = options.k.split(',').map(Number);
const profileCount = Number(options.profiles);
const noteCount = Number(options.notes);
const duration = Number(options.duration);
const connections = Number(options.connections);
const rounds = Number(options.rounds);
const warmUpSeconds = Number(options.warmup);
if (!(warmUpSeconds >= 0)) throw new Error('--warmup: seconds, 0 or more');
const zipfExponent = options.zipf === undefined ? undefined : Number(options.zipf);
if (zipfExponent !== undefined && !(zipfExponent > 0)) throw new Error('--zipf: an exponent above 0, such as 1.1');
/** How the targets pick their keys: all in turn, or by the Zipf law of --zipf. */
const keys = <T>(items: readonly T[]) => (zipfExponent === undefined ? cycle(items) : zipf(items, zipfExponent));
const root = new URL('../../', import.meta.url);

const { event: EVENT_QUERY, profile: PROFILE_QUERY } = graphqlLookupQueries(options['graphql-field']);

async function main() {
  const started = Date.now();
  let privateRedis: PrivateRedis | undefined;
  const redisUrl = process.env.REDIS_URL ?? (privateRedis = await startPrivateRedis()).url;
  const prefix = `bench:${started}:`;
  const client = connectRedis({ url: redisUrl, timeoutMs: 10_000 });
  await waitUntilReady(client, 5000);
  const store = new RedisEventStore(client, prefix);
  const admin = new Redis(redisUrl);
  const children: ChildProcess[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'nostr-lookup-bench-'));
  const embedded = new LmdbEventStore(dataDir);

  try {
    log(`dataset: ${profileCount} profiles, ${noteCount} notes for each K in ${ks.join(', ')}`);
    const identities = Array.from({ length: profileCount }, (_, index) => identity(index));
    const profiles = makeProfiles(identities);
    await store.putEvents(profiles);
    await embedded.putEvents(profiles);
    const notesByK = new Map<number, string[]>();
    // The screens' threads start at notes of the first K's.
    let firstNotes: NostrEvent[] = [];
    for (const k of ks) {
      const notes = makeNotes(identities, noteCount, k, k);
      if (firstNotes.length === 0) firstNotes = notes;
      for (let offset = 0; offset < notes.length; offset += 1000) {
        await store.putEvents(notes.slice(offset, offset + 1000));
        await embedded.putEvents(notes.slice(offset, offset + 1000));
      }
      notesByK.set(k, notes.map((note) => note.id));
    }
    const world = options.screens ? screenWorld(identities, firstNotes) : undefined;
    if (world) {
      await store.putEvents(world.events);
      await embedded.putEvents(world.events);
    }
    await embedded.close();
    log(`dataset ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);

    const env = { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix, HOST: '127.0.0.1', RELAYS: '' };
    const servicePort = await freePort();
    const baselinePort = await freePort();
    const service = await startProcess(
      ['dist/cli/main.js', 'serve'],
      { ...env, PORT: String(servicePort), NODE_ENV: 'production' },
      `http://127.0.0.1:${servicePort}/healthz`,
    );
    children.push(service);
    const baseline = await startProcess(
      ['scripts/bench/baseline-server.mjs'],
      { ...env, PORT: String(baselinePort) },
      `http://127.0.0.1:${baselinePort}/`,
    );
    children.push(baseline);
    const bytesBaselinePort = await freePort();
    const bytesBaseline = await startProcess(
      ['scripts/bench/baseline-server.mjs'],
      { ...env, PORT: String(bytesBaselinePort), BASELINE_BYTES: '1' },
      `http://127.0.0.1:${bytesBaselinePort}/`,
    );
    children.push(bytesBaseline);
    const embeddedPort = await freePort();
    const embeddedService = await startProcess(
      ['dist/cli/main.js', 'serve'],
      { REDIS_URL: '', DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(embeddedPort), NODE_ENV: 'production', RELAYS: '' },
      `http://127.0.0.1:${embeddedPort}/healthz`,
    );
    children.push(embeddedService);
    const embeddedUrl = `http://127.0.0.1:${embeddedPort}`;
    // The cost of metrics and rate limits (at most 5% on cached lookups): the same service
    // with both off, and with both on (limits high enough never to refuse: every request is counted).
    const bare = await startService(children, env, { METRICS: 'false' });
    const limited = await startService(children, env, { RATE_LIMIT: '1000000', MISS_RATE_LIMIT: '1000' });
    // The hot cache is on by default: the same service without it.
    const uncached = await startService(children, env, { HOT_CACHE_MB: '0' });
    const [bareUrl, limitedUrl, uncachedUrl] = [bare, limited, uncached].map((child) => child.url) as [string, string, string];
    const serviceUrl = `http://127.0.0.1:${servicePort}`;
    const baselineUrl = `http://127.0.0.1:${baselinePort}`;
    const bytesBaselineUrl = `http://127.0.0.1:${bytesBaselinePort}`;

    const rows: Row[] = [];
    const settings = { connections, duration, rounds, warmUpSeconds };
    // Each target's server process, by URL, and Redis' own, for CPU time per request.
    const servers: [string, ChildProcess][] = [
      [serviceUrl, service],
      [baselineUrl, baseline],
      [bytesBaselineUrl, bytesBaseline],
      [embeddedUrl, embeddedService],
      ...[bare, limited, uncached].map(({ url, child }): [string, ChildProcess] => [url, child]),
    ];
    const pids = new Map(servers.map(([url, child]) => [url, child.pid]));
    const redisPid = await localRedisPid(admin);
    const processes = (url: string) => ({ pid: pids.get(url), redisPid });
    const redisCommands = () => totalCommands(admin);
    /**
     * One group: a ceiling server answering a fixed body the size of the service's answer at
     * `samplePath`, measured interleaved with the group's targets, then stopped.
     */
    const measureGroup = async (k: string, samplePath: string, targets: Target[]) => {
      const sample = await fetch(`${serviceUrl}${samplePath}`).then((response) => response.text());
      const port = await freePort();
      const ceiling = fork('scripts/bench/ceiling-server.mjs', {
        env: { ...process.env, PORT: String(port), BODY_BYTES: String(Buffer.byteLength(sample)) },
      });
      await waitForHttp(`http://127.0.0.1:${port}/`, ceiling);
      const ceilingTarget: Target = { name: 'ceiling (fixed body)', url: `http://127.0.0.1:${port}`, next: () => ({ path: '/' }), pid: ceiling.pid };
      rows.push(...(await measureInterleaved([ceilingTarget, ...targets], k, settings)));
      await stop(ceiling);
    };
    /** A GET target whose path ends with the next key of `nextKey`. */
    const getTarget = (name: string, url: string, pathPrefix: string, nextKey: () => string, countCommands: boolean): Target => ({
      name,
      url,
      ...processes(url),
      next: () => ({ path: `${pathPrefix}${nextKey()}` }),
      ...(countCommands ? { commands: redisCommands } : {}),
    });

    for (const k of ks) {
      log(`K = ${k}`);
      const ids = notesByK.get(k) ?? [];
      const nextId = keys(ids);
      const event = (name: string, url: string, countCommands: boolean) => getTarget(name, url, '/event?id=', nextId, countCommands);
      await measureGroup(String(k), `/event?id=${ids[0]}`, [
        event('baseline /event', baselineUrl, true),
        event('baseline /event (bytes)', bytesBaselineUrl, true),
        event('service /event', serviceUrl, true),
        event('service, embedded store /event', embeddedUrl, false),
        event('service, METRICS=false /event', bareUrl, true),
        event('service, HOT_CACHE_MB=0 /event', uncachedUrl, true),
        event('service, metrics + rate limits /event', limitedUrl, true),
        {
          name: 'service POST /graphql (event)',
          url: serviceUrl,
          next: () => ({ path: '/graphql', method: 'POST', body: JSON.stringify({ query: EVENT_QUERY, variables: { id: nextId() } }) }),
          commands: redisCommands,
          ...processes(serviceUrl),
        },
      ]);
    }

    log('profiles');
    const pubkeys = identities.map((who) => who.pubkey);
    const nextPubkey = keys(pubkeys);
    const profile = (name: string, url: string, countCommands: boolean) =>
      getTarget(name, url, '/user-profile?pubkey=', nextPubkey, countCommands);
    await measureGroup('-', `/user-profile?pubkey=${pubkeys[0]}`, [
      profile('baseline /user-profile', baselineUrl, true),
      profile('baseline /user-profile (bytes)', bytesBaselineUrl, true),
      profile('service /user-profile', serviceUrl, true),
      profile('service, embedded store /user-profile', embeddedUrl, false),
      profile('service, METRICS=false /user-profile', bareUrl, true),
      profile('service, HOT_CACHE_MB=0 /user-profile', uncachedUrl, true),
      profile('service, metrics + rate limits /user-profile', limitedUrl, true),
      {
        name: 'service POST /graphql (profile)',
        url: serviceUrl,
        next: () => ({ path: '/graphql', method: 'POST', body: JSON.stringify({ query: PROFILE_QUERY, variables: { pubkey: nextPubkey() } }) }),
        commands: redisCommands,
        ...processes(serviceUrl),
      },
    ]);

    if (world) {
      // The screens: each GET route and its fixed operation over POST /graphql (the same page), on
      // the same keys in turn. Their answers are never kept (routes/rest-lookup.ts answerKey): every
      // request runs its operation.
      const nextViewer = cycle(world.viewers.map((who) => who.pubkey));
      const nextRecipient = cycle(world.roots.map((root) => root.pubkey));
      const nextRoot = cycle(world.roots.map((root) => root.id));
      // /thread's operation nests deeper than a client's query may (GRAPHQL_MAX_DEPTH: 400
      // query_too_deep over /graphql), so it has no row of its own here.
      const screens: { route: string; key: () => string; parameter: string; operation?: string; variables?: (key: string) => Record<string, unknown> }[] = [
        { route: '/feed', key: nextViewer, parameter: 'pubkey', operation: 'feed', variables: (pubkey) => ({ pubkey, first: 20 }) },
        { route: '/notifications', key: nextRecipient, parameter: 'pubkey', operation: 'notifications', variables: (pubkey) => ({ pubkey, first: 20 }) },
        { route: '/thread', key: nextRoot, parameter: 'id' },
      ];
      for (const { route, key, parameter, operation, variables } of screens) {
        log(`screen ${route}`);
        const first = key();
        const get = (name: string, url: string, countCommands: boolean) => getTarget(name, url, `${route}?limit=20&${parameter}=`, key, countCommands);
        const targets = [get(`service GET ${route}`, serviceUrl, true), get(`service, embedded store GET ${route}`, embeddedUrl, false)];
        if (operation && variables) {
          const query = readFileSync(new URL(`src/http/operations/${operation}.graphql`, root), 'utf8');
          targets.push({
            name: `service POST /graphql (${operation} operation)`,
            url: serviceUrl,
            next: () => ({ path: '/graphql', method: 'POST', body: JSON.stringify({ query, variables: variables(key()) }) }),
            commands: redisCommands,
            ...processes(serviceUrl),
          });
        }
        await measureGroup(route, `${route}?limit=20&${parameter}=${first}`, targets);
      }
    }

    const peak = { redis: peakRssMiB(service.pid ?? 0), embedded: peakRssMiB(embeddedService.pid ?? 0) };
    writeReport(rows, peak);
    // The figures an operator pays for, one line per route, on the terminal too.
    console.info(targetLines(rows));
    log(`service peak RSS: ${peak.redis?.toFixed(0)} MiB (Redis), ${peak.embedded?.toFixed(0)} MiB (embedded); wrote ${options.output}`);
  } finally {
    await Promise.all(children.map(stop));
    await deleteByPrefix(admin, prefix);
    admin.disconnect();
    await store.close();
    await privateRedis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Another `serve` on the bench's Redis, with `extra` environment: its URL and process. */
async function startService(
  children: ChildProcess[],
  env: Record<string, string>,
  extra: Record<string, string>,
): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = await startProcess(['dist/cli/main.js', 'serve'], { ...env, ...extra, PORT: String(port), NODE_ENV: 'production' }, `http://127.0.0.1:${port}/healthz`);
  children.push(child);
  return { url: `http://127.0.0.1:${port}`, child };
}

function writeReport(rows: Row[], peakRss: { redis: number | undefined; embedded: number | undefined }) {
  const ratio = (a: number | undefined, b: number | undefined) => (a && b ? (a / b).toFixed(2) : '');
  const lines: string[] = [];
  for (const row of rows) {
    const group = rows.filter((other) => other.k === row.k);
    const ceiling = group.find((other) => other.target.startsWith('ceiling'))?.rps;
    const baselineName = row.target.includes('user-profile') ? 'baseline /user-profile' : 'baseline /event';
    const baseline = group.find((other) => other.target === baselineName)?.rps;
    const bytesBaseline = group.find((other) => other.target === `${baselineName} (bytes)`)?.rps;
    const isService = row.target.startsWith('service');
    // The embedded store is compared with the same hand-written Redis baselines.
    lines.push(
      `| ${row.k} | ${row.target} | ${row.rps.toFixed(0)} | ${row.p50} | ${row.p99} | ${row.errors} | ${
        row.commandsPerRequest?.toFixed(2) ?? ''
      } | ${cpuCell(row)} | ${row.bytes.toFixed(0)} | ${isService ? ratio(row.rps, baseline) : ''} | ${isService ? ratio(row.rps, bytesBaseline) : ''} | ${
        row.target.startsWith('ceiling') ? '' : ratio(row.rps, ceiling)
      } |`,
    );
  }
  const cpu = cpus();
  const command = `npm run bench -- --k ${options.k} --profiles ${profileCount} --notes ${noteCount} --duration ${duration} --connections ${connections} --rounds ${rounds}${warmUpSeconds === 2 ? '' : ` --warmup ${warmUpSeconds}`}${zipfExponent === undefined ? '' : ` --zipf ${zipfExponent}`}`;
  const report = `# Benchmarks

Measured by \`${command}\` on ${new Date().toISOString().slice(0, 10)}.

Machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}.
Load generator: autocannon in the harness process, ${connections} connections, on the same machine as the
servers and Redis (everything shares the ${cpu.length} cores). The targets of each group are measured in
${rounds} interleaved rounds of ${(duration / rounds).toFixed(1)} s (A, B, C, A, B, C, …; a ${warmUpSeconds} s warm-up before each
target's first round), and each row gives the median round: this machine's speed drifts over minutes,
and interleaving makes every target see the same drift.

Dataset: ${profileCount} signed profiles; for each K, ${noteCount} signed notes with K relevant pubkeys
(the author plus K-1 p-tagged pubkeys, all with profiles). ${
    zipfExponent === undefined
      ? 'Requests cycle through all ids.'
      : `Requests draw ids by a Zipf law of exponent ${zipfExponent} (rank r asked in proportion to 1/r^${zipfExponent}, ranks shuffled over the ids, the same sequence for every target).`
  }

- **ceiling**: bare \`node:http\` answering a fixed body of the size of the service's answer (no I/O).
- **baseline**: hand-written \`node:http\` + ioredis on the same keys: one GET of the event, one MGET of
  the profiles, the same response bytes (\`scripts/bench/baseline-server.mjs\`). It reads values as
  strings, as ioredis does by default, and builds the body as a string. Regular events are stored
  packed (\`src/store/packed-event.ts\`): it unpacks the event it reads, as the service does on a
  miss of its hot cache (a hit never unpacks).
- **baseline (bytes)**: the same handler reading values as Buffers and writing them as they are
  (\`BASELINE_BYTES=1\`), as the service does: no UTF-8 decoding of each profile and encoding back.
  The harder of the two comparisons; its ratio is ×bytes.
- **service**: \`node dist/cli/main.js serve\` with its default configuration (\`NODE_ENV=production\`,
  \`LOG_LEVEL=info\`: one JSON log line per request), on Redis, with \`RELAYS=\` (empty): every lookup is
  answered by the index, so the figures measure the service, not public relays.
- **service, embedded store**: the same, without \`REDIS_URL\`: the same dataset in LMDB (\`DATA_DIR\`).
  Its ratios compare it with the Redis baselines.
- **service, HOT_CACHE_MB=0**: the service without its hot cache (on by default,
  64 MiB): every lookup reads Redis, as before the cache.
- **service, METRICS=false** and **service, metrics + rate limits**: the cost of the
  features on cached lookups: both off, and both on (\`RATE_LIMIT=1000000\`, \`MISS_RATE_LIMIT=1000\`:
  every request counted in Redis, none refused). The table below the main one gives the ratio.
- **screens** (the groups named by a route): \`GET /feed\`, \`/notifications\` and \`/thread\` with
  \`limit=20\`, on Redis and on the embedded store, and the fixed operations of the first two over
  \`POST /graphql\` (the same page; /thread's nests deeper than a client's query may), over ${SCREEN_WORLD.viewers} viewers following ${SCREEN_WORLD.follows} of the identities each (their notes above are the
  feeds) and ${SCREEN_WORLD.roots} of the first K's notes with ${SCREEN_WORLD.replies} replies each (the threads; each reply notifies
  its root's author), asked in turn. A screen's answer is never kept: each request runs its operation.
- **CPU µs/req**: CPU time (user + system, all threads, from \`/proc\`) per completed request of the
  target's server process and of Redis, then in brackets of the load generator (this process).
  Requests per second move with whatever else the shared cores run; CPU per request moves less,
  though contention inflates it too.

| K | target | req/s | p50 ms | p99 ms | errors | Redis cmds/req | CPU µs/req: server + Redis (load gen) | bytes/resp | ×baseline | ×bytes | ×ceiling |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${lines.join('\n')}

${targetLines(rows)}

${costLines(rows)}

Service peak RSS over the whole run: ${peakRss.redis?.toFixed(0) ?? 'n/a'} MiB on Redis, ${
    peakRss.embedded?.toFixed(0) ?? 'n/a'
  } MiB on the embedded store (whose memory-mapped pages count as resident when read).
`;
  const path = new URL(options.output, root);
  let existing = '';
  try {
    existing = readFileSync(path, 'utf8');
  } catch {
    // first report
  }
  const notes = existing.indexOf('\n## Notes');
  writeFileSync(path, report + (notes >= 0 ? existing.slice(notes) : ''));
}

/** CPU per request: the server's and Redis' (what a fleet pays), then the load generator's. */
function cpuCell({ cpu }: Row): string {
  if (cpu.server === undefined) return '';
  return `${cpu.server.toFixed(0)} + ${cpu.redis?.toFixed(0) ?? '?'} (${cpu.load.toFixed(0)})`;
}

/** CPU µs a request costs the fleet: the server's and Redis' (undefined where the server's was not measured). */
function fleetCpu({ cpu }: Row): number | undefined {
  return cpu.server === undefined ? undefined : cpu.server + (cpu.redis ?? 0);
}

/**
 * One line per service target: its CPU per request (server + Redis), the hand-written handler's for
 * the same route, the ceiling's, and the efficiency (hand-written ÷ service: above 1, the service
 * costs less per request). What an operator pays does not move with what shares the cores, as
 * requests per second do (a throughput ratio on 2 cores also measures the load generator).
 */
function efficiencyLines(rows: Row[]): string[] {
  const lines: string[] = [];
  for (const row of rows.filter((candidate) => candidate.target.startsWith('service') && !isScreenGroup(candidate.k))) {
    const group = rows.filter((other) => other.k === row.k);
    const route = row.target.includes('user-profile') || row.target.includes('(profile)') ? '/user-profile' : '/event';
    const service = fleetCpu(row);
    const handWritten = fleetCpu(group.find((other) => other.target === `baseline ${route}`) as Row);
    const ceiling = fleetCpu(group.find((other) => other.target.startsWith('ceiling')) as Row);
    if (service === undefined || handWritten === undefined) continue;
    lines.push(
      `- ${row.target}${row.k === '-' ? '' : ` (K = ${row.k})`}: service ${service.toFixed(0)} µs, hand-written ${handWritten.toFixed(0)} µs, ceiling ${ceiling?.toFixed(0) ?? '?'} µs, efficiency ${(handWritten / service).toFixed(2)}×`,
    );
  }
  return lines;
}

/**
 * The CPU-per-request targets (server + Redis, every default on): /user-profile ≥ 1.0× the
 * hand-written handler's efficiency on uniform keys, ≥ 1.5× on Zipf; /event at K = 10 ≥ 2.0×; a
 * hot-cache answer (the service's /user-profile) ≤ 1.5× the ceiling's CPU; /graphql ≥ 0.8× the REST
 * route's efficiency for the same lookup.
 */
function targetLines(rows: Row[]): string {
  const lines: string[] = [];
  const find = (k: string, target: string) => rows.find((row) => row.k === k && row.target === target);
  const cpuOf = (k: string, target: string) => {
    const row = find(k, target);
    return row && fleetCpu(row);
  };
  const verdict = (text: string, value: number | undefined, target: number, atMost = false) => {
    if (value === undefined || !Number.isFinite(value)) return;
    const met = atMost ? value <= target : value >= target;
    lines.push(`- ${text}: ${value.toFixed(2)}×, target ${atMost ? '≤' : '≥'} ${target.toFixed(1)}×: **${met ? 'met' : 'not met'}**`);
  };
  const efficiency = (k: string, route: string, target = `service ${route}`) => {
    const service = cpuOf(k, target);
    const handWritten = cpuOf(k, `baseline ${route}`);
    return service && handWritten ? handWritten / service : undefined;
  };
  verdict('/user-profile, CPU efficiency against the hand-written handler', efficiency('-', '/user-profile'), zipfExponent === undefined ? 1.0 : 1.5);
  if (zipfExponent === undefined) verdict('/event (K = 10), CPU efficiency against the hand-written handler', efficiency('10', '/event'), 2.0);
  const ceiling = rows.find((row) => row.k === '-' && row.target.startsWith('ceiling'));
  const hot = cpuOf('-', 'service /user-profile');
  if (ceiling && hot !== undefined) verdict('/user-profile (hot cache) CPU against the ceiling', hot / (fleetCpu(ceiling) ?? Number.NaN), 1.5, true);
  const graphqlProfile = efficiency('-', '/user-profile', 'service POST /graphql (profile)');
  const restProfile = efficiency('-', '/user-profile');
  if (graphqlProfile && restProfile) verdict('POST /graphql (profile), efficiency against the REST route', graphqlProfile / restProfile, 0.8);
  const graphqlEvent = efficiency('10', '/event', 'service POST /graphql (event)');
  const restEvent = efficiency('10', '/event');
  if (graphqlEvent && restEvent) verdict('POST /graphql (event, K = 10), efficiency against the REST route', graphqlEvent / restEvent, 0.8);
  const screens = screenLines(rows);
  for (const [route, ratio] of screens.ratios) verdict(`GET ${route}, CPU against its fixed operation over POST /graphql`, ratio, 1.2, true);
  const each = [...efficiencyLines(rows), ...screens.lines];
  return `CPU per request, server + Redis, per route:\n\n${each.join('\n')}\n\n${lines.length > 0 ? `Targets in this run:\n\n${lines.join('\n')}` : ''}`;
}

/** The screens' groups are named by their route (the lookups' by K, or `-`). */
function isScreenGroup(k: string): boolean {
  return k.startsWith('/');
}

/**
 * One line per screen route (no hand-written handler to set beside them): its CPU per request,
 * server + Redis, on Redis and on the embedded store, its fixed operation's over POST /graphql
 * (the same page), the ceiling's for a body of its size; and the route against its operation
 * (the screens' target: at most 1.2×).
 */
function screenLines(rows: Row[]): { lines: string[]; ratios: [route: string, ratio: number][] } {
  const lines: string[] = [];
  const ratios: [string, number][] = [];
  for (const route of [...new Set(rows.map((row) => row.k).filter(isScreenGroup))]) {
    const group = rows.filter((row) => row.k === route);
    const cpuOf = (test: (target: string) => boolean) => {
      const row = group.find((candidate) => test(candidate.target));
      return row && fleetCpu(row);
    };
    const service = cpuOf((target) => target === `service GET ${route}`);
    const embedded = cpuOf((target) => target === `service, embedded store GET ${route}`);
    const operation = cpuOf((target) => target.startsWith('service POST /graphql'));
    const ceiling = cpuOf((target) => target.startsWith('ceiling'));
    if (service === undefined) continue;
    if (operation !== undefined) ratios.push([route, service / operation]);
    const against = operation === undefined ? '' : `, its operation over POST /graphql ${operation.toFixed(0)} µs`;
    const ratio = operation === undefined ? '' : `; the route ${(service / operation).toFixed(2)}× its operation`;
    lines.push(`- GET ${route}: service ${service.toFixed(0)} µs (embedded store ${embedded?.toFixed(0) ?? '?'} µs)${against}, ceiling ${ceiling?.toFixed(0) ?? '?'} µs${ratio}`);
  }
  return { lines, ratios };
}

/** Metrics and rate limits on, against both off, per group (at most 5% lower). */
function costLines(rows: Row[]): string {
  const lines = ['| K | route | both off req/s | metrics + rate limits req/s | ratio |', '| --- | --- | --- | --- | --- |'];
  for (const bare of rows.filter((row) => row.target.startsWith('service, METRICS=false'))) {
    const route = bare.target.slice('service, METRICS=false '.length);
    const limited = rows.find((row) => row.k === bare.k && row.target === `service, metrics + rate limits ${route}`);
    if (limited) lines.push(`| ${bare.k} | ${route} | ${bare.rps.toFixed(0)} | ${limited.rps.toFixed(0)} | ${(limited.rps / bare.rps).toFixed(2)} |`);
  }
  return `Cost of metrics and rate limits (same run, same groups):\n\n${lines.join('\n')}`;
}

if (options.cluster) await runClusterBench({ ks, profileCount, noteCount, duration, connections, rounds, output: new URL(options.output, root) });
else await main();
