import { readFileSync } from 'node:fs';
import { writeTempText } from './files.js';

/**
 * A look from inside a child process: `source`, an ES module the child loads
 * with --import, writes a JSON value to the file named by PROBE_FILE when the
 * child exits. Start the child with `env` added; `read` returns what it wrote.
 */
export function processProbe<T>(source: string): { env: Record<string, string>; read(): T } {
  const module = writeTempText(source, 'probe.mjs');
  const file = writeTempText('', 'probe.json');
  return {
    env: { NODE_OPTIONS: `--import=${module}`, PROBE_FILE: file },
    read: () => JSON.parse(readFileSync(file, 'utf8')) as T,
  };
}
