import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runSource, runTap } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { errorLine } from '../helpers/resilience-util.js';

/**
 * Config errors in words, from the built CLI on both faces (issue 30): the
 * precompiled validator's errors come out as one sentence per setting, the
 * Airbyte face naming config fields, and `--config` given no path says so.
 */

beforeAll(async () => {
  await ensureBuilt();
});

const ADDRESS = 'jane.doe@example.com';
const BAD = { base_url: 'ftp:/files', access_token: 'tok-anything', filters: { training: { emial: ADDRESS } } };
const WORDS = [
  'base_url must be an http:// or https:// URL, such as https://api.example.com',
  'filters.training.emial (did you mean email? filters.training takes program, module, user, email, group, completed, completedAt, availableFrom)',
];

describe.concurrent('config errors of the built CLI, in words', () => {
  it('tap-report-dump check: one line, one message per setting, the filter meant, no value echoed', async () => {
    const run = await runTap(['check', '--config', writeTempJson(BAD)]);
    expect(run.code).toBe(2);
    const line = errorLine(run);
    expect(line).toBe(`tap-report-dump: error: Invalid config: setting ${WORDS[0]}; unknown setting ${WORDS[1]}. Fix the config file or TAP_REPORT_DUMP_* variable that sets it (tap-report-dump --about lists every setting).`);
    expect(run.stderr).not.toContain('jane');
  });

  it('source-report-dump check: the same words, naming config fields; the unknown one a warning before the status (the source ignores it)', async () => {
    const run = await runSource(['check', '--config', writeTempJson(BAD)]);
    const [warning, status] = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { log?: { level: string; message: string }; connectionStatus?: { status: string; message: string } });
    expect(warning.log).toEqual({ level: 'WARN', message: `Unknown config field ${WORDS[1]} is ignored: this version of the source does not know it. Correct its name, or remove it from the source's configuration (source-report-dump spec lists every field).` });
    expect(status.connectionStatus).toEqual({
      status: 'FAILED',
      message: `Invalid config: config field ${WORDS[0]}. Fix it in the source's configuration (source-report-dump spec lists every field).`,
    });
    expect(run.stdout + run.stderr).not.toContain('jane');
  });

  it.each([['check', '--config'], ['--config', '--discover'], ['sync', '--config']])('tap-report-dump %s %s (no path): exit 2, --config needs the path of a JSON file', async (...args) => {
    const run = await runTap(args);
    expect(run.code).toBe(2);
    expect(errorLine(run)).toMatch(/^tap-report-dump: error: --config needs the path of a JSON file, got none/);
    expect(run.stdout).toBe('');
  });
});
