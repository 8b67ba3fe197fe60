import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { BatchJournal, removeOrphans } from '../../src/output/batch-journal.js';
import { LEASE_EXPIRY_MS, LEASE_RENEW_MS } from '../../src/output/lease.js';
import { PID_SPACE, processStart } from '../../src/output/process-alive.js';
import { tempFolder } from '../helpers/files.js';
import { age, OTHER_PID_SPACE } from '../helpers/leases.js';
import { deadPid } from '../helpers/processes.js';

const DEAD = '20261101T020000Z-0a0b0c0d';
const ALIVE = '20261101T030000Z-1a1b1c1d';

/**
 * A journal as a run writes it: its header (a run of this pid space unless
 * `pidSpace` tells, null: none, as versions before leases), then the files it
 * announced; `cut` appends half a line, as a crash may leave it.
 */
function journal(directory: string, prefix: string, run: string, header: { pid: number; host?: string; processStarted?: number; pidSpace?: string | null }, announced: string[], cut = false): void {
  const process_started = header.processStarted === undefined ? {} : { process_started: header.processStarted };
  const pid_space = header.pidSpace === null ? {} : { pid_space: header.pidSpace ?? PID_SPACE };
  const lines = [JSON.stringify({ tap: 'tap-report-dump', run, pid: header.pid, ...process_started, host: header.host ?? hostname(), ...pid_space, started: '2026-11-01T02:00:00.000Z' }), ...announced.map((name) => JSON.stringify({ announced: name }))];
  writeFileSync(join(directory, `${prefix}tap-report-dump-${run}.run`), `${lines.join('\n')}\n${cut ? '{"announced":"p-trai' : ''}`);
}

/** The cleaning run: its own journal's time is the volume's now. */
function ownRun(directory: string, prefix = 'p-'): BatchJournal {
  const own = new BatchJournal(directory, prefix, '20261101T090000Z-9a9b9c9d');
  onTestFinished(() => own.close());
  return own;
}

/** What the directory holds but the cleaning run's journal. */
function left(directory: string): string[] {
  return readdirSync(directory)
    .filter((name) => !name.includes('20261101T090000Z-9a9b9c9d'))
    .sort();
}

function touch(directory: string, ...names: string[]): void {
  for (const name of names) writeFileSync(join(directory, name), 'x');
}

