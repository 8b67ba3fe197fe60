import { spawn, spawnSync } from 'node:child_process';
import { withoutNodeWarning } from '../helpers/node-warning.js';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ProgressLine } from '../../src/observe/progress.js';
import { CLI, ensureBuilt, ROOT } from '../helpers/build.js';
import { runTap, type TapRun } from '../helpers/cli.js';
import { writeTempJson, writeTempText } from '../helpers/files.js';
import { type JsonObject, lastState, parseMessages, recordMessages } from '../helpers/messages.js';
import { type Sandbox, startTestSandbox, type Stream, STREAM_NAMES, tapConfig } from '../helpers/sandbox.js';

/**
 * Logs, Singer metrics, per-stream summaries and the progress line, through
 * the real CLI against the sandbox: what an operator (or Meltano) reads on
 * stderr, and the guarantee that none of it reaches stdout.
 */

const ENDPOINT: Record<Stream, string> = { training: '/public/v1/report/training/dump', phishing: '/public/v1/report/phishing/dump' };
const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];

/** `2026-01-01T00:00:00.000Z INFO  message` — ISO time, level padded to 5, message. */
const TEXT_LINE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z) (DEBUG|INFO |WARN |ERROR) (.*)$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
/** A stream's summary; after the bookmark, what kind of run it was (a full pass) and, for a run of several reads, each read's count. */
const SUMMARY = /^(training|phishing): (unchanged \(HTTP 304\), )?(\d+) records in (\d+\.\d) s \((\d+)\/s\), bookmark (\S+)(; full pass \([a-zA-Z_ ]+\)(, version \d+ activated)?)?(; ([a-z_]+ (\d+|304)(, )?)+)?$/;
const ERROR_LINE = /^tap-report-dump: (unexpected )?error: /;

interface LogEntry {
  time: string;
  level: Level;
  message: string;
  /** A JSON log line's structured metric (log_format json). */
  metric?: unknown;
}

interface Metric {
  type: string;
  metric: string;
  value: number;
  tags: Record<string, unknown>;
}

interface Summary {
  stream: Stream;
  unchanged: boolean;
  records: number;
  seconds: number;
  bookmark: string;
}

function stderrLinesOf(run: Pick<TapRun, 'stderr'>): string[] {
  return run.stderr.split('\n').filter((line) => line !== '');
}

/** The run's text-format log entries; fails on any stderr line that is neither a log line nor the final error line. */
function textEntries(run: TapRun): LogEntry[] {
  const entries: LogEntry[] = [];
  for (const line of stderrLinesOf(run)) {
    if (ERROR_LINE.test(line)) continue;
    const m = TEXT_LINE.exec(line);
    if (!m) throw new Error(`stderr line is not a text log line: ${JSON.stringify(line.slice(0, 300))}`);
    entries.push({ time: m[1], level: m[2].trim().toLowerCase() as Level, message: m[3] });
  }
  return entries;
}

/** The run's JSON-format log entries; fails on any stderr line that is not a JSON object with time, level and message. */
function jsonEntries(run: TapRun): LogEntry[] {
  return stderrLinesOf(run).map((line) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new Error(`stderr line is not JSON with log_format json: ${JSON.stringify(line.slice(0, 300))}`);
    }
    expect(parsed, line).toBeTypeOf('object');
    expect(parsed, line).not.toBeNull();
    const entry = parsed as JsonObject;
    expect(entry.time, `${line}: time`).toMatch(ISO_TIME);
    expect(Number.isNaN(Date.parse(entry.time as string)), `${line}: time is a date`).toBe(false);
    expect(LEVELS, `${line}: level`).toContain(entry.level);
    expect(entry.message, `${line}: message`).toBeTypeOf('string');
    return entry as unknown as LogEntry;
  });
}

