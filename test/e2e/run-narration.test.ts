import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { syncOk, syncTap, type TapRun } from '../helpers/cli.js';
import { tempFolder, writeTempJson } from '../helpers/files.js';
import { startHeldTap } from '../helpers/held-stdout.js';
import { lastState, recordMessages, statesOf, type JsonObject } from '../helpers/messages.js';
import { sandboxRecords, type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';

/**
 * What a run says of itself on stderr, through the CLI against the sandbox:
 * the plan line before a stream's records, a debug line per request, the
 * line a stop by signal leaves, and the warning for a variable that is no
 * setting; a configured e-mail filter's value never appears.
 */

const TEXT_LINE = /^\S+ (DEBUG|INFO |WARN |ERROR) (.*)$/;

/** The messages of the run's text log lines at `level`. */
function messages(run: Pick<TapRun, 'stderr'>, level: 'DEBUG' | 'INFO' | 'WARN'): string[] {
  return run.stderr.split('\n').flatMap((line) => {
    const m = TEXT_LINE.exec(line);
    return m !== null && m[1].trim() === level ? [m[2]] : [];
  });
}

function planLines(run: TapRun, stream: string): string[] {
  return messages(run, 'INFO').filter((m) => m.startsWith(`${stream}: plan: `));
}

/** The forms a value could take in a log: as it is, URL-encoded, JSON-escaped. */
function forms(value: string): string[] {
  return [value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)];
}

let sandbox: Sandbox;
let email: string;
let config: JsonObject;
let first: TapRun;
let second: TapRun;

beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startTestSandbox({ trainingRecords: 300, phishingRecords: 100 });
  email = sandboxRecords(sandbox, 'training').map((r) => r.email).find((e): e is string => typeof e === 'string')!;
  config = { ...tapConfig(sandbox), discovery: 'packaged', log_level: 'debug', store_directory: tempFolder('tap-store-'), filters: { training: { email } } };
  first = await syncOk({ config });
  second = await syncOk({ config, state: lastState(first.messages) });
});

afterAll(async () => {
  await sandbox?.close();
});

describe('the plan line, before a stream records', () => {
  it('first run: a full pass and why, its version, its read with the filters it sends (the e-mail hidden), the store', () => {
    expect(recordMessages(first.messages, 'training').length, 'the e-mail filter was sent').toBe(sandboxRecords(sandbox, 'training', { email }).length);
    expect(planLines(first, 'training')).toEqual([
      expect.stringMatching(/^training: plan: full pass \(first run: no state for the stream\), version \d+, ACTIVATE_VERSION once the whole pass is read and checked; reads: full_pass with filter\[email\]=\*\*\*, unconditional; change store: sends every row and records it, kept in the state up to 1024 KiB, beyond that in (the store folder|store_directory \S+)$/),
    ]);
    expect(planLines(first, 'phishing')).toEqual([expect.stringMatching(/^phishing: plan: full pass \(first run: no state for the stream\), .*; reads: full_pass with no filter, unconditional; /)]);
    const lines = first.stderr.split('\n');
    const plan = lines.findIndex((l) => l.includes('training: plan: '));
    const request = lines.findIndex((l) => l.includes('training: GET '));
    expect(plan, 'the plan comes before the stream requests anything').toBeGreaterThanOrEqual(0);
    expect(plan).toBeLessThan(request);
  });

  it('a full pass of two reads (start_date adds the open rows) says its earlier read is asked again, and the debug lines show that request', async () => {
    const run = await syncOk({ config: { ...config, store_directory: tempFolder('tap-store-'), start_date: '2025-01-01T00:00:00Z' } });
    const [line] = planLines(run, 'training');
    expect(line).toMatch(/ACTIVATE_VERSION once the whole pass is read and checked \(each read but the last asked again with If-Modified-Since: an unchanged answer proves the reads saw one source\); reads: full_pass with .*; open_rows with /);
    expect(run.stderr.split('\n').filter((l) => l.includes('training: GET ')).length, 'the two reads and the second look at the first').toBe(3);
  });

  it('incremental run: from which bookmark, each read conditional on the last Last-Modified, the store sending only changes', () => {
    const bookmarks = lastState(first.messages).bookmarks!;
    const training = bookmarks.training;
    const [line] = planLines(second, 'training');
    expect(line).toContain(`training: plan: incremental from bookmark ${training.replication_key_value}, next full pass due from `);
    expect(line).toContain(`reads: incremental with filter[email]=***&filter[completedAt]=>=${training.replication_key_value}, If-Modified-Since ${training.last_modified}; open_rows with filter[email]=***&filter[completed]=false, If-Modified-Since `);
    expect(line).toMatch(/; change store: sends only the rows that changed, kept in the state up to 1024 KiB, beyond that in (the store folder|store_directory \S+)$/);
  });

  it('change pass: due since the last pass, reading the whole dump', async () => {
    const state = lastState(first.messages);
    // The last pass a day and an hour ago: the daily change pass is due.
    for (const bookmark of Object.values(state.bookmarks!)) bookmark.full_pass!.at = new Date(Date.now() - 25 * 3_600_000).toISOString();
    const due = await syncOk({ config: { ...config, log_level: 'info' }, state });
    expect(planLines(due, 'phishing')).toEqual([
      expect.stringMatching(/^phishing: plan: change pass \(due: last pass \S+Z, every day \(change_pass_interval_days\)\), from bookmark \S+; reads: change_pass with no filter, unconditional; change store: sends only the rows that changed, kept in the state up to 1024 KiB, beyond that in (the store folder|store_directory \S+)$/),
    ]);
  });
});

