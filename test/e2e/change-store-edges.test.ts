import { openSync, readdirSync, readFileSync, readSync, closeSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, syncOk, syncTap, type TapRun } from '../helpers/cli.js';
import { tempFolder, writeTempJson } from '../helpers/files.js';
import { lastState, type JsonObject } from '../helpers/messages.js';
import { ModelWarehouse } from '../helpers/model-warehouse.js';
import { AirbyteDedupTable, dedupOf } from '../helpers/airbyte-dedup.js';
import { airbyteMessages, discoveredStreams, incrementalCatalog, type ConfiguredStream } from '../helpers/airbyte.js';
import { catalogOf } from '../helpers/resilience-util.js';
import { startTenantServer, type TenantDumps } from '../helpers/tenant-server.js';
import type { FakeServer } from '../helpers/fake-server.js';
import { keysSectionOf } from '../helpers/store-rows.js';
import { passDue } from '../helpers/pass-due.js';

/**
 * The change store's edges, end to end over real HTTP (a tenant server
 * serving rows a test made, changed between runs): a run that sends rows
 * without the store leaves no generation a later run could trust; a damaged
 * keys section is refused at load, never copied forward; a key the dump
 * gives twice sends nothing once unchanged; a folder that runs without a
 * state keep bounded; record_count counts what went out.
 */

