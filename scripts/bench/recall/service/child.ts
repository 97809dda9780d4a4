// The service as users run it (`node dist/cli/main.js serve`), in a process group of its own so that
// stopping it stops anything it started; every group still alive when the bench exits, however it
// exits, is killed.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { killGroup, liveGroups } from '../../../support/process-groups.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

export interface Service {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** The service's CLI entry; another build can be given (`--service`), e.g. to measure two commits. */
export const DEFAULT_ENTRY = 'dist/cli/main.js';

/**
 * Starts the built service (`entry`, relative to the repository root) with exactly `env` added to this process's environment (keys mapped to
 * undefined are removed), its output appended to `logFile`, and waits until /healthz answers.
 */
export async function startService(entry: string, env: Record<string, string | undefined>, port: number, logFile: string): Promise<Service> {
  const merged: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...process.env, ...env })) if (value !== undefined) merged[key] = value;
  const log = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [entry, 'serve'], { cwd: root, env: merged, detached: true, stdio: ['ignore', log, log] });
  } finally {
    closeSync(log); // the child has its own copy
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error('the service did not start');
  liveGroups.add(pid);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const stop = async () => {
    killGroup(pid, 'SIGTERM');
    const forced = setTimeout(() => killGroup(pid, 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(forced);
    killGroup(pid, 'SIGKILL'); // whatever it left in its group
    liveGroups.delete(pid);
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { url, pid, stop };
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the service did not come up (exit code ${child.exitCode}); see ${logFile}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
