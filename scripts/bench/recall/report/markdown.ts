// The report: one markdown section, both runs side by side, each figure next to its target.
import { cpus } from 'node:os';
import type { Network } from '../network/network.js';
import { PLACEMENT } from '../network/dataset.js';
import { isDead } from '../network/relays.js';
import { SHARES } from '../network/plan.js';
import { HINTED_SHARE, LOOKUP_KINDS, type Lookup, type LookupKind } from '../lookups/sample.js';
import { type KindMetrics, percentile, type Recall, type RunMetrics } from './metrics.js';

export interface RunReport {
  label: string;
  metrics: RunMetrics;
  /** Redis commands of each repeated (cached) lookup; undefined on the embedded store. */
  cached: { profile: number[]; event: number[]; eventIncomplete: number[] } | undefined;
  /** The most relay connections the service held at once, as it counts them (its `relay pool closed` log line). */
  servicePeak: number | undefined;
}

export interface ReportInput {
  command: string;
  serviceEnv: Record<string, string>;
  runEnv: string[];
  network: Network;
  lookups: readonly Lookup[];
  timeoutMs: number;
  maxRelayConnections: number;
  concurrency: number;
  runs: RunReport[];
}

const NAMES: Record<LookupKind, string> = {
  profile: 'profiles (`/user-profile`)',
  nevent: '`nevent`s with an author',
  bare: 'bare ids',
  map: '`/event` profile maps (profiles in the maps)',
};
const RECALL_TARGET: Partial<Record<LookupKind, number>> = { profile: 0.99, nevent: 0.99 };

const percent = (part: number, whole: number) => (whole === 0 ? 'n/a' : `${((100 * part) / whole).toFixed(1)}%`);
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : 'n/a');
const mark = (ok: boolean) => (ok ? ' ✓' : ' ✗');

function recallCell(recall: Recall, target: number | undefined): string {
  const cell = `${percent(recall.foundReachable, recall.reachable)} (${recall.foundReachable}/${recall.reachable})`;
  return target === undefined || recall.reachable === 0 ? cell : cell + mark(recall.foundReachable >= target * recall.reachable);
}

function commandsCell(counts: number[] | undefined, target: number | undefined): string {
  if (counts === undefined) return 'n/a (embedded store)';
  if (counts.length === 0) return 'n/a (nothing found to repeat)';
  const atTarget = counts.filter((count) => count === target).length;
  const min = Math.min(...counts);
  const max = Math.max(...counts);
  if (target === undefined) return min === max ? `${min} (all ${counts.length})` : `${min}–${max} (median ${percentile(counts, 0.5)}, of ${counts.length})`;
  const value = min === max ? `${min} (all ${counts.length})` : `${min}–${max} (${atTarget} of ${counts.length} at ${target})`;
  return value + mark(max <= target);
}

