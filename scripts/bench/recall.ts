// `npm run bench:recall`: how much of a Nostr network the service finds, with outbox discovery
// (NIP-65) off and on, side by side in one run, over a simulated network on loopback.
//
//   npm run bench:recall -- --users 2000 --relays 60 --timeout 2000 --concurrency 12 --seed 1 --store redis
//
// The network (scripts/bench/recall/network/): relays of ours and of @nostr-relay/core, some dead,
// silent or slow; users whose kind 10002 lists put them on a few relays of power-law popularity; an
// indexer with most lists; base RELAYS with a minority of everything. The lookups
// (recall/lookups/): profiles, nevents with an author, bare ids, /event profile maps, each once.
// The service runs as users run it (`node dist/cli/main.js serve`, built first by the npm script),
// once with OUTBOX=false and once with OUTBOX unset (the default), each from an empty store; the
// report (recall/report/) puts both side by side with the issue's targets, prints it and writes it
// to --output. Options: --users, --relays, --timeout (RELAY_TIMEOUT_MS), --concurrency, --seed,
// --store redis|embedded, --max-relay-connections, --output, --service (another build's
// dist/cli/main.js, default this repository's).
//
// Redis: always a private redis-server (INFO commandstats is server-wide). Every process it starts
// runs in a group of its own and is killed with it, also on Ctrl-C.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startPrivateRedis } from '../../test/support/redis-server.js';
import { Accounting } from './recall/network/accounting.js';
import { type Network, startNetwork } from './recall/network/network.js';
import { PortBook } from './recall/network/ports.js';
import { seeded } from './recall/network/random.js';
import { type Answer, ask, drive } from './recall/lookups/drive.js';
import { Reachability } from './recall/lookups/reachable.js';
import { countsFor, type Lookup, sampleLookups } from './recall/lookups/sample.js';
import { DEFAULT_ENTRY, type Service, startService } from './recall/service/child.js';
import { commandsDuring, freshStore, type StoreKind } from './recall/service/store.js';
import { measureRun } from './recall/report/metrics.js';
import { renderReport, type RunReport } from './recall/report/markdown.js';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '2000' },
    relays: { type: 'string', default: '60' },
    timeout: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '12' },
    seed: { type: 'string', default: '1' },
    store: { type: 'string', default: 'redis' },
    'max-relay-connections': { type: 'string', default: '50' },
    output: { type: 'string', default: '/tmp/recall.md' },
    service: { type: 'string', default: DEFAULT_ENTRY },
  },
});

function whole(name: string, min: number): number {
  const value = Number(values[name as keyof typeof values]);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be a whole number from ${min}`);
  return value;
}
const options = {
  users: whole('users', 20),
  relays: whole('relays', 8),
  timeout: whole('timeout', 100),
  concurrency: whole('concurrency', 1),
  seed: whole('seed', 0),
  maxRelayConnections: whole('max-relay-connections', 1),
  store: values.store as StoreKind,
  output: values.output,
  service: values.service,
};
if (options.store !== 'redis' && options.store !== 'embedded') throw new Error('--store must be redis or embedded');

/** Repeated (cached) lookups per route for the Redis command count. */
const CACHED_SAMPLE = 20;

const log = (message: string) => process.stderr.write(`${message}\n`);

// Cleanups run last-in first-out, on success, failure or Ctrl-C.
const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (let cleanup = cleanups.pop(); cleanup; cleanup = cleanups.pop()) {
    try {
      await cleanup();
    } catch (error) {
      log(`cleanup failed: ${(error as Error).message}`);
    }
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping`);
    void cleanUp().finally(() => process.exit(130));
  });
}

interface Column {
  label: string;
  /** What this column changes in the service's environment (undefined: removed). */
  env: Record<string, string | undefined>;
  describe: string;
}

/** Outbox settings a shell may have set: removed, so that each column is exactly what it says. */
const OUTBOX_UNSET = { OUTBOX: undefined, OUTBOX_RELAYS_PER_PUBKEY: undefined, OUTBOX_MAX_RELAYS: undefined };

const COLUMNS: Column[] = [
  { label: 'OUTBOX=false', env: { ...OUTBOX_UNSET, OUTBOX: 'false' }, describe: '`OUTBOX=false`: base `RELAYS` and `INDEXER_RELAYS` only' },
  {
    label: 'default (outbox on)',
    env: OUTBOX_UNSET,
    describe: 'default: `OUTBOX`, `OUTBOX_RELAYS_PER_PUBKEY` and `OUTBOX_MAX_RELAYS` unset',
  },
];

