import { type ChildProcess, spawn } from 'node:child_process';

export interface RunningCli {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far, interleaved. */
  output: () => string;
  exited: Promise<number | null>;
}

/** `nostr-lookup <args>` as a user runs it: a child process from the sources, configured by `env`. */
export function spawnCli(args: string[], env: Record<string, string | undefined>): RunningCli {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    env: { ...process.env, ...env },
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}