const servers: FakeServer[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** A completed training row of user `user`. */
const row = (user: string, progress: number, completedAt = '2025-06-01T10:00:00Z'): JsonObject => ({ userId: user, programId: 'p', moduleId: 'm', completed: true, completedAt, progress });

async function tenant(training: JsonObject[]): Promise<{ server: FakeServer; dumps: { training: JsonObject[]; phishing: JsonObject[] } }> {
  const dumps = { training, phishing: [] as JsonObject[] };
  const server = await startTenantServer(dumps as TenantDumps);
  servers.push(server);
  return { server, dumps };
}

function configOf(server: FakeServer, store: string, extra: JsonObject = {}): JsonObject {
  // The store in its folder: these are the folder's edges (store-travels.test.ts has the state's and the buckets').
  return { base_url: server.url, access_token: 'tok-anything', discovery: 'packaged', state_store_max_kb: 0, store_directory: store, ...extra };
}

/** `over` merged into `under` member by member, as Meltano merges a partial state into the last one. */
function mergedOver<T>(over: T, under: T): T {
  if (typeof over !== 'object' || over === null || typeof under !== 'object' || under === null || Array.isArray(over)) return over;
  const merged: Record<string, unknown> = { ...(under as Record<string, unknown>) };
  for (const [key, value] of Object.entries(over as Record<string, unknown>)) merged[key] = mergedOver(value, merged[key]);
  return merged as T;
}

const TRAINING_ONLY = catalogOf(['training']);
const FULL_TABLE = { streams: [{ tap_stream_id: 'training', stream: 'training', metadata: [{ breadcrumb: [], metadata: { selected: true, 'replication-method': 'FULL_TABLE' } }] }] };

/** A Singer run of the training stream, loaded into `warehouse`. */
async function singerRun(warehouse: ModelWarehouse, config: JsonObject, state?: unknown, catalog: unknown = TRAINING_ONLY): Promise<TapRun> {
  const run = await syncOk({ config, catalog, ...(state === undefined ? {} : { state }) });
  warehouse.load(run.stdout);
  return run;
}

const progressOf = (warehouse: ModelWarehouse, user: string): unknown => warehouse.rows('training').get(JSON.stringify([user, 'p', 'm']))?.progress;
const trainingRecords = (run: TapRun): JsonObject[] => run.messages.filter((m) => m.type === 'RECORD' && m.stream === 'training').map((m) => (m as { record: JsonObject }).record);

describe.concurrent('a run that sends rows without the store', () => {
  // Run 1 records u1 at 10; run 2, without the store, sends u1 at 20; u1 goes back to 10 before run 3.
  const cases: Array<[string, (store: string, server: FakeServer) => { config: JsonObject; catalog?: unknown }]> = [
    ['send_changes_only false', (store, server) => ({ config: configOf(server, store, { send_changes_only: false }) })],
    ['a FULL_TABLE run of the stream', (store, server) => ({ config: configOf(server, store), catalog: FULL_TABLE })],
    ['a store folder it cannot write', (store, server) => ({ config: configOf(server, join(store, 'not-a-folder', 'store')) })],
  ];

  it.each(cases)('(%s) leaves no generation in its state: the next run with the store makes a full pass, and a row that went back to what the old generation records reaches the target', async (_name, without) => {
    const store = tempFolder('tap-store-');
    const { server, dumps } = await tenant([row('u1', 10), row('u2', 50)]);
    // A file where the folder-less case's store folder would go: the store cannot be made there.
    writeTempFileAt(join(store, 'not-a-folder'));
    const warehouse = new ModelWarehouse('hard', 'remove');
    const first = await singerRun(warehouse, configOf(server, store));
    expect(lastState(first.messages).bookmarks!.training.store).toBeDefined();

    dumps.training = [row('u1', 20), row('u2', 50)];
    const { config, catalog } = without(store, server);
    const second = await singerRun(warehouse, config, passDue(lastState(first.messages)), catalog);
    expect(trainingRecords(second).map((r) => r.progress)).toContain(20);
    expect(progressOf(warehouse, 'u1')).toBe(20);

    dumps.training = [row('u1', 10), row('u2', 50)];
    const third = await singerRun(warehouse, configOf(server, store), passDue(lastState(second.messages)));
    expect(progressOf(warehouse, 'u1')).toBe(10);
    expect(lastState(second.messages).bookmarks!.training.store, 'no generation the next run could trust, said so a merge keeps').toEqual({ generation: null });
    expect(third.stderr).toMatch(/training: making a full pass instead of sending only what changed\. The state names no change store generation for stream training/);
    expect(lastState(third.messages).bookmarks!.training.store).toBeDefined();
  });

  it('(send_changes_only false) says so in a way a merge of states keeps: with its state merged over the last one (Meltano\'s --merge-state), the next run still makes a full pass and the row that went back reaches the target', async () => {
    const store = tempFolder('tap-store-');
    const { server, dumps } = await tenant([row('u1', 10), row('u2', 50)]);
    const warehouse = new ModelWarehouse('hard', 'remove');
    const first = await singerRun(warehouse, configOf(server, store));
    dumps.training = [row('u1', 20), row('u2', 50)];
    const second = await singerRun(warehouse, configOf(server, store, { send_changes_only: false }), passDue(lastState(first.messages)));
    dumps.training = [row('u1', 10), row('u2', 50)];
    await singerRun(warehouse, configOf(server, store), passDue(mergedOver(lastState(second.messages), lastState(first.messages))));
    expect(progressOf(warehouse, 'u1')).toBe(10);
  });

  it('that sends nothing (its read answered 304, or nothing new) keeps the generation: it still records what the target holds', async () => {
    const store = tempFolder('tap-store-');
    const { server } = await tenant([row('u1', 10)]);
    const warehouse = new ModelWarehouse('hard', 'remove');
    const first = await singerRun(warehouse, configOf(server, store));
    const generation = lastState(first.messages).bookmarks!.training.store;
    const second = await singerRun(warehouse, configOf(server, store, { send_changes_only: false }), lastState(first.messages));
    expect(trainingRecords(second)).toEqual([]);
    expect(lastState(second.messages).bookmarks!.training.store).toEqual(generation);
  });

  it('on the Airbyte face (a connection switched to full_refresh and back to incremental): the incremental read after it sends a row that went back, and the destination holds it', async () => {
    const store = tempFolder('tap-store-');
    const { server, dumps } = await tenant([row('u1', 10), row('u2', 50)]);
    const configPath = writeTempJson(configOf(server, store), 'config.json');
    const streams = discoveredStreams((await runTap(['airbyte', 'discover', '--config', configPath])).stdout).filter((s) => s.name === 'training');
    const incremental = incrementalCatalog(streams);
    const fullRefresh = { streams: incremental.streams.map((s): ConfiguredStream => ({ ...s, sync_mode: 'full_refresh', destination_sync_mode: 'overwrite' })) };
    const destination = new AirbyteDedupTable(dedupOf(incremental));
    const read = async (catalog: unknown, state?: unknown): Promise<TapRun> => {
      const args = ['airbyte', 'read', '--config', configPath, '--catalog', writeTempJson(catalog, 'catalog.json')];
      const run = await runTap(state === undefined ? args : [...args, '--state', writeTempJson(state, 'state.json')]);
      expect(run.code, run.stderr).toBe(0);
      return run;
    };
    const statesOf = (run: TapRun): unknown[] => airbyteMessages(run.stdout).filter((m) => m.type === 'STATE').map((m) => m.state);
    const first = await read(incremental);
    destination.load(first.stdout);
    dumps.training = [row('u1', 20), row('u2', 50)];
    const second = await read(fullRefresh, passDue(statesOf(first)));
    destination.load(second.stdout);
    dumps.training = [row('u1', 10), row('u2', 50)];
    const third = await read(incremental, passDue(statesOf(second)));
    destination.load(third.stdout);
    expect(destination.rows('training').get(JSON.stringify(['u1', 'p', 'm']))?.progress).toBe(10);
    expect(JSON.stringify(statesOf(second))).toMatch(/"store":\{"generation":null\}/);
  });
});

function flipByte(path: string, at: number): void {
  const fd = openSync(path, 'r+');
  try {
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, at);
    byte[0] ^= 0x5a;
    writeSync(fd, byte, 0, 1, at);
  } finally {
    closeSync(fd);
  }
}

