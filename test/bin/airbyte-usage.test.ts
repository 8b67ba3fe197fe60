import { describe, expect, it } from 'vitest';
import { airbyteUsage, airbyteUsageError, asksForUsage } from '../../src/bin/airbyte-usage.js';

/** What source-report-dump says about itself, in sentences: its usage, and yargs' usage errors reworded. */

describe('the usage of source-report-dump', () => {
  const usage = airbyteUsage('1.2.3');

  it('names every command with its options, and says what each prints', () => {
    expect(usage).toMatch(/^source-report-dump 1\.2\.3: the report data dump API as an Airbyte source\./);
    expect(usage).toContain('source-report-dump spec\n');
    expect(usage).toContain('source-report-dump check --config <config.json>\n');
    expect(usage).toContain('source-report-dump discover --config <config.json>\n');
    expect(usage).toContain('source-report-dump read --config <config.json> --catalog <configured_catalog.json> [--state <state.json>]\n');
    expect(usage).toContain('source-report-dump configured-catalog --config <config.json> [--sync-mode incremental|full_refresh] [--destination-sync-mode append_dedup|append|overwrite]\n');
    for (const message of ['SPEC', 'CONNECTION_STATUS', 'CATALOG', 'RECORD', 'STATE', 'STREAM_STATUS', 'LOG']) expect(usage).toContain(message);
  });

  it('documents the exit codes', () => {
    expect(usage).toMatch(/Exit codes: 0 when the command did its work, a check that answers FAILED included .*; 1 a run-time failure \(the service, the network\); 2 bad input: the config, catalog or state file, or the command line; 3 stdout closed by its reader .*\./);
  });

  it('names the face as it was called: tap-report-dump airbyte says its own name everywhere', () => {
    const tapUsage = airbyteUsage('1.2.3', 'tap-report-dump airbyte');
    expect(tapUsage).toMatch(/^tap-report-dump airbyte 1\.2\.3: /);
    expect(tapUsage).toContain('tap-report-dump airbyte check --config <config.json>\n');
    expect(tapUsage).not.toContain('source-report-dump');
    expect(airbyteUsageError('Unknown argument: x', ['-x'], 'tap-report-dump airbyte')).toBe(
      'tap-report-dump airbyte: error: -x is not a command or option of tap-report-dump airbyte; its commands are spec, check, discover, read, configured-catalog. Run tap-report-dump airbyte --about for its usage.',
    );
  });

  it('is shown for no arguments, --about and --help, alone', () => {
    expect([[], ['--about'], ['--help'], ['-h']].map(asksForUsage)).toEqual([true, true, true, true]);
    expect([['spec'], ['read', '--help'], ['--about', 'spec'], ['--version']].map(asksForUsage)).toEqual([false, false, false, false]);
  });
});

describe('a bad command line of source-report-dump', () => {
  it('names the options a command lacks', () => {
    expect(airbyteUsageError('Missing required arguments: config, catalog', ['read'])).toBe(
      'source-report-dump: error: read needs --config and --catalog, each the path of a JSON file. Run source-report-dump --about for its usage.',
    );
    expect(airbyteUsageError('Missing required argument: config', ['check'])).toBe('source-report-dump: error: check needs --config, the path of a JSON file. Run source-report-dump --about for its usage.');
  });

  it('names an unknown option as it was written (without a value, which may be a secret), and lists the commands', () => {
    expect(airbyteUsageError('Unknown argument: token', ['check', '--token=s3cret'])).toBe(
      'source-report-dump: error: --token is not a command or option of source-report-dump; its commands are spec, check, discover, read, configured-catalog. Run source-report-dump --about for its usage.',
    );
    expect(airbyteUsageError('Unknown arguments: sync, x', ['sync', '-x'])).toMatch(/^source-report-dump: error: sync, -x is not a command or option/);
  });

  it('says so when no command is given', () => {
    expect(airbyteUsageError('Not enough non-option arguments: got 0, need at least 1', ['--config', 'c.json'])).toBe(
      'source-report-dump: error: no command given: use spec, check, discover, read or configured-catalog. Run source-report-dump --about for its usage.',
    );
  });
});
