import { readdirSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, SOURCE_CLI } from '../helpers/build.js';
import { runTap } from '../helpers/cli.js';
import { tempFolder, writeTempJson } from '../helpers/files.js';
import { startHeldTap, type HeldTap } from '../helpers/held-stdout.js';
import { runWithClosedStdout } from '../helpers/closed-stdout.js';
import { discoveredStreams, incrementalCatalog } from '../helpers/airbyte.js';
import { type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';
import type { JsonObject } from '../helpers/messages.js';

/**
 * The target goes away (it crashed, or `| head -1`): stdout's reader closes
 * it mid-run. The run stops, removes what it held, and says so in one line
 * on stderr with its own exit code: the consumer closed stdout after N
 * records, the state not advanced; never a stack trace, on both faces.
 * Against the sandbox, with a real pipe whose reader closes.
 */

const RECORDS = 3_000;
const EXIT_OUTPUT_CLOSED = 3;
/** The sync's line: the Singer face (tap-) names the target, the Airbyte face (source-) the destination. */
const CLOSED_LINE = /^(tap|source)-report-dump: error: Cannot write to stdout \(EPIPE\): the consumer closed the pipe after (\d+) records; the run stopped and the state was not advanced past the last STATE message sent\. Check the (target|destination)'s log for why it stopped reading\.$/;
let sandbox: Sandbox;

beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startTestSandbox({ trainingRecords: RECORDS, phishingRecords: 10 });
});

afterAll(async () => {
  await sandbox.close();
});

/** Reads stdout until `text` came, stops reading, does `meanwhile`, closes stdout, and waits for the run to end. */
async function closedAfter(tap: HeldTap, text: string, meanwhile = (): void => undefined): Promise<{ code: number | null; stderr: string; records: number }> {
  await tap.holdAfter(text);
  meanwhile();
  tap.closeStdout();
  const [code] = await tap.closed;
  const stderr = tap.stderr();
  const last = stderr.trimEnd().split('\n').at(-1) ?? '';
  const match = CLOSED_LINE.exec(last);
  expect(match, stderr).not.toBeNull();
  expect(match![3], 'the face names what reads its stdout').toBe(match![1] === 'tap' ? 'target' : 'destination');
  return { code, stderr, records: Number(match![2]) };
}

/** No Node stack trace, no "unexpected error": the one line is all the run says of it. */
function expectNoCrash(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toMatch(/unexpected error|Error: write EPIPE|node:internal/);
  expect(stderr.match(/Cannot write to stdout/g)).toHaveLength(1);
}

/** A batch file of the training stream under its final name: no partial file, no journal. */
const FILE = /^training-.+-\d+\.jsonl$/;

/** The file names the BATCH messages in `stdout` announce (whole lines only: the last may be cut where the reader stopped). */
function announcedIn(stdout: string): string[] {
  const lines = stdout.split('\n').slice(0, -1).map((line) => JSON.parse(line) as { type: string; manifest?: string[] });
  return lines.flatMap((message) => (message.type === 'BATCH' ? message.manifest!.map((url) => basename(fileURLToPath(url))) : []));
}

function config(extra: JsonObject = {}): string {
  return writeTempJson({ ...tapConfig(sandbox), discovery: 'packaged', ...extra });
}