/** METRIC log messages, checked for the Singer/Meltano layout `METRIC: {"type","metric","value","tags"}`. */
function metricsOf(entries: readonly LogEntry[]): Metric[] {
  return checkedMetrics(
    entries.filter((e) => e.message.startsWith('METRIC')),
    (e) => {
      expect(e.message, 'METRIC: <json>').toMatch(/^METRIC: \{/);
      expect(e.metric, 'text METRIC lines have no structured member').toBeUndefined();
      return JSON.parse(e.message.slice('METRIC: '.length)) as Metric;
    },
  );
}

/** METRIC lines of JSON logs: the message is `METRIC` alone, the metric a structured `metric` member of the line. */
function jsonMetricsOf(entries: readonly LogEntry[]): Metric[] {
  return checkedMetrics(
    entries.filter((e) => e.message.startsWith('METRIC')),
    (e) => {
      expect(e.message, 'the message of a JSON METRIC line').toBe('METRIC');
      expect(Object.keys(e).sort(), 'a JSON METRIC line').toEqual(['level', 'message', 'metric', 'time']);
      return e.metric as Metric;
    },
  );
}

function checkedMetrics(entries: readonly LogEntry[], parse: (entry: LogEntry) => Metric): Metric[] {
  return entries.map((e) => {
    expect(e.level, 'metrics are info lines').toBe('info');
    const metric = parse(e);
    expect(Object.keys(metric).sort(), e.message).toEqual(['metric', 'tags', 'type', 'value']);
    expect(['counter', 'timer'], e.message).toContain(metric.type);
    expect(metric.metric, e.message).toBeTypeOf('string');
    expect(Number.isFinite(metric.value) && metric.value >= 0, `${e.message}: value is a non-negative number`).toBe(true);
    expect(metric.tags, e.message).toBeTypeOf('object');
    expect(metric.type, `${e.message}: type of ${metric.metric}`).toBe(['record_count', 'rows_read'].includes(metric.metric) ? 'counter' : 'timer');
    return metric;
  });
}

function metricsNamed(metrics: readonly Metric[], name: string, stream: Stream): Metric[] {
  return metrics.filter((m) => m.metric === name && m.tags.stream === stream);
}

function summariesOf(entries: readonly LogEntry[]): Summary[] {
  return entries.flatMap((e) => {
    const m = SUMMARY.exec(e.message);
    if (!m) return [];
    expect(e.level, 'the summary is an info line').toBe('info');
    return [{ stream: m[1] as Stream, unchanged: m[2] !== undefined, records: Number(m[3]), seconds: Number(m[4]), bookmark: m[6] }];
  });
}

/** stdout holds Singer messages only: every line JSON with a Singer type, nothing that looks like a log line. */
function expectCleanStdout(run: TapRun, label: string): void {
  expect(() => parseMessages(run.stdout), `${label}: stdout holds Singer messages only`).not.toThrow();
  for (const line of run.stdout.split('\n')) {
    expect(line, `${label}: a log line on stdout`).not.toMatch(TEXT_LINE);
    expect(line.startsWith('METRIC'), `${label}: a METRIC line on stdout`).toBe(false);
    expect(line, `${label}: a log line on stdout`).not.toMatch(/"level":"(debug|info|warn|error)"/);
  }
  expect(run.stdout.includes('\r') || run.stdout.includes('\x1b'), `${label}: control characters on stdout`).toBe(false);
}

async function sync(config: JsonObject, state?: unknown): Promise<TapRun> {
  const args = ['--config', writeTempJson(config, 'config.json')];
  if (state !== undefined) args.push('--state', writeTempJson(state, 'state.json'));
  // CI unset: the progress line may only be held back by stderr not being a terminal.
  return runTap(args, { env: { CI: undefined } });
}

describe('observability through the CLI', () => {
  let sandbox: Sandbox;
  let extra: Sandbox;
  const runs: Record<'first' | 'second' | 'failed' | 'failedJson' | 'json' | 'warn' | 'errorLevel' | 'extraInfo', TapRun> = {} as never;

  beforeAll(async () => {
    await ensureBuilt();
    [sandbox, extra] = await Promise.all([
      startTestSandbox({ trainingRecords: 300, phishingRecords: 300 }),
      // Sends an undeclared field: the tap warns about it.
      startTestSandbox({ trainingRecords: 60, phishingRecords: 60, extraFields: true }),
    ]);
    // Packaged discovery: these runs show the sync's own logs (live discovery would take the undeclared field in, and meet the wrong token first).
    const config = tapConfig(sandbox, { discovery: 'packaged' });
    const extraConfig = tapConfig(extra, { discovery: 'packaged' });
    const wrong = { ...config, access_token: 'wrong-token-0b5e7a' };
    [runs.first, runs.failed, runs.failedJson, runs.json, runs.warn, runs.errorLevel, runs.extraInfo] = await Promise.all([
      sync(config),
      sync(wrong),
      sync({ ...wrong, log_format: 'json' }),
      sync({ ...config, log_format: 'json' }),
      sync({ ...extraConfig, log_level: 'warn' }),
      sync({ ...extraConfig, log_level: 'error' }),
      sync(extraConfig),
    ]);
    // The first run's last STATE (read leniently: the tests report what is wrong with its output).
    const lastStateLine = runs.first.stdout
      .split('\n')
      .reverse()
      .find((line) => line.startsWith('{"type":"STATE"'));
    runs.second = await sync(config, lastStateLine ? (JSON.parse(lastStateLine) as { value: unknown }).value : {});
  });

  afterAll(async () => {
    await Promise.all([sandbox?.close(), extra?.close()]);
  });

  describe('(a) per-stream summary', () => {
    it('default text logs: every stderr line is `<ISO time> <LEVEL> <message>`', () => {
      for (const name of ['first', 'second', 'extraInfo'] as const) {
        expect(runs[name].code, runs[name].stderr).toBe(0);
        const entries = textEntries(runs[name]);
        expect(entries.length, `${name}: stderr has log lines`).toBeGreaterThan(0);
        expect(stderrLinesOf(runs[name])).toHaveLength(entries.length);
      }
    });

    it('first run: one summary per stream with the record count, the duration and the new bookmark', () => {
      const entries = textEntries(runs.first);
      const summaries = summariesOf(entries);
      expect(summaries.map((s) => s.stream)).toEqual([...STREAM_NAMES]);
      const state = lastState(runs.first.messages);
      const metrics = metricsOf(entries);
      for (const s of summaries) {
        const records = recordMessages(runs.first.messages, s.stream).length;
        expect(records).toBe(sandbox.recordCount(s.stream));
        expect(s.unchanged).toBe(false);
        expect(s.records, `${s.stream}: summary count = RECORD messages`).toBe(records);
        expect(s.bookmark, `${s.stream}: summary bookmark = STATE bookmark`).toBe(state.bookmarks![s.stream].replication_key_value);
        const [duration] = metricsNamed(metrics, 'sync_duration', s.stream);
        expect(Math.abs(s.seconds - duration.value), `${s.stream}: summary duration ${s.seconds} s vs sync_duration ${duration.value} s`).toBeLessThanOrEqual(0.15);
      }
    });

    it('second run from the first run state: each summary says unchanged (HTTP 304), 0 records, bookmark kept', () => {
      expect(runs.second.code, runs.second.stderr).toBe(0);
      const summaries = summariesOf(textEntries(runs.second));
      expect(summaries.map((s) => s.stream)).toEqual([...STREAM_NAMES]);
      const before = lastState(runs.first.messages);
      for (const s of summaries) {
        expect(s.unchanged, `${s.stream}: summary names the 304`).toBe(true);
        expect(s.records).toBe(0);
        expect(recordMessages(runs.second.messages, s.stream)).toHaveLength(0);
        expect(s.bookmark).toBe(before.bookmarks![s.stream].replication_key_value);
      }
      const lines = stderrLinesOf(runs.second).filter((l) => SUMMARY.test(TEXT_LINE.exec(l)?.[3] ?? ''));
      for (const line of lines) expect(line).toMatch(/304/);
      expect(lines.every((l) => /unchanged/.test(l))).toBe(true);
    });
  });

  describe('(b) Singer metrics', () => {
    it('first run: record_count sums to the RECORD count, rows_read too (every row read was sent), http_request_duration 200 with stream/endpoint tags, sync_duration succeeded', () => {
      const metrics = metricsOf(textEntries(runs.first));
      expect(new Set(metrics.map((m) => m.metric))).toEqual(new Set(['record_count', 'rows_read', 'http_request_duration', 'sync_duration']));
      for (const stream of STREAM_NAMES) {
        const counts = metricsNamed(metrics, 'record_count', stream);
        expect(counts.length).toBeGreaterThan(0);
        for (const c of counts) expect(c.tags).toEqual({ stream });
        const records = recordMessages(runs.first.messages, stream).length;
        expect(records).toBeGreaterThan(0);
        expect(counts.reduce((sum, c) => sum + c.value, 0), `${stream}: record_count total`).toBe(records);
        expect(metricsNamed(metrics, 'rows_read', stream).reduce((sum, c) => sum + c.value, 0), `${stream}: rows_read total`).toBe(records);

        const requests = metricsNamed(metrics, 'http_request_duration', stream);
        expect(requests).toHaveLength(1);
        expect(Object.keys(requests[0].tags).sort()).toEqual(['endpoint', 'status', 'stream']);
        expect(requests[0].tags.endpoint).toBe(ENDPOINT[stream]);
        expect(String(requests[0].tags.status)).toBe('200');

        const durations = metricsNamed(metrics, 'sync_duration', stream);
        expect(durations).toHaveLength(1);
        expect(durations[0].tags).toEqual({ stream, status: 'succeeded' });
        expect(requests[0].value, `${stream}: the request is part of the sync`).toBeLessThanOrEqual(durations[0].value + 0.001);
      }
    });

    it('no-change rerun: http_request_duration status 304, no records counted, sync_duration succeeded', () => {
      const metrics = metricsOf(textEntries(runs.second));
      for (const stream of STREAM_NAMES) {
        const requests = metricsNamed(metrics, 'http_request_duration', stream);
        // Training's incremental read and its open rows; phishing's one read.
        expect(requests.map((r) => String(r.tags.status))).toEqual(stream === 'training' ? ['304', '304'] : ['304']);
        expect(requests[0].tags.endpoint).toBe(ENDPOINT[stream]);
        expect(metricsNamed(metrics, 'record_count', stream).reduce((sum, c) => sum + c.value, 0)).toBe(0);
        expect(metricsNamed(metrics, 'sync_duration', stream).map((d) => d.tags.status)).toEqual(['succeeded']);
      }
    });

    it('wrong token: exit non-zero, http_request_duration status 401 and sync_duration failed', () => {
      const run = runs.failed;
      expect(run.code).not.toBe(0);
      const lines = stderrLinesOf(run);
      expect(lines.at(-1)).toMatch(/^tap-report-dump: error: .*401/);
      const metrics = metricsOf(textEntries(run));
      // The first stream fails; the run stops there.
      expect(metricsNamed(metrics, 'http_request_duration', 'training').map((r) => String(r.tags.status))).toEqual(['401']);
      expect(metricsNamed(metrics, 'sync_duration', 'training').map((d) => d.tags)).toEqual([{ stream: 'training', status: 'failed' }]);
      expect(metrics.some((m) => m.tags.status === 'succeeded')).toBe(false);
      expect(metrics.filter((m) => m.metric === 'record_count')).toHaveLength(0);
      expect(summariesOf(textEntries(run))).toHaveLength(0);
      expect(run.stdout.includes('wrong-token-0b5e7a') || run.stderr.includes('wrong-token-0b5e7a'), 'the token is redacted').toBe(false);
    });
  });

  describe('(c) log_format json', () => {
    it('every stderr line is a JSON object with time, level and message; summaries are carried in message, metrics as a structured `metric` member', () => {
      const run = runs.json;
      expect(run.code, run.stderr).toBe(0);
      const entries = jsonEntries(run);
      expect(entries.length).toBeGreaterThan(0);
      const summaries = summariesOf(entries);
      expect(summaries.map((s) => s.stream)).toEqual([...STREAM_NAMES]);
      const metrics = jsonMetricsOf(entries);
      expect(new Set(metrics.map((m) => m.metric))).toEqual(new Set(['record_count', 'rows_read', 'http_request_duration', 'sync_duration']));
      expect(run.stderr, 'no METRIC text inside a JSON message').not.toMatch(/METRIC: /);
      for (const stream of STREAM_NAMES) {
        const records = recordMessages(run.messages, stream).length;
        expect(metricsNamed(metrics, 'record_count', stream).reduce((sum, c) => sum + c.value, 0)).toBe(records);
        expect(metricsNamed(metrics, 'sync_duration', stream).map((d) => d.tags.status)).toEqual(['succeeded']);
      }
      expect(run.stderr).not.toMatch(TEXT_LINE);
    });

    it('a failed run keeps the JSON metrics (401, failed)', () => {
      const run = runs.failedJson;
      expect(run.code).not.toBe(0);
      const logLines = stderrLinesOf(run).filter((l) => !ERROR_LINE.test(l));
      const entries = jsonEntries({ ...run, stderr: logLines.join('\n') } as TapRun);
      const metrics = jsonMetricsOf(entries);
      expect(metricsNamed(metrics, 'http_request_duration', 'training').map((r) => String(r.tags.status))).toEqual(['401']);
      expect(metricsNamed(metrics, 'sync_duration', 'training').map((d) => d.tags.status)).toEqual(['failed']);
    });

    it('a failed run with log_format json writes its fatal error as a JSON log line too', () => {
      const run = runs.failedJson;
      expect(run.code).not.toBe(0);
      // Every line, the last (the error) included, must be JSON for a JSON log pipeline.
      const entries = jsonEntries(run);
      const last = entries.at(-1)!;
      expect(last.level).toBe('error');
      expect(last.message).toMatch(/401/);
    });
  });

  describe('(d) log_level', () => {
    it('info (default) shows the warning, the summaries and the metrics', () => {
      const entries = textEntries(runs.extraInfo);
      expect(entries.some((e) => e.level === 'warn' && e.message.includes('department'))).toBe(true);
      expect(summariesOf(entries)).toHaveLength(2);
      expect(metricsOf(entries).length).toBeGreaterThan(0);
    });

    it('warn suppresses info lines: no summary, no METRIC; warnings still shown; the sync is complete', () => {
      const run = runs.warn;
      expect(run.code, run.stderr).toBe(0);
      const entries = textEntries(run);
      expect(entries.length, 'the undeclared-field warning is shown').toBeGreaterThan(0);
      for (const e of entries) expect(['warn', 'error'], e.message).toContain(e.level);
      expect(entries.some((e) => e.message.includes('department'))).toBe(true);
      expect(run.stderr).not.toMatch(/METRIC/);
      expect(run.stderr).not.toMatch(/ INFO /);
      expect(summariesOf(entries)).toHaveLength(0);
      expect(run.stderr).not.toMatch(/records in \d/);
      for (const stream of STREAM_NAMES) expect(recordMessages(run.messages, stream)).toHaveLength(extra.recordCount(stream));
    });

    it('error suppresses warnings too: stderr is empty on a clean run', () => {
      expect(runs.errorLevel.code, runs.errorLevel.stderr).toBe(0);
      expect(runs.errorLevel.stderr).toBe('');
      expect(recordMessages(runs.errorLevel.messages).length).toBe(extra.recordCount('training') + extra.recordCount('phishing'));
    });
  });

  describe('(e) progress line', () => {
    it('stderr is not a terminal here: no carriage-return progress line is written', () => {
      for (const [name, run] of Object.entries(runs)) {
        expect(run.stderr.includes('\r'), `${name}: carriage return on stderr`).toBe(false);
        expect(run.stderr.includes('\x1b['), `${name}: escape sequence on stderr`).toBe(false);
        expect(run.stderr, name).not.toMatch(/records\/s/);
      }
    });
  });

  describe('(f) stdout', () => {
    it('never carries a log line, whatever the format, level or outcome', () => {
      for (const [name, run] of Object.entries(runs)) expectCleanStdout(run, name);
    });
  });
});

// ------------------------------------------------------------------ ProgressLine (unit)

/** A stand-in for process.stderr that records what is written. */
function fakeStream(): { out: NodeJS.WriteStream; writes: string[] } {
  const writes: string[] = [];
  const out = {
    isTTY: true,
    write(chunk: string | Uint8Array): boolean {
      writes.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  return { out, writes };
}

const CLEAR = '\r\x1b[2K';

describe('ProgressLine (unit)', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllEnvs();
  });

  it('draws `\\r`-led lines with records, MB and rate, throttled to 4 a second, and clears', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-01-01T00:00:00.000Z'));
    const { out, writes } = fakeStream();
    const progress = new ProgressLine('training', { out, enabled: true });
    vi.setSystemTime(new Date('2026-01-01T00:00:02.000Z'));
    progress.update(12_345, 2_500_000);
    expect(writes).toEqual([`${CLEAR}training: 12,345 records, 2.5 MB, 6,173 records/s`]);
    // Within 250 ms of the last draw: nothing.
    vi.setSystemTime(new Date('2026-01-01T00:00:02.100Z'));
    progress.update(20_000, 3_000_000);
    expect(writes).toHaveLength(1);
    vi.setSystemTime(new Date('2026-01-01T00:00:04.000Z'));
    progress.update(40_000, 12_340_000);
    expect(writes[1]).toBe(`${CLEAR}training: 40,000 records, 12.3 MB, 10,000 records/s`);
    for (const w of writes) {
      expect(w.startsWith('\r')).toBe(true);
      expect(w.includes('\n'), 'a progress line never ends a line').toBe(false);
    }
    progress.clear();
    expect(writes).toHaveLength(3);
    expect(writes[2]).toBe(CLEAR);
    // Cleared once: a second clear writes nothing.
    progress.clear();
    expect(writes).toHaveLength(3);
  });

  it('clear() writes nothing when nothing was drawn', () => {
    const { out, writes } = fakeStream();
    new ProgressLine('phishing', { out, enabled: true }).clear();
    expect(writes).toEqual([]);
  });

  it('disabled: update and clear write nothing', () => {
    const { out, writes } = fakeStream();
    const progress = new ProgressLine('phishing', { out, enabled: false });
    progress.update(1, 1);
    progress.update(1000, 1_000_000);
    progress.clear();
    expect(writes).toEqual([]);
  });

  it('by default it is enabled only when stderr is a TTY and CI is unset', () => {
    const original = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
    const setTTY = (value: boolean): void => {
      Object.defineProperty(process.stderr, 'isTTY', { value, configurable: true, writable: true });
    };
    const draws = (): number => {
      const { out, writes } = fakeStream();
      new ProgressLine('training', { out }).update(10, 10);
      return writes.length;
    };
    try {
      setTTY(true);
      vi.stubEnv('CI', '');
      expect(draws(), 'TTY, CI unset').toBe(1);
      vi.stubEnv('CI', 'true');
      expect(draws(), 'TTY, CI=true').toBe(0);
      setTTY(false);
      vi.stubEnv('CI', '');
      expect(draws(), 'no TTY').toBe(0);
    } finally {
      if (original) Object.defineProperty(process.stderr, 'isTTY', original);
      else delete (process.stderr as { isTTY?: boolean }).isTTY;
    }
  });
});

