import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { configSchema } from '../../src/config/schema.js';
import { TIME_WINDOW } from '../../src/config/config-ajv.js';
import { paths } from '../../src/bin/file-options.js';
import { airbyteErrorText } from '../../src/airbyte/commands.js';
import { configErrorOf } from '../helpers/errors.js';

/**
 * Config errors in words a data engineer reads (issue 30): one message per
 * setting however many schema rules fail for it, what the value must be
 * (never a regular expression or the validator's own wording), the name a
 * misspelt key meant, and never the value given.
 */

const BASE = { base_url: 'https://api.example.com', access_token: 'tok-abc' };
const ADDRESS = 'jane.doe@example.com';

/** The tap's message and the Airbyte face's, for a config with these settings. */
function messagesFor(settings: Record<string, unknown>): { tap: string; airbyte: string } {
  const error = configErrorOf(() => resolveConfig({ ...BASE, ...settings }));
  return { tap: error.message, airbyte: airbyteErrorText(error) };
}

describe('config errors say what a setting must be, in words', () => {
  it('a base_url that is no http(s) URL: one message, no pattern or format name', () => {
    const { tap, airbyte } = messagesFor({ base_url: 'ftp:/files' });
    expect(tap).toBe('Invalid config: setting base_url must be an http:// or https:// URL, such as https://api.example.com. Fix the config file or TAP_REPORT_DUMP_* variable that sets it (tap-report-dump --about lists every setting).');
    expect(airbyte).toBe("Invalid config: config field base_url must be an http:// or https:// URL, such as https://api.example.com. Fix it in the source's configuration (source-report-dump spec lists every field).");
    expect(tap).not.toContain('ftp');
  });

  it('a date filter that is no date: the forms it takes, no regular expression, not the value', () => {
    const { tap, airbyte } = messagesFor({ filters: { training: { completedAt: ADDRESS } } });
    expect(tap).toContain('setting filters.training.completedAt must be a date or date-time, optionally after >=, <=, > or <, such as >=2025-01-01.');
    expect(airbyte).toContain('config field filters.training.completedAt must be a date or date-time, optionally after >=, <=, > or <, such as >=2025-01-01.');
    expect(tap).not.toMatch(/pattern|\\d|\^|jane/);
  });

  it('a start_date that is no date: a date or an RFC 3339 date-time, with an example of each', () => {
    const { tap } = messagesFor({ start_date: 'last tuesday' });
    expect(tap).toContain('setting start_date must be a date (2025-01-01) or an RFC 3339 date-time (2025-01-01T00:00:00Z).');
    expect(tap).not.toMatch(/format|tuesday/);
  });

  it('a filter of the wrong type: must be a (non-empty) string, in words', () => {
    const { tap } = messagesFor({ filters: { training: { email: 42 } } });
    expect(tap).toContain('setting filters.training.email must be a non-empty string.');
    expect(tap).not.toMatch(/must be string/);
  });

  it('a misspelt filter: the name meant and the names the stream takes, never the value', () => {
    const { tap, airbyte } = messagesFor({ filters: { training: { emial: ADDRESS } } });
    expect(tap).toContain('unknown setting filters.training.emial (did you mean email? filters.training takes program, module, user, email, group, completed, completedAt, availableFrom).');
    expect(airbyte).toContain('unknown config field filters.training.emial (did you mean email?');
    expect(tap + airbyte).not.toContain('jane');
  });

  it('a misspelt setting: the setting meant; no list of every setting (--about lists them)', () => {
    expect(messagesFor({ strat_date: '2025-01-01' }).tap).toMatch(/^Invalid config: unknown setting strat_date \(did you mean start_date\?\)\. Fix/);
    expect(messagesFor({ frobnicate: 1 }).tap).toMatch(/^Invalid config: unknown setting frobnicate\. Fix/);
  });

  it('a number out of range: the whole range of the setting, in words', () => {
    expect(messagesFor({ lookback_window: -1 }).tap).toContain('setting lookback_window must be a whole number from 0 to 315360000.');
    expect(messagesFor({ dump_timeout: 0 }).tap).toContain('setting dump_timeout must be a number greater than 0 and at most 604800.');
    expect(messagesFor({ max_line_bytes: 10 }).tap).toContain('setting max_line_bytes must be a whole number of at least 1024.');
  });

  it('several rules failing for several settings: one message for each setting', () => {
    const { tap } = messagesFor({ base_url: 'nope', start_date: 'soon', key_properties: { training: [] } });
    expect(tap.match(/base_url/g)).toHaveLength(1);
    expect(tap).toContain('setting key_properties.training must be a JSON list of at least one non-empty string, none repeated');
    expect(tap.split('; ')).toHaveLength(3);
  });

  it('a secret too short: its length in words, never the secret', () => {
    const { tap } = messagesFor({ pseudonymisation_key: 'hush-hush' });
    expect(tap).toContain('setting pseudonymisation_key must be a string of at least 32 characters.');
    expect(tap).not.toContain('hush');
  });

  it('allowed values a reader cannot see are quoted: a tab delimiter', () => {
    expect(messagesFor({ csv_delimiter: ':' }).tap).toContain('setting csv_delimiter must be one of ",", ";", "\\t", "|".');
  });

  it('the time-window format checks what the pass_window pattern says', () => {
    expect(configSchema().properties!.pass_window.pattern).toBe(TIME_WINDOW);
    expect(messagesFor({ pass_window: '1-5' }).tap).toContain('setting pass_window must be hours written HH:MM-HH:MM on a 24-hour clock, such as 01:00-05:00.');
  });
});

describe('a file option given no value at all', () => {
  it('--config last on the line (yargs hands over an empty list): needs the path of a JSON file', () => {
    expect(() => paths('--config')([])).toThrow('--config needs the path of a JSON file, got none (an unset variable?)');
  });
});
