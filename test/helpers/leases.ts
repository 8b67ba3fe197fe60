import { readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

/** Leftovers made to look as another host's run left them, long ago: their lease (modification time) set back. */

/** Sets the modification time of `paths` (and of the files in a folder among them) `ms` into the past. */
export function age(path: string, ms: number): void {
  const then = new Date(Date.now() - ms);
  if (statSync(path).isDirectory()) for (const name of readdirSync(path)) age(join(path, name), ms);
  utimesSync(path, then, then);
}

/** A pid space (process-alive.ts) no process of this test has. */
export const OTHER_PID_SPACE = 'f0f0f0f0f0f0f0f0';