function writeTempFileAt(path: string): void {
  closeSync(openSync(path, 'w'));
}

function generationsOf(store: string, stream = 'training'): string[] {
  const tenants = readdirSync(store).filter((name) => name !== 'not-a-folder');
  return tenants.flatMap((tenantName) => {
    const folder = join(store, tenantName, stream);
    try {
      return readdirSync(folder).filter((name) => name.endsWith('.gen')).map((name) => join(folder, name));
    } catch {
      return [];
    }
  });
}

describe.concurrent('a generation whose keys section is damaged', () => {
  it('is refused when a run loads it, in one line naming the file, and the run makes the fallback full pass; the damage never reaches a later generation, and the next change pass deletes as it should', async () => {
    const store = tempFolder('tap-store-');
    const { server, dumps } = await tenant([row('u1', 10), row('u2', 20), row('u3', 30)]);
    const warehouse = new ModelWarehouse('ignore', 'remove');
    const first = await singerRun(warehouse, configOf(server, store));
    const [file] = generationsOf(store);
    const keys = keysSectionOf(file);
    flipByte(file, keys.at + Math.floor(keys.length / 2));

    // Between passes: a new row, sent incrementally.
    dumps.training = [row('u1', 10), row('u2', 20), row('u3', 30), row('u4', 40, '2025-07-01T00:00:00Z')];
    const second = await singerRun(warehouse, configOf(server, store), lastState(first.messages));
    const damaged = second.stderr.split('\n').filter((line) => /is damaged: its keys are not those written/.test(line));
    expect(damaged, second.stderr).toHaveLength(1);
    expect(damaged[0]).toContain(file.split('/').at(-1)!.replace(/\.gen$/, ''));
    expect(second.stderr).toMatch(/making a full pass instead of sending only what changed/);

    // The next change pass: u2 left the dump.
    dumps.training = [row('u1', 10), row('u3', 30), row('u4', 40, '2025-07-01T00:00:00Z')];
    const third = await syncTap({ config: configOf(server, store), catalog: TRAINING_ONLY, state: passDue(lastState(second.messages)) });
    expect(third.code, third.stderr).toBe(0);
    warehouse.load(third.stdout);
    expect(third.stderr).not.toMatch(/damaged|changed while this run used it/);
    expect([...warehouse.rows('training').keys()].sort()).toEqual(['u1', 'u3', 'u4'].map((u) => JSON.stringify([u, 'p', 'm'])));
  });
});

