import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { CLI, ROOT, SOURCE_CLI } from './build.js';
import { writeTempJson } from './files.js';
import { parseMessages, type JsonObject, type SingerMessage } from './messages.js';
import { withoutNodeWarning } from './node-warning.js';

/** The real CLI in a child process, as an orchestrator runs it (the sandbox lives in the test process and must keep serving). */

export interface TapRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  /** stderr, less the unsupported-Node.js warning when the suite runs on such a line (helpers/node-warning.ts). */
  stderr: string;
  /** stderr as the run wrote it. */
  stderrAsWritten: string;
  /** stdout as Singer messages, one per line; throws when a line is not a JSON message. */
  readonly messages: SingerMessage[];
}

export interface RunOptions {
  /** Extra environment; `undefined` values remove a variable. TAP_REPORT_DUMP_* of the test runner are never inherited. */
  env?: Record<string, string | undefined>;
  input?: string;
  timeoutMs?: number;
  /** The command to run: tap-report-dump's script unless given. */
  script?: string;
  /** The run spends its time asleep (between retries, say): it takes no slot, so runs timed from outside start at once. */
  mostlyWaits?: boolean;
}

function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('TAP_REPORT_DUMP_')) env[key] = value;
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** At most this many CLI processes per test worker at once: more only slows each one down. */
const MAX_CHILDREN = Math.max(2, Math.min(4, availableParallelism() + 1));
let running = 0;
const waiting: Array<() => void> = [];

async function withSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= MAX_CHILDREN) await new Promise<void>((resolveSlot) => waiting.push(resolveSlot));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** Runs `node dist/src/cli.js ...args` asynchronously (the sandbox lives in this process and must keep serving). */
export function runTap(args: readonly string[], options: RunOptions = {}): Promise<TapRun> {
  return options.mostlyWaits ? spawnTap(args, options) : withSlot(() => spawnTap(args, options));
}

/** Runs `source-report-dump ...args`, as runTap runs the tap. */
export function runSource(args: readonly string[], options: RunOptions = {}): Promise<TapRun> {
  return runTap(args, { ...options, script: SOURCE_CLI });
}

function spawnTap(args: readonly string[], options: RunOptions): Promise<TapRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [options.script ?? CLI, ...args], { cwd: ROOT, env: childEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      let parsed: SingerMessage[] | undefined;
      resolvePromise({
        code,
        signal,
        stdout,
        stderr: withoutNodeWarning(stderr),
        stderrAsWritten: stderr,
        get messages() {
          parsed ??= parseMessages(stdout);
          return parsed;
        },
      });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

export interface SyncOptions {
  config: JsonObject;
  catalog?: unknown;
  state?: unknown;
  /** Passed after the generated --config/--catalog/--state flags. */
  args?: string[];
  env?: Record<string, string | undefined>;
}

/** Singer-standard sync: `--config C [--catalog K] [--state S]`. */
export function syncTap(options: SyncOptions): Promise<TapRun> {
  const args = ['--config', writeTempJson(options.config, 'config.json')];
  if (options.catalog !== undefined) args.push('--catalog', writeTempJson(options.catalog, 'catalog.json'));
  if (options.state !== undefined) args.push('--state', writeTempJson(options.state, 'state.json'));
  return runTap([...args, ...(options.args ?? [])], { env: options.env });
}

/** A successful sync's messages; fails with the tap's stderr otherwise. */
export async function syncOk(options: SyncOptions): Promise<TapRun> {
  const run = await syncTap(options);
  if (run.code !== 0) throw new Error(`tap exited with ${run.code}; stderr:\n${run.stderr}`);
  return run;
}

/** A tap process a test watches and steers while it runs (runTap's are only seen once they end). */
export interface LiveTap {
  /** stdout's complete lines so far, in order. */
  readonly lines: string[];
  /** Everything on stdout so far, an unfinished last line included. */
  stdout(): string;
  /** Everything on stderr so far. */
  stderr(): string;
  /** Called with each complete stdout line as it arrives. */
  onLine(listener: (line: string) => void): void;
  kill(signal: NodeJS.Signals): void;
  readonly closed: Promise<[number | null, NodeJS.Signals | null]>;
}

/**
 * Starts `node dist/src/cli.js ...args` and returns at once, its stdout read
 * as it comes and its stderr ignored; with `umask`, under a shell that sets
 * it first. Not held to runTap's limit on children at once: the test stops
 * it or waits for it.
 */
export function startTap(args: readonly string[], options: { umask?: string } = {}): LiveTap {
  const command = options.umask === undefined ? [process.execPath, CLI, ...args] : ['/bin/sh', '-c', `umask ${options.umask} && exec "$0" "$@"`, process.execPath, CLI, ...args];
  const child = spawn(command[0], command.slice(1), { cwd: ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const listeners: Array<(line: string) => void> = [];
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  let rest = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    stdout += text;
    const parts = (rest + text).split('\n');
    rest = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      for (const listener of listeners) listener(line);
    }
  });
  return {
    lines,
    stdout: () => stdout,
    stderr: () => stderr,
    onLine: (listener) => listeners.push(listener),
    kill: (signal) => child.kill(signal),
    closed: once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>,
  };
}

/** Polls until `condition` holds; fails naming `what` when it has not within the time limit. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    expect(Date.now(), what).toBeLessThan(deadline);
    await sleep(20);
  }
}

/** Lines of stderr matching a pattern. */
export function stderrLines(run: Pick<TapRun, 'stderr'>, pattern: RegExp): string[] {
  return run.stderr.split('\n').filter((line) => pattern.test(line));
}
