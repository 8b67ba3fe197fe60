import { hostname } from 'node:os';

/**
 * Whether the process that wrote a file the tap left behind may still be
 * running: on another host it cannot be asked, so it may; on this host, when
 * a process has its id (this very process excepted: a run that left the file
 * and a container restarted as process 1 share an id). Only files of a run
 * that may not be running are ever cleaned up.
 */
export function mayBeRunning(host: string, pid: number): boolean {
  if (host !== hostname()) return true;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: a process of another user has that id, and it may be the run.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