// ------------------------------------------------------------------ progress on a real terminal

/** util-linux `script` gives the tap a pseudo-terminal as stderr (stdout goes to a file). */
const hasScript = process.platform === 'linux' && spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

interface TerminalRun {
  code: number | null;
  /** Raw bytes the terminal received (stderr of the tap, with the pty's \r\n). */
  raw: string;
  stdout: string;
}

function runOnTerminal(configPath: string, env: Record<string, string | undefined>): Promise<TerminalRun> {
  const stdoutPath = writeTempText('', 'pty-stdout.jsonl');
  const command = `${shellQuote(process.execPath)} ${shellQuote(CLI)} --config ${shellQuote(configPath)} > ${shellQuote(stdoutPath)}`;
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TAP_REPORT_DUMP_')) childEnv[k] = v;
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete childEnv[k];
    else childEnv[k] = v;
  }
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, raw: withoutNodeWarning(Buffer.concat(chunks).toString('utf8')), stdout: readFileSync(stdoutPath, 'utf8') });
    });
  });
}

/** What a terminal shows after receiving `raw`: handles \r, \n and ESC[2K (erase line). */
function screen(raw: string): string[] {
  const rows: string[][] = [[]];
  let col = 0;
  for (let i = 0; i < raw.length; i++) {
    const row = rows[rows.length - 1];
    if (raw.startsWith('\x1b[2K', i)) {
      row.length = 0;
      i += 3;
    } else if (raw[i] === '\r') col = 0;
    else if (raw[i] === '\n') {
      rows.push([]);
      col = 0;
    } else {
      while (row.length < col) row.push(' ');
      row[col++] = raw[i];
    }
  }
  return rows.map((r) => r.join('').trimEnd()).filter((r) => r !== '');
}