describe('removeOrphans', () => {
  it('removes the files a dead run never announced (completed or partial) and its journal; keeps what it announced', () => {
    const directory = tempFolder('batch-journal-');
    journal(directory, 'p-', DEAD, { pid: deadPid() }, [`p-training-${DEAD}-1.jsonl.gz`], true);
    touch(directory, `p-training-${DEAD}-1.jsonl.gz`, `p-training-${DEAD}-2.jsonl.gz`, `p-training-${DEAD}-3.jsonl.gz.partial`, `p-phishing-${DEAD}-1.jsonl`);
    expect(removeOrphans(directory, 'p-', ownRun(directory))).toEqual({ runs: [DEAD], files: 3, skipped: 0 });
    expect(left(directory)).toEqual([`p-training-${DEAD}-1.jsonl.gz`]);
  });

  it('leaves alone a run still alive on this host, a run on another host whose lease is fresh, other prefixes, other programs\' files and journals it cannot read', () => {
    const directory = tempFolder('batch-journal-');
    journal(directory, 'p-', ALIVE, { pid: process.pid === 1 ? 2 : 1 }, []);
    journal(directory, 'p-', DEAD, { pid: deadPid(), host: `not-${hostname()}`, pidSpace: OTHER_PID_SPACE }, []);
    journal(directory, 'q-', '20261101T040000Z-2a2b2c2d', { pid: deadPid() }, []);
    writeFileSync(join(directory, 'p-tap-report-dump-20261101T050000Z-3a3b3c3d.run'), 'not json\n');
    const kept = [`p-training-${ALIVE}-1.jsonl.gz.partial`, `p-training-${DEAD}-1.jsonl.gz.partial`, 'q-training-20261101T040000Z-2a2b2c2d-1.jsonl.gz', `training-${DEAD}-1.jsonl.gz`, 'p-notes.txt', `p-training-${DEAD}-x.jsonl.gz`];
    touch(directory, ...kept);
    const before = readdirSync(directory).sort();
    expect(removeOrphans(directory, 'p-', ownRun(directory))).toEqual({ runs: [], files: 0, skipped: 2 });
    expect(left(directory)).toEqual(before);
  });

  it('takes its own process id with another start for a dead run (a container restarted as process 1), and with its own start for a run of this process', () => {
    const directory = tempFolder('batch-journal-');
    journal(directory, '', DEAD, { pid: process.pid, processStarted: processStart() - 3600 }, []);
    journal(directory, '', ALIVE, { pid: process.pid, processStarted: processStart() }, []);
    touch(directory, `training-${DEAD}-1.jsonl.gz`, `training-${ALIVE}-1.jsonl.gz.partial`);
    expect(removeOrphans(directory, '', ownRun(directory, ''))).toEqual({ runs: [DEAD], files: 1, skipped: 1 });
    expect(left(directory)).toEqual([`tap-report-dump-${ALIVE}.run`, `training-${ALIVE}-1.jsonl.gz.partial`]);
  });

  it('removes a run of another host, or of a version before leases, once neither its journal nor its files were written for LEASE_EXPIRY_MS; keeps what it announced', () => {
    const directory = tempFolder('batch-journal-');
    const runs = { expired: '20261101T020000Z-0a0b0c0d', old: '20261101T020000Z-1a1b1c1d', writing: '20261101T020000Z-2a2b2c2d', renewed: '20261101T020000Z-3a3b3c3d' };
    // Their process ids are live ones here: never asked.
    journal(directory, 'p-', runs.expired, { pid: process.pid, processStarted: processStart(), pidSpace: OTHER_PID_SPACE }, [`p-training-${runs.expired}-1.jsonl.gz`]);
    journal(directory, 'p-', runs.old, { pid: process.pid, pidSpace: null }, []);
    journal(directory, 'p-', runs.writing, { pid: deadPid(), pidSpace: OTHER_PID_SPACE }, []);
    journal(directory, 'p-', runs.renewed, { pid: deadPid(), pidSpace: null }, []);
    for (const run of Object.values(runs)) touch(directory, `p-training-${run}-1.jsonl.gz`, `p-training-${run}-2.jsonl.gz.partial`);
    for (const name of readdirSync(directory)) age(join(directory, name), LEASE_EXPIRY_MS + 60_000);
    // Written within the lease: a file of one run, the journal of another.
    touch(directory, `p-training-${runs.writing}-2.jsonl.gz.partial`);
    journal(directory, 'p-', runs.renewed, { pid: deadPid(), pidSpace: null }, []);
    expect(removeOrphans(directory, 'p-', ownRun(directory))).toEqual({ runs: [runs.expired, runs.old], files: 3, skipped: 2 });
    const kept = [runs.writing, runs.renewed].flatMap((run) => [`p-tap-report-dump-${run}.run`, `p-training-${run}-1.jsonl.gz`, `p-training-${run}-2.jsonl.gz.partial`]);
    expect(left(directory)).toEqual([`p-training-${runs.expired}-1.jsonl.gz`, ...kept].sort());
  });

  it('reads leases by the volume\'s clock, the time of its own journal, not this host\'s', () => {
    const directory = tempFolder('batch-journal-');
    journal(directory, 'p-', DEAD, { pid: deadPid(), pidSpace: OTHER_PID_SPACE }, []);
    age(join(directory, `p-tap-report-dump-${DEAD}.run`), 2 * LEASE_EXPIRY_MS);
    // The volume's clock as far behind this host's: the lease is fresh.
    expect(removeOrphans(directory, 'p-', { runId: ALIVE, writtenAt: Date.now() - 2 * LEASE_EXPIRY_MS })).toEqual({ runs: [], files: 0, skipped: 1 });
    age(join(directory, `p-tap-report-dump-${DEAD}.run`), 0);
    // The volume's clock ahead: a lease this host takes for fresh has expired.
    expect(removeOrphans(directory, 'p-', { runId: ALIVE, writtenAt: Date.now() + LEASE_EXPIRY_MS + 60_000 })).toEqual({ runs: [DEAD], files: 0, skipped: 0 });
  });
});

describe('BatchJournal', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('renews its lease while open: its time is written again every LEASE_RENEW_MS, its content kept; closed, it is gone', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const directory = tempFolder('batch-journal-');
    const run = new BatchJournal(directory, 'p-', ALIVE);
    const path = join(directory, `p-tap-report-dump-${ALIVE}.run`);
    // Its time as the volume stamped it, against which other runs' leases are read.
    expect(run.writtenAt).toBe(statSync(path).mtimeMs);
    run.announcing(`p-training-${ALIVE}-1.jsonl.gz`);
    const text = readFileSync(path, 'utf8');
    age(path, LEASE_EXPIRY_MS);
    vi.advanceTimersByTime(LEASE_RENEW_MS);
    await vi.waitFor(() => expect(Date.now() - statSync(path).mtimeMs).toBeLessThan(60_000), { timeout: 2000 });
    expect(readFileSync(path, 'utf8')).toBe(text);
    run.close();
    vi.advanceTimersByTime(LEASE_RENEW_MS);
    expect(readdirSync(directory)).toEqual([]);
  });

  it('is an owner-only file naming the run, lists each file before it is announced, and is gone once closed', () => {
    const directory = tempFolder('batch-journal-');
    const previous = process.umask(0o000);
    let run: BatchJournal;
    try {
      run = new BatchJournal(directory, 'p-', ALIVE);
    } finally {
      process.umask(previous);
    }
    const path = join(directory, `p-tap-report-dump-${ALIVE}.run`);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    run.announcing(`p-training-${ALIVE}-1.jsonl.gz`);
    const lines = readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([{ tap: 'tap-report-dump', run: ALIVE, pid: process.pid, process_started: processStart(), host: hostname(), pid_space: PID_SPACE, started: expect.any(String) }, { announced: `p-training-${ALIVE}-1.jsonl.gz` }]);
    // While it runs, another run leaves its files alone.
    touch(directory, `p-training-${ALIVE}-2.jsonl.gz.partial`);
    run.close();
    expect(readdirSync(directory)).toEqual([`p-training-${ALIVE}-2.jsonl.gz.partial`]);
  });
});
