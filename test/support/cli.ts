import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from './redis-server.js';

export interface RunningCli {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far, interleaved. */
  output: () => string;
  /** What it wrote to stdout so far. */
  stdout: () => string;
  /** What it wrote to stderr so far. */
  stderr: () => string;
  /** Its exit code, once it has exited and its output is all read. */
  exited: Promise<number | null>;
}

/** Another user to run as (tests run as root; a user who may not write somewhere). */
export interface RunAs {
  uid: number;
  gid: number;
}

/**
 * `nostr-lookup <args>` as a user runs it: a child process from the sources, configured by `env`;
 * `stdin`, if given, is written to it and closed; `as`, if given, the user it runs as.
 */
export function spawnCli(args: string[], env: Record<string, string | undefined>, stdin?: string, as?: RunAs): RunningCli {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    env: { ...process.env, ...env },
    ...as,
  });
  let output = '';
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
    stderr += chunk;
  });
  if (stdin !== undefined) child.stdin?.end(stdin);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => output, stdout: () => stdout, stderr: () => stderr, exited };
}

export interface ServingCli extends RunningCli {
  url: string;
}

/**
 * `nostr-lookup serve` on a free loopback port, configured by `env`, resolved once /healthz answers
 * (or rejected with what it printed, if it does not within 15 s).
 */
export async function serveCli(env: Record<string, string | undefined>, as?: RunAs): Promise<ServingCli> {
  const port = await freePort();
  const running = spawnCli(['serve'], { HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', ...env }, undefined, as);
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { ...running, url };
    } catch {
      if (attempt > 150 || running.child.exitCode !== null) {
        running.child.kill('SIGKILL');
        throw new Error(`service did not start:\n${running.output()}`);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