describe('debug request lines (log_level debug)', () => {
  it('one per request: path and query with the e-mail hidden, status, If-Modified-Since and Last-Modified, bytes, duration', () => {
    const [get] = messages(first, 'DEBUG').filter((m) => m.startsWith('training: GET '));
    expect(get).toMatch(/^training: GET \/public\/v1\/report\/training\/dump\.jsonl\?filter\[email\]=\*\*\* -> HTTP 200; If-Modified-Since -, Last-Modified \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT, \d+ bytes( \(gzip\))?, \d+\.\d{3} s$/);
    const bytes = Number(/, (\d+) bytes/.exec(get)![1]);
    expect(bytes).toBeGreaterThan(0);
    const conditional = messages(second, 'DEBUG').filter((m) => m.startsWith('training: GET '));
    const { last_modified } = lastState(first.messages).bookmarks!.training;
    expect(conditional[0]).toMatch(new RegExp(`^training: GET \\S+\\?filter\\[email\\]=\\*\\*\\*&filter\\[completedAt\\]=>=\\S+ -> HTTP 304; If-Modified-Since ${last_modified}, Last-Modified `));
    expect(messages(first, 'INFO').filter((m) => m.includes(' GET ')), 'request lines are debug lines').toEqual([]);
  });

  it('the configured e-mail appears nowhere on stderr, in any form', () => {
    for (const run of [first, second]) for (const form of forms(email)) expect(run.stderr.includes(form), `${form} on stderr`).toBe(false);
  });
});

describe('a stop by signal', () => {
  it('says which signal, how many records went out and that the state was not advanced', async () => {
    const own = await startTestSandbox({ trainingRecords: 3000, phishingRecords: 10 });
    try {
      // Without versions the records go straight to stdout, where the held target stops them.
      const tap = startHeldTap(['--config', writeTempJson({ ...tapConfig(own), discovery: 'packaged', emit_activate_version_messages: false, send_changes_only: false })]);
      await tap.holdAfter('"type":"RECORD"');
      tap.kill('SIGTERM');
      tap.resume();
      const [code, signal] = await tap.closed;
      expect({ code, signal }).toEqual({ code: null, signal: 'SIGTERM' });
      const stop = messages({ stderr: tap.stderr() }, 'WARN').filter((m) => m.startsWith('stopping for SIGTERM'));
      expect(stop).toEqual([expect.stringMatching(/^stopping for SIGTERM during training: \d+ records of it read so far, (\d+ to )?[1-9]\d* of them written to stdout; the state was not advanced for training, so its next run reads from the same bookmark$/)]);
      const emitted = Number(/: (\d+) records/.exec(stop[0])![1]);
      expect(emitted).toBeGreaterThan(0);
      expect(emitted).toBeLessThan(3000);
      expect(tap.stdout()).not.toContain('"type":"STATE"');
    } finally {
      await own.close();
    }
  });
});

describe('a variable that looks like a setting but is none', () => {
  it('is named in a warning with the setting it most likely meant, and the run goes on', async () => {
    const run = await syncTap({ config: { ...tapConfig(sandbox), discovery: 'packaged', log_level: 'warn', store_directory: tempFolder('tap-store-') }, env: { TAP_REPORT_DUMP_STRAT_DATE: '2025-01-01' } });
    expect(run.code, run.stderr).toBe(0);
    expect(messages(run, 'WARN')).toContain(
      'Environment variable TAP_REPORT_DUMP_STRAT_DATE is not a setting and is ignored; did you mean TAP_REPORT_DUMP_START_DATE (start_date)? tap-report-dump --about lists every setting; each is read from TAP_REPORT_DUMP_<SETTING> in upper case.',
    );
    expect(statesOf(run.messages)).not.toEqual([]);
  });
});
