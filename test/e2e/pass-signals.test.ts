import { readdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { tempFolder, writeTempJson } from '../helpers/files.js';
import { startHeldTap } from '../helpers/held-stdout.js';
import { activationsOf, batchesOf, parseMessages, recordMessages, statesOf, type JsonObject } from '../helpers/messages.js';
import { type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';

/**
 * A stop signal once ACTIVATE_VERSION is out: targets delete every row the
 * pass does not send after the message, so the run sends the whole pass
 * first (saying what the stop waits for), then dies of the signal without
 * its STATE, leaving nothing behind. Against the sandbox, with a target that
 * stops reading right after the message (the pipe fills, the replay waits).
 */

const RECORDS = 1_000;
let sandbox: Sandbox;

beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startTestSandbox({ trainingRecords: RECORDS, phishingRecords: 10 });
});

afterAll(async () => {
  await sandbox.close();
});

/** A first run (a full pass that activates), SIGTERM sent while the target holds stdout right after ACTIVATE_VERSION. */
async function stoppedAfterActivation(config: JsonObject): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const catalogless = { ...tapConfig(sandbox), discovery: 'packaged', ...config };
  const tap = startHeldTap(['--config', writeTempJson(catalogless)]);
  await tap.holdAfter('"type":"ACTIVATE_VERSION"');
  tap.kill('SIGTERM');
  // The target reads again after a while, and slowly: the run must still be there to finish the pass, and its last writes must reach it.
  await new Promise((resolve) => setTimeout(resolve, 300));
  tap.resumeSlowly(16_384, 10);
  const [code, signal] = await tap.closed;
  return { code, signal, stdout: tap.stdout(), stderr: tap.stderr() };
}

describe.concurrent('a stop signal after ACTIVATE_VERSION', () => {
  it('waits until every record of the spooled pass went out, says so, then ends the run by that signal, without STATE and without a spool left', async () => {
    const spools = tempFolder('tap-spool-');
    const run = await stoppedAfterActivation({ spool_directory: spools });
    expect({ code: run.code, signal: run.signal }).toEqual({ code: null, signal: 'SIGTERM' });
    const messages = parseMessages(run.stdout);
    const [activation] = activationsOf(messages, 'training');
    const after = messages.slice(messages.indexOf(activation) + 1);
    expect(recordMessages(after, 'training')).toHaveLength(RECORDS);
    expect(statesOf(messages)).toEqual([]);
    const waits = /SIGTERM received after ACTIVATE_VERSION: the stop waits for the (\d+) records of the pass still to be sent/.exec(run.stderr);
    expect(waits, run.stderr).not.toBeNull();
    expect(Number(waits![1])).toBeGreaterThan(0);
    expect(Number(waits![1])).toBeLessThan(RECORDS);
    expect(run.stderr).toMatch(/stopping for SIGTERM now that the full pass is sent; the state was not advanced/);
    expect(readdirSync(spools)).toEqual([]);
  });

  it('in BATCH mode waits until every held file is announced, and keeps the files (a target may be loading them)', async () => {
    const root = tempFolder('tap-batch-stop-');
    const batch = { encoding: { format: 'jsonl', compression: 'none' }, storage: { root: pathToFileURL(root).href }, batch_size: 1 };
    const run = await stoppedAfterActivation({ batch_config: batch });
    expect({ code: run.code, signal: run.signal }).toEqual({ code: null, signal: 'SIGTERM' });
    const messages = parseMessages(run.stdout);
    const [activation] = activationsOf(messages, 'training');
    const announced = batchesOf(messages.slice(messages.indexOf(activation) + 1), 'training');
    expect(announced).toHaveLength(RECORDS);
    expect(run.stderr).toMatch(/SIGTERM received after ACTIVATE_VERSION: the stop waits for the pass's 1000 BATCH messages to reach the target/);
    expect(statesOf(messages)).toEqual([]);
    // Every announced file is there, and nothing else is (no journal, no partial file).
    expect(readdirSync(root).sort()).toEqual(announced.map((m) => decodeURIComponent(m.manifest[0].split('/').at(-1)!)).sort());
  });

  it('leaves no spool when the target goes away while the pass is sent (the run fails, its state not advanced)', async () => {
    const spools = tempFolder('tap-spool-');
    const tap = startHeldTap(['--config', writeTempJson({ ...tapConfig(sandbox), discovery: 'packaged', spool_directory: spools })]);
    await tap.holdAfter('"type":"ACTIVATE_VERSION"');
    tap.closeStdout();
    const [code] = await tap.closed;
    expect(code).not.toBe(0);
    expect(readdirSync(spools)).toEqual([]);
  });
});
