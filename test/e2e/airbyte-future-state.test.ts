import { mkdtempSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { runSource, type TapRun } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { airbyteMessages, airbyteStates, discoveredStreams, incrementalCatalog, streamTimeline, type AirbyteMessage } from '../helpers/airbyte.js';
import { type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';
import type { JsonObject } from '../helpers/messages.js';

/**
 * Airbyte's acceptance suite (CAT, test_state_with_abnormally_large_values)
 * reads with a state whose bookmarks lie far in the future, in a fresh
 * container, and expects no record and a STATE. On the Airbyte face such a
 * stream is read not at all: a warning, its state sent back as it came, exit
 * 0; the change store of a fresh container makes no full pass of it. (The
 * Singer face refuses such a state: hostile-content.test.ts.)
 */

const FAR = '2999-12-31T00:00:00Z';

let sandbox: Sandbox;
let configPath: string;
let catalogPath: string;

beforeAll(async () => {
  sandbox = await startTestSandbox({ trainingRecords: 120, phishingRecords: 80 });
  configPath = writeTempJson(tapConfig(sandbox), 'config.json');
  const discovered = await runSource(['discover', '--config', configPath]);
  expect(discovered.code, discovered.stderr).toBe(0);
  catalogPath = writeTempJson(incrementalCatalog(discoveredStreams(discovered.stdout)), 'catalog.json');
});

afterAll(() => sandbox?.close());

/** A store folder no run has used, as a new container has. */
function freshStateHome(): string {
  return mkdtempSync(join(inject('tempRoot'), 'state-home-'));
}

async function readWith(state: unknown, stateHome: string): Promise<TapRun & { airbyte: AirbyteMessage[] }> {
  const statePath = writeTempJson(state, 'state.json');
  const run = await runSource(['read', '--config', configPath, '--catalog', catalogPath, '--state', statePath], { env: { XDG_STATE_HOME: stateHome } });
  return Object.assign(run, { airbyte: airbyteMessages(run.stdout) });
}

const warnings = (messages: readonly AirbyteMessage[]): string[] => messages.filter((m) => m.type === 'LOG' && m.log!.level === 'WARN').map((m) => m.log!.message);

/** What a read of far-future states must show: exit 0, no record, no dump requested, each stream's STATE as it came within its usual status lines, one warning a stream. */
function expectHeld(run: TapRun & { airbyte: AirbyteMessage[] }, incoming: Record<string, JsonObject>, fields: Record<string, string>): void {
  expect(run.code, run.stderr + run.stdout.slice(-2000)).toBe(0);
  expect(run.airbyte.filter((m) => m.type === 'RECORD')).toEqual([]);
  expect(airbyteStates(run.airbyte).map((s) => [s.stream.stream_descriptor.name, s.stream.stream_state])).toEqual(Object.entries(incoming));
  for (const stream of Object.keys(incoming)) {
    expect(streamTimeline(run.airbyte, stream)).toEqual(['STARTED', 'RUNNING', 'STATE 0', 'COMPLETE']);
    expect(warnings(run.airbyte).filter((w) => w.startsWith(`${stream}:`))).toEqual([
      expect.stringMatching(new RegExp(`^${stream}: the state's bookmark ${fields[stream]} ${FAR} lies in the future \\(after \\S+Z, now plus max_future_skew\\): reading nothing of this stream and sending its state back as it came\\. `)),
    ]);
  }
}

describe('a state whose bookmarks lie far in the future, on the Airbyte face', () => {
  it('per-stream states: exit 0, no record and no request, each STATE as it came, a warning naming the stream, its bookmark field and date; the next read from that STATE does the same', async () => {
    const incoming = {
      training: { replication_key: 'completedAt', replication_key_value: FAR, boundary_hashes: [] },
      phishing: { replication_key: 'sentAt', replication_key_value: FAR },
    };
    const state = Object.entries(incoming).map(([name, stream_state]) => ({ type: 'STREAM', stream: { stream_descriptor: { name }, stream_state } }));
    const stateHome = freshStateHome();
    const asked = sandbox.requestsSeen().length;
    const first = await readWith(state, stateHome);
    expectHeld(first, incoming, { training: 'completedAt', phishing: 'sentAt' });
    // No full pass, no change pass: not one dump was asked for.
    expect(sandbox.requestsSeen().slice(asked)).toEqual([]);

    // The state that went out is the one that came: the next read from it behaves the same, in the same container.
    const again = await readWith(airbyteStates(first.airbyte), stateHome);
    expectHeld(again, incoming, { training: 'completedAt', phishing: 'sentAt' });
    expect(sandbox.requestsSeen().slice(asked)).toEqual([]);
  });

  it('a legacy state (its bookmarks under the replication key\'s own name): the same, each stream\'s STATE the bookmark as it came', async () => {
    const incoming = { training: { completedAt: FAR }, phishing: { sentAt: FAR } };
    const stateHome = freshStateHome();
    const asked = sandbox.requestsSeen().length;
    const run = await readWith({ type: 'LEGACY', data: { bookmarks: incoming } }, stateHome);
    expectHeld(run, incoming, { training: 'completedAt', phishing: 'sentAt' });
    expect(sandbox.requestsSeen().slice(asked)).toEqual([]);
    // Nothing of the change store was written for the streams it did not read.
    expect(readdirSync(stateHome, { recursive: true }).filter((path) => /training|phishing/.test(String(path)))).toEqual([]);
  });

  it('one stream far ahead, the other not: the other is read as usual', async () => {
    const stateHome = freshStateHome();
    const run = await readWith([{ type: 'STREAM', stream: { stream_descriptor: { name: 'phishing' }, stream_state: { replication_key: 'sentAt', replication_key_value: FAR } } }], stateHome);
    expect(run.code, run.stderr).toBe(0);
    expect(run.airbyte.filter((m) => m.type === 'RECORD' && m.record!.stream === 'training')).toHaveLength(120);
    expect(run.airbyte.filter((m) => m.type === 'RECORD' && m.record!.stream === 'phishing')).toEqual([]);
    expect(streamTimeline(run.airbyte, 'phishing')).toEqual(['STARTED', 'RUNNING', 'STATE 0', 'COMPLETE']);
    expect(airbyteStates(run.airbyte).find((s) => s.stream.stream_descriptor.name === 'phishing')!.stream.stream_state).toEqual({ replication_key: 'sentAt', replication_key_value: FAR });
    // The change store holds the stream it read, and nothing of the one it did not.
    const stored = readdirSync(stateHome, { recursive: true }).map(String);
    expect(stored.some((path) => path.includes('training'))).toBe(true);
    expect(stored.filter((path) => path.includes('phishing'))).toEqual([]);
  });
});

describe('a bookmark ahead but within max_future_skew at its maximum, in a fresh container', () => {
  /** The states a first read in a new container leaves, each bookmark moved to `date`, as a user testing the source by hand would. */
  async function firstReadStatesMovedTo(config: string, date: string): Promise<JsonObject[]> {
    const first = await runSource(['read', '--config', config, '--catalog', catalogPath], { env: { XDG_STATE_HOME: freshStateHome() } });
    expect(first.code, first.stderr).toBe(0);
    const last = new Map(airbyteStates(airbyteMessages(first.stdout)).map((s) => [s.stream.stream_descriptor.name, s]));
    return [...last.values()].map((s) => ({ type: 'STREAM', stream: { ...s.stream, stream_state: { ...s.stream.stream_state, replication_key_value: date } } }));
  }

  async function readFresh(config: string, state: unknown): Promise<AirbyteMessage[]> {
    const run = await runSource(['read', '--config', config, '--catalog', catalogPath, '--state', writeTempJson(state, 'state.json')], { env: { XDG_STATE_HOME: freshStateHome() } });
    expect(run.code, run.stderr).toBe(0);
    return airbyteMessages(run.stdout);
  }

  it('reads the bookmark as it is and sends no record: the change store came in the state, so the new container makes no full pass (issue 38: all rows came back when it did)', async () => {
    const config = writeTempJson(tapConfig(sandbox, { max_future_skew: 315360000 }), 'config.json');
    const state = await firstReadStatesMovedTo(config, '2036-01-01T00:00:00Z');
    const messages = await readFresh(config, state);
    expect(messages.filter((m) => m.type === 'RECORD')).toEqual([]);
    expect(warnings(messages).filter((w) => w.includes('lies in the future'))).toEqual([]);
    expect(airbyteStates(messages).map((s) => s.stream.stream_state.replication_key_value)).toEqual(['2036-01-01T00:00:00Z', '2036-01-01T00:00:00Z']);
  });

  it('with the store kept out of the state (state_store_max_kb 0) and no folder that persists, the same read makes a full pass, saying why: what the store in the state prevents', async () => {
    const config = writeTempJson(tapConfig(sandbox, { max_future_skew: 315360000, state_store_max_kb: 0 }), 'config.json');
    const state = await firstReadStatesMovedTo(config, '2036-01-01T00:00:00Z');
    const messages = await readFresh(config, state);
    expect(messages.filter((m) => m.type === 'RECORD').length).toBe(sandbox.recordCount('training') + sandbox.recordCount('phishing'));
    expect(warnings(messages).filter((w) => w.includes('making a full pass instead of sending only what changed'))).toHaveLength(2);
  });
});
