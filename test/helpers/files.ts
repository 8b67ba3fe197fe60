import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';

/** Input files for the CLI (config, catalog, state) in one temp folder per worker, inside the run's temp root (global-setup.ts removes it after the run). */

let tempDir: string | undefined;

function temp(): string {
  // A folder of its own: the file counter below is this worker's, and the root is shared by all of them.
  tempDir ??= mkdtempSync(join(inject('tempRoot'), 'files-'));
  return tempDir;
}

let counter = 0;

/** Writes text to a fresh temp file and returns its path. */
export function writeTempText(text: string, name = 'file.txt'): string {
  const path = join(temp(), `${++counter}-${name}`);
  writeFileSync(path, text);
  return path;
}

export function writeTempJson(value: unknown, name = 'file.json'): string {
  return writeTempText(JSON.stringify(value, null, 2), name);
}

/** A path in the temp folder that does not exist. */
export function missingPath(name = 'missing.json'): string {
  return join(temp(), `${++counter}-does-not-exist`, name);
}

/** A fresh empty folder, its name `prefix` and a random tail, removed with the temp root after the run. */
export function tempFolder(prefix: string): string {
  return mkdtempSync(join(inject('tempRoot'), prefix));
}
