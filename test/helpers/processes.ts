import { spawnSync } from 'node:child_process';

/** The id of a process that has ended: a child's, which has exited by the time spawnSync returns (the system hands out ids in turn, so it is not reused soon). */
export function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}