describe.skipIf(!hasScript)('progress line on a real terminal (pty via script)', () => {
  let sandbox: Sandbox;
  let tty: TerminalRun;
  let ci: TerminalRun;

  beforeAll(async () => {
    await ensureBuilt();
    sandbox = await startTestSandbox({ trainingRecords: 1500, phishingRecords: 300 });
    const config = writeTempJson({ ...tapConfig(sandbox), compression: 'none' }, 'config.json');
    [tty, ci] = await Promise.all([runOnTerminal(config, { CI: undefined }), runOnTerminal(config, { CI: 'true' })]);
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  it('draws a live progress line with records, MB and rate, and stdout stays clean', () => {
    expect(tty.code, tty.raw).toBe(0);
    expect(tty.raw).toMatch(/\r\x1b\[2Ktraining: [\d,]+ records, \d+\.\d MB, [\d,]+ records\/s/);
    expect(recordMessages(parseMessages(tty.stdout), 'training')).toHaveLength(sandbox.recordCount('training'));
    expect(tty.stdout.includes('\x1b') || tty.stdout.includes('records/s')).toBe(false);
  });

  it('with CI set, no progress line even on a terminal', () => {
    expect(ci.code, ci.raw).toBe(0);
    expect(ci.raw.includes('\x1b[2K')).toBe(false);
    expect(ci.raw).not.toMatch(/records\/s/);
    expect(screen(ci.raw).some((row) => SUMMARY.test(TEXT_LINE.exec(row)?.[3] ?? ''))).toBe(true);
  });

  it('the progress line is cleared before log lines: every log line starts its own terminal row, none is left glued to progress text', () => {
    const rows = screen(tty.raw);
    const glued = rows.filter((row) => /records\/s\S/.test(row) || (/records\/s/.test(row) && /METRIC|INFO|WARN/.test(row)));
    expect(glued, `log text glued to the progress line on screen:\n${glued.join('\n')}`).toEqual([]);
    for (const row of rows) expect(row, 'every row on screen is a log line (the progress line is gone at the end)').toMatch(TEXT_LINE);
    expect(rows.filter((row) => SUMMARY.test(TEXT_LINE.exec(row)?.[3] ?? '')).map((row) => TEXT_LINE.exec(row)![3].split(':')[0])).toEqual([...STREAM_NAMES]);
  });
});
