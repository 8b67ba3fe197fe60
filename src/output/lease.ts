import { join } from 'node:path';
import { fs } from '../builtins.js';
import { mayBeRunning, PID_SPACE } from './process-alive.js';

/**
 * Leases on the files a run leaves while it runs (a full pass's spool, batch
 * files and their journal), for runs on other hosts sharing the volume: in
 * containers every run has a host of its own, whose processes cannot be
 * asked whether they still run. A live run renews its lease, the modification
 * time of a file of its own, every `LEASE_RENEW_MS`; a leftover of a run that
 * cannot be asked is dead once its lease is older than `LEASE_EXPIRY_MS`.
 * Times are read on the volume, against a file the reading run has just
 * written there: both come from the clock that stamps the volume's files
 * (the file server's on NFS), so the hosts' own clocks need not agree.
 */

/** How often a live run renews its leases. */
export const LEASE_RENEW_MS = 5_000;

/**
 * A lease older than this is a dead run's: 120 renewals missed. Generous: a
 * live run whose event loop stalls, or that is paused (SIGSTOP, `docker
 * pause`), cannot renew, and losing its files fails its pass (nothing is
 * deleted, nothing half-sent), which is worth the wait before a dead run's
 * files go.
 */
export const LEASE_EXPIRY_MS = 10 * 60_000;

/**
 * Keeps the lease on `path` fresh until the returned function is called:
 * its first byte, `first`, is written again, so the volume stamps the time
 * (a time set with utimes would be this host's clock). The timer never keeps
 * the process alive, and a file gone (the run removed it) is not made again.
 */
export function keepLeaseFresh(path: string, first: string): () => void {
  const byte = Buffer.from(first.slice(0, 1));
  let renewing = false;
  const timer = setInterval(() => {
    // A renewal that hangs (a stalled network volume) is not stacked on.
    if (renewing) return;
    renewing = true;
    renew(path, byte, () => (renewing = false));
  }, LEASE_RENEW_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Off the main thread (node:fs's callbacks; its promises would load more at
 * every start). An error is let go: the file went with its run's files, or
 * the volume is failing, and the run's own writes fail then.
 */
function renew(path: string, byte: Buffer, done: () => void): void {
  fs.open(path, 'r+', (opening, fd) => {
    if (opening) return done();
    fs.write(fd, byte, 0, 1, 0, () => fs.close(fd, () => done()));
  });
}

/** When `path`, which this run has just written, was stamped: now, by the volume's clock. */
export function volumeNow(path: string): number {
  return fs.statSync(path).mtimeMs;
}

/** The latest time any of `paths`, or a file in a folder among them, was written (0 if none can be read): the lease of a leftover. */
export function lastWritten(...paths: string[]): number {
  let latest = 0;
  for (const path of paths) {
    try {
      const info = fs.lstatSync(path);
      latest = Math.max(latest, info.mtimeMs);
      if (info.isDirectory()) for (const name of fs.readdirSync(path)) latest = Math.max(latest, lastWritten(join(path, name)));
    } catch {
      // Gone meanwhile, or unreadable: the other paths tell.
    }
  }
  return latest;
}

/** The run that left files: whose process ids its `pid` is one of (older versions did not say), the process and its start. */
export interface LeftoverOwner {
  pidSpace: string | undefined;
  pid: number;
  started?: number;
}

/**
 * Whether the run that left files may still be running, so they must stay:
 * a run whose process can be asked (this host, boot and process namespace)
 * while its process is there; any other while its lease is younger than
 * `LEASE_EXPIRY_MS` (`leaseAge`, by the volume's clock; read only then).
 */
export function mayBeLive(owner: LeftoverOwner, leaseAge: () => number): boolean {
  if (owner.pidSpace === PID_SPACE) return mayBeRunning(owner.pid, owner.started);
  return leaseAge() < LEASE_EXPIRY_MS;
}
