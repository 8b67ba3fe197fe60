import { hostname } from 'node:os';
import { join } from 'node:path';
import { fs } from '../builtins.js';
import { mayBeRunning, processStart } from './process-alive.js';
import { writePrivateFileSync } from './private-files.js';

/**
 * What a run wrote into the batch directory, kept on disk while it runs, so
 * that the next run can clean up after one that died without doing so
 * itself (kill -9, a crash, a lost machine): a stopped or failed run removes
 * its unannounced files on its way out, a killed one cannot.
 *
 * The journal `<prefix>tap-report-dump-<run>.run` holds one JSON line naming
 * the run (its id, process, host and start), then one line per batch file the
 * run is about to announce, written before the BATCH message goes out. A later
 * run with the same directory and prefix removes the files of a run whose
 * process is gone that the journal does not list (its `.partial` files, and
 * files completed but never announced), then the journal. A file the journal
 * lists may have reached a target, which may still be reading it: it is never
 * removed. A run still alive, or one on another host (which cannot be asked),
 * is left alone. Every file named here carries the run's id, a time stamp and
 * a random part, so a file of another program or another run is never taken
 * for one of the dead run's.
 */

const SUFFIX = '.run';
const TAP = 'tap-report-dump-';
/** The run ids batch-run.ts makes: `20261123T101500Z-1a2b3c4d`. */
const RUN_ID = /^\d{8}T\d{6}Z-[0-9a-f]{8}$/;

interface RunHeader {
  tap: 'tap-report-dump';
  run: string;
  pid: number;
  /** When the process started (seconds since the epoch): another process with the same id is another run. */
  process_started?: number;
  host: string;
  started: string;
}

function journalName(prefix: string, runId: string): string {
  return `${prefix}${TAP}${runId}${SUFFIX}`;
}

export class BatchJournal {
  private readonly path: string;
  private closed = false;

  constructor(
    directory: string,
    prefix: string,
    readonly runId: string,
  ) {
    this.path = join(directory, journalName(prefix, runId));
    const header: RunHeader = { tap: 'tap-report-dump', run: runId, pid: process.pid, process_started: processStart(), host: hostname(), started: new Date().toISOString() };
    writePrivateFileSync(this.path, `${JSON.stringify(header)}\n`);
  }

  /** Notes a file before its BATCH message is written: from then on no later run removes it. */
  announcing(fileName: string): void {
    if (!this.closed) fs.appendFileSync(this.path, `${JSON.stringify({ announced: fileName })}\n`);
  }

  /** The run is over and has removed what it did not announce: the journal goes. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    fs.rmSync(this.path, { force: true });
  }
}

/** What `removeOrphans` did. */
export interface OrphanCleanup {
  /** Runs whose leftovers were removed. */
  readonly runs: string[];
  readonly files: number;
  /** Runs left alone: still running, or on another host. */
  readonly skipped: number;
}


function readJournal(path: string): { header: RunHeader; announced: Set<string> } | undefined {
  let lines: string[];
  try {
    lines = fs.readFileSync(path, 'utf8').split('\n').filter((line) => line !== '');
  } catch {
    return undefined;
  }
  const parsed = lines.map((line) => {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      // A line cut by the crash was being written before its BATCH message: that file was never announced.
      return undefined;
    }
  });
  const header = parsed[0] as Partial<RunHeader> | undefined;
  if (header?.tap !== 'tap-report-dump' || typeof header.run !== 'string' || !RUN_ID.test(header.run) || typeof header.pid !== 'number' || typeof header.host !== 'string') return undefined;
  const announced = new Set(parsed.slice(1).flatMap((entry) => (typeof (entry as { announced?: unknown })?.announced === 'string' ? [(entry as { announced: string }).announced] : [])));
  return { header: header as RunHeader, announced };
}

/** A batch file of `runId` by its name: `<prefix><stream>-<run>-<n>.jsonl[.gz][.partial]`; the name it was announced under, or undefined. */
function batchFileOf(name: string, prefix: string, runId: string): string | undefined {
  if (!name.startsWith(prefix)) return undefined;
  const match = /^(.+-(\d{8}T\d{6}Z-[0-9a-f]{8})-\d+\.jsonl(?:\.gz)?)(\.partial)?$/.exec(name.slice(prefix.length));
  return match !== null && match[2] === runId ? `${prefix}${match[1]}` : undefined;
}

/**
 * Removes what earlier runs with this directory and prefix left behind when
 * they died: their files they never announced, then their journals. Called at
 * the start of a run, before it writes anything.
 */
export function removeOrphans(directory: string, prefix: string): OrphanCleanup {
  const names = fs.readdirSync(directory);
  const runs: string[] = [];
  let files = 0;
  let skipped = 0;
  for (const name of names) {
    if (!name.startsWith(`${prefix}${TAP}`) || !name.endsWith(SUFFIX)) continue;
    const runId = name.slice(prefix.length + TAP.length, -SUFFIX.length);
    if (!RUN_ID.test(runId)) continue;
    const journal = readJournal(join(directory, name));
    if (journal === undefined || journal.header.run !== runId) continue;
    if (mayBeRunning(journal.header.host, journal.header.pid, journal.header.process_started)) {
      skipped++;
      continue;
    }
    for (const other of names) {
      const announcedAs = batchFileOf(other, prefix, runId);
      if (announcedAs === undefined || journal.announced.has(announcedAs)) continue;
      fs.rmSync(join(directory, other), { force: true });
      files++;
    }
    fs.rmSync(join(directory, name), { force: true });
    runs.push(runId);
  }
  return { runs, files, skipped };
}