function statusesCell(metrics: KindMetrics): string {
  return [...metrics.statuses.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ');
}

export function renderReport(input: ReportInput): string {
  const { network, runs, lookups } = input;
  const specs = network.plan.specs;
  const countOf = (predicate: (spec: (typeof specs)[number]) => boolean) => specs.filter(predicate).length;
  const users = network.dataset.users;
  const header = `| measure | ${runs.map((run) => run.label).join(' | ')} | target |`;
  const rule = `| --- | ${runs.map(() => '---').join(' | ')} | --- |`;
  const rows: string[] = [];
  const row = (name: string, cell: (run: RunReport) => string, target = '') => rows.push(`| ${name} | ${runs.map(cell).join(' | ')} | ${target} |`);

  for (const kind of LOOKUP_KINDS) {
    const target = RECALL_TARGET[kind];
    row(`recall, ${NAMES[kind]}`, (run) => recallCell(run.metrics.byKind[kind].recall, target), target ? `≥ ${target * 100}%` : '');
  }
  row(
    'found / exists on any live relay (profiles · nevents · bare · maps)',
    (run) => LOOKUP_KINDS.map((kind) => percent(run.metrics.byKind[kind].recall.foundExistsLive, run.metrics.byKind[kind].recall.existsLive)).join(' · '),
  );
  row('found though not reachable (all kinds)', (run) => String(LOOKUP_KINDS.reduce((sum, kind) => sum + run.metrics.byKind[kind].recall.foundUnreachable, 0)));
  row('bare ids: found / held by a live base relay (all a bare id can reach)', (run) => {
    const { found, held } = run.metrics.byKind.bare.onLiveBase;
    return `${percent(found, held)} (${found}/${held})`;
  });
  row('`/event` profile maps: events found', (run) => `${run.metrics.byKind.map.eventsFound}/${run.metrics.byKind.map.lookups}`);
  const latencyTarget = input.timeoutMs + 100;
  for (const kind of LOOKUP_KINDS) {
    row(
      `p50 / p99 latency (ms), ${NAMES[kind]}`,
      (run) => {
        const metrics = run.metrics.byKind[kind];
        return `${ms(metrics.p50)} / ${ms(metrics.p99)}${mark(metrics.p99 <= latencyTarget)}`;
      },
      `p99 ≤ ${latencyTarget}`,
    );
  }
  for (const kind of LOOKUP_KINDS) {
    row(`relays asked per lookup, mean (max), ${NAMES[kind]}`, (run) => {
      const metrics = run.metrics.byKind[kind];
      return `${metrics.relaysMean.toFixed(2)} (${metrics.relaysMax})`;
    });
  }
  row('REQs per lookup, mean (profiles · nevents · bare · maps)', (run) => LOOKUP_KINDS.map((kind) => run.metrics.byKind[kind].reqsMean.toFixed(2)).join(' · '));
  for (const kind of LOOKUP_KINDS) row(`statuses, ${NAMES[kind]}`, (run) => statusesCell(run.metrics.byKind[kind]));
  row('REQs to a relay the user lists as read-only', (run) => String(run.metrics.readOnlyReqs) + mark(run.metrics.readOnlyReqs === 0), '0');
  const cap = input.maxRelayConnections;
  row(
    'peak open connections to relays: TCP (distinct relays)',
    (run) => `${run.metrics.peakOpen} (${run.metrics.peakRelaysOpen})${mark(run.metrics.peakOpen <= cap)}`,
    `≤ ${cap} (\`MAX_RELAY_CONNECTIONS\`)`,
  );
  row(
    'peak open connections to relays, as the service counts them (closing sockets included)',
    (run) => (run.servicePeak === undefined ? 'n/a' : `${run.servicePeak}${mark(run.servicePeak <= cap)}`),
    `≤ ${cap}`,
  );
  row('peak open connections to relays: WebSockets not closing', (run) => `${run.metrics.peakWebSockets}${mark(run.metrics.peakWebSockets <= cap)}`, `≤ ${cap}`);
  row('connection attempts reset by dead relays', (run) => String(run.metrics.deadDials));
  row('Redis commands, cached `/user-profile`', (run) => commandsCell(run.cached?.profile, 1), '1');
  row('Redis commands, cached `/event` (every relevant profile was found)', (run) => commandsCell(run.cached?.event, 2), '2');
  row('Redis commands, `/event` again with a relevant profile not found', (run) => commandsCell(run.cached?.eventIncomplete, undefined));
  row('REQs in all (not naming any lookup)', (run) => `${run.metrics.reqs} (${run.metrics.unattributedReqs})`);
  row('wall time of the run', (run) => `${run.metrics.seconds.toFixed(0)} s`);

  const byKind = (kind: LookupKind) => lookups.filter((lookup) => lookup.kind === kind);
  const live = countOf((spec) => spec.behaviour === 'live');
  const listed = users.filter((user) => user.relayList).length;
  const withReads = users.filter((user) => user.reads.length > 0).length;
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  // How skewed popularity came out: the share of users writing to each users' relay.
  const writers = network.plan.userRelays
    .map((relay) => users.filter((user) => user.writes.includes(relay)).length / users.length)
    .sort((a, b) => b - a);
  const share = (value: number | undefined) => `${((value ?? 0) * 100).toFixed(0)}%`;
  const thirdParty = countOf((spec) => spec.implementation === 'third-party' && !isDead(spec.behaviour));
  const env = Object.entries(input.serviceEnv)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
  return `## Recall over a simulated network (\`npm run bench:recall\`)

\`\`\`sh
${input.command}
\`\`\`

${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores (${cpu}), Node ${process.version}. Both runs in one process, against the
same network and the same ${lookups.length} lookups (each once, from an empty store, ${input.concurrency} in flight):
${input.runEnv.map((line) => `- ${line}`).join('\n')}

${header}
${rule}
${rows.join('\n')}

The simulated network, all on loopback:
- **Relays**: ${specs.length}: 1 indexer (\`INDEXER_RELAYS\`), ${network.plan.base.length} base \`RELAYS\` and ${network.plan.userRelays.length} relays that users list. ${thirdParty} of
  those that listen run @nostr-relay/core (one base relay among them), the others our NIP-01 relay. The
  indexer and base relays are up; of the users' relays ${live - 1 - network.plan.base.length} are up, ${countOf((spec) => spec.behaviour === 'slow')} slow (answer after
  ${SHARES.slowDelayMs[0]}–${SHARES.slowDelayMs[1]} ms), ${countOf((spec) => spec.behaviour === 'silent')} silent (accept REQs, never answer), ${countOf((spec) => spec.behaviour === 'refusing')} refusing (nothing listens) and ${countOf((spec) => spec.behaviour === 'resetting')} resetting
  (accept TCP, reset it at once). Popularity follows a power law (the k-th most popular drawn with
  weight 1/k^${SHARES.popularityExponent}): the three most popular are written to by ${writers.slice(0, 3).map(share).join(', ')} of the users, the
  median one by ${share(percentile(writers, 0.5))}.
- **Users**: ${users.length}, ${network.dataset.events} signed events. ${listed} publish a kind 10002 listing ${PLACEMENT.writeRelays[0]}–${PLACEMENT.writeRelays[1]} write relays
  (\`write\` or unmarked), ${withReads} of them also ${PLACEMENT.readRelays[0]}–${PLACEMENT.readRelays[1]} read-only relays that hold nothing of theirs. Each
  user's profile, list and ${PLACEMENT.notes[0]}–${PLACEMENT.notes[1]} notes go to their write relays; the indexer holds ${PLACEMENT.relayListOnIndexer * 100}% of the lists and
  ${PLACEMENT.profileOnIndexer * 100}% of the profiles; the base relays ${PLACEMENT.profileOnBase * 100}% of the profiles, ${PLACEMENT.relayListOnBase * 100}% of the lists and ${PLACEMENT.noteOnBase * 100}% of the notes;
  ${PLACEMENT.noteOnExtraRelay * 100}% of the notes also sit on one relay the author does not list. ${PLACEMENT.noteWithMentions * 100}% of the notes mention
  ${PLACEMENT.mentions[0]}–${PLACEMENT.mentions[1]} other users (\`p\` tags).
- **Lookups**: ${byKind('profile').length} profiles, ${byKind('nevent').length} \`nevent\`s with an author (${HINTED_SHARE * 100}% with one relay hint naming a
  relay that was given the event, up or not), ${byKind('bare').length} bare ids, ${byKind('map').length} \`/event\` lookups (\`nevent\` with an author,
  no hint) whose profiles maps name ${byKind('map').reduce((sum, lookup) => sum + lookup.profiles.length, 0)} pubkeys. No pubkey is in two lookups, so each is cold.

How it is counted:
- **Recall** = found / reachable. Reachable: held by a live relay (up, or slow but answering within \`RELAY_TIMEOUT_MS\` − 300 ms; not dead, not silent)
  that the service can know of: the base \`RELAYS\`; for profiles also the indexer; the author's
  write relays, when the author's kind 10002 is on a live indexer or base relay (where lists are
  looked up); the relays a hint names. The same for bare ids, although only the base relays can
  answer an id without its author (a row of its own). Only reachable items are in the denominator;
  "found / exists on any live relay" counts every item a live relay holds. A profile counts as found
  only with the event the user published.
- **Relays asked per lookup**: distinct relays that received a REQ naming one of the lookup's ids or
  pubkeys (no pubkey is shared between lookups, so each REQ has one owner), counted on the relay side.
- **Peak open connections**: TCP connections from the service open at once, all simulated relays
  together, counted by the relays as they accept and close them: pooled, hinted, still handshaking
  and closing sockets alike (dead relays that reset are not counted). The second count takes only
  WebSockets past their handshake that neither side has begun to close: a connection the service
  is closing leaves it at once, but stays in the TCP count until its socket ends. The third is the
  service's own count (its pool's connections, dialling and closing ones included, until the socket
  has closed on its side), from its \`relay pool closed\` log line: the relays see a close a moment
  after the service does, so their TCP count can run one ahead when a room is reused at once.
- **Redis commands of a cached lookup**: after the run, up to 20 found profiles and 20 found events
  are asked again one by one, each between \`CONFIG RESETSTAT\` and \`INFO commandstats\` on the bench's
  private redis-server. Events whose first answer lacked a relevant profile are counted apart (up to
  20): that profile is still a miss, not a cached lookup (with hints, the service asks them again).
- Latency: from request to last byte, every lookup of the kind, found or not.

Service environment of both runs: \`${env}\`.
`;
}
