import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { join } from 'node:path';
import { fs } from '../builtins.js';
import { runtimeError } from '../errors.js';
import { keepLeaseFresh, LEASE_EXPIRY_MS, mayBeLive, volumeNow } from '../output/lease.js';
import { PID_SPACE, processStart } from '../output/process-alive.js';
import { PRIVATE_FILE_MODE, writePrivateFileSync } from '../output/private-files.js';
import type { Logger } from '../observe/log.js';

/**
 * One run of a stream at a time: the file `<stream folder>/lock`, made with
 * `wx` (it exists or not: two runs cannot both make it), names the run
 * holding the stream's store, and is its lease (lease.ts), renewed while the
 * run lives. Runs of other streams of the tenant go on beside it (one
 * pipeline a stream, at the same time). A second run of the stream waits
 * until the holder releases it, saying so in the log, up to LONGEST_WAIT_MS;
 * a dead holder's lock (its process gone, on this host; its lease expired, on
 * another) is taken over, with a log line.
 */

export const LOCK_NAME = 'lock';

/**
 * How long a run waits for a live run of the same stream before it fails
 * (transient_error: the scheduler runs it again): ten minutes, as long as a
 * silent holder's lease lasts (lease.ts LEASE_EXPIRY_MS), and longer than an
 * hourly run of a stream usually takes.
 */
export const LONGEST_WAIT_MS = 10 * 60_000;
/** How often a waiting run looks at the lock again: soon after it is released, without a busy loop. */
const POLL_MS = 200;
/** How often a waiting run says it still waits. */
const REPORT_EVERY_MS = 30_000;
/** Tries in a row, without a pause, at a lock that keeps changing hands (released or taken over meanwhile) before pausing as a wait does. */
const QUICK_TRIES = 3;

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

export interface LockOptions {
  /** What the lock guards, as messages name it: `stream training`. */
  what: string;
  /** The longest wait for a live holder (LONGEST_WAIT_MS); tests wait less. */
  longestWaitMs?: number;
  /** The pause between two looks at a busy lock (POLL_MS). */
  pollMs?: number;
  /** How often the wait is logged again (REPORT_EVERY_MS). */
  reportEveryMs?: number;
}

export class StoreLock {
  private constructor(
    readonly path: string,
    private readonly run: string,
    private readonly stopRenewing: () => void,
  ) {}

  /**
   * Takes the lock of `folder` for run `run`, waiting while a live run holds
   * it. Throws a TapError naming that run once the longest wait has passed; a
   * file system error (a read-only or full disk) is thrown as it is.
   */
  static async take(folder: string, run: string, logger: Logger, options: LockOptions): Promise<StoreLock> {
    const path = join(folder, LOCK_NAME);
    const holder: LockHolder = { tap: 'tap-report-dump', run, pid: process.pid, process_started: processStart(), host: hostname(), pid_space: PID_SPACE, since: new Date().toISOString() };
    const text = `${JSON.stringify(holder)}\n`;
    const wait = new LockWait(path, logger, options);
    for (let quick = 0; ; quick++) {
      if (create(path, text)) return new StoreLock(path, run, keepLeaseFresh(path, text));
      const other = readHolder(path);
      if (other !== 'gone' && !isDead(other, path, folder, run)) {
        await wait.busy(other);
        quick = 0;
      } else if (other !== 'gone' && takeOver(path, other, run)) {
        logger.warn(`change store: took over the lock of ${options.what} from ${describeHolder(other)}, which no longer runs`);
      } else if (quick >= QUICK_TRIES) {
        await wait.changingHands();
        quick = 0;
      }
    }
  }

  /** Releases the lock, if it is still this run's. */
  release(): void {
    this.stopRenewing();
    const holder = readHolder(this.path);
    if (typeof holder === 'object' && holder.run === this.run) fs.rmSync(this.path, { force: true });
  }
}

/** A run's wait for a busy lock: its log lines, its pauses, its end. */
class LockWait {
  private readonly started = performance.now();
  private readonly longest: number;
  private readonly pause: number;
  private readonly reportEvery: number;
  private reportedAt: number | undefined;

  constructor(
    private readonly path: string,
    private readonly logger: Logger,
    private readonly options: LockOptions,
  ) {
    this.longest = options.longestWaitMs ?? LONGEST_WAIT_MS;
    this.pause = options.pollMs ?? POLL_MS;
    this.reportEvery = options.reportEveryMs ?? REPORT_EVERY_MS;
  }

  /** A live run holds the lock: a pause, with a log line at first and every so often; past the longest wait, the error naming that run. */
  async busy(holder: LockHolder | 'unreadable'): Promise<void> {
    const waited = performance.now() - this.started;
    if (waited >= this.longest) throw holder === 'unreadable' ? busyUnreadable(this.path, this.options.what, this.longest) : busy(this.path, this.options.what, holder, this.longest);
    if (this.reportedAt === undefined || waited - this.reportedAt >= this.reportEvery) {
      const [start, sofar] = this.reportedAt === undefined ? ['waiting', ''] : ['still waiting', `${formatWait(waited)} so far, `];
      this.logger.info(`change store: ${start} for ${describeHolder(holder)} to release ${this.options.what} (${sofar}up to ${formatWait(this.longest)})`);
      this.reportedAt = waited;
    }
    await delay(Math.min(this.pause, this.longest - waited));
  }

  /** The lock went and came back between two looks, time and again: a pause, and past the longest wait, an error. */
  async changingHands(): Promise<void> {
    if (performance.now() - this.started >= this.longest) {
      throw runtimeError(`The change store's lock ${this.path} kept changing hands while this run tried to take it: other runs of ${this.options.what} are starting; run the tap again once they have ended.`, undefined, 'transient_error');
    }
    await delay(this.pause);
  }
}

/** Whether the run holding the lock no longer runs: its process gone (this host), its lease expired (another host, or a lock it cannot read). */
function isDead(holder: LockHolder | 'unreadable', path: string, folder: string, run: string): boolean {
  const age = leaseAge(path, folder, run);
  if (holder === 'unreadable') return age() >= LEASE_EXPIRY_MS;
  return !mayBeLive({ pidSpace: holder.pid_space, pid: holder.pid, started: holder.process_started }, age);
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
function leaseAge(path: string, folder: string, run: string): () => number {
  return () => {
    const probe = join(folder, `${LOCK_NAME}.${run}.clock`);
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

function busy(path: string, what: string, holder: LockHolder, waited: number) {
  return runtimeError(
    `Another run holds the change store of ${what}: ${describeHolder(holder)}, and did not release it in ${formatWait(waited)}; run the tap again once it has ended, or, if it no longer runs, remove ${path}.`,
    undefined,
    'transient_error',
  );
}

function busyUnreadable(path: string, what: string, waited: number) {
  return runtimeError(
    `Another run is taking the change store's lock of ${what}, or its lock file ${path} is damaged, and it stayed so for ${formatWait(waited)}; run the tap again later, or remove that file if no other run is going.`,
    undefined,
    'transient_error',
  );
}

/** A wait as the log says it: `10 min`, `30 s`, `250 ms`. */
function formatWait(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms)} ms`;
}
