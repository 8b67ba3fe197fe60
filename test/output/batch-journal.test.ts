import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BatchJournal, removeOrphans } from '../../src/output/batch-journal.js';
import { processStart } from '../../src/output/process-alive.js';
import { tempFolder } from '../helpers/files.js';
import { deadPid } from '../helpers/processes.js';

const DEAD = '20261101T020000Z-0a0b0c0d';
const ALIVE = '20261101T030000Z-1a1b1c1d';

/** A journal as a run writes it: its header, then the files it announced; `cut` appends half a line, as a crash may leave it. */
function journal(directory: string, prefix: string, run: string, header: { pid: number; host?: string; processStarted?: number }, announced: string[], cut = false): void {
  const process_started = header.processStarted === undefined ? {} : { process_started: header.processStarted };
  const lines = [JSON.stringify({ tap: 'tap-report-dump', run, pid: header.pid, ...process_started, host: header.host ?? hostname(), started: '2026-11-01T02:00:00.000Z' }), ...announced.map((name) => JSON.stringify({ announced: name }))];
  writeFileSync(join(directory, `${prefix}tap-report-dump-${run}.run`), `${lines.join('\n')}\n${cut ? '{"announced":"p-trai' : ''}`);
}

function touch(directory: string, ...names: string[]): void {
  for (const name of names) writeFileSync(join(directory, name), 'x');
}

describe('removeOrphans', () => {
  it('removes the files a dead run never announced (completed or partial) and its journal; keeps what it announced', () => {
    const directory = tempFolder('batch-journal-');
    journal(directory, 'p-', DEAD, { pid: deadPid() }, [`p-training-${DEAD}-1.jsonl.gz`], true);
    touch(directory, `p-training-${DEAD}-1.jsonl.gz`, `p-training-${DEAD}-2.jsonl.gz`, `p-training-${DEAD}-3.jsonl.gz.partial`, `p-phishing-${DEAD}-1.jsonl`);
    expect(removeOrphans(directory, 'p-')).toEqual({ runs: [DEAD], files: 3, skipped: 0 });
    expect(readdirSync(directory)).toEqual([`p-training-${DEAD}-1.jsonl.gz`]);
  });

  it('leaves alone a run still alive on this host, a run on another host, other prefixes, other programs\' files and journals it cannot read', () => {
    const directory = tempFolder('batch-journal-');
    journal(directory, 'p-', ALIVE, { pid: process.pid === 1 ? 2 : 1 }, []);
    journal(directory, 'p-', DEAD, { pid: deadPid(), host: `not-${hostname()}` }, []);
    journal(directory, 'q-', '20261101T040000Z-2a2b2c2d', { pid: deadPid() }, []);
    writeFileSync(join(directory, 'p-tap-report-dump-20261101T050000Z-3a3b3c3d.run'), 'not json\n');
    const kept = [`p-training-${ALIVE}-1.jsonl.gz.partial`, `p-training-${DEAD}-1.jsonl.gz.partial`, 'q-training-20261101T040000Z-2a2b2c2d-1.jsonl.gz', `training-${DEAD}-1.jsonl.gz`, 'p-notes.txt', `p-training-${DEAD}-x.jsonl.gz`];
    touch(directory, ...kept);
    const before = readdirSync(directory).sort();
    expect(removeOrphans(directory, 'p-')).toEqual({ runs: [], files: 0, skipped: 2 });
    expect(readdirSync(directory).sort()).toEqual(before);
  });

  it('takes its own process id with another start for a dead run (a container restarted as process 1), and with its own start for a run of this process', () => {
    const directory = tempFolder('batch-journal-');
    journal(directory, '', DEAD, { pid: process.pid, processStarted: processStart() - 3600 }, []);
    journal(directory, '', ALIVE, { pid: process.pid, processStarted: processStart() }, []);
    touch(directory, `training-${DEAD}-1.jsonl.gz`, `training-${ALIVE}-1.jsonl.gz.partial`);
    expect(removeOrphans(directory, '')).toEqual({ runs: [DEAD], files: 1, skipped: 1 });
    expect(readdirSync(directory).sort()).toEqual([`tap-report-dump-${ALIVE}.run`, `training-${ALIVE}-1.jsonl.gz.partial`]);
  });
});

describe('BatchJournal', () => {
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
    expect(lines).toEqual([{ tap: 'tap-report-dump', run: ALIVE, pid: process.pid, process_started: processStart(), host: hostname(), started: expect.any(String) }, { announced: `p-training-${ALIVE}-1.jsonl.gz` }]);
    // While it runs, another run leaves its files alone.
    touch(directory, `p-training-${ALIVE}-2.jsonl.gz.partial`);
    run.close();
    expect(readdirSync(directory)).toEqual([`p-training-${ALIVE}-2.jsonl.gz.partial`]);
  });
});
