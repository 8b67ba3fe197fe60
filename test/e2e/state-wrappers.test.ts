import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { syncOk } from '../helpers/cli.js';
import { activationsOf, lastState, recordsOf, statesOf } from '../helpers/messages.js';
import { type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';
import { tempFolder } from '../helpers/files.js';

/**
 * States as orchestrators hand them over, through the CLI against the
 * sandbox: Meltano's wrappers (what `meltano state get` prints, a state
 * backend's file) resume from their bookmarks; another tap's state is a first
 * run, with one warning naming what it held.
 */

let sandbox: Sandbox;

beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startTestSandbox({ trainingRecords: 120, phishingRecords: 80 });
});

afterAll(async () => {
  await sandbox.close();
});

const configOf = () => ({ ...tapConfig(sandbox), discovery: 'packaged', store_directory: tempFolder('tap-store-') });

describe.concurrent('a state handed over by Meltano', () => {
  it.each([
    ['as meltano state get prints it', (state: unknown) => ({ singer_state: state })],
    ['as a state backend keeps it', (state: unknown) => ({ completed: { singer_state: state }, partial: {} })],
  ])('%s: the run goes on from its bookmarks (no full pass, no ACTIVATE_VERSION, nothing re-sent), and its STATE is the tap\'s own, without the wrapper', async (_how, wrap) => {
    const config = configOf();
    const first = await syncOk({ config });
    const state = lastState(first.messages);
    const again = await syncOk({ config, state: wrap(state) });
    expect(activationsOf(again.messages)).toEqual([]);
    expect(again.stderr).not.toMatch(/plan: full pass|making a full pass|state holds no bookmark/);
    expect(again.stderr).toMatch(/training: plan: incremental from bookmark/);
    expect(recordsOf(again.messages, 'training')).toEqual([]);
    for (const message of statesOf(again.messages)) expect(Object.keys(message.value)).toEqual(['bookmarks']);
    expect(lastState(again.messages).bookmarks!.training.replication_key_value).toBe(state.bookmarks!.training.replication_key_value);
  });
});

describe.concurrent('another tap\'s state', () => {
  it('is a first run of the selected streams, with one warning naming the streams and members it held, never their values', async () => {
    const other = { currently_syncing: 'contacts', bookmarks: { contacts: { updated_at: '2025-01-01T00:00:00Z', last_email: 'someone@example.com' } } };
    const run = await syncOk({ config: configOf(), state: other });
    const warnings = run.stderr.split('\n').filter((line) => line.includes('The state holds no bookmark of'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('The state holds no bookmark of training, phishing (it holds bookmarks of contacts and the members currently_syncing), so they start as a first run.');
    expect(run.stderr).not.toContain('someone@example.com');
    expect(recordsOf(run.messages, 'training')).toHaveLength(120);
    expect(activationsOf(run.messages).map((m) => m.stream).sort()).toEqual(['phishing', 'training']);
  });
});
