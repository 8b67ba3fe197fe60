import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Input files for the CLI (config, catalog, state) in one temp folder, removed when the test process exits. */

let tempDir: string | undefined;

function temp(): string {
  if (!tempDir) {
    tempDir = mkdtempSync(join(tmpdir(), 'tap-e2e-'));
    const dir = tempDir;
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
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
