// Children of the scripts run in process groups of their own (spawned detached) and are killed as a
// group: `npm` and `npx` leave their child running when only they are killed. Every group still
// alive when the script exits, however it exits, is killed too.

/** Groups started and not yet known to be gone. */
export const liveGroups = new Set<number>();

export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

process.on('exit', () => {
  for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
});
