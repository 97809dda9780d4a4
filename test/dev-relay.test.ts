import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from './support/redis-server.js';

/** Whether something accepts connections on the loopback port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

// `npm run relay:dev` (scripts/dev-relay.ts) as the README shows it.
describe('npm run relay:dev', () => {
  it('listens on --port and stops when npm alone gets SIGTERM (as a process manager sends it)', async () => {
    const port = await freePort();
    // Detached: its own process group, so that cleanup can reach whatever it leaves behind.
    const npm = spawn('npm', ['run', 'relay:dev', '--', 'sample/events.jsonl', '--port', String(port)], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    npm.stdout.on('data', (chunk) => (output += chunk));
    npm.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<void>((resolve) => npm.on('exit', () => resolve()));
    try {
      for (let attempt = 0; !(await listening(port)); attempt++) {
        if (attempt > 150) throw new Error(`relay:dev did not listen:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(output).toContain(`relay on ws://127.0.0.1:${port}/ with 362 events`);
      npm.kill('SIGTERM');
      await exited;
      // The relay itself stopped (under npm, sh and tsx): nothing listens on its port any more.
      let still = true;
      for (let attempt = 0; attempt < 30 && still; attempt++) {
        still = await listening(port);
        if (still) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(still).toBe(false);
    } finally {
      try {
        process.kill(-(npm.pid as number), 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }
  });

  it('the docs document --port', () => {
    expect(readFileSync('docs/development.md', 'utf8')).toContain('npm run relay:dev -- FILE [--port PORT]');
  });
});
