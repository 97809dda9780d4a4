import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveCli, type ServingCli } from './support/cli.js';
import { freePort } from './support/redis-server.js';

/**
 * The shown commands and outputs of the README and of docs/, run: every `$ ` line of their ```sh
 * blocks is run as written (ports, /tmp and `bin/nostr-lookup` aside: adapted()), the README's
 * first (its walkthrough imports the sample), then each manual page in the order of DOCS, from a
 * service on an empty embedded store, without network; what it prints must be what the page shows
 * below it. A change that alters an output fails here until the page is updated.
 * In the outputs, `…` stands for any text (an output shortened) and `^C` for a Ctrl-C;
 * request ids and dates are masked on both sides; npm's banner is left out. A command ending in
 * `# in another terminal`, and the relay, stay running (in process groups of their own).
 */
const DOCS = ['README.md', ...['api', 'relationships', 'screens', 'filling', 'configuration', 'operations', 'stores', 'how-it-works', 'development'].map((name) => `docs/${name}.md`)];

interface Example {
  /** The page it is on. */
  file: string;
  /** 1-based line of the `$ ` line in its page. */
  line: number;
  command: string;
  expected: string[];
}

/** The `$ ` lines of every ```sh block, each with the lines it shows as output. */
function examples(file: string, text: string): Example[] {
  const found: Example[] = [];
  let inBlock = false;
  let current: Example | undefined;
  const end = () => {
    if (!current) return;
    while (current.expected.at(-1) === '') current.expected.pop();
    found.push(current);
    current = undefined;
  };
  for (const [index, line] of text.split('\n').entries()) {
    if (line.startsWith('```')) {
      end();
      inBlock = !inBlock && line.trim() === '```sh';
      continue;
    }
    if (!inBlock) continue;
    if (line.startsWith('$ ')) {
      end();
      current = { file, line: index + 1, command: line.slice(2), expected: [] };
    } else {
      current?.expected.push(line);
    }
  }
  return found;
}

/** What differs from run to run, masked on both sides. */
function masked(line: string): string {
  return line
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/^date: .*$/i, 'date: <date>');
}