describe.concurrent('a store written by the version before (generation format 1)', () => {
  /** Rewrites a generation file's header as format 1 wrote it (no repeats, no CRC of the keys), at the same length. */
  function asFormat1(path: string): void {
    const bytes = readFileSync(path);
    const end = bytes.indexOf(10);
    const { repeats, keys_crc32: _crc, ...header } = JSON.parse(bytes.toString('utf8', 0, end)) as JsonObject & { repeats: number; keys_crc32: number };
    expect(repeats).toBe(0);
    const line = JSON.stringify({ ...header, format: 1 }).padEnd(end, ' ');
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.from(line), 0, end, 0);
    closeSync(fd);
  }

  it('keeps working after the upgrade: the next run trusts it, sends nothing new, and writes it anew in the current format', async () => {
    const store = tempFolder('tap-store-');
    const { server } = await tenant([row('u1', 10), row('u2', 20)]);
    const first = await syncOk({ config: configOf(server, store), catalog: TRAINING_ONLY });
    const [file] = generationsOf(store);
    asFormat1(file);
    const next = await syncOk({ config: configOf(server, store), catalog: TRAINING_ONLY, state: passDue(lastState(first.messages)) });
    expect(next.stderr).not.toMatch(/making a full pass|damaged/);
    expect(trainingRecords(next)).toEqual([]);
    const generation = lastState(next.messages).bookmarks!.training.store!.generation!;
    expect(generation).not.toBe(lastState(first.messages).bookmarks!.training.store!.generation);
    const [rewritten] = generationsOf(store).filter((path) => path.includes(generation));
    expect(JSON.parse(readFileSync(rewritten, 'utf8').split('\n')[0])).toMatchObject({ format: 2, repeats: 0, rows: 2 });
  });
});

describe.concurrent('a key the dump gives twice', () => {
  it.each(['jsonl', 'csv'] as const)('%s: the target keeps the last row of the key; an unchanged dump then sends nothing, run after run, with one warning a run; a change of its last row goes out once', async (format) => {
    const store = tempFolder('tap-store-');
    const { server, dumps } = await tenant([row('u1', 5), row('u9', 10), row('u2', 7), row('u9', 20)]);
    const warehouse = new ModelWarehouse('hard', 'remove');
    const config = configOf(server, store, { format });
    let run = await singerRun(warehouse, config);
    expect(progressOf(warehouse, 'u9')).toBe(20);
    for (let day = 2; day <= 4; day++) {
      run = await singerRun(warehouse, config, passDue(lastState(run.messages)));
      expect(trainingRecords(run), `run ${day}`).toEqual([]);
      expect(progressOf(warehouse, 'u9'), `run ${day}`).toBe(20);
      expect(run.stderr.match(/key\(s\) came more than once in the dump/g), `run ${day}`).toHaveLength(1);
      expect(run.stderr).toMatch(/training: 1 key\(s\) came more than once in the dump \(key properties userId, programId, moduleId\); the target keeps the last row of each/);
    }
    dumps.training = [row('u1', 5), row('u9', 10), row('u2', 7), row('u9', 30)];
    run = await singerRun(warehouse, config, passDue(lastState(run.messages)));
    expect(trainingRecords(run).map((r) => [r.userId, r.progress])).toEqual([['u9', 30]]);
    expect(progressOf(warehouse, 'u9')).toBe(30);
    run = await singerRun(warehouse, config, passDue(lastState(run.messages)));
    expect(trainingRecords(run)).toEqual([]);
  });

  it('on the Airbyte face (a destination keeps either of a read\'s rows of a key: they tie): the next read sends the last row again, alone, so the destination holds it; later unchanged reads send nothing', async () => {
    const store = tempFolder('tap-store-');
    const { server } = await tenant([row('u9', 10), row('u1', 5), row('u9', 20)]);
    const configPath = writeTempJson(configOf(server, store), 'config.json');
    const streams = discoveredStreams((await runTap(['airbyte', 'discover', '--config', configPath])).stdout).filter((s) => s.name === 'training');
    const catalog = incrementalCatalog(streams);
    const catalogPath = writeTempJson(catalog, 'catalog.json');
    const destination = new AirbyteDedupTable(dedupOf(catalog));
    let state: unknown;
    for (let read = 1; read <= 3; read++) {
      const args = ['airbyte', 'read', '--config', configPath, '--catalog', catalogPath, ...(state === undefined ? [] : ['--state', writeTempJson(passDue(state), 'state.json')])];
      const run = await runTap(args);
      expect(run.code, run.stderr).toBe(0);
      destination.load(run.stdout);
      const messages = airbyteMessages(run.stdout);
      const records = messages.filter((m) => m.type === 'RECORD').map((m) => m.record!.data);
      if (read === 2) expect(records.map((r) => [r.userId, r.progress])).toEqual([['u9', 20]]);
      if (read === 3) expect(records).toEqual([]);
      if (read > 1) expect(destination.rows('training').get(JSON.stringify(['u9', 'p', 'm']))?.progress, `read ${read}`).toBe(20);
      state = messages.filter((m) => m.type === 'STATE').map((m) => m.state);
    }
  });
});

