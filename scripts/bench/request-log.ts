/**
 * Request-log cost, in one run, side by side ("request logging on pino's public API,
 * measured against today's"): ns of CPU per request line for
 * - `hand-built`: the line the service wrote up to f17ae00, one template per line, pieces of 16 KiB;
 * - `pino`: the service's request log now (src/logger.ts createRequestLog: pino's public API into
 *   pieces of 16 KiB);
 * both into the same counting destination, each redacting secret keys a piece at a time (as the
 * service's request log does: src/logger.ts PieceWriter), in interleaved rounds; each row is the
 * median round.
 *
 *   npx tsx scripts/bench/request-log.ts [--lines 200000] [--rounds 7]
 */
import { parseArgs } from 'node:util';
import { createLogger, createRequestLog, type RequestLogEntry } from '../../src/logger.js';
import { redactSecretKeys } from '../../src/nostr/secret-keys.js';

const { values } = parseArgs({ options: { lines: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '7' } } });
const LINES = Number(values.lines);
const ROUNDS = Number(values.rounds);

let written = 0;
const destination = {
  write(text: string) {
    written += text.length;
    return true;
  },
};

/** `new Date().toISOString()`, made once per millisecond: at load, several requests share one. */
let isoMillisecond = Number.NaN;
let isoText = '';
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMillisecond) {
    isoMillisecond = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
}

/** The hand-built request log as it was (one JSON template per line, pieces of 16 KiB). */
function handBuilt(): (entry: RequestLogEntry) => void {
  let pending: string[] = [];
  let pendingBytes = 0;
  return ({ reqId, method, url, status, ms }) => {
    const line =
      `{"level":"info","time":"${isoNow()}","service":"nostr-lookup","reqId":${JSON.stringify(reqId)},` +
      `"method":${JSON.stringify(method)},"url":${JSON.stringify(url)},"status":${status},"ms":${ms},"msg":"request"}\n`;
    pending.push(line);
    pendingBytes += line.length;
    if (pendingBytes >= 16 * 1024) {
      destination.write(redactSecretKeys(pending.join('')));
      pending = [];
      pendingBytes = 0;
    }
  };
}

const entry: RequestLogEntry = {
  reqId: '3f2a8c1e-9b7d-4e2f-a1c3-5d6e7f8a9b0c',
  method: 'GET',
  url: '/user-profile?pubkey=460c25e682fda7832b52d1f22d3d22b3176d972f60dcdc3212ed8c92ef85065c',
  status: 200,
  ms: 0.4123,
};

const targets: Record<string, (entry: RequestLogEntry) => void> = {
  'hand-built': handBuilt(),
  pino: createRequestLog(createLogger({ level: 'info' }, destination)),
};

function nsPerLine(log: (entry: RequestLogEntry) => void): number {
  const started = process.hrtime.bigint();
  for (let line = 0; line < LINES; line++) log(entry);
  return Number(process.hrtime.bigint() - started) / LINES;
}

const rounds: Record<string, number[]> = Object.fromEntries(Object.keys(targets).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, log] of Object.entries(targets)) rounds[name]?.push(nsPerLine(log));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const base = median(rounds['hand-built'] ?? []);
console.log(`request-log cost, ${LINES} lines x ${ROUNDS} interleaved rounds, median round (node ${process.version})`);
for (const [name, values] of Object.entries(rounds)) {
  console.log(`${name.padEnd(12)} ${median(values).toFixed(0).padStart(6)} ns/line  ${(median(values) / base).toFixed(2)}x  rounds: ${values.map((v) => v.toFixed(0)).join(' ')}`);
}
console.log(`(${written} bytes written)`);
