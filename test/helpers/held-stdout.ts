import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { CLI, ROOT } from './build.js';
import { tempFolder } from './files.js';
import { withoutNodeWarning } from './node-warning.js';

/**
 * The CLI with a target that stops reading: stdout is read until the test
 * `hold`s it (the pipe fills and the tap's writes wait, as behind a slow or
 * stuck target), then read on at once or slowly; stderr is kept. stdout is
 * a real pipe (a FIFO), as between a tap and its target in a shell or an
 * orchestrator: a child's default stdio is a socket pair, whose larger buffer
 * would hide what a full pipe does. For what happens to a run stopped while
 * its output waits on the target.
 */
export interface HeldTap {
  /** Everything read from stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout holds `text`, and stops reading it right there (the chunk that held it is read). */
  holdAfter(text: string): Promise<void>;
  resume(): void;
  /** Reads on as a slow target does: `bytes` every `everyMs` (the pipe stays full, so a stop finds the tap's last writes still waiting). */
  resumeSlowly(bytes: number, everyMs: number): void;
  kill(signal: NodeJS.Signals): void;
  /** The target goes away: stdout's reading end is closed. */
  closeStdout(): void;
  /** The process's exit, once its stdout was read to the end (or closed). */
  readonly closed: Promise<[number | null, NodeJS.Signals | null]>;
  /** The process's exit alone, whatever is left unread in stdout (a run that must end while its target still holds the pipe). */
  readonly exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/** `bin`: the command to run (the tap's by default; SOURCE_CLI for the Airbyte face's). */
export function startHeldTap(args: readonly string[], bin = CLI): HeldTap {
  const fifo = join(tempFolder('tap-stdout-'), 'stdout');
  execFileSync('mkfifo', ['-m', '600', fifo]);
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TAP_REPORT_DUMP_')));
  // exec: the signal the test sends reaches the tap itself, not a shell.
  const child = spawn('/bin/sh', ['-c', 'exec "$0" "$@" > "$TAP_STDOUT"', process.execPath, bin, ...args], { cwd: ROOT, env: { ...env, TAP_STDOUT: fifo }, stdio: ['ignore', 'ignore', 'pipe'] });
  const reader = createReadStream(fifo);
  let stdout = '';
  let stderr = '';
  let waiting: { text: string; found: () => void } | undefined;
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const onData = (chunk: Buffer | string): void => {
    stdout += chunk.toString();
    if (waiting === undefined || !stdout.includes(waiting.text)) return;
    reader.pause();
    waiting.found();
    waiting = undefined;
  };
  reader.on('data', onData);
  const ended = once(reader, 'end');
  const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  return {
    stdout: () => stdout,
    stderr: () => withoutNodeWarning(stderr),
    holdAfter: (text) => new Promise<void>((found) => (waiting = { text, found })),
    resume: () => reader.resume(),
    resumeSlowly: (bytes, everyMs) => {
      reader.off('data', onData);
      reader.on('readable', () => undefined);
      const timer = setInterval(() => {
        const chunk = (reader.read(bytes) ?? reader.read()) as Buffer | null;
        if (chunk !== null) stdout += chunk.toString('utf8');
      }, everyMs);
      reader.once('end', () => clearInterval(timer));
    },
    kill: (signal) => child.kill(signal),
    closeStdout: () => {
      reader.destroy();
      reader.emit('end');
    },
    closed: Promise.all([exited, ended]).then(([status]) => status),
    exited,
  };
}
