import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, startTap, syncOk, syncTap, type TapRun, waitFor } from '../helpers/cli.js';
import { sendDump, startFakeServer, type FakeServer } from '../helpers/fake-server.js';
import { catalogOf } from '../helpers/resilience-util.js';
import { tempFolder, writeTempJson } from '../helpers/files.js';
import { batchesOf, type JsonObject, lastState, recordsOf } from '../helpers/messages.js';
import { DEMO_TOKEN, type Sandbox, startTestSandbox, type Stream, STREAM_NAMES, tapConfig, trainingDump } from '../helpers/sandbox.js';

/**
 * BATCH mode end to end over real HTTP against the sandbox: the batch files,
 * read back, hold exactly the records RECORD mode emits (same order, same
 * bytes per record), each file is complete, STATE follows the stream's last
 * BATCH, a failed run leaves no partial file and no STATE, and a bad
 * batch_config is a one-line config error.
 */

let sandbox: Sandbox;

beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startTestSandbox({ trainingRecords: 230, phishingRecords: 75, seed: 5 });
});

afterAll(async () => {
  await sandbox.close();
});

function batchConfig(directory: string, extra: JsonObject = {}): JsonObject {
  return { encoding: { format: 'jsonl', compression: 'gzip' }, storage: { root: pathToFileURL(directory).href, prefix: 'report-' }, batch_size: 100, ...extra };
}

/** Each RECORD message's record exactly as the tap wrote it: the bytes between the envelope's head and tail (its version and time_extracted). */
function recordTexts(stdout: string, stream: Stream): string[] {
  const head = `{"type":"RECORD","stream":${JSON.stringify(stream)},"record":`;
  return stdout
    .split('\n')
    .filter((line) => line.startsWith(head))
    .map((line) => line.slice(head.length, line.replace(/,"version":\d+(?=,"time_extracted":)/, '').lastIndexOf(',"time_extracted":')));
}

/** A state without the full passes' records, which hold when each pass ran: two runs of the same dump differ only there. */
/** A state but what names its run: the pass's time and version, and the change store's generation (each run writes its own). */
function withoutPassTimes(state: JsonObject): JsonObject {
  const copy = structuredClone(state) as { bookmarks: Record<string, JsonObject> };
  for (const bookmark of Object.values(copy.bookmarks)) {
    expect(bookmark.full_pass).toMatchObject({ at: expect.any(String), version: expect.any(Number) });
    delete bookmark.full_pass;
    expect(bookmark.store).toMatchObject({ generation: expect.any(String), rows: expect.any(Number) });
    (bookmark.store as JsonObject).generation = '…';
  }
  return copy;
}

/** The lines of the files a stream's BATCH messages name, in message order; each file must be complete. */
function batchLines(run: TapRun, stream: Stream, compression = 'gzip'): string[][] {
  return batchesOf(run.messages, stream).map((message) => {
    expect(message.encoding).toEqual({ format: 'jsonl', compression });
    expect(message.manifest).toHaveLength(1);
    const bytes = readFileSync(fileURLToPath(message.manifest[0]));
    const text = (compression === 'gzip' ? gunzipSync(bytes) : bytes).toString('utf8');
    expect(text.endsWith('\n')).toBe(true);
    return text.slice(0, -1).split('\n');
  });
}

function syncWith(config: JsonObject, state?: JsonObject): Promise<TapRun> {
  return syncOk({ config, ...(state === undefined ? {} : { state }) });
}

