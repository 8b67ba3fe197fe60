import { hostname } from 'node:os';
import { join } from 'node:path';
import { fs } from '../builtins.js';
import { runtimeError } from '../errors.js';
import { keepLeaseFresh, LEASE_EXPIRY_MS, mayBeLive, volumeNow } from '../output/lease.js';
import { PID_SPACE, processStart } from '../output/process-alive.js';
import { PRIVATE_FILE_MODE, writePrivateFileSync } from '../output/private-files.js';
import type { Logger } from '../observe/log.js';

/**
 * One run of a tenant at a time: the file `<tenant>/lock`, made with `wx`
 * (it exists or not: two runs cannot both make it), names the run holding the
 * store, and is its lease (lease.ts), renewed while the run lives. A second
 * run is refused, naming the holder; a dead holder's lock (its process gone,
 * on this host; its lease expired, on another) is taken over, with a log line.
 */

export const LOCK_NAME = 'lock';
/** Tries to take a lock that keeps changing hands before giving up. */
const ATTEMPTS = 3;

export interface LockHolder {
  tap: 'tap-report-dump';
  run: string;
  pid: number;
  /** When the process started (seconds since the epoch): another process with the same id is another run. */
  process_started: number;
  host: string;
  /** Whose process ids `pid` is one of (process-alive.ts). */
  pid_space: string;
  since: string;
}

export class StoreLock {
  private constructor(
    readonly path: string,
    private readonly run: string,
    private readonly stopRenewing: () => void,
  ) {}

  /**
   * Takes the tenant's lock for run `run`. Throws a TapError naming the run
   * that holds it while that run may live; a file system error (a read-only
   * or full disk) is thrown as it is.
   */
  static take(tenant: string, run: string, logger: Logger): StoreLock {
    const path = join(tenant, LOCK_NAME);
    const holder: LockHolder = { tap: 'tap-report-dump', run, pid: process.pid, process_started: processStart(), host: hostname(), pid_space: PID_SPACE, since: new Date().toISOString() };
    const text = `${JSON.stringify(holder)}\n`;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (create(path, text)) return new StoreLock(path, run, keepLeaseFresh(path, text));
      const other = readHolder(path);
      if (other === 'gone') continue;
      const age = leaseAge(path, tenant, run);
      if (other === 'unreadable') {
        if (age() < LEASE_EXPIRY_MS) throw busyUnreadable(path);
      } else if (mayBeLive({ pidSpace: other.pid_space, pid: other.pid, started: other.process_started }, age)) {
        throw busy(path, other);
      }
      if (takeOver(path, other, run)) logger.warn(`change store: took over the lock of ${describeHolder(other)}, which no longer runs`);
    }
    throw runtimeError(`The change store's lock ${path} kept changing hands while this run tried to take it: another run of this tenant is starting; run the tap again once it has ended.`, undefined, 'transient_error');
  }

  /** Releases the lock, if it is still this run's. */
  release(): void {
    this.stopRenewing();
    const holder = readHolder(this.path);
    if (typeof holder === 'object' && holder.run === this.run) fs.rmSync(this.path, { force: true });
  }
}

/** Makes the lock file; false if it exists. One that cannot be written whole (a full disk) is removed: an empty lock would hold off the next runs. */
function create(path: string, text: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(path, 'wx', PRIVATE_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    fs.fchmodSync(fd, PRIVATE_FILE_MODE);
    fs.writeSync(fd, text);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(path, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  return true;
}

function readHolder(path: string): LockHolder | 'gone' | 'unreadable' {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : 'unreadable';
  }
  try {
    const holder = JSON.parse(text) as Partial<LockHolder> | null;
    const named = holder?.tap === 'tap-report-dump' && typeof holder.run === 'string' && typeof holder.pid === 'number' && typeof holder.host === 'string' && typeof holder.since === 'string';
    return named ? (holder as LockHolder) : 'unreadable';
  } catch {
    // Empty: a run is between making the file and writing it (or died there).
    return 'unreadable';
  }
}

/**
 * How long ago the lock was last renewed, by the volume's clock: against a
 * file this run writes there now, read once, and only when asked (a holder
 * of this host is asked about its process instead).
 */
function leaseAge(path: string, tenant: string, run: string): () => number {
  return () => {
    const probe = join(tenant, `${LOCK_NAME}.${run}.clock`);
    let now: number;
    try {
      writePrivateFileSync(probe, '');
      now = volumeNow(probe);
    } finally {
      fs.rmSync(probe, { force: true });
    }
    try {
      return now - fs.statSync(path).mtimeMs;
    } catch {
      return Number.POSITIVE_INFINITY;
    }
  };
}

/**
 * Moves a dead holder's lock aside and removes it. The lock is moved first
 * (a rename: one run wins) and read again: if it is no longer the dead
 * holder's (another run took it over meanwhile) it is put back, unless a lock
 * is there again. Returns whether the dead lock went.
 */
function takeOver(path: string, dead: LockHolder | 'unreadable', run: string): boolean {
  const aside = `${path}.${run}.stale`;
  try {
    fs.renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  const moved = readHolder(aside);
  const same = dead === 'unreadable' ? typeof moved !== 'object' : typeof moved === 'object' && moved.run === dead.run;
  if (!same) {
    try {
      fs.linkSync(aside, path);
    } catch {
      // A lock is there again (or links are not supported): the next attempt reads it.
    }
  }
  fs.rmSync(aside, { force: true });
  return same;
}

function describeHolder(holder: LockHolder | 'unreadable'): string {
  return typeof holder === 'object' ? `run ${holder.run} (pid ${holder.pid} on host ${holder.host}, since ${holder.since})` : 'a run that left it unreadable';
}

function busy(path: string, holder: LockHolder) {
  return runtimeError(
    `Another run of this tenant holds the change store: ${describeHolder(holder)}; wait until it ends, or, if it no longer runs, remove ${path}.`,
    undefined,
    'transient_error',
  );
}

function busyUnreadable(path: string) {
  return runtimeError(
    `Another run of this tenant is taking the change store's lock, or its lock file ${path} is damaged; run the tap again in a minute, or remove that file if no other run is going.`,
    undefined,
    'transient_error',
  );
}
