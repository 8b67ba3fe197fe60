import fs, { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TapError } from '../../src/errors.js';
import { LEASE_EXPIRY_MS, LEASE_RENEW_MS } from '../../src/output/lease.js';
import { PID_SPACE, processStart } from '../../src/output/process-alive.js';
import { createLogger } from '../../src/observe/log.js';
import { LONGEST_WAIT_MS, StoreLock } from '../../src/store/store-lock.js';
import { tempFolder } from '../helpers/files.js';
import { age, OTHER_PID_SPACE } from '../helpers/leases.js';
import { deadPid } from '../helpers/processes.js';
import { modeOf, UMASKS, withUmask } from '../helpers/store-rows.js';

const RUN = '20261201T020000Z-0a0b0c0d';
const OTHER = '20261201T010000Z-1a1b1c1d';
const SINCE = '2026-12-01T01:00:00.000Z';

function logged(): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  return { lines, logger: createLogger({ write: (line) => lines.push(line) }) };
}

/** A lock as another run left it. */
function lockOf(folder: string, holder: { pid: number; pidSpace: string; started?: number }): string {
  const path = join(folder, 'lock');
  writeFileSync(path, `${JSON.stringify({ tap: 'tap-report-dump', run: OTHER, pid: holder.pid, process_started: holder.started ?? processStart(), host: 'host-b', pid_space: holder.pidSpace, since: SINCE })}\n`);
  return path;
}

/** A wait short enough for a test: the timeout path in milliseconds. */
const SHORT = { what: 'stream training', longestWaitMs: 150, pollMs: 10 } as const;
const WAIT = { what: 'stream training', pollMs: 10 } as const;

const described = `run ${OTHER} (pid ${process.pid} on host host-b, since ${SINCE})`;

/** Resolves once `lines` holds `count` lines (the waiter logged), without sleeping a guessed time. */
async function untilLogged(lines: string[], count: number): Promise<void> {
  await vi.waitFor(() => expect(lines.length).toBeGreaterThanOrEqual(count), { timeout: 5000, interval: 5 });
}