async function main(): Promise<void> {
  const started = Date.now();
  const ports = new PortBook();
  const accounting = new Accounting();
  let redis: { url: string; admin: Redis } | undefined;
  if (options.store === 'redis') {
    const server = await startPrivateRedis({ port: await ports.free() });
    // Also killed if this process dies without running its cleanups.
    process.on('exit', () => server.process.kill('SIGKILL'));
    cleanups.push(() => server.stop());
    const admin = new Redis(server.url);
    cleanups.push(async () => admin.disconnect());
    redis = { url: server.url, admin };
  }

  const random = seeded(options.seed);
  log(`network: ${options.relays} relays, ${options.users} users (seed ${options.seed})`);
  const network = await startNetwork(random, options, accounting, ports);
  cleanups.push(() => network.stop());
  const lookups = sampleLookups(random, network, new Reachability(network, options.timeout), countsFor(options.users));
  log(`network up in ${((Date.now() - started) / 1000).toFixed(1)} s: ${network.dataset.events} events; ${lookups.length} lookups`);

  const serviceEnv: Record<string, string> = {
    HOST: '127.0.0.1',
    NODE_ENV: 'production',
    // info: the service's `relay pool closed` line (its own peak connection count) is read from the log.
    LOG_LEVEL: process.env.RECALL_LOG_LEVEL ?? 'info',
    RELAYS: network.plan.base.map(network.urlOf).join(','),
    INDEXER_RELAYS: network.urlOf(network.plan.indexer),
    MAX_RELAY_CONNECTIONS: String(options.maxRelayConnections),
    RELAY_ALLOW_PRIVATE: 'true',
    RELAY_TIMEOUT_MS: String(options.timeout),
    // Every bench request comes from one address: per-client caps would measure the bench, not the service.
    MISS_CONCURRENCY_PER_CLIENT: '0',
    MAX_CONNECTIONS_PER_CLIENT: '0',
    // Long enough that nothing expires during a run: a repeated lookup is served from the index.
    NEGATIVE_TTL: '3600',
    PROFILE_TTL: '3600',
  };
  const logDir = mkdtempSync(join(tmpdir(), 'nostr-lookup-recall-logs-'));
  const runs: RunReport[] = [];
  for (const [index, column] of COLUMNS.entries()) {
    runs.push(await runColumn(column, index, { network, lookups, accounting, ports, redis, serviceEnv, logFile: join(logDir, `service-${index}.log`) }));
  }

  const report = renderReport({
    command: `npm run bench:recall -- --users ${options.users} --relays ${options.relays} --timeout ${options.timeout} --concurrency ${options.concurrency} --seed ${options.seed} --store ${options.store} --max-relay-connections ${options.maxRelayConnections}${options.service === DEFAULT_ENTRY ? '' : ` --service ${options.service}`}`,
    serviceEnv,
    runEnv: COLUMNS.map((column) => column.describe),
    network,
    lookups,
    timeoutMs: options.timeout,
    maxRelayConnections: options.maxRelayConnections,
    concurrency: options.concurrency,
    runs,
  });
  writeFileSync(options.output, report);
  process.stdout.write(report);
  log(`wrote ${options.output}; service logs in ${logDir}; ${((Date.now() - started) / 1000).toFixed(0)} s in all`);
}

interface RunContext {
  network: Network;
  lookups: readonly Lookup[];
  accounting: Accounting;
  ports: PortBook;
  redis: { url: string; admin: Redis } | undefined;
  serviceEnv: Record<string, string>;
  logFile: string;
}

async function runColumn(column: Column, index: number, context: RunContext): Promise<RunReport> {
  const { lookups, accounting } = context;
  const store = freshStore(options.store, context.redis, `run${index}`);
  let service: Service | undefined;
  try {
    const port = await context.ports.free();
    accounting.reset(); // before the service starts: connections it opens at start count too
    service = await startService(options.service, { ...context.serviceEnv, ...store.env, ...column.env, PORT: String(port) }, port, context.logFile);
    log(`${column.label}: ${lookups.length} lookups, ${options.concurrency} in flight`);
    const started = performance.now();
    const step = Math.ceil(lookups.length / 10);
    const answers = await drive(service.url, lookups, {
      concurrency: options.concurrency,
      limitMs: options.timeout + 10_000,
      progress: (done) => {
        if (done % step === 0) log(`  ${done}/${lookups.length}`);
      },
    });
    const metrics = measureRun(context.network, lookups, answers, accounting, (performance.now() - started) / 1000);
    if (process.env.RECALL_MISSES) writeMisses(`${process.env.RECALL_MISSES}.${index}.jsonl`, context.network, lookups, answers);
    const cached = context.redis ? await cachedCommands(service.url, context.redis.admin, lookups, answers) : undefined;
    log(`  done in ${metrics.seconds.toFixed(0)} s; peak ${metrics.peakOpen} connections`);
    await service.stop();
    return { label: column.label, metrics, cached, servicePeak: servicePeakFrom(context.logFile) };
  } finally {
    await service?.stop();
    await store.cleanup();
    // Every socket the service held must be gone with it, or the next run's peak would inherit them.
    for (let wait = 0; accounting.open > 0 && wait < 50; wait++) await new Promise((resolve) => setTimeout(resolve, 100));
    if (accounting.open > 0) log(`  warning: ${accounting.open} relay connections still open after the service stopped`);
  }
}

