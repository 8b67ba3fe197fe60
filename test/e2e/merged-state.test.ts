import { cpSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { syncOk } from '../helpers/cli.js';
import { tempFolder } from '../helpers/files.js';
import { lastState, recordMessages, type StateValue } from '../helpers/messages.js';
import { type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';

/**
 * Meltano merges a run's partial state over the last completed one (a state
 * backend's {completed, partial}, --merge-state). A store that moved out of
 * the state (it outgrew state_store_max_kb) must not leave the old
 * generation's data behind under the merge: the next run would read that
 * stale generation under the new one's name, re-send rows and miss
 * deletions, silently.
 */

let sandbox: Sandbox;

beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startTestSandbox({ seed: 41, trainingRecords: 400, phishingRecords: 400 });
});

afterAll(() => sandbox.close());

const dueForChangePass = (state: StateValue): StateValue => {
  const copy = JSON.parse(JSON.stringify(state)) as { bookmarks: Record<string, { full_pass?: { at: string }; change_pass?: unknown }> };
  for (const bookmark of Object.values(copy.bookmarks)) {
    bookmark.full_pass!.at = new Date(Date.now() - 2 * 86_400_000).toISOString();
    delete bookmark.change_pass;
  }
  return copy as unknown as StateValue;
};

describe('a store that moved from the state to the folder, under a merged state', () => {
  it('the merged state reads the folder\'s generation, as the state of the last run does: the same records and no stale data', async () => {
    const folder = tempFolder('merged-store-');
    const first = await syncOk({ config: tapConfig(sandbox, { store_directory: folder, state_store_max_kb: 1024 }) });
    const inState = lastState(first.messages);
    expect(JSON.stringify(inState)).toContain('"data":"');
    sandbox.simulateDays(5);
    const second = await syncOk({ config: tapConfig(sandbox, { store_directory: folder, state_store_max_kb: 0 }), state: dueForChangePass(inState) });
    const moved = lastState(second.messages);
    expect(JSON.stringify(moved)).not.toContain('"data":"');
    sandbox.simulateDays(10);

    const control = tempFolder('merged-control-');
    cpSync(folder, control, { recursive: true });
    const merged = { completed: { singer_state: dueForChangePass(inState) }, partial: { singer_state: dueForChangePass(moved) } } as unknown as StateValue;
    const byMerge = await syncOk({ config: tapConfig(sandbox, { store_directory: folder, state_store_max_kb: 0 }), state: merged });
    const byLast = await syncOk({ config: tapConfig(sandbox, { store_directory: control, state_store_max_kb: 0 }), state: dueForChangePass(moved) });
    // A delete record's time is the run's own second: the two runs may differ in it, not in which rows they delete.
    const records = (run: typeof byMerge) => recordMessages(run.messages).map((message) => JSON.stringify({ ...message.record, _sdc_deleted_at: message.record._sdc_deleted_at === undefined ? undefined : 'deleted' })).sort();
    expect(records(byMerge).length).toBeGreaterThan(0);
    expect(records(byMerge)).toEqual(records(byLast));
  });
});
