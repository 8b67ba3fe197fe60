import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { CLI, ROOT } from './build.js';

/**
 * The CLI with a target that stops reading: stdout is read until the test
 * `hold`s it (the pipe fills and the tap's writes wait, as behind a slow or
 * stuck target), then `resume`s it; stderr is kept. For what happens to a
 * run stopped while its output waits on the target.
 */
export interface HeldTap {
  /** Everything read from stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout holds `text`, and stops reading it right there (the chunk that held it is read). */
  holdAfter(text: string): Promise<void>;
  resume(): void;
  kill(signal: NodeJS.Signals): void;
  readonly closed: Promise<[number | null, NodeJS.Signals | null]>;
}

export function startHeldTap(args: readonly string[]): HeldTap {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TAP_REPORT_DUMP_')));
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let waiting: { text: string; found: () => void } | undefined;
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    if (waiting === undefined || !stdout.includes(waiting.text)) return;
    child.stdout.pause();
    waiting.found();
    waiting = undefined;
  });
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    holdAfter: (text) => new Promise<void>((found) => (waiting = { text, found })),
    resume: () => child.stdout.resume(),
    kill: (signal) => child.kill(signal),
    closed: once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>,
  };
}
