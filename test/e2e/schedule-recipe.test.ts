import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PHISHING, TRAINING } from '../../src/catalog/reports.js';
import { ensureBuilt, ROOT } from '../helpers/build.js';
import { waitFor } from '../helpers/cli.js';
import { type Sandbox, startTestSandbox } from '../helpers/sandbox.js';
import { RECIPE, type RecipeFolder, recipeFolder, runRecipe, startRecipe } from '../helpers/schedule-recipe.js';

/**
 * scripts/run-daily.sh, the recipe docs/schedule.md gives for cron and a
 * systemd timer, run for real: the installed tap against the sandbox over
 * HTTP, piped into a fake target that succeeds, dies mid-load, or prints no
 * state. The state file moves only when both sides succeeded; otherwise it
 * stays byte for byte, and the next run goes on from it.
 */

const TOKEN = 'sched-token-5f2c81d0a9e4';
const REFUSED_TOKEN = 'sched-refused-77b3e0c41a9d';

interface TrainingBookmark {
  replication_key_value: string;
  last_modified: string;
}

function trainingBookmark(bytes: Buffer | undefined): TrainingBookmark {
  expect(bytes, 'a state file').toBeDefined();
  return (JSON.parse(bytes!.toString('utf8')) as { bookmarks: { training: TrainingBookmark } }).bookmarks.training;
}

function seen(file: string): Record<string, number> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
}

let sandbox: Sandbox;
let folder: RecipeFolder;

beforeAll(() => ensureBuilt());

beforeEach(async () => {
  sandbox = await startTestSandbox({ trainingRecords: 60, phishingRecords: 60, tokens: [{ token: TOKEN, scopes: [TRAINING.scope, PHISHING.scope] }] });
  folder = recipeFolder();
  folder.writeConfig(sandbox.url, TOKEN);
});

afterEach(() => sandbox.close());

/** The first run, with a target that succeeds: it writes the state the tests start from. */
async function firstRun(): Promise<Buffer> {
  const run = await runRecipe(folder, 'ok');
  expect([run.code, run.stdout, run.stderr], 'a run that succeeds prints nothing').toEqual([0, '', '']);
  return folder.stateBytes()!;
}