/**
 * Redis commands of found lookups asked again, one at a time (they are now in the index). An event
 * whose first answer lacked a relevant profile is counted apart: that profile is still a miss (a
 * lookup with hints asks them again for it), so the lookup is not wholly cached.
 */
async function cachedCommands(serviceUrl: string, admin: Redis, lookups: readonly Lookup[], answers: readonly Answer[]) {
  const found = lookups.flatMap((lookup, index) => (answers[index]?.status === 200 ? [{ lookup, answer: answers[index] as Answer }] : []));
  const complete = ({ lookup, answer }: { lookup: Lookup; answer: Answer }) => {
    const map = (answer.body as { profiles?: Record<string, unknown> }).profiles ?? {};
    return lookup.keys.slice(1).every((pubkey) => pubkey in map); // keys: the id, the author, the mentions
  };
  const events = found.filter(({ lookup }) => lookup.kind !== 'profile');
  const count = async (sample: { lookup: Lookup }[]) => {
    const counts: number[] = [];
    for (const { lookup } of sample.slice(0, CACHED_SAMPLE)) {
      let status = 0;
      counts.push(await commandsDuring(admin, async () => (status = (await ask(`${serviceUrl}${lookup.path}`, 10_000)).status)));
      if (status !== 200) log(`  warning: ${lookup.path} answered ${status} when asked again`);
    }
    return counts;
  };
  return {
    profile: await count(found.filter(({ lookup }) => lookup.kind === 'profile')),
    event: await count(events.filter(complete)),
    eventIncomplete: await count(events.filter((item) => !complete(item))),
  };
}

try {
  await main();
} finally {
  await cleanUp();
}

/**
 * RECALL_MISSES=<path>: writes each reachable lookup that was not found, one JSON line each, with
 * where its author publishes (and how those relays behave) and where the wanted event sits: what
 * to look at first when recall drops.
 */
function writeMisses(path: string, network: Network, lookups: readonly Lookup[], answers: readonly Answer[]): void {
  const describe = (relay: number) => {
    const spec = network.relays[relay]?.spec;
    const port = new URL(network.urlOf(relay)).port;
    return `${relay}@${port}:${spec?.behaviour ?? '?'}${spec?.behaviour === 'slow' ? `(${spec.delayMs}ms)` : ''}`;
  };
  const lines: string[] = [];
  lookups.forEach((lookup, index) => {
    const answer = answers[index];
    if (!lookup.reachable || lookup.kind === 'map') return;
    const body = answer?.body as { event?: { id: string }; profile?: { id: string } } | undefined;
    const found = (body?.event ?? body?.profile)?.id === lookup.wantId;
    if (found) return;
    const user = network.dataset.byPubkey.get(lookup.keys.find((key) => network.dataset.byPubkey.has(key)) ?? '');
    lines.push(
      JSON.stringify({
        kind: lookup.kind,
        status: answer?.status,
        ms: Math.round(answer?.ms ?? 0),
        writes: user?.writes.map(describe),
        list: user?.relayList ? (network.dataset.placement.get(user.relayList.id) ?? []).map(describe) : null,
        held: (network.dataset.placement.get(lookup.wantId) ?? []).map(describe),
        hints: lookup.hints.map(describe),
      }),
    );
  });
  writeFileSync(path, `${lines.join('\n')}\n`);
}

/** The service's own peak relay connection count, from the last `relay pool closed` line of its log. */
function servicePeakFrom(logFile: string): number | undefined {
  let peak: number | undefined;
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('relay pool closed')) continue;
    try {
      peak = (JSON.parse(line) as { peakConnections?: number }).peakConnections;
    } catch {
      // not a JSON line
    }
  }
  return peak;
}