describe('BATCH mode', () => {
  for (const format of ['jsonl', 'csv'] as const) {
    it(`writes files whose records equal RECORD mode's, byte for byte and in order (${format})`, async () => {
      const directory = tempFolder('tap-batch-');
      const [records, batches] = await Promise.all([
        syncWith(tapConfig(sandbox, { format })),
        syncWith(tapConfig(sandbox, { format, batch_config: batchConfig(directory) })),
      ]);
      for (const stream of STREAM_NAMES) {
        const files = batchLines(batches, stream);
        expect(files.length).toBe(Math.ceil(sandbox.recordCount(stream) / 100));
        for (const lines of files.slice(0, -1)) expect(lines).toHaveLength(100);
        expect(files.flat()).toEqual(recordTexts(records.stdout, stream));
        expect(recordsOf(batches.messages, stream)).toEqual([]);
      }
      expect(withoutPassTimes(lastState(batches.messages))).toEqual(withoutPassTimes(lastState(records.messages)));
      expect(readdirSync(directory).filter((name) => !/^report-(training|phishing)-\d{8}T\d{6}Z-[0-9a-f]{8}-\d+\.jsonl\.gz$/.test(name))).toEqual([]);
    });
  }

  it('sends SCHEMA, then (a full pass) ACTIVATE_VERSION and the BATCH messages, then STATE, for each stream, and counts the files in a batch_count metric', async () => {
    const run = await syncWith(tapConfig(sandbox, { batch_config: batchConfig(tempFolder('tap-batch-')) }));
    const kinds = run.messages.map((m) => `${m.type} ${'stream' in m ? m.stream : ''}`.trim());
    expect(kinds).toEqual(['SCHEMA training', 'ACTIVATE_VERSION training', 'BATCH training', 'BATCH training', 'BATCH training', 'STATE', 'SCHEMA phishing', 'ACTIVATE_VERSION phishing', 'BATCH phishing', 'STATE']);
    const counts = run.stderr.split('\n').filter((line) => line.includes('"metric":"batch_count"')).map((line) => JSON.parse(line.slice(line.indexOf('{'))) as JsonObject);
    expect(counts.map((c) => [(c.tags as JsonObject).stream, c.value])).toEqual([['training', 3], ['phishing', 1]]);
  });

  it('writes plain JSONL with compression none, into file:// alone as singer-sdk in the temporary directory', async () => {
    const temp = tempFolder('tap-batch-');
    const run = await syncOk({ config: tapConfig(sandbox, { batch_config: { encoding: { format: 'jsonl', compression: 'none' } } }), env: { TMPDIR: temp } });
    const files = batchLines(run, 'phishing', 'none');
    expect(files.flat()).toHaveLength(75);
    expect(batchesOf(run.messages, 'phishing')[0].manifest[0]).toMatch(new RegExp(`^${pathToFileURL(join(temp, 'singer-sdk')).href}/phishing-\\d{8}T\\d{6}Z-[0-9a-f]{8}-1\\.jsonl$`));
  });

  it('never overwrites the files of an earlier run', async () => {
    const directory = tempFolder('tap-batch-');
    const config = tapConfig(sandbox, { batch_config: batchConfig(directory) });
    const first = await syncWith(config);
    const firstFiles = new Map(readdirSync(directory).map((name) => [name, statSync(join(directory, name)).mtimeMs]));
    const second = await syncWith(config);
    const names = (run: TapRun): string[] => batchesOf(run.messages).map((m) => m.manifest[0]);
    expect(names(second).filter((name) => names(first).includes(name))).toEqual([]);
    for (const [name, mtime] of firstFiles) expect(statSync(join(directory, name)).mtimeMs).toBe(mtime);
  });

  it('sends only the changed records on an incremental run', async () => {
    const own = await startTestSandbox({ trainingRecords: 120, phishingRecords: 40, seed: 8 });
    try {
      const directory = tempFolder('tap-batch-');
      const config = { ...tapConfig(own), batch_config: batchConfig(directory) };
      const first = await syncWith(config);
      own.append('training', 7);
      const second = await syncWith(config, lastState(first.messages));
      const lines = batchLines(second, 'training').flat();
      // The 7 new completions: the open rows, read again, did not change (the change store).
      expect(lines).toHaveLength(7);
      expect(batchesOf(second.messages, 'phishing')).toEqual([]);
      const records = await syncWith(tapConfig(own), lastState(first.messages));
      expect(lines).toEqual(recordTexts(records.stdout, 'training'));
    } finally {
      await own.close();
    }
  });

  /** A 600-record training dump broken at line 351, served whatever is asked. */
  async function brokenDump(): Promise<{ server: FakeServer; opened: Sandbox[] }> {
    const opened: Sandbox[] = [];
    const { body } = await trainingDump(opened, 600);
    const lines = body.toString('utf8').split('\n');
    lines[350] = '{"userId": "broken';
    return { server: await startFakeServer((_req, res) => sendDump(res, lines.join('\n'))), opened };
  }

  it('leaves no partial file and no STATE when an incremental run fails mid-dump; the files it announced stay complete', async () => {
    const { server, opened } = await brokenDump();
    try {
      const directory = tempFolder('tap-batch-');
      const config = { base_url: server.url, access_token: DEMO_TOKEN, discovery: 'packaged', batch_config: batchConfig(directory), send_changes_only: false };
      // A stream with a recent full pass and no bookmark yet: an incremental run that reads every record, none held back (a state made by hand: without the change store, which would not trust it).
      const state = { bookmarks: { training: { replication_key: 'completedAt', full_pass: { at: new Date().toISOString() } } } };
      const run = await syncTap({ config, catalog: catalogOf(['training']), state });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/line 351/);
      expect(run.stdout).not.toContain('"STATE"');
      const announced = batchesOf(run.messages, 'training').map((m) => fileURLToPath(m.manifest[0]));
      expect(announced).toHaveLength(3);
      expect(readdirSync(directory).map((name) => join(directory, name)).sort()).toEqual([...announced].sort());
      for (const file of announced) expect(gunzipSync(readFileSync(file)).toString('utf8').split('\n')).toHaveLength(101);
    } finally {
      await server.close();
      await Promise.all(opened.map((s) => s.close()));
    }
  });

  it('announces nothing of a full pass that fails mid-dump, and leaves none of its files: no ACTIVATE_VERSION, no BATCH, no STATE', async () => {
    const { server, opened } = await brokenDump();
    try {
      const directory = tempFolder('tap-batch-');
      const run = await syncTap({ config: { base_url: server.url, access_token: DEMO_TOKEN, discovery: 'packaged', batch_config: batchConfig(directory) }, catalog: catalogOf(['training']) });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/line 351/);
      expect(run.messages.map((m) => m.type)).toEqual(['SCHEMA']);
      expect(readdirSync(directory)).toEqual([]);
    } finally {
      await server.close();
      await Promise.all(opened.map((s) => s.close()));
    }
  });
});

