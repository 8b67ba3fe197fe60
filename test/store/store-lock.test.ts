import fs, { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TapError } from '../../src/errors.js';
import { LEASE_EXPIRY_MS, LEASE_RENEW_MS } from '../../src/output/lease.js';
import { PID_SPACE, processStart } from '../../src/output/process-alive.js';
import { createLogger } from '../../src/observe/log.js';
import { StoreLock } from '../../src/store/store-lock.js';
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
function lockOf(tenant: string, holder: { pid: number; pidSpace: string; started?: number }): string {
  const path = join(tenant, 'lock');
  writeFileSync(path, `${JSON.stringify({ tap: 'tap-report-dump', run: OTHER, pid: holder.pid, process_started: holder.started ?? processStart(), host: 'host-b', pid_space: holder.pidSpace, since: SINCE })}\n`);
  return path;
}

const refusal = (path: string) => `Another run of this tenant holds the change store: run ${OTHER} (pid `;

describe('StoreLock', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('is an owner-only file (0600 whatever the umask) naming the run, its process, host and pid space, and since when; gone once released', async () => {
    for (const umask of UMASKS) {
      const other = tempFolder('store-lock-');
      const held = await withUmask(umask, async () => StoreLock.take(other, RUN, logged().logger));
      expect(modeOf(held.path), `umask ${umask.toString(8)}`).toBe(0o600);
      held.release();
    }
    const tenant = tempFolder('store-lock-');
    const lock = StoreLock.take(tenant, RUN, logged().logger);
    expect(JSON.parse(readFileSync(lock.path, 'utf8'))).toEqual({ tap: 'tap-report-dump', run: RUN, pid: process.pid, process_started: processStart(), host: hostname(), pid_space: PID_SPACE, since: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) });
    lock.release();
    expect(readdirSync(tenant)).toEqual([]);
  });

  it('refuses a second run while a live run holds it, in one line naming that run (pid, host, since) and what to do', () => {
    const tenant = tempFolder('store-lock-');
    const path = lockOf(tenant, { pid: process.pid, pidSpace: PID_SPACE });
    let error: unknown;
    try {
      StoreLock.take(tenant, RUN, logged().logger);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TapError);
    expect((error as TapError).failureType).toBe('transient_error');
    expect((error as Error).message).toBe(`Another run of this tenant holds the change store: run ${OTHER} (pid ${process.pid} on host host-b, since ${SINCE}); wait until it ends, or, if it no longer runs, remove ${path}.`);
    expect(JSON.parse(readFileSync(path, 'utf8')).run).toBe(OTHER);
  });

  it('refuses a second take within this very process', () => {
    const tenant = tempFolder('store-lock-');
    const first = StoreLock.take(tenant, OTHER, logged().logger);
    expect(() => StoreLock.take(tenant, RUN, logged().logger)).toThrow(refusal(first.path));
    first.release();
    StoreLock.take(tenant, RUN, logged().logger).release();
  });

  it('takes over, with a log line, the lock of a dead run of this host (its process gone)', () => {
    const tenant = tempFolder('store-lock-');
    lockOf(tenant, { pid: deadPid(), pidSpace: PID_SPACE });
    const { lines, logger } = logged();
    const lock = StoreLock.take(tenant, RUN, logger);
    expect(JSON.parse(readFileSync(lock.path, 'utf8')).run).toBe(RUN);
    expect(lines).toEqual([expect.stringMatching(new RegExp(`WARN  change store: took over the lock of run ${OTHER} \\(pid \\d+ on host host-b, since ${SINCE}\\), which no longer runs\\n$`))]);
    expect(readdirSync(tenant)).toEqual(['lock']);
    lock.release();
  });

  it('refuses a run of another host while its lease is fresh, and takes it over once the lease expired', () => {
    const tenant = tempFolder('store-lock-');
    // Its pid is a live one here: never asked of another host's run.
    const path = lockOf(tenant, { pid: process.pid, pidSpace: OTHER_PID_SPACE });
    expect(() => StoreLock.take(tenant, RUN, logged().logger)).toThrow(refusal(path));
    expect(readdirSync(tenant)).toEqual(['lock']);
    age(path, LEASE_EXPIRY_MS + 60_000);
    const { lines, logger } = logged();
    const lock = StoreLock.take(tenant, RUN, logger);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(readFileSync(lock.path, 'utf8')).run).toBe(RUN);
    lock.release();
  });

  it('refuses while a lock it cannot read is young (a run is making it), and takes it over once it is old', () => {
    const tenant = tempFolder('store-lock-');
    const path = join(tenant, 'lock');
    writeFileSync(path, '');
    expect(() => StoreLock.take(tenant, RUN, logged().logger)).toThrow(`Another run of this tenant is taking the change store's lock, or its lock file ${path} is damaged; run the tap again in a minute, or remove that file if no other run is going.`);
    age(path, LEASE_EXPIRY_MS + 60_000);
    const { lines, logger } = logged();
    StoreLock.take(tenant, RUN, logger).release();
    expect(lines).toEqual([expect.stringContaining('change store: took over the lock of a run that left it unreadable, which no longer runs')]);
  });

  it('leaves no lock behind when it cannot write it whole (a full disk): the error is the file system\'s', () => {
    const tenant = tempFolder('store-lock-');
    vi.spyOn(fs, 'writeSync').mockImplementationOnce(() => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    });
    expect(() => StoreLock.take(tenant, RUN, logged().logger)).toThrow('ENOSPC');
    expect(readdirSync(tenant)).toEqual([]);
  });

  it('leaves, when released, a lock that is no longer its own', () => {
    const tenant = tempFolder('store-lock-');
    const lock = StoreLock.take(tenant, RUN, logged().logger);
    lockOf(tenant, { pid: process.pid, pidSpace: PID_SPACE });
    lock.release();
    expect(JSON.parse(readFileSync(join(tenant, 'lock'), 'utf8')).run).toBe(OTHER);
  });

  it('renews its lease while held, and no longer once released', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const tenant = tempFolder('store-lock-');
    const lock = StoreLock.take(tenant, RUN, logged().logger);
    age(lock.path, LEASE_EXPIRY_MS);
    vi.advanceTimersByTime(LEASE_RENEW_MS);
    await vi.waitFor(() => expect(Date.now() - statSync(lock.path).mtimeMs).toBeLessThan(60_000), { timeout: 2000 });
    lock.release();
    expect(existsSync(lock.path)).toBe(false);
  });
});
