import { chmodSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { type LiveTap, startTap, syncOk, waitFor } from '../helpers/cli.js';
import { tempFolder, writeTempJson } from '../helpers/files.js';
import { startHeldTap } from '../helpers/held-stdout.js';
import { age, asOtherHostsJournal } from '../helpers/leases.js';
import { batchesOf, parseMessages, type JsonObject, type SingerMessage } from '../helpers/messages.js';
import { type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';

/**
 * Batch files over a run's life, against the sandbox over real HTTP: they
 * and the directories the tap creates are owner-only whatever the umask;
 * each BATCH message reaches stdout as soon as its file is complete, while
 * the next one fills; and after a run killed with SIGKILL, the next run
 * removes the files it never announced and keeps those it did; a run of
 * another host (its journal names another pid space) only once its lease
 * expired, while a live one keeps its files by renewing the lease.
 */

/** lease.ts's LEASE_EXPIRY_MS, and a minute. */
const EXPIRED_MS = 11 * 60_000;

/** The journal of the one run in `directory` that has one, and that run's id. */
function journalOf(directory: string): { path: string; run: string } {
  const name = readdirSync(directory).find((file) => file.endsWith('.run'))!;
  return { path: join(directory, name), run: name.replace(/^r-tap-report-dump-(.+)\.run$/, '$1') };
}

/** Sets back the lease of a run: the time of its journal and of every file it wrote. */
function ageRun(directory: string, run: string): void {
  for (const name of readdirSync(directory).filter((file) => file.includes(run))) age(join(directory, name), EXPIRED_MS);
}

beforeAll(async () => {
  await ensureBuilt();
});

function batchConfig(directory: string, batchSize: number): JsonObject {
  return { encoding: { format: 'jsonl', compression: 'gzip' }, storage: { root: pathToFileURL(directory).href, prefix: 'r-' }, batch_size: batchSize };
}

/** An incremental run's state: a recent full pass and no bookmark yet, so the run reads every record and holds none back (without the change store: NO_STORE, which would not trust a state made by hand). */
const INCREMENTAL = { bookmarks: { training: { replication_key: 'completedAt', full_pass: { at: new Date().toISOString() } } } };
const NO_STORE = { send_changes_only: false };

/** A sync under the given umask (022 unless told), watched while it runs. */
function spawnTap(config: JsonObject, options: { umask?: string; state?: JsonObject } = {}): LiveTap {
  const state = options.state === undefined ? [] : ['--state', writeTempJson(options.state)];
  return startTap(['--config', writeTempJson(config), ...state], { umask: options.umask ?? '022' });
}

/** The files the BATCH messages announce, by their names in `directory`. */
function announcedFiles(messages: readonly SingerMessage[], directory: string): string[] {
  return batchesOf(messages).map((m) => fileURLToPath(m.manifest[0]).slice(directory.length + 1));
}

describe('batch files', () => {
  it('are owner-only (0600), and so are the directories the tap creates (0700), even under umask 000; a directory that exists keeps its mode', async () => {
    const sandbox = await startTestSandbox({ trainingRecords: 300, phishingRecords: 20 });
    try {
      const existing = tempFolder('tap-batch-life-');
      chmodSync(existing, 0o755);
      const root = join(existing, 'created', 'batches');
      const child = spawnTap({ ...tapConfig(sandbox), discovery: 'packaged', batch_config: batchConfig(root, 100) }, { umask: '000' });
      const [code] = await child.closed;
      expect(code).toBe(0);
      const announced = announcedFiles(parseMessages(child.lines.join('\n')), root);
      expect(announced.length).toBe(4);
      for (const name of announced) expect((statSync(join(root, name)).mode & 0o777).toString(8), name).toBe('600');
      expect([join(existing, 'created'), root].map((dir) => (statSync(dir).mode & 0o777).toString(8))).toEqual(['700', '700']);
      expect(statSync(existing).mode & 0o777).toBe(0o755);
      expect(readdirSync(root).sort()).toEqual([...announced].sort());
    } finally {
      await sandbox.close();
    }
  });

  it('are announced one by one as each is complete, while the next one fills (an incremental run)', async () => {
    // About 600 KB at 250 KB/s: the dump takes over two seconds, in files of 250 records.
    const slow: Sandbox = await startTestSandbox({ trainingRecords: 1500, phishingRecords: 10, faults: { bodyBytesPerSecond: 250_000 } });
    try {
      const directory = tempFolder('tap-batch-life-');
      const child = spawnTap({ ...tapConfig(slow), ...NO_STORE, discovery: 'packaged', compression: 'none', batch_config: batchConfig(directory, 250) }, { state: INCREMENTAL });
      const completeWhenAnnounced: number[] = [];
      child.onLine((line) => {
        if (line.includes('"type":"BATCH"') && line.includes('"training"')) completeWhenAnnounced.push(readdirSync(directory).filter((name) => name.startsWith('r-training-') && !name.endsWith('.partial')).length);
      });
      const [code] = await child.closed;
      expect(code).toBe(0);
      expect(completeWhenAnnounced).toHaveLength(6);
      // The first message arrived while most of the dump was still to come, not with the others at the end.
      expect(completeWhenAnnounced[0]).toBeLessThan(4);
    } finally {
      await slow.close();
    }
  });

  it('left by a run killed with SIGKILL are removed by the next run unless they were announced; the next run syncs as usual', async () => {
    const slow: Sandbox = await startTestSandbox({ trainingRecords: 3000, phishingRecords: 10, faults: { bodyBytesPerSecond: 300_000 } });
    try {
      const directory = tempFolder('tap-batch-life-');
      const config = { ...tapConfig(slow), ...NO_STORE, discovery: 'packaged', compression: 'none', batch_config: batchConfig(directory, 400) };
      const killed = spawnTap(config, { state: INCREMENTAL });
      await waitFor(() => killed.lines.some((line) => line.includes('"type":"BATCH"')) && readdirSync(directory).some((name) => name.endsWith('.partial')), 'a file announced and the next one filling');
      killed.kill('SIGKILL');
      await killed.closed;
      const announced = announcedFiles(parseMessages(killed.lines.join('\n')), directory);
      const left = readdirSync(directory);
      expect(left.filter((name) => name.endsWith('.partial') || name.endsWith('.run'))).toHaveLength(2);

      await slow.setFaults({ bodyBytesPerSecond: null });
      const next = spawnTap(config, { state: INCREMENTAL });
      const [code] = await next.closed;
      expect(code).toBe(0);
      const after = readdirSync(directory);
      expect(after.filter((name) => name.endsWith('.partial') || name.endsWith('.run'))).toEqual([]);
      // What the killed run announced stays for its target; what it did not is gone.
      const killedRun = announced[0].replace(/^r-training-(.+)-1\.jsonl$/, '$1');
      expect(after.filter((name) => name.includes(killedRun)).sort()).toEqual([...announced].sort());
      const nextFiles = announcedFiles(parseMessages(next.lines.join('\n')), directory);
      expect(after.filter((name) => !name.includes(killedRun)).sort()).toEqual([...nextFiles].sort());
    } finally {
      await slow.close();
    }
  });
});

describe('batch files of a full pass', () => {
  it('are announced only once the whole pass is written, after ACTIVATE_VERSION; killed before that, the next run removes every one of them', async () => {
    const slow: Sandbox = await startTestSandbox({ trainingRecords: 3000, phishingRecords: 10, faults: { bodyBytesPerSecond: 300_000 } });
    try {
      const directory = tempFolder('tap-batch-life-');
      const config = { ...tapConfig(slow), discovery: 'packaged', compression: 'none', batch_config: batchConfig(directory, 400) };
      const killed = spawnTap(config);
      const complete = (): string[] => readdirSync(directory).filter((name) => /^r-training-.*\.jsonl\.gz$/.test(name));
      await waitFor(() => complete().length >= 2, 'two files of the pass complete');
      killed.kill('SIGKILL');
      await killed.closed;
      // Complete files, and not one announced: the target never heard of them.
      expect(killed.lines.filter((line) => /"type":"(BATCH|ACTIVATE_VERSION)"/.test(line))).toEqual([]);
      expect(complete().length).toBeGreaterThanOrEqual(2);

      await slow.setFaults({ bodyBytesPerSecond: null });
      const next = spawnTap(config);
      const [code] = await next.closed;
      expect(code).toBe(0);
      const messages = parseMessages(next.lines.join('\n')).filter((m) => 'stream' in m && m.stream === 'training');
      expect(messages.map((m) => m.type)).toEqual(['SCHEMA', 'ACTIVATE_VERSION', ...Array(8).fill('BATCH')]);
      const announced = announcedFiles(messages, directory);
      expect(readdirSync(directory).filter((name) => name.startsWith('r-training-')).sort()).toEqual(announced.sort());
    } finally {
      await slow.close();
    }
  });

  it('held back when the run is stopped (SIGTERM) are removed with the partial one and the journal: the run dies of the signal and leaves nothing', async () => {
    const slow: Sandbox = await startTestSandbox({ trainingRecords: 3000, phishingRecords: 10, faults: { bodyBytesPerSecond: 300_000 } });
    try {
      const directory = tempFolder('tap-batch-life-');
      const stopped = spawnTap({ ...tapConfig(slow), discovery: 'packaged', compression: 'none', batch_config: batchConfig(directory, 400) });
      await waitFor(() => readdirSync(directory).filter((name) => /^r-training-.*\.jsonl\.gz$/.test(name)).length >= 2, 'two files of the pass complete, held back');
      stopped.kill('SIGTERM');
      const [code, signal] = await stopped.closed;
      expect({ code, signal }).toEqual({ code: null, signal: 'SIGTERM' });
      expect(stopped.lines.filter((line) => /"type":"(BATCH|ACTIVATE_VERSION)"/.test(line))).toEqual([]);
      expect(readdirSync(directory)).toEqual([]);
    } finally {
      await slow.close();
    }
  });

  it('whose BATCH line waits behind a target that stopped reading are removed when the run is stopped (SIGTERM): every file left is one a BATCH line named', async () => {
    const sandbox: Sandbox = await startTestSandbox({ trainingRecords: 3000, phishingRecords: 10 });
    try {
      const directory = tempFolder('tap-batch-life-');
      const config = { ...tapConfig(sandbox), discovery: 'packaged', compression: 'none', ...NO_STORE, batch_config: { ...batchConfig(directory, 1), encoding: { format: 'jsonl', compression: 'none' } } };
      const tap = startHeldTap(['--config', writeTempJson(config), '--state', writeTempJson(INCREMENTAL)]);
      // One record a file: the BATCH lines fill the pipe while the reader holds it, and the next file's line waits in the tap.
      await tap.holdAfter('"type":"BATCH"');
      // Until the files stop coming (10 polls alike): the pipe is full, and the next file's line waits in the tap.
      const seen: number[] = [];
      await waitFor(() => seen.push(readdirSync(directory).length) > 10 && seen.slice(-10).every((count) => count === seen.at(-1)), 'the run waits for the target');
      tap.kill('SIGTERM');
      // The target reads again only once the run is gone: a line that waited in the tap never reaches it.
      const [code, signal] = await tap.exited;
      tap.resume();
      await tap.closed;
      expect({ code, signal }).toEqual({ code: null, signal: 'SIGTERM' });
      const named = announcedFiles(parseMessages(tap.stdout().split('\n').filter((line) => line.endsWith('}')).join('\n')), directory);
      expect(named.length).toBeGreaterThan(0);
      const left = readdirSync(directory);
      expect(left.sort()).toEqual(named.sort());
    } finally {
      await sandbox.close();
    }
  });

  it('of a run killed on another host are kept while its lease is fresh, and removed by a later run once it expired', async () => {
    const slow: Sandbox = await startTestSandbox({ trainingRecords: 3000, phishingRecords: 10, faults: { bodyBytesPerSecond: 300_000 } });
    try {
      const directory = tempFolder('tap-batch-life-');
      const config = { ...tapConfig(slow), discovery: 'packaged', compression: 'none', batch_config: batchConfig(directory, 400) };
      const killed = spawnTap(config);
      await waitFor(() => readdirSync(directory).filter((name) => /^r-training-.*\.jsonl\.gz$/.test(name)).length >= 2, 'two files of the pass complete, held back');
      killed.kill('SIGKILL');
      await killed.closed;
      const { path, run } = journalOf(directory);
      asOtherHostsJournal(path);
      const left = readdirSync(directory).filter((name) => name.includes(run)).sort();
      expect(left.length).toBeGreaterThanOrEqual(4);

      await slow.setFaults({ bodyBytesPerSecond: null });
      await syncOk({ config, state: INCREMENTAL });
      expect(readdirSync(directory).filter((name) => name.includes(run)).sort()).toEqual(left);

      ageRun(directory, run);
      const later = await syncOk({ config, state: INCREMENTAL });
      expect(readdirSync(directory).filter((name) => name.includes(run))).toEqual([]);
      expect(later.stderr).toContain(`batch files: removed ${left.length - 1} file(s) that 1 earlier run(s) (${run}) wrote but never announced before they died`);
    } finally {
      await slow.close();
    }
  });

  it('of a live run on another host are left alone by a concurrent run while the run renews its lease; both announce their pass in full', async () => {
    // About 1.2 MB at 100 KB/s: the pass is held for some twelve seconds, its lease renewed within five and the concurrent run done well before.
    const slow: Sandbox = await startTestSandbox({ trainingRecords: 3000, phishingRecords: 10, faults: { bodyBytesPerSecond: 100_000 } });
    try {
      const directory = tempFolder('tap-batch-life-');
      const config = { ...tapConfig(slow), discovery: 'packaged', compression: 'none', batch_config: batchConfig(directory, 400) };
      const live = spawnTap(config);
      await waitFor(() => readdirSync(directory).some((name) => /^r-training-.*\.jsonl\.gz$/.test(name)), 'a file of the pass complete, held back');
      const { path, run } = journalOf(directory);
      asOtherHostsJournal(path);
      ageRun(directory, run);
      await waitFor(() => Date.now() - statSync(path).mtimeMs < 60_000, 'the live run renews its lease', 10_000);
      const held = readdirSync(directory).filter((name) => name.includes(run) && name.endsWith('.jsonl.gz'));

      await slow.setFaults({ bodyBytesPerSecond: null });
      // Another host: its own change store (one store would make it wait for the live run's lock on the stream).
      const concurrent = await syncOk({ config: { ...config, store_directory: tempFolder('tap-store-') } });
      expect(batchesOf(concurrent.messages).filter((m) => m.stream === 'training')).toHaveLength(8);
      expect(readdirSync(directory).filter((name) => name.includes(run))).toEqual(expect.arrayContaining([basename(path), ...held]));
      expect(live.lines.filter((line) => line.includes('"type":"ACTIVATE_VERSION"'))).toEqual([]);

      const [code] = await live.closed;
      expect(code).toBe(0);
      const messages = parseMessages(live.lines.join('\n')).filter((m) => 'stream' in m && m.stream === 'training');
      expect(messages.map((m) => m.type)).toEqual(['SCHEMA', 'ACTIVATE_VERSION', ...Array(8).fill('BATCH')]);
      const announced = announcedFiles(messages, directory);
      expect(announced).toEqual(expect.arrayContaining(held));
      expect(readdirSync(directory).filter((name) => name.includes(run)).sort()).toEqual(announcedFiles(batchesOf(parseMessages(live.lines.join('\n'))), directory).sort());
    } finally {
      await slow.close();
    }
  });
});