describe('BATCH mode, stopped by an orchestrator', () => {
  it('removes its partial file on SIGTERM and still dies of that signal', async () => {
    const slow = await startTestSandbox({ trainingRecords: 3000, phishingRecords: 10, seed: 4, faults: { bodyBytesPerSecond: 150_000 } });
    try {
      const directory = tempFolder('tap-batch-');
      const config = writeTempJson({ ...tapConfig(slow), discovery: 'packaged', compression: 'none', batch_config: batchConfig(directory, { batch_size: 100_000 }) });
      const child = startTap(['--config', config]);
      await waitFor(() => readdirSync(directory).some((name) => name.endsWith('.partial')), 'a partial batch file appears');
      child.kill('SIGTERM');
      const [code, signal] = await child.closed;
      expect({ code, signal }).toEqual({ code: null, signal: 'SIGTERM' });
      expect(readdirSync(directory)).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});

describe('a bad batch_config', () => {
  const cases: Array<[string, JsonObject, RegExp]> = [
    ['an s3:// root', { storage: { root: 's3://bucket/batches' } }, /batch_config\.storage\.root must be a file:\/\/ URL .*s3:\/\/ storage is not supported/],
    ['a parquet format', { encoding: { format: 'parquet' } }, /batch_config\.encoding\.format must be one of jsonl/],
    ['a folder in the prefix', { storage: { root: 'file:///tmp', prefix: 'a/b-' } }, /batch_config\.storage\.prefix .* must not contain \//],
    ['a batch_size of 0', { batch_size: 0 }, /batch_config\.batch_size must be a whole number of at least 1/],
    ['storage params', { storage: { root: 'file:///tmp', params: { region: 'eu' } } }, /batch_config\.storage\.params is for remote storage/],
  ];
  for (const [what, batch, message] of cases) {
    it(`is a one-line config error with exit 2: ${what}`, async () => {
      const run = await runTap(['--config', writeTempJson(tapConfig(sandbox, { batch_config: batch }))]);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(message);
    });
  }

  it('names a root that cannot be created, before any request', async () => {
    const blocker = join(tempFolder('tap-batch-'), 'a-file');
    writeFileSync(blocker, '');
    const before = sandbox.requestsSeen().length;
    const run = await runTap(['--config', writeTempJson(tapConfig(sandbox, { discovery: 'packaged', batch_config: { storage: { root: pathToFileURL(join(blocker, 'batches')).href } } }))]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(`names ${join(blocker, 'batches')}, which cannot be created or written (ENOTDIR)`);
    expect(sandbox.requestsSeen()).toHaveLength(before);
    expect(existsSync(join(blocker, 'batches'))).toBe(false);
  });

  it('is refused by the Airbyte face, which has no BATCH message', async () => {
    const config = writeTempJson(tapConfig(sandbox, { batch_config: batchConfig(tempFolder('tap-batch-')) }));
    const run = await runTap(['airbyte', 'check', '--config', config]);
    expect(run.stdout).toContain('batch_config is for Singer targets');
  });
});