describe('stdout closed by its reader', () => {
  it('a plain sync stops reading, says after how many records in one line, and exits with 3', async () => {
    const tap = startHeldTap(['sync', '--config', config({ emit_activate_version_messages: false })]);
    const run = await closedAfter(tap, '"type":"RECORD"');
    expect(run.code).toBe(EXIT_OUTPUT_CLOSED);
    expectNoCrash(run.stderr);
    expect(run.records).toBeGreaterThan(0);
    expect(run.records).toBeLessThan(RECORDS);
    expect(run.stderr).toMatch(/sync_duration.*"status":"failed"/);
  });

  it('a held full pass removes its spool (the spool folder is empty afterwards)', async () => {
    const spools = tempFolder('tap-spool-');
    const tap = startHeldTap(['sync', '--config', config({ spool_directory: spools })]);
    const run = await closedAfter(tap, '"type":"ACTIVATE_VERSION"');
    expect(run.code).toBe(EXIT_OUTPUT_CLOSED);
    expectNoCrash(run.stderr);
    expect(readdirSync(spools)).toEqual([]);
  });

  it('a held full pass in BATCH mode removes the files whose BATCH message stdout did not take: those left are the ones it took (as many as the line counts, every one the reader read among them), no partial file and no journal', async () => {
    const root = tempFolder('tap-batch-closed-');
    const batch = { encoding: { format: 'jsonl', compression: 'none' }, storage: { root: pathToFileURL(root).href }, batch_size: 1 };
    const tap = startHeldTap(['sync', '--config', config({ batch_config: batch })]);
    // The pass's files are all written before its first BATCH message; the pipe holds a few hundred messages, not 3000.
    let written: string[] = [];
    const run = await closedAfter(tap, '"type":"BATCH"', () => (written = readdirSync(root).filter((name) => FILE.test(name))));
    expect(run.code).toBe(EXIT_OUTPUT_CLOSED);
    expectNoCrash(run.stderr);
    expect(written).toHaveLength(RECORDS);
    const left = readdirSync(root);
    expect(left.every((name) => FILE.test(name)), left.join(', ')).toBe(true);
    // One record a file: the files left are exactly those whose BATCH message went into the pipe (the target may be loading them).
    expect(left).toHaveLength(run.records);
    const read = announcedIn(tap.stdout());
    expect(read.length).toBeGreaterThan(0);
    expect(left).toEqual(expect.arrayContaining(read));
    expect(left.length, 'files written and never announced are removed').toBeLessThan(written.length);
  });

  it('the Airbyte face (source-report-dump read) says the same in one line on stderr, without a stack trace', async () => {
    const cfg = config();
    const discovered = await runTap(['airbyte', 'discover', '--config', cfg]);
    expect(discovered.code, discovered.stderr).toBe(0);
    const catalog = writeTempJson(incrementalCatalog(discoveredStreams(discovered.stdout)));
    const tap = startHeldTap(['read', '--config', cfg, '--catalog', catalog], SOURCE_CLI);
    const run = await closedAfter(tap, '"type":"RECORD"');
    expect(run.code).toBe(EXIT_OUTPUT_CLOSED);
    expectNoCrash(run.stderr);
    expect(run.stderr).toMatch(/^source-report-dump: error: /m);
    expect(run.stderr).toMatch(/Check the destination's log for why it stopped reading\.$/m);
    expect(run.records).toBeLessThan(RECORDS);
  });
});

/** A command that keeps no state says its answer was cut off, and nothing of state or of a target. */
const CUT_OFF = /^(tap-report-dump|source-report-dump|tap-report-dump airbyte): error: Cannot write to stdout \(EPIPE\): the consumer closed the pipe; the output was cut off\.$/;

describe.concurrent('stdout closed before check or discover writes their answer', () => {
  const cases = [
    { what: 'tap-report-dump check', args: () => ['check', '--config', config()], bin: undefined },
    { what: 'tap-report-dump discover', args: () => ['discover', '--config', config()], bin: undefined },
    { what: 'source-report-dump check', args: () => ['check', '--config', config()], bin: SOURCE_CLI },
    { what: 'source-report-dump discover', args: () => ['discover', '--config', config()], bin: SOURCE_CLI },
    { what: 'tap-report-dump airbyte discover', args: () => ['airbyte', 'discover', '--config', config()], bin: undefined, program: 'tap-report-dump airbyte' },
  ];
  for (const { what, args, bin, program } of cases) {
    it(`${what}: one line saying the output was cut off, exit 3, no word of state`, async () => {
      const run = await runWithClosedStdout(args(), bin);
      // Named as it was called.
      if (program !== undefined) expect(run.stderr).toMatch(new RegExp(`^${program}: error: `, 'm'));
      expect(run.code, run.stderr).toBe(EXIT_OUTPUT_CLOSED);
      expectNoCrash(run.stderr);
      expect(run.stderr.trimEnd().split('\n').at(-1)).toMatch(CUT_OFF);
      expect(run.stderr).not.toMatch(/state|target|destination/i);
    });
  }
});
