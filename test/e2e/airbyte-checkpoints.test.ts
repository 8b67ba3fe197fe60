import { cpSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { runSource, type TapRun } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { airbyteMessages, discoveredStreams, incrementalCatalog, serviceFields, streamTimeline, type AirbyteStreamState, type ConfiguredStream } from '../helpers/airbyte.js';
import { AirbyteDedupTable, dedupOf } from '../helpers/airbyte-dedup.js';
import { rowsByKey, STREAM_NAMES, type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';

/**
 * STATE checkpoints between the reads of a stream's run (Airbyte's
 * acceptance suite resumes from each STATE of a read: test_read_sequential_slices),
 * each safe to resume from: a read cut right after any STATE and run again
 * from the states sent so far, against the same sandbox, with the change
 * store as it was before the cut read (the run died there), loses no row:
 * the destination's append_dedup table then holds every row's latest version.
 */

let sandbox: Sandbox;
let configPath: string;
let catalog: { streams: ConfiguredStream[] };
let catalogPath: string;

beforeAll(async () => {
  sandbox = await startTestSandbox({ trainingRecords: 200, phishingRecords: 60 });
  // A start_date makes the first read's full pass filter by date, so training's open rows are a read of their own.
  configPath = writeTempJson(tapConfig(sandbox, { start_date: '2000-01-01T00:00:00Z' }), 'config.json');
  const discovered = await runSource(['discover', '--config', configPath]);
  expect(discovered.code, discovered.stderr).toBe(0);
  catalog = incrementalCatalog(discoveredStreams(discovered.stdout));
  catalogPath = writeTempJson(catalog, 'catalog.json');
});

afterAll(() => sandbox?.close());

function folder(prefix: string): string {
  return mkdtempSync(join(inject('tempRoot'), prefix));
}

/** A copy of a change store folder, as a run that died left it for the next. */
function copyOf(home: string): string {
  const copy = folder('store-copy-');
  cpSync(home, copy, { recursive: true });
  return copy;
}

async function read(state: readonly AirbyteStreamState[] | undefined, home: string): Promise<TapRun> {
  const stateArgs = state === undefined ? [] : ['--state', writeTempJson(state.map((s) => ({ type: 'STREAM', stream: s.stream })), 'state.json')];
  const run = await runSource(['read', '--config', configPath, '--catalog', catalogPath, ...stateArgs], { env: { XDG_STATE_HOME: home } });
  expect(run.code, run.stderr + run.stdout.slice(-2000)).toBe(0);
  return run;
}

/** The per-stream states a platform holds after `lines`: the given ones, each replaced by the latest STATE of its stream among the lines. */
function statesAfter(given: readonly AirbyteStreamState[], lines: readonly string[]): AirbyteStreamState[] {
  const latest = new Map(given.map((s) => [s.stream.stream_descriptor.name, s]));
  for (const message of airbyteMessages(lines.join('\n'))) if (message.type === 'STATE') latest.set(message.state!.stream.stream_descriptor.name, message.state!);
  return [...latest.values()];
}

/** The line numbers of a read's STATE messages that are not the last of their stream: its checkpoints. */
function checkpointLines(stdout: string): number[] {
  const lines = stdout.trim().split('\n');
  const states = lines.map((line, index) => ({ index, message: JSON.parse(line) as { type: string; state?: AirbyteStreamState } })).filter(({ message }) => message.type === 'STATE');
  return states.filter(({ message }, i) => states.slice(i + 1).some((later) => later.message.state!.stream.stream_descriptor.name === message.state!.stream.stream_descriptor.name)).map(({ index }) => index);
}

/** The destination's table after loading each of these stdouts in turn equals the sandbox now, row for row, every stream. */
function expectEveryLatestRow(stdouts: readonly string[], what: string): void {
  const table = new AirbyteDedupTable(dedupOf(catalog));
  for (const stdout of stdouts) table.load(stdout);
  for (const stream of STREAM_NAMES) {
    const held = new Map([...table.rows(stream)].map(([key, data]) => [key, serviceFields(data)]));
    expect(held, `${stream}, ${what}`).toEqual(rowsByKey(sandbox, stream));
  }
}

/**
 * Cuts `run` after each of its checkpoints, resumes from the states sent up
 * to there with the store as it was before `run` (`storeBefore`), and checks
 * the destination then holds every row's latest version.
 */
async function expectEachCheckpointResumable(run: TapRun, given: readonly AirbyteStreamState[], storeBefore: string, earlier: readonly string[]): Promise<number> {
  const lines = run.stdout.trim().split('\n');
  const cuts = checkpointLines(run.stdout);
  for (const cut of cuts) {
    const sent = lines.slice(0, cut + 1);
    const resumed = await read(statesAfter(given, sent), copyOf(storeBefore));
    expectEveryLatestRow([...earlier, sent.join('\n'), resumed.stdout], `resumed from the STATE on line ${cut + 1}`);
  }
  return cuts.length;
}

describe('STATE checkpoints between the reads of a stream', () => {
  it('a first read checkpoints training after its full pass, before its open rows; resuming from any STATE it sent loses no row', async () => {
    const home = folder('state-home-');
    const storeBefore = copyOf(home);
    const first = await read(undefined, home);
    const messages = airbyteMessages(first.stdout);
    const open = [...sandbox.records('training')].filter((r) => r.completedAt === null).length;
    expect(open).toBeGreaterThan(0);
    expect(streamTimeline(messages, 'training')).toEqual(['STARTED', 'RUNNING', `RECORD×${200 - open}`, `STATE ${200 - open}`, `RECORD×${open}`, `STATE ${open}`, 'COMPLETE']);
    // phishing has no open rows: one read, one STATE.
    expect(streamTimeline(messages, 'phishing')).toEqual(['STARTED', 'RUNNING', 'RECORD×60', 'STATE 60', 'COMPLETE']);
    expectEveryLatestRow([first.stdout], 'the whole first read');
    expect(await expectEachCheckpointResumable(first, [], storeBefore, [])).toBe(1);
  });

  it('an incremental read after changes checkpoints after its new records, before the open rows; resuming from it, with the change store as it was, loses no row', async () => {
    const home = folder('state-home-');
    const first = await read(undefined, home);
    const states = statesAfter([], first.stdout.trim().split('\n'));
    const storeBefore = copyOf(home);
    sandbox.append('training', 6);
    sandbox.update('training', 8);
    const second = await read(states, home);
    const timeline = streamTimeline(airbyteMessages(second.stdout), 'training');
    expect(timeline.filter((step) => step.startsWith('STATE'))).toHaveLength(2);
    expect(timeline[3]).toMatch(/^STATE [1-9]/);
    expectEveryLatestRow([first.stdout, second.stdout], 'the two whole reads');
    expect(await expectEachCheckpointResumable(second, states, storeBefore, [first.stdout])).toBe(1);
  });
});
