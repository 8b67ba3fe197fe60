import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { defaultSelection } from '../../src/catalog/selection.js';
import { runSync } from '../../src/sync/run.js';
import { singer } from '../../src/singer/messages.js';
import { createLogger } from '../../src/observe/log.js';
import type { TapState } from '../../src/state.js';
import type { StreamSummary } from '../../src/sync/output/stream-stats.js';
import { tempFolder } from '../helpers/files.js';
import { lastState, parseMessages, recordsOf } from '../helpers/messages.js';
import { DEMO_TOKEN, type Sandbox, startTestSandbox } from '../helpers/sandbox.js';

/**
 * The daily change pass on a real schedule: the tap runs in process, over
 * real HTTP against the sandbox, once a simulated day at 06:00 with a
 * scheduler's jitter (the clock is the test's), sending only what changed
 * with its store in a temporary folder. A run that starts 2 minutes, or 2
 * seconds, earlier than yesterday's is the day's change pass: it deletes the
 * day's leavers, and says so in its plan line.
 */

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox({ seed: 7, trainingRecords: 300, phishingRecords: 200 });
});

afterAll(async () => {
  await sandbox.close();
});

interface Run {
  readonly stdout: string;
  readonly state: TapState;
  readonly summaries: readonly StreamSummary[];
  readonly lines: readonly string[];
}

/** One run of the tap starting at `now` (the sandbox's history ends on 2026-01-01), from `state`, with its log lines. */
async function runAt(now: string, state: TapState | undefined, store: string): Promise<Run> {
  const config = resolveConfig({ base_url: sandbox.url, access_token: DEMO_TOKEN, discovery: 'packaged', send_changes_only: true, store_directory: store });
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', sink: (_level, message) => lines.push(message) });
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
  const streams = defaultSelection(discoverStreams(config));
  const summaries = await runSync({ config, streams, state, out, protocol: singer, logger, redact: (text) => text, now: () => Date.parse(now) });
  const stdout = Buffer.concat(chunks).toString('utf8');
  return { stdout, state: lastState(parseMessages(stdout)) as TapState, summaries, lines };
}

const planLineOf = (run: Run, stream: string): string | undefined => run.lines.find((line) => line.startsWith(`${stream}: plan: `));
const deletedUsers = (run: Run, stream: string): Set<unknown> => new Set(recordsOf(parseMessages(run.stdout), stream).filter((r) => typeof r._sdc_deleted_at === 'string').map((r) => r.userId));

describe('the daily change pass under a cron schedule at 06:00 with jitter', () => {
  it('is made by every day\'s run: 2 minutes and 2 seconds short of 24 h after the last included, deleting that day\'s leavers; a second run the same day is incremental', async () => {
    const store = tempFolder('tap-schedule-');
    const first = await runAt('2026-01-02T06:00:00Z', undefined, store);
    expect(planLineOf(first, 'training')).toMatch(/^training: plan: full pass \(first run/);
    let state = first.state;

    for (const now of ['2026-01-03T05:58:00Z', '2026-01-04T05:59:58Z', '2026-01-05T05:59:56Z']) {
      const [day] = sandbox.simulateDays(1);
      expect(day.leavers.length, `${day.day}: leavers`).toBeGreaterThan(0);
      const run = await runAt(now, state, store);
      for (const stream of ['training', 'phishing']) {
        expect(run.summaries.find((s) => s.stream === stream)?.changePass, `${now} ${stream}`).toBe(true);
        expect(planLineOf(run, stream), `${now} ${stream}`).toMatch(new RegExp(`^${stream}: plan: change pass \\(`));
      }
      // The day's leavers are deleted by this run, not the next day's.
      const deleted = [...deletedUsers(run, 'training'), ...deletedUsers(run, 'phishing')];
      expect(deleted.length, now).toBeGreaterThan(0);
      expect(deleted.filter((user) => !day.leavers.includes(user as string)), now).toEqual([]);
      // The state records the 06:00 grid point the pass fell due at.
      expect(run.state.bookmarks?.training.change_pass).toEqual({ at: now, due: `${now.slice(0, 10)}T06:00:00Z` });
      state = run.state;
    }

    const again = await runAt('2026-01-05T06:59:56Z', state, store);
    expect(again.summaries.find((s) => s.stream === 'training')?.changePass).toBeUndefined();
    expect(planLineOf(again, 'training')).toMatch(/^training: plan: incremental from bookmark /);
  });
});
