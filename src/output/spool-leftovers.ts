import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fs } from '../builtins.js';
import { lastWritten, mayBeLive, volumeNow } from './lease.js';
import { PID_SPACE, processStart } from './process-alive.js';

/**
 * The spool folders of full passes, by name, and the removal of those whose
 * run died (SIGKILL, a crash, a lost node) and so could not remove its own:
 * they hold personal data. Kept apart from the spool itself so that every
 * run can clean up at its start without loading the spool's writer.
 */

const PREFIX = 'tap-report-dump-spool-';
/**
 * `<PREFIX><pid space>-<pid>-<process start>-<mkdtemp's six characters>`; the
 * pid space of versions before leases was a tag of the host name alone, in 8
 * characters, never this run's.
 */
const SPOOL_FOLDER = new RegExp(`^${PREFIX}([0-9a-f]{16}|[0-9a-f]{8})-(\\d+)-(\\d+)-[A-Za-z0-9]{6}$`);

/** What mkdtemp completes into this process's spool folder name. */
export function spoolFolderPrefix(parent: string): string {
  return join(parent, `${PREFIX}${PID_SPACE}-${process.pid}-${processStart()}-`);
}

/** The run's own spool, whose lease file it has just written: the volume's time now, and a folder to leave alone. */
export interface OwnSpool {
  folder: string;
  lease: string;
}

/**
 * Removes the spool folders in `directory` of runs that are dead: of this
 * host's processes, those whose process is gone; of another host (a shared
 * volume, a container of its own), those whose lease (the last time anything
 * in the folder was written) has expired. A folder that cannot be removed
 * (another user's) is left to its owner. Returns how many were removed.
 */
export function removeDeadSpools(directory = tmpdir(), own?: OwnSpool): number {
  let names: string[];
  try {
    names = fs.readdirSync(directory);
  } catch {
    return 0;
  }
  const now = volumeClock(directory, own);
  let removed = 0;
  for (const name of names) {
    const match = SPOOL_FOLDER.exec(name);
    const path = join(directory, name);
    if (match === null || path === own?.folder) continue;
    const owner = { pidSpace: match[1], pid: Number(match[2]), started: Number(match[3]) };
    if (mayBeLive(owner, () => now() - lastWritten(path))) continue;
    try {
      fs.rmSync(path, { recursive: true, force: true });
      removed++;
    } catch {
      // Not ours to remove (another user's): its owner's runs remove it.
    }
  }
  return removed;
}

/**
 * The volume's time now, read at most once and only when a lease is to be
 * read: from the run's own lease, else from a folder made and removed for
 * the purpose; where none can be made (a read-only volume, where nothing can
 * be removed either), this host's clock.
 */
function volumeClock(directory: string, own: OwnSpool | undefined): () => number {
  let now = own === undefined ? undefined : volumeNow(own.lease);
  return () => (now ??= probe(directory));
}

function probe(directory: string): number {
  try {
    const folder = fs.mkdtempSync(join(directory, 'tap-report-dump-clock-'));
    try {
      return volumeNow(folder);
    } finally {
      fs.rmdirSync(folder);
    }
  } catch {
    return Date.now();
  }
}
