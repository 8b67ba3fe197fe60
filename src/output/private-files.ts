import type { WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { fs } from '../builtins.js';

/** Owner-only files, whatever the umask: batch files, their journal and the spool hold personal data (or its names). */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * A new file (`wx`: a name that exists is never overwritten) that only its
 * owner can read: the mode is set again once it is open, since the umask can
 * only take bits away from the mode asked for.
 */
export function privateWriteStream(path: string): WriteStream {
  const file = fs.createWriteStream(path, { flags: 'wx', mode: PRIVATE_FILE_MODE });
  file.once('open', (fd: number) => fs.fchmodSync(fd, PRIVATE_FILE_MODE));
  return file;
}

/** The same, opened at once for writes of the caller's own: a new owner-only file's descriptor. */
export function openPrivateFileSync(path: string): number {
  const fd = fs.openSync(path, 'wx', PRIVATE_FILE_MODE);
  try {
    fs.fchmodSync(fd, PRIVATE_FILE_MODE);
    return fd;
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}

/** The same, written at once: `text` into a new owner-only file. */
export function writePrivateFileSync(path: string, text: string): void {
  const fd = openPrivateFileSync(path);
  try {
    fs.writeSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
}

/** Owner-only folders, whatever the umask. */
export const PRIVATE_FOLDER_MODE = 0o700;

/**
 * Makes `folder` and any missing parent owner-only (each folder the tap
 * creates is chmodded, since the umask can only take bits away); a folder
 * that exists is left as its operator set it.
 */
export function makePrivateFolder(folder: string): void {
  const first = fs.mkdirSync(folder, { recursive: true, mode: PRIVATE_FOLDER_MODE });
  if (first === undefined) return;
  for (let dir = folder; ; dir = dirname(dir)) {
    fs.chmodSync(dir, PRIVATE_FOLDER_MODE);
    if (dir === first || dirname(dir) === dir) return;
  }
}
