import { execFile, spawn } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT } from './build.js';
import { tempFolder } from './files.js';

/**
 * Commands run as a reader pastes them into a shell: through `sh -c`, with the
 * tap's two commands on the PATH as an install puts them there, and without
 * the TAP_REPORT_DUMP_ variables of the test's own environment.
 */

export interface Ran {
  command: string;
  code: number;
  stdout: string;
  stderr: string;
}

/** A folder holding `tap-report-dump` and `source-report-dump`, each running this checkout's dist/ (what `npm install -g` would put on the PATH). */
export function installedCommands(): string {
  const bin = tempFolder('reader-bin-');
  for (const [name, script] of [['tap-report-dump', 'tap.js'], ['source-report-dump', 'source.js']]) {
    writeFileSync(join(bin, name), `#!/bin/sh\nexec node ${JSON.stringify(join(ROOT, 'dist', 'src', 'bin', script))} "$@"\n`);
    chmodSync(join(bin, name), 0o755);
  }
  return bin;
}

function readerEnv(bin: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('TAP_REPORT_DUMP_')) env[key] = value;
  env.PATH = `${bin}:${process.env.PATH}`;
  return env;
}

/** Runs a script to its end; `command` is what the reader typed, for the report. */
export function runInShell(script: string, command: string, where: { cwd: string; bin: string }): Promise<Ran> {
  return new Promise((resolve) => {
    execFile('sh', ['-c', script], { cwd: where.cwd, env: readerEnv(where.bin), maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ command, code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

export interface ShellServer {
  /** The first line it printed on stdout. */
  firstLine: string;
  /** Sends SIGTERM, as Ctrl-C or a service manager would, and resolves with the exit code. */
  stop(): Promise<number | null>;
  stderr(): string;
}

/**
 * Starts a command that serves until stopped (the sandbox) and waits for its
 * first line on stdout. The shell traps the signal `stop` sends to the whole
 * group, as a terminal's shell outlives the Ctrl-C it passes on, so the exit
 * code is the server's own.
 */
export function startInShell(command: string, where: { cwd: string; bin: string }): Promise<ShellServer> {
  const child = spawn('sh', ['-c', `trap : INT TERM\n${command}`], { cwd: where.cwd, env: readerEnv(where.bin), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const stop = (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
    return closed;
  };
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (firstLine) => resolve({ firstLine, stop, stderr: () => stderr }));
    void closed.then((code) => reject(new Error(`\`${command}\` exited (${code}) before printing a line:\n${stderr}`)));
  });
}