describe('the schedule recipe (scripts/run-daily.sh)', () => {
  it('keeps the state file byte for byte when the target fails, exits 4 naming the target, and the next run goes on from that state', async () => {
    const before = await firstRun();
    sandbox.append('training', 5);

    const failed = await runRecipe(folder, 'fail');
    expect(failed.code).toBe(4);
    expect(failed.stderr).toMatch(/^run-daily: the target failed \(exit 1; the tap exited \d+\); .*state\.json kept as it was; see logs\/\S+\.target\.log\n$/);
    expect(folder.stateBytes()?.equals(before), 'state.json unchanged').toBe(true);

    const seenFile = join(folder.path, 'seen.json');
    const requestsBefore = sandbox.requestsSeen().length;
    const next = await runRecipe(folder, 'ok', { seenFile });
    expect(next.code, next.stderr).toBe(0);
    const old = trainingBookmark(before);
    const training = sandbox.requestsSeen().slice(requestsBefore).filter((r) => r.stream === 'training');
    expect(training.map((r) => r.filters.completedAt), 'the incremental read asks from the old bookmark').toContain(`>=${old.replication_key_value}`);
    const types = seen(seenFile);
    expect(types.ACTIVATE_VERSION, 'not a first run: no full pass').toBeUndefined();
    expect(types.RECORD, 'the rows added since the old state').toBe(5);
    expect(trainingBookmark(folder.stateBytes()).replication_key_value > old.replication_key_value, 'the state advanced past them').toBe(true);
  });

  it('moves the new state into place when the tap and the target succeed', async () => {
    const first = trainingBookmark(await firstRun());
    sandbox.append('training', 3);
    const run = await runRecipe(folder, 'ok');
    expect(run.code, run.stderr).toBe(0);
    const next = trainingBookmark(folder.stateBytes());
    expect(next.replication_key_value > first.replication_key_value).toBe(true);
    expect(next.last_modified).toBe(sandbox.lastModified('training').toUTCString());
    expect(readdirSync(folder.path).filter((name) => name.startsWith('state.json.new.')), 'no temporary state left').toEqual([]);
  });

  it('keeps the state when the tap fails (a token the service refuses) and exits 3 naming the tap', async () => {
    const before = await firstRun();
    sandbox.append('training', 5);
    folder.writeConfig(sandbox.url, REFUSED_TOKEN);
    const run = await runRecipe(folder, 'ok');
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^run-daily: the tap failed \(exit \d+\); .*state\.json kept as it was; see logs\/\S+\.tap\.log\n$/);
    expect(folder.stateBytes()?.equals(before), 'state.json unchanged').toBe(true);
  });

  it('keeps the state when the target succeeds but prints no state, and exits 5', async () => {
    const before = await firstRun();
    sandbox.append('training', 2);
    const run = await runRecipe(folder, 'silent');
    expect(run.code).toBe(5);
    expect(run.stderr).toBe('run-daily: the target exited 0 but its last line is not a state (a non-empty JSON object); state.json kept as it was\n');
    expect(folder.stateBytes()?.equals(before)).toBe(true);
  });

  it('refuses a second run while the first holds the lock, with one line and exit 75; the first then finishes', async () => {
    const before = await firstRun();
    sandbox.append('training', 2);
    const seenFile = join(folder.path, 'seen.json');
    const holdFile = join(folder.path, 'release');
    const first = startRecipe(folder, 'ok', { seenFile, holdFile });
    await waitFor(() => existsSync(seenFile), 'the first run has loaded everything and waits');

    const second = await runRecipe(folder, 'ok');
    expect(second.code).toBe(75);
    expect(second.stderr).toMatch(/^run-daily: another run still holds state\.json\.lock \(pid \d+ since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\); this one did not start\n$/);
    expect(folder.stateBytes()?.equals(before), 'the refused run touched no state').toBe(true);

    writeFileSync(holdFile, '');
    const done = await first.finished;
    expect(done.code, done.stderr).toBe(0);
    expect(folder.stateBytes()?.equals(before), 'the first run advanced the state').toBe(false);
  });

  it('writes the tap\'s and the target\'s stderr to dated logs, never the token, and removes its own logs past --keep-logs-days', async () => {
    const stale = join(folder.logDir, '2020-01-01T000000Z.tap.log');
    const recent = join(folder.logDir, '2020-01-02T000000Z.tap.log');
    const other = join(folder.logDir, 'notes.txt');
    await firstRun();
    for (const file of [stale, recent, other]) writeFileSync(file, '');
    const days = (n: number): number => Date.now() / 1000 - n * 86_400;
    utimesSync(stale, days(15), days(15));
    utimesSync(recent, days(13), days(13));
    utimesSync(other, days(400), days(400));
    folder.writeConfig(sandbox.url, REFUSED_TOKEN);
    expect((await runRecipe(folder, 'ok')).code).toBe(3);

    const logs = readdirSync(folder.logDir);
    expect(logs).not.toContain('2020-01-01T000000Z.tap.log');
    expect(logs).toEqual(expect.arrayContaining(['2020-01-02T000000Z.tap.log', 'notes.txt']));
    const own = logs.filter((name) => /^\d{4}-\d\d-\d\dT\d{6}Z\.(tap|target|run)\.log$/.test(name) && !name.startsWith('2020-'));
    const text = (kind: string): string => own.filter((name) => name.endsWith(`.${kind}.log`)).map((name) => readFileSync(join(folder.logDir, name), 'utf8')).join('');
    expect(text('tap'), "the tap's stderr").toMatch(/training: plan: /);
    expect(text('tap'), "the refused token's run").toMatch(/401/);
    expect(text('target'), "the target's stderr").toMatch(/fake-target: loaded /);
    expect(text('run'), "the script's own lines").toMatch(/run succeeded; state\.json advanced\n[\s\S]*the tap failed/);
    for (const name of logs) {
      const content = readFileSync(join(folder.logDir, name), 'utf8');
      expect(content, name).not.toContain(TOKEN);
      expect(content, name).not.toContain(REFUSED_TOKEN);
    }
  });

  it('reads --keep-logs-days in base 10 (08 is eight days, not an octal error) and refuses more than 99999 days before anything runs', async () => {
    await firstRun();
    const stale = join(folder.logDir, '2020-01-01T000000Z.tap.log');
    const recent = join(folder.logDir, '2020-01-02T000000Z.tap.log');
    for (const file of [stale, recent]) writeFileSync(file, '');
    const days = (n: number): number => Date.now() / 1000 - n * 86_400;
    utimesSync(stale, days(9), days(9));
    utimesSync(recent, days(7), days(7));
    const run = await runRecipe(folder, 'ok', { args: ['--keep-logs-days', '08'] });
    expect([run.code, run.stdout, run.stderr]).toEqual([0, '', '']);
    expect(readdirSync(folder.logDir)).not.toContain('2020-01-01T000000Z.tap.log');
    expect(readdirSync(folder.logDir)).toContain('2020-01-02T000000Z.tap.log');

    const requests = sandbox.requestCount;
    const huge = await runRecipe(folder, 'ok', { args: ['--keep-logs-days', '99999999999999999'] });
    expect([huge.code, huge.stderr]).toEqual([2, 'run-daily: --keep-logs-days must be a whole number of days up to 99999, not 99999999999999999\n']);
    expect(sandbox.requestCount).toBe(requests);
  });

  it('checks its settings before anything runs: a missing config exits 2 naming it', async () => {
    const run = await runRecipe(folder, 'ok', { args: ['--config', 'missing.json'] });
    expect([run.code, run.stderr]).toEqual([2, "run-daily: cannot read the tap's config missing.json: set --config or RUN_CONFIG\n"]);
    expect(folder.stateBytes()).toBeUndefined();
    expect(sandbox.requestCount).toBe(0);
  });

  it('takes its settings from RUN_* variables, an option winning over its variable', async () => {
    const byVariable = await runRecipe(folder, 'ok', { env: { RUN_CONFIG: 'by-variable.json' } });
    expect([byVariable.code, byVariable.stderr]).toEqual([2, "run-daily: cannot read the tap's config by-variable.json: set --config or RUN_CONFIG\n"]);
    const both = await runRecipe(folder, 'ok', { env: { RUN_CONFIG: 'by-variable.json' }, args: ['--config', 'by-option.json'] });
    expect([both.code, both.stderr]).toEqual([2, "run-daily: cannot read the tap's config by-option.json: set --config or RUN_CONFIG\n"]);
  });
});

