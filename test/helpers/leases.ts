import { closeSync, openSync, readdirSync, readFileSync, renameSync, statSync, utimesSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Leftovers made to look as another host's run left them, long ago: their lease (modification time) set back. */

/** Sets the modification time of `path` (and of the files in it, a folder) `ms` into the past. */
export function age(path: string, ms: number): void {
  const then = new Date(Date.now() - ms);
  if (statSync(path).isDirectory()) for (const name of readdirSync(path)) age(join(path, name), ms);
  utimesSync(path, then, then);
}

/** A pid space (process-alive.ts) no process of this test has. */
export const OTHER_PID_SPACE = 'f0f0f0f0f0f0f0f0';

/** Renames a spool folder `tap-report-dump-spool-<pid space>-…` as another host's; returns its new path. */
export function asOtherHostsSpool(folder: string): string {
  const moved = folder.replace(/(tap-report-dump-spool-)[0-9a-f]+-/, `$1${OTHER_PID_SPACE}-`);
  renameSync(folder, moved);
  return moved;
}

/** Has a batch journal name another host's pid space, in place: a live run that appends to it goes on unaware. */
export function asOtherHostsJournal(path: string): void {
  const key = '"pid_space":"';
  const found = readFileSync(path, 'latin1').indexOf(key);
  if (found < 0) throw new Error(`${path} names no pid space`);
  const at = found + key.length;
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, OTHER_PID_SPACE, at, 'latin1');
  } finally {
    closeSync(fd);
  }
}
