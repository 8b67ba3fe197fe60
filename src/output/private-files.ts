import type { WriteStream } from 'node:fs';
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

/** The same, written at once: `text` into a new owner-only file. */
export function writePrivateFileSync(path: string, text: string): void {
  const fd = fs.openSync(path, 'wx', PRIVATE_FILE_MODE);
  try {
    fs.fchmodSync(fd, PRIVATE_FILE_MODE);
    fs.writeSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
}
