// `npm run relay:dev -- FILE [--port PORT]`: a small NIP-01 relay on loopback serving the events of a
// JSON Lines file (test/support/loopback-relay.ts, the relay the tests use). For trying fetch on miss
// and sync without reaching the public relays: `RELAYS=ws://127.0.0.1:7777 npm start`.
// Like any relay, it serves what it holds as is; the service verifies every event it receives.
// The npm script execs tsx: under `sh -c` a SIGTERM to npm stopped the shell only, and the relay
// went on listening; tsx hands SIGTERM and SIGINT on to this process.
import { createReadStream } from 'node:fs';
import { parseArgs } from 'node:util';
import { readEventInput } from '../src/import/read-event-input.js';
import type { NostrEvent } from '../src/nostr/event.js';
import { onFirstStopSignal } from '../src/stop-signals.js';
import { startLoopbackRelay } from '../test/support/loopback-relay.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { port: { type: 'string', default: '7777' } },
});
const [file] = positionals;
if (!file) {
  process.stderr.write('usage: npm run relay:dev -- FILE [--port PORT] (default 7777)\n');
  process.exit(1);
}
const events: NostrEvent[] = [];
for await (const item of readEventInput(createReadStream(file))) {
  if (item.type === 'candidate') events.push(item.value as NostrEvent);
}
const relay = await startLoopbackRelay({ events, port: Number(values.port) });
process.stdout.write(`relay on ${relay.url} with ${events.length} events (Ctrl-C stops it)\n`);
onFirstStopSignal(() => void relay.stop().then(() => process.exit(0)));