/** A README output line as a pattern: `…` is any text. */
function pattern(line: string): RegExp {
  const parts = masked(line).split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`, 's');
}

const run = promisify(execFile);
let served: ServingCli;
let dataDir: string;
let relayPort: number;
/** Commands left running (a relay, a service), each its own process group. */
const background: ChildProcess[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'nostr-lookup-readme-'));
  relayPort = await freePort();
  // As the walkthrough starts: `npm start` on an empty index, no network (OFFLINE: nothing leaves).
  // NOTE_SEARCH on, as docs/screens.md says its example was run.
  served = await serveCli({ REDIS_URL: '', REDIS_CLUSTER_NODES: '', DATA_DIR: dataDir, OFFLINE: 'true', NOTE_SEARCH: 'true' });
});
afterAll(async () => {
  served?.child.kill('SIGTERM');
  await served?.exited;
  for (const child of background) killGroup(child);
  rmSync(dataDir, { recursive: true, force: true });
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(-(child.pid as number), signal);
  } catch {
    // gone already
  }
}

/**
 * A command as it runs here: on this test's ports and directories (8080: the service's, 7777: the
 * relay's, /tmp/…: under the test's directory), and `bin/nostr-lookup` from the sources.
 */
function adapted(text: string, port: string): string {
  return text
    .replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`)
    .replaceAll('127.0.0.1:7777', `127.0.0.1:${relayPort}`)
    .replace(/(?<=[=" ])\/tmp\//g, `${dataDir}/`)
    .replace(/^((?:\S+=\S* )*)bin\/nostr-lookup /, '$1node --import tsx src/cli/main.ts ')
    .replace(/^npm run relay:dev -- (.*)$/, `npm run relay:dev -- $1 --port ${relayPort}`);
}

/** Its output as lines, npm's banner (`> name@version script`, `> command`) left out: the README does not show it. */
function outputLines(stdout: string): string[] {
  const text = stdout.replaceAll('\r', '').replace(/^(\n|> [^\n]*\n)+/, '').replace(/\n+$/, '');
  return text === '' ? [] : text.split('\n');
}

function differs(example: Example, expected: string[], actual: string[]): string | undefined {
  const same = actual.length === expected.length && expected.every((line, index) => pattern(line).test(masked(actual[index] ?? '')));
  return same ? undefined : `${example.file}:${example.line}: $ ${example.command}\n--- it shows:\n${expected.join('\n')}\n--- it prints:\n${actual.join('\n')}`;
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; !(await check()); attempt++) {
    if (attempt > 300) throw new Error(`README example: ${what} did not happen`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Runs one example; says how its output differs from the README's, if it does. */
async function runExample(example: Example, port: string): Promise<string | undefined> {
  const command = adapted(example.command, port);
  // Commands with relays of their own may reach them; the rest, nothing outside (nor the public indexers).
  const env = { ...process.env, DATA_DIR: dataDir, REDIS_URL: '', REDIS_CLUSTER_NODES: '', RELAYS: '', INDEXER_RELAYS: '', OFFLINE: /\bRELAYS=\S/.test(command) ? '' : 'true', PORT: port, NOTE_SEARCH: 'true' };
  const expected = example.expected.map((line) => adapted(line, port));
  const interrupted = expected.indexOf('^C');
  const longRunning = / {2,}# in another terminal$/.test(command) || command.startsWith('npm run relay:dev');
  if (!longRunning && interrupted < 0) {
    const { stdout } = await run('bash', ['-c', command], { env, maxBuffer: 16 * 1024 * 1024, timeout: 30_000 });
    return differs(example, expected, outputLines(stdout));
  }
  // A relay, a service, or sync: in a process group of its own, as in a terminal of its own.
  if (command.endsWith('# in another terminal')) {
    // The walkthrough's service is stopped first: this one takes its port.
    served.child.kill('SIGTERM');
    await served.exited;
  }
  const child = spawn('bash', ['-c', command.replace(/ +# in another terminal$/, '')], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  background.push(child);
  let stdout = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const before = interrupted < 0 ? expected : expected.slice(0, interrupted);
  // Whole lines only: a line still being written is not there yet.
  const written = () => outputLines(stdout.slice(0, stdout.lastIndexOf('\n') + 1));
  if (before.length > 0) await until(() => written().length >= before.length, `the output of ${command}`);
  else await until(() => fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.ok, () => false), `a service from ${command}`);
  if (interrupted < 0) return differs(example, before, written().slice(0, before.length));
  // What it does before the ^C (sync: the relay's events) settles, then Ctrl-C, to its group.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  killGroup(child, 'SIGINT');
  await exited;
  return differs(example, expected.filter((line) => line !== '^C'), outputLines(stdout));
}

describe('the examples of the README and docs/', () => {
  const all = DOCS.flatMap((file) => examples(file, readFileSync(new URL(`../${file}`, import.meta.url), 'utf8')));

  it('are found: the walkthrough, GraphQL, threads, the relay without network, sync', () => {
    expect(all.length).toBeGreaterThanOrEqual(15);
    expect(all.filter((example) => example.file === 'README.md').length).toBeGreaterThanOrEqual(6);
  });

  it('cover every page of docs/ that has a ```sh block (a page missing from DOCS would never run)', () => {
    const pages = readdirSync(new URL('../docs', import.meta.url)).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
    for (const page of pages) {
      if (readFileSync(new URL(`../${page}`, import.meta.url), 'utf8').includes('```sh')) expect(DOCS).toContain(page);
    }
  });

  // In DOCS's order: the import comes first, as in the walkthrough.
  it('print what the README shows', async () => {
    const port = new URL(served.url).port;
    const differences: string[] = [];
    for (const example of all) {
      const difference = await runExample(example, port);
      if (difference) differences.push(difference);
    }
    expect(differences.join('\n\n')).toBe('');
  }, 120_000);
});
