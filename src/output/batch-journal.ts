import { hostname } from 'node:os';
import { join } from 'node:path';
import { fs } from '../builtins.js';
import { keepLeaseFresh, lastWritten, mayBeLive, volumeNow } from './lease.js';
import { PID_SPACE, processStart } from './process-alive.js';
import { writePrivateFileSync } from './private-files.js';

/**
 * What a run wrote into the batch directory, kept on disk while it runs, so
 * that the next run can clean up after one that died without doing so
 * itself (kill -9, a crash, a lost machine): a stopped or failed run removes
 * its unannounced files on its way out, a killed one cannot.
 *
 * The journal `<prefix>tap-report-dump-<run>.run` holds one JSON line naming
 * the run (its id, process, host, pid space and start), then one line per
 * batch file the run is about to announce, written before the BATCH message
 * goes out; it is also the run's lease (lease.ts), renewed while the run
 * lives. A later run with the same directory and prefix removes the files of
 * a dead run that the journal does not list (its `.partial` files, and files
 * completed but never announced), then the journal: a run of this host whose
 * process is gone, or a run of another host (a container, a shared volume)
 * whose lease, the newest time its journal or files were written, has
 * expired. A file the journal lists may have reached a target, which may
 * still be reading it: it is never removed. Every file named here carries the
 * run's id, a time stamp and a random part, so a file of another program or
 * another run is never taken for one of the dead run's.
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
  /** Whose process ids `pid` is one of (process-alive.ts); older versions did not say, and their runs are told by their lease. */
  pid_space?: string;
  started: string;
}

function journalName(prefix: string, runId: string): string {
  return `${prefix}${TAP}${runId}${SUFFIX}`;
}

export class BatchJournal {
  private readonly path: string;
  private closed = false;
  /** When the journal was written, by the volume's clock: the time other runs' leases are read against. */
  readonly writtenAt: number;
  private readonly stopRenewing: () => void;

  constructor(
    directory: string,
    prefix: string,
    readonly runId: string,
  ) {
    this.path = join(directory, journalName(prefix, runId));
    const header: RunHeader = { tap: 'tap-report-dump', run: runId, pid: process.pid, process_started: processStart(), host: hostname(), pid_space: PID_SPACE, started: new Date().toISOString() };
    const text = `${JSON.stringify(header)}\n`;
    writePrivateFileSync(this.path, text);
    this.writtenAt = volumeNow(this.path);
    this.stopRenewing = keepLeaseFresh(this.path, text);
  }

  /** Notes a file before its BATCH message is written: from then on no later run removes it. */
  announcing(fileName: string): void {
    if (!this.closed) fs.appendFileSync(this.path, `${JSON.stringify({ announced: fileName })}\n`);
  }

  /** The run is over and has removed what it did not announce: the journal goes. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopRenewing();
    fs.rmSync(this.path, { force: true });
  }
}

/** What `removeOrphans` did. */
export interface OrphanCleanup {
  /** Runs whose leftovers were removed. */
  readonly runs: string[];
  readonly files: number;
  /** Runs left alone: their process still running, or their lease fresh. */
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
 * the start of a run, once it has written its own journal (`own`), before it
 * writes any batch file. A file that cannot be removed (another user's) is
 * left, and so is its run's journal, for a later run to try again.
 */
export function removeOrphans(directory: string, prefix: string, own: Pick<BatchJournal, 'runId' | 'writtenAt'>): OrphanCleanup {
  let names: string[];
  try {
    names = fs.readdirSync(directory);
  } catch {
    // It was just written to: a failing volume fails the run's first batch file, with a message.
    return { runs: [], files: 0, skipped: 0 };
  }
  const runs: string[] = [];
  let files = 0;
  let skipped = 0;
  for (const name of names) {
    if (!name.startsWith(`${prefix}${TAP}`) || !name.endsWith(SUFFIX)) continue;
    const runId = name.slice(prefix.length + TAP.length, -SUFFIX.length);
    if (!RUN_ID.test(runId) || runId === own.runId) continue;
    const journal = readJournal(join(directory, name));
    if (journal === undefined || journal.header.run !== runId) continue;
    const runFiles = names.filter((other) => batchFileOf(other, prefix, runId) !== undefined);
    const { header } = journal;
    const leaseAge = (): number => own.writtenAt - lastWritten(...[name, ...runFiles].map((file) => join(directory, file)));
    if (mayBeLive({ pidSpace: header.pid_space, pid: header.pid, started: header.process_started }, leaseAge)) {
      skipped++;
      continue;
    }
    const unannounced = runFiles.filter((file) => !journal.announced.has(batchFileOf(file, prefix, runId)!));
    const gone = unannounced.filter((file) => removed(join(directory, file))).length;
    files += gone;
    // The journal goes last, and only once nothing is left that it would have a later run remove.
    if (gone === unannounced.length && removed(join(directory, name))) runs.push(runId);
  }
  return { runs, files, skipped };
}

function removed(path: string): boolean {
  try {
    fs.rmSync(path, { force: true });
    return true;
  } catch {
    return false;
  }
}
