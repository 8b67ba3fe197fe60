import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { fs } from '../builtins.js';

/**
 * The processes this one can ask about, as a tag: this host name, boot and
 * process-id namespace. A container on this machine has a namespace of its
 * own (and, on Docker's host network, this host's name), a machine rebooted
 * since has new processes: their ids mean nothing here. Where /proc does not
 * tell the namespace (not Linux), a tag of this process alone.
 */
export const PID_SPACE = createHash('sha1')
  .update([hostname(), procText(() => fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()), procText(() => fs.readlinkSync('/proc/self/ns/pid')) || uniqueToThisProcess()].join('\n'))
  .digest('hex')
  .slice(0, 16);

/**
 * Where the process-id namespace cannot be read, two containers given the
 * same host name would share a tag and take each other's live process ids
 * for gone ones: a tag of this process alone leaves every other run's files
 * to their leases.
 */
function uniqueToThisProcess(): string {
  return `${process.pid}-${randomUUID()}`;
}

function procText(read: () => string): string {
  try {
    return read();
  } catch {
    return '';
  }
}

/**
 * Whether a process of this PID_SPACE that wrote a file the tap left behind
 * may still be running. Files name their process by id and start (seconds
 * since the epoch): this very process (same id, same start) is running, and
 * may hold such files for a run of its own (the in-process API); a process
 * that has our id but started at another time is gone; another id is asked
 * of the system. Only files of a process that may not be running are cleaned up.
 */
export function mayBeRunning(pid: number, started?: number): boolean {
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
