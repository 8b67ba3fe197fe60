import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { stderrLines, syncOk, type TapRun } from '../helpers/cli.js';
import { lastState, recordMessages, recordsOf, type StateValue } from '../helpers/messages.js';
import { type Sandbox, sandboxRecords, startTestSandbox, STREAM_NAMES, tapConfig } from '../helpers/sandbox.js';

const COUNTS = { trainingRecords: 300, phishingRecords: 300 };

function withoutLastModified(state: StateValue): StateValue {
  const copy = structuredClone(state);
  for (const bookmark of Object.values(copy.bookmarks ?? {})) {
    delete bookmark.last_modified;
    delete bookmark.last_modified_request;
  }
  return copy;
}

describe.concurrent('dump formats and date notations give the same RECORD messages', () => {
  let utc: Sandbox;
  let offset: Sandbox;
  let extra: Sandbox;
  let jsonl: TapRun;
  let csv: TapRun;

  beforeAll(async () => {
    await ensureBuilt();
    [utc, offset, extra] = await Promise.all([
      startTestSandbox(COUNTS),
      startTestSandbox({ ...COUNTS, dateOffset: '+02:00' }),
      startTestSandbox({ ...COUNTS, extraFields: true }),
    ]);
    [jsonl, csv] = await Promise.all([syncOk({ config: tapConfig(utc, { format: 'jsonl' }) }), syncOk({ config: tapConfig(utc, { format: 'csv' }) })]);
  });

  afterAll(async () => {
    await Promise.all([utc?.close(), offset?.close(), extra?.close()]);
  });

  it('CSV and JSONL syncs emit deep-equal records in the same order, equal to the service data', () => {
    for (const stream of STREAM_NAMES) {
      const expected = sandboxRecords(utc, stream);
      expect(expected).toHaveLength(300);
      // The data exercises CSV quoting: commas, quotes, line breaks, non-ASCII.
      expect(expected.some((r) => Object.values(r).some((v) => typeof v === 'string' && /[",\n]/.test(v)))).toBe(true);
      expect(recordsOf(jsonl.messages, stream)).toEqual(expected);
      expect(recordsOf(csv.messages, stream)).toEqual(expected);
    }
    // Types survive CSV: booleans, integers, numbers, nulls.
    const csvTraining = recordsOf(csv.messages, 'training');
    expect(csvTraining.some((r) => r.completed === false)).toBe(true);
    expect(csvTraining.some((r) => typeof r.score === 'number' && !Number.isInteger(r.score))).toBe(true);
    expect(csvTraining.some((r) => r.completedAt === null)).toBe(true);
  });

  it('CSV and JSONL runs write the same bookmarks and boundary hashes, so a state carries over between formats', async () => {
    const jsonlState = lastState(jsonl.messages);
    const csvState = lastState(csv.messages);
    for (const stream of STREAM_NAMES) {
      const a = jsonlState.bookmarks![stream];
      const b = csvState.bookmarks![stream];
      expect(b.replication_key_value).toBe(a.replication_key_value);
      expect([...(b.boundary_hashes ?? [])].sort()).toEqual([...(a.boundary_hashes ?? [])].sort());
    }
    // A CSV run from the JSONL run's bookmark (request not conditional) re-emits none of the boundary.
    const run = await syncOk({ config: tapConfig(utc, { format: 'csv' }), state: withoutLastModified(jsonlState) });
    expect(recordMessages(run.messages)).toHaveLength(0);
  });

  it('dates the service writes with a +02:00 offset come out as the same instants in UTC with Z (with and without gzip)', async () => {
    const raw = sandboxRecords(offset, 'training');
    expect(raw.some((r) => typeof r.availableFrom === 'string' && r.availableFrom.endsWith('+02:00'))).toBe(true);
    const [offsetJsonl, offsetCsv] = await Promise.all([
      syncOk({ config: tapConfig(offset, { format: 'jsonl' }) }),
      syncOk({ config: tapConfig(offset, { format: 'csv', compression: 'none' }) }),
    ]);
    for (const stream of STREAM_NAMES) {
      expect(recordsOf(offsetJsonl.messages, stream)).toEqual(recordsOf(jsonl.messages, stream));
      expect(recordsOf(offsetCsv.messages, stream)).toEqual(recordsOf(jsonl.messages, stream));
    }
    for (const run of [offsetJsonl, offsetCsv]) {
      expect(run.stdout).not.toContain('+02:00');
      const state = lastState(run.messages);
      for (const stream of STREAM_NAMES) {
        expect(state.bookmarks![stream].replication_key_value).toBe(lastState(jsonl.messages).bookmarks![stream].replication_key_value);
      }
    }
  });

  it('an undeclared field is left out of RECORDs and warned about once per stream, not once per record', async () => {
    expect(sandboxRecords(extra, 'training')[0]).toHaveProperty('department');
    const formats = ['jsonl', 'csv'];
    // Packaged discovery: live discovery would learn the field and emit it (see tap-layouts).
    const runs = await Promise.all(formats.map((format) => syncOk({ config: tapConfig(extra, { format, discovery: 'packaged' }) })));
    for (const [i, format] of formats.entries()) {
      const run = runs[i];
      for (const stream of STREAM_NAMES) {
        expect(recordsOf(run.messages, stream), `${format} ${stream}`).toEqual(recordsOf(jsonl.messages, stream));
        const warnings = stderrLines(run, new RegExp(`${stream}\\b.*department`));
        expect(warnings, `${format} ${stream} warnings:\n${run.stderr}`).toHaveLength(1);
        expect(warnings[0]).toMatch(/WARN/);
      }
      expect(run.stdout).not.toContain('"department"');
      expect(stderrLines(run, /department/)).toHaveLength(2);
    }
  });
});