describe.concurrent('the store folder', () => {
  it('keeps at most three generations of a stream after ten runs without a state (a test, a lost state, --full-refresh), and a pipeline that runs with its state goes on from its own', async () => {
    const store = tempFolder('tap-store-');
    const { server } = await tenant([row('u1', 10), row('u2', 20)]);
    const config = configOf(server, store);
    for (let run = 0; run < 10; run++) await syncOk({ config, catalog: TRAINING_ONLY });
    expect(generationsOf(store).length).toBeLessThanOrEqual(3);
    const pipeline = await syncOk({ config, catalog: TRAINING_ONLY });
    let state = lastState(pipeline.messages);
    for (let run = 0; run < 2; run++) {
      const next = await syncOk({ config, catalog: TRAINING_ONLY, state });
      expect(next.stderr).not.toMatch(/making a full pass/);
      expect(trainingRecords(next)).toEqual([]);
      state = lastState(next.messages);
    }
    // Its first generation went once its third run confirmed the second's.
    expect(generationsOf(store).length).toBeLessThanOrEqual(3);
  });
});

describe.concurrent('record_count', () => {
  it('counts the RECORD messages a change pass sent (delete records apart, tagged deleted), rows_read the rows it read; the summary says both', async () => {
    const store = tempFolder('tap-store-');
    const rows = Array.from({ length: 40 }, (_, i) => row(`u${i}`, i));
    const { server, dumps } = await tenant(rows);
    const first = await syncOk({ config: configOf(server, store), catalog: TRAINING_ONLY });
    dumps.training = [...rows.slice(0, 3).map((r) => ({ ...r, progress: 99 })), ...rows.slice(3, 38)];
    const run = await syncOk({ config: configOf(server, store), catalog: TRAINING_ONLY, state: passDue(lastState(first.messages)) });
    const records = trainingRecords(run);
    expect(records).toHaveLength(5);
    const metrics = run.stderr
      .split('\n')
      .filter((line) => line.includes('METRIC: '))
      .map((line) => JSON.parse(line.slice(line.indexOf('METRIC: ') + 8)) as { metric: string; value: number; tags: JsonObject });
    const sum = (name: string, deleted: boolean) => metrics.filter((m) => m.metric === name && m.tags.stream === 'training' && (m.tags.deleted === true) === deleted).reduce((n, m) => n + m.value, 0);
    expect(sum('record_count', false)).toBe(3);
    expect(sum('record_count', true)).toBe(2);
    expect(sum('rows_read', false)).toBe(38);
    expect(run.stderr).toMatch(/training: 5 records in \d+\.\d s \(\d+\/s\), bookmark \S+; change pass; 38 rows read, 35 unchanged not sent, 2 deleted/);
  });
});