describe('docs/schedule.md', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'schedule.md'), 'utf8');
  const help = execFileSync(RECIPE, ['--help'], { encoding: 'utf8' });

  it('lists the options, variables and defaults --help prints', () => {
    const fromHelp = [...help.matchAll(/^ {2}(--[\w-]+) \S+ +(RUN_\w+) +.*\(default: ([^,)]*)/gm)].map(([, option, variable, value]) => [option, variable, value]);
    const fromDoc = [...doc.matchAll(/^\| `(--[\w-]+)` \| `(RUN_\w+)` \| `?([^`|]*?)`? \|/gm)].map(([, option, variable, value]) => [option, variable, value]);
    expect(fromHelp).toHaveLength(7);
    expect(fromDoc).toEqual(fromHelp);
  });

  it('gives the exit codes --help gives', () => {
    const fromHelp = [...help.slice(help.indexOf('Exit codes:')).matchAll(/(\d+) [a-z]/g)].map((m) => Number(m[1]));
    const fromDoc = [...doc.matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]));
    expect(fromDoc).toEqual(fromHelp);
  });

  it('runs the script the package ships, from cron and from the systemd service', () => {
    const installed = '/usr/local/lib/node_modules/tap-report-dump/scripts/run-daily.sh';
    expect(doc).toContain(`ExecStart=${installed}\n`);
    expect(doc).toMatch(new RegExp(`^0 2 \\* \\* \\* cd /var/lib/report-dump && ${installed}$`, 'm'));
    expect(relative(ROOT, RECIPE)).toBe('scripts/run-daily.sh');
  });
});
