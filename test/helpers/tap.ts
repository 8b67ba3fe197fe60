import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { startSandbox, DEMO_TOKEN, type Sandbox, type SandboxOptions } from '../../sandbox/server.js';
import { CLI, ROOT, ensureBuilt } from './build.js';
import { PHISHING, TRAINING } from '../../src/catalog/reports.js';

export { CLI, ROOT, ensureBuilt, DEMO_TOKEN };

/** Helpers for end-to-end tests: the real CLI in a child process, against an in-process sandbox. */

export type JsonObject = Record<string, unknown>;

export interface SchemaMessage {
  type: 'SCHEMA';
  stream: string;
  schema: { properties?: Record<string, JsonObject>; required?: string[]; [key: string]: unknown };
  key_properties: string[];
  bookmark_properties?: string[];
}

export interface RecordMessage {
  type: 'RECORD';
  stream: string;
  record: JsonObject;
  time_extracted?: string;
}

/** The tap's own state types: the tests read what the tap writes. */
import type { StreamBookmark as Bookmark, TapState as StateValue } from '../../src/state.js';
export type { Bookmark, StateValue };

export interface StateMessage {
  type: 'STATE';
  value: StateValue;
}

export type SingerMessage = SchemaMessage | RecordMessage | StateMessage;

export interface TapRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout as Singer messages, one per line; throws when a line is not a JSON message. */
  readonly messages: SingerMessage[];
}

export interface RunOptions {
  /** Extra environment; `undefined` values remove a variable. TAP_REPORT_DUMP_* of the test runner are never inherited. */
  env?: Record<string, string | undefined>;
  input?: string;
  timeoutMs?: number;
}

export function parseMessages(stdout: string): SingerMessage[] {
  const messages: SingerMessage[] = [];
  const lines = stdout.split('\n');
  lines.forEach((line, index) => {
    if (line === '' && index === lines.length - 1) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new Error(`stdout line ${index + 1} is not JSON: ${line.slice(0, 200)}`);
    }
    const type = (parsed as { type?: unknown })?.type;
    if (type !== 'SCHEMA' && type !== 'RECORD' && type !== 'STATE') throw new Error(`stdout line ${index + 1} is not a Singer message: ${line.slice(0, 200)}`);
    messages.push(parsed as SingerMessage);
  });
  return messages;
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
  return withSlot(() => spawnTap(args, options));
}

function spawnTap(args: readonly string[], options: RunOptions): Promise<TapRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: childEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
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
      let parsed: SingerMessage[] | undefined;
      resolvePromise({
        code,
        signal,
        stdout,
        stderr: Buffer.concat(err).toString('utf8'),
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

// ---------------------------------------------------------------- sandbox

export const STREAM_NAMES = ['training', 'phishing'] as const;
export type Stream = (typeof STREAM_NAMES)[number];
export const REPLICATION_KEY: Record<Stream, string> = { training: 'completedAt', phishing: 'sentAt' };
export const KEY_PROPERTIES: Record<Stream, string[]> = { training: ['userId', 'programId', 'moduleId'], phishing: ['userId', 'campaignId'] };

/** A quiet sandbox on a free port with a small dataset. */
export function startTestSandbox(options: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  return startSandbox({ trainingRecords: 400, phishingRecords: 400, port: 0, log: () => {}, ...options });
}

/** A sandbox accepting `full` (both dump scopes) and `trainingOnly` (the training scope alone), and no demo token. */
export function startScopedSandbox(tokens: { full: string; trainingOnly: string }, records = 50): Promise<Sandbox> {
  return startTestSandbox({
    trainingRecords: records,
    phishingRecords: records,
    tokens: [
      { token: tokens.full, scopes: [TRAINING.scope, PHISHING.scope] },
      { token: tokens.trainingOnly, scopes: [TRAINING.scope] },
    ],
  });
}

export function sandboxRecords(sandbox: Sandbox, stream: Stream, filters?: Record<string, string>): JsonObject[] {
  return [...sandbox.records(stream, filters)];
}

export function tapConfig(sandbox: Sandbox, extra: JsonObject = {}): JsonObject {
  return { base_url: sandbox.url, access_token: DEMO_TOKEN, ...extra };
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

// ---------------------------------------------------------------- messages

export function recordMessages(messages: readonly SingerMessage[], stream?: string): RecordMessage[] {
  return messages.filter((m): m is RecordMessage => m.type === 'RECORD' && (stream === undefined || m.stream === stream));
}

export function recordsOf(messages: readonly SingerMessage[], stream: string): JsonObject[] {
  return recordMessages(messages, stream).map((m) => m.record);
}

export function schemasOf(messages: readonly SingerMessage[], stream?: string): SchemaMessage[] {
  return messages.filter((m): m is SchemaMessage => m.type === 'SCHEMA' && (stream === undefined || m.stream === stream));
}

export function statesOf(messages: readonly SingerMessage[]): StateMessage[] {
  return messages.filter((m): m is StateMessage => m.type === 'STATE');
}

export function lastState(messages: readonly SingerMessage[]): StateValue {
  const states = statesOf(messages);
  if (states.length === 0) throw new Error('no STATE message');
  return states[states.length - 1].value;
}

export function bookmarkOf(state: StateValue, stream: Stream): Bookmark | undefined {
  return state.bookmarks?.[stream];
}

/** Milliseconds of an RFC 3339 instant (any offset). */
export function instant(value: unknown): number {
  if (typeof value !== 'string') throw new Error(`not a date string: ${JSON.stringify(value)}`);
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new Error(`not a date: ${value}`);
  return ms;
}

/** Greatest replication-key instant among records (ignoring nulls). */
export function maxInstant(records: readonly JsonObject[], field: string): number {
  let max = Number.NEGATIVE_INFINITY;
  for (const r of records) if (r[field] !== null && r[field] !== undefined) max = Math.max(max, instant(r[field]));
  return max;
}

export function keyOf(record: JsonObject, keys: readonly string[]): string {
  return JSON.stringify(keys.map((k) => record[k]));
}

export function keySet(records: readonly JsonObject[], keys: readonly string[]): Set<string> {
  return new Set(records.map((r) => keyOf(r, keys)));
}

/** Canonical JSON with sorted keys: equal records (whatever the key order) give equal text. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as JsonObject)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as JsonObject)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

export function withoutFields(record: JsonObject, fields: readonly string[]): JsonObject {
  const copy = { ...record };
  for (const f of fields) delete copy[f];
  return copy;
}

/** Lines of stderr matching a pattern. */
export function stderrLines(run: Pick<TapRun, 'stderr'>, pattern: RegExp): string[] {
  return run.stderr.split('\n').filter((line) => pattern.test(line));
}

// ---------------------------------------------------------------- JSON Schema

export function schemaValidator(schema: object): ValidateFunction {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const addFormats = addFormatsModule as unknown as (a: Ajv) => Ajv;
  addFormats(ajv);
  return ajv.compile(schema);
}

export type { Sandbox };
