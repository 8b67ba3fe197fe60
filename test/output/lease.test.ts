import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { keepLeaseFresh, lastWritten, LEASE_EXPIRY_MS, LEASE_RENEW_MS, mayBeLive } from '../../src/output/lease.js';
import { PID_SPACE, processStart } from '../../src/output/process-alive.js';
import { tempFolder } from '../helpers/files.js';
import { deadPid } from '../helpers/processes.js';
import { age } from '../helpers/leases.js';

/** Polls (real time) until `condition` holds, for at most two seconds. */
async function until(condition: () => boolean): Promise<boolean> {
  for (let i = 0; i < 100 && !condition(); i++) await sleep(20);
  return condition();
}

describe('keepLeaseFresh', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('has the volume stamp the file anew every LEASE_RENEW_MS, its content unchanged, until stopped', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const path = join(tempFolder('lease-'), 'lease');
    writeFileSync(path, '{"lease":1}\n');
    age(path, 3_600_000);
    const stop = keepLeaseFresh(path, '{');
    vi.advanceTimersByTime(LEASE_RENEW_MS - 1);
    await sleep(50);
    expect(Date.now() - statSync(path).mtimeMs).toBeGreaterThan(3_000_000);
    vi.advanceTimersByTime(1);
    expect(await until(() => Date.now() - statSync(path).mtimeMs < 60_000)).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('{"lease":1}\n');
    stop();
    age(path, 3_600_000);
    vi.advanceTimersByTime(3 * LEASE_RENEW_MS);
    await sleep(50);
    expect(Date.now() - statSync(path).mtimeMs).toBeGreaterThan(3_000_000);
  });

  it('never makes the file again once its run removed it', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const path = join(tempFolder('lease-'), 'lease');
    writeFileSync(path, '{}');
    const stop = keepLeaseFresh(path, '{');
    rmSync(path);
    vi.advanceTimersByTime(2 * LEASE_RENEW_MS);
    await sleep(50);
    expect(existsSync(path)).toBe(false);
    stop();
  });
});

describe('lastWritten', () => {
  it('is the newest time of the paths and of the files in a folder among them', () => {
    const folder = tempFolder('lease-');
    mkdirSync(join(folder, 'spool'));
    writeFileSync(join(folder, 'spool', 'records'), 'x');
    writeFileSync(join(folder, 'journal'), 'x');
    age(join(folder, 'spool'), 3_000_000);
    age(join(folder, 'spool', 'records'), 2_000_000);
    age(join(folder, 'journal'), 4_000_000);
    const newest = statSync(join(folder, 'spool', 'records')).mtimeMs;
    expect(lastWritten(join(folder, 'spool'), join(folder, 'journal'), join(folder, 'missing'))).toBe(newest);
  });
});

describe('mayBeLive', () => {
  const fresh = (): number => LEASE_EXPIRY_MS - 1;
  const expired = (): number => LEASE_EXPIRY_MS;

  it('asks the process of a run in this pid space, whatever its lease', () => {
    expect(mayBeLive({ pidSpace: PID_SPACE, pid: deadPid(), started: 1_700_000_000 }, fresh)).toBe(false);
    expect(mayBeLive({ pidSpace: PID_SPACE, pid: process.pid, started: processStart() - 3600 }, fresh)).toBe(false);
    expect(mayBeLive({ pidSpace: PID_SPACE, pid: process.pid, started: processStart() }, expired)).toBe(true);
  });

  it('goes by the lease for a run of another host, or of a version that did not name its pid space, its process never asked', () => {
    const lease = vi.fn(fresh);
    expect(mayBeLive({ pidSpace: 'ffffffffffffffff', pid: process.pid, started: processStart() }, lease)).toBe(true);
    expect(lease).toHaveBeenCalledTimes(1);
    expect(mayBeLive({ pidSpace: 'ffffffffffffffff', pid: process.pid, started: processStart() }, expired)).toBe(false);
    expect(mayBeLive({ pidSpace: undefined, pid: deadPid() }, fresh)).toBe(true);
    expect(mayBeLive({ pidSpace: undefined, pid: process.pid }, expired)).toBe(false);
  });
});