describe('StoreLock', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('is an owner-only file (0600 whatever the umask) naming the run, its process, host and pid space, and since when; gone once released', async () => {
    for (const umask of UMASKS) {
      const other = tempFolder('store-lock-');
      const held = await withUmask(umask, () => StoreLock.take(other, RUN, logged().logger, WAIT));
      expect(modeOf(held.path), `umask ${umask.toString(8)}`).toBe(0o600);
      held.release();
    }
    const folder = tempFolder('store-lock-');
    const lock = await StoreLock.take(folder, RUN, logged().logger, WAIT);
    expect(JSON.parse(readFileSync(lock.path, 'utf8'))).toEqual({ tap: 'tap-report-dump', run: RUN, pid: process.pid, process_started: processStart(), host: hostname(), pid_space: PID_SPACE, since: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) });
    lock.release();
    expect(readdirSync(folder)).toEqual([]);
  });

  it('waits while a live run holds it, saying so once in a line naming that run (pid, host, since), and takes it once that run releases it', async () => {
    const folder = tempFolder('store-lock-');
    const first = await StoreLock.take(folder, OTHER, logged().logger, WAIT);
    const { lines, logger } = logged();
    let taken = false;
    const second = StoreLock.take(folder, RUN, logger, WAIT).then((lock) => {
      taken = true;
      return lock;
    });
    await untilLogged(lines, 1);
    expect(taken).toBe(false);
    expect(lines).toEqual([expect.stringMatching(new RegExp(`INFO  change store: waiting for run ${OTHER} \\(pid ${process.pid} on host ${hostname()}, since \\S+Z\\) to release stream training \\(up to 10 min\\)\\n$`))]);
    first.release();
    const lock = await second;
    expect(JSON.parse(readFileSync(lock.path, 'utf8')).run).toBe(RUN);
    expect(lines).toHaveLength(1);
    lock.release();
  });

  it('says again every so often that it still waits, and looks at the lock once a pause, not in a busy loop', async () => {
    const folder = tempFolder('store-lock-');
    lockOf(folder, { pid: process.pid, pidSpace: PID_SPACE });
    const opens = vi.spyOn(fs, 'openSync');
    const { lines, logger } = logged();
    const started = performance.now();
    await expect(StoreLock.take(folder, RUN, logger, { what: 'stream training', longestWaitMs: 400, pollMs: 50, reportEveryMs: 150 })).rejects.toThrow(TapError);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(390);
    const tries = opens.mock.calls.filter(([, flags]) => flags === 'wx').length;
    expect(tries).toBeLessThanOrEqual(Math.ceil(elapsed / 50) + 2);
    expect(tries).toBeGreaterThanOrEqual(4);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.length).toBeLessThanOrEqual(4);
    expect(lines[1]).toMatch(new RegExp(`INFO  change store: still waiting for ${described.replace(/[()]/g, '\\$&')} to release stream training \\(\\d+ ms so far, up to 400 ms\\)\\n$`));
  });

  it('fails, once the longest wait has passed, in one line naming the run that holds it (pid, host, since) and what to do', async () => {
    const folder = tempFolder('store-lock-');
    const path = lockOf(folder, { pid: process.pid, pidSpace: PID_SPACE });
    const { lines, logger } = logged();
    const error = await StoreLock.take(folder, RUN, logger, SHORT).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TapError);
    expect((error as TapError).failureType).toBe('transient_error');
    expect((error as Error).message).toBe(`Another run holds the change store of stream training: ${described}, and did not release it in 150 ms; run the tap again once it has ended, or, if it no longer runs, remove ${path}.`);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(readFileSync(path, 'utf8')).run).toBe(OTHER);
  });

  it('waits for a second take within this very process, and gets it once the first is released', async () => {
    const folder = tempFolder('store-lock-');
    const first = await StoreLock.take(folder, OTHER, logged().logger, WAIT);
    await expect(StoreLock.take(folder, RUN, logged().logger, SHORT)).rejects.toThrow(`Another run holds the change store of stream training: run ${OTHER} (pid ${process.pid}`);
    first.release();
    (await StoreLock.take(folder, RUN, logged().logger, SHORT)).release();
  });

  it('gives the lock to one waiter at a time: of two runs waiting, one takes it, the other waits on until it is released', async () => {
    const folder = tempFolder('store-lock-');
    const first = await StoreLock.take(folder, OTHER, logged().logger, WAIT);
    const taken: StoreLock[] = [];
    for (const run of ['20261201T030000Z-00000001', '20261201T030000Z-00000002']) void StoreLock.take(folder, run, logged().logger, WAIT).then((lock) => taken.push(lock));
    first.release();
    await vi.waitFor(() => expect(taken).toHaveLength(1), { timeout: 5000, interval: 5 });
    // Ten pauses of the other waiter, each a look at the lock.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(taken).toHaveLength(1);
    taken[0].release();
    await vi.waitFor(() => expect(taken).toHaveLength(2), { timeout: 5000, interval: 5 });
    taken[1].release();
  });

  it('takes over, with a log line, the lock of a dead run of this host (its process gone)', async () => {
    const folder = tempFolder('store-lock-');
    lockOf(folder, { pid: deadPid(), pidSpace: PID_SPACE });
    const { lines, logger } = logged();
    const lock = await StoreLock.take(folder, RUN, logger, SHORT);
    expect(JSON.parse(readFileSync(lock.path, 'utf8')).run).toBe(RUN);
    expect(lines).toEqual([expect.stringMatching(new RegExp(`WARN  change store: took over the lock of stream training from run ${OTHER} \\(pid \\d+ on host host-b, since ${SINCE}\\), which no longer runs\\n$`))]);
    expect(readdirSync(folder)).toEqual(['lock']);
    lock.release();
  });

  it('puts back a lock another run took while it took over a dead run\'s: it moved the live lock aside, so it waits for that run instead of taking the lock', async () => {
    const folder = tempFolder('store-lock-');
    const path = lockOf(folder, { pid: deadPid(), pidSpace: PID_SPACE });
    const live = '20261201T030000Z-2a2b2c2d';
    const rename = fs.renameSync.bind(fs);
    // Between this run's look at the dead lock and its move aside, another run takes the lock over.
    vi.spyOn(fs, 'renameSync').mockImplementationOnce((from, to) => {
      writeFileSync(path, `${JSON.stringify({ tap: 'tap-report-dump', run: live, pid: process.pid, process_started: processStart(), host: hostname(), pid_space: PID_SPACE, since: SINCE })}\n`);
      rename(from, to);
    });
    const { lines, logger } = logged();
    await expect(StoreLock.take(folder, RUN, logger, SHORT)).rejects.toThrow(`Another run holds the change store of stream training: run ${live}`);
    expect(JSON.parse(readFileSync(path, 'utf8')).run).toBe(live);
    expect(readdirSync(folder)).toEqual(['lock']);
    expect(lines.filter((line) => line.includes('took over'))).toEqual([]);
  });

  it('waits for a run of another host while its lease is fresh, and takes it over once the lease expired, also while waiting', async () => {
    const folder = tempFolder('store-lock-');
    // Its pid is a live one here: never asked of another host's run.
    const path = lockOf(folder, { pid: process.pid, pidSpace: OTHER_PID_SPACE });
    await expect(StoreLock.take(folder, RUN, logged().logger, SHORT)).rejects.toThrow(`Another run holds the change store of stream training: run ${OTHER}`);
    expect(readdirSync(folder)).toEqual(['lock']);
    const { lines, logger } = logged();
    const waiting = StoreLock.take(folder, RUN, logger, WAIT);
    await untilLogged(lines, 1);
    age(path, LEASE_EXPIRY_MS + 60_000);
    const lock = await waiting;
    expect(lines).toEqual([expect.stringContaining('waiting for'), expect.stringContaining('took over the lock')]);
    expect(JSON.parse(readFileSync(lock.path, 'utf8')).run).toBe(RUN);
    lock.release();
  });

  it('waits while a lock it cannot read is young (a run is making it), fails in one line once the longest wait passed, and takes it over once it is old', async () => {
    const folder = tempFolder('store-lock-');
    const path = join(folder, 'lock');
    writeFileSync(path, '');
    await expect(StoreLock.take(folder, RUN, logged().logger, SHORT)).rejects.toThrow(`Another run is taking the change store's lock of stream training, or its lock file ${path} is damaged, and it stayed so for 150 ms; run the tap again later, or remove that file if no other run is going.`);
    age(path, LEASE_EXPIRY_MS + 60_000);
    const { lines, logger } = logged();
    (await StoreLock.take(folder, RUN, logger, SHORT)).release();
    expect(lines).toEqual([expect.stringContaining('change store: took over the lock of stream training from a run that left it unreadable, which no longer runs')]);
  });

  it('leaves no lock behind when it cannot write it whole (a full disk): the error is the file system\'s', async () => {
    const folder = tempFolder('store-lock-');
    vi.spyOn(fs, 'writeSync').mockImplementationOnce(() => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    });
    await expect(StoreLock.take(folder, RUN, logged().logger, SHORT)).rejects.toThrow('ENOSPC');
    expect(readdirSync(folder)).toEqual([]);
  });

  it('leaves, when released, a lock that is no longer its own', async () => {
    const folder = tempFolder('store-lock-');
    const lock = await StoreLock.take(folder, RUN, logged().logger, SHORT);
    lockOf(folder, { pid: process.pid, pidSpace: PID_SPACE });
    lock.release();
    expect(JSON.parse(readFileSync(join(folder, 'lock'), 'utf8')).run).toBe(OTHER);
  });

  it('renews its lease while held, and no longer once released', async () => {
    const folder = tempFolder('store-lock-');
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const lock = await StoreLock.take(folder, RUN, logged().logger, SHORT);
    age(lock.path, LEASE_EXPIRY_MS);
    vi.advanceTimersByTime(LEASE_RENEW_MS);
    await vi.waitFor(() => expect(Date.now() - statSync(lock.path).mtimeMs).toBeLessThan(60_000), { timeout: 2000 });
    lock.release();
    expect(existsSync(lock.path)).toBe(false);
  });

  it('waits ten minutes at most by default', () => {
    expect(LONGEST_WAIT_MS).toBe(10 * 60_000);
  });
});
