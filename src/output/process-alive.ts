import { hostname } from 'node:os';

/**
 * Whether the process that wrote a file the tap left behind may still be
 * running. Files name their process by host, id and start (seconds since the
 * epoch): on another host it cannot be asked, so it may be; this very process
 * (same id, same start) is running, and may hold such files for a run of its
 * own (the in-process API); a process that has our id but started at another
 * time is gone (a container restarted as process 1); another id is asked of
 * the system. Only files of a process that may not be running are cleaned up.
 */
export function mayBeRunning(host: string, pid: number, started?: number): boolean {
  if (host !== hostname()) return true;
  if (pid === process.pid) return started === undefined || Math.abs(started - processStart()) <= 1;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: a process of another user has that id, and it may be the run.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Taken once: computed again, the rounding could tell another second. */
const PROCESS_START = Math.round(Date.now() / 1000 - process.uptime());

/** When this process started, in whole seconds since the epoch. */
export function processStart(): number {
  return PROCESS_START;
}
