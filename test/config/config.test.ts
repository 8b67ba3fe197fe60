import { describe, expect, it } from 'vitest';
import { configFromEnv, loadConfig, mergeConfigs, resolveConfig } from '../../src/config/config.js';
import { writeTempJson } from '../helpers/files.js';

describe('access_token with a stray line break', () => {
  it('is a config error that does not print the token', () => {
    expect(() => resolveConfig({ base_url: 'https://api.example.com', access_token: 'tok-SECRET-9\n' })).toThrow(/access_token contains whitespace/);
    try {
      resolveConfig({ base_url: 'https://api.example.com', access_token: 'tok-SECRET-9\n' });
    } catch (error) {
      expect(String(error)).not.toContain('tok-SECRET-9');
    }
  });
});

describe('config sources', () => {
  it('merge later over earlier, nested objects key by key', () => {
    expect(mergeConfigs({ a: 1, filters: { training: { program: 'p1', user: 'u' } } }, { a: 2, filters: { training: { program: 'p2' } } })).toEqual({
      a: 2,
      filters: { training: { program: 'p2', user: 'u' } },
    });
  });

  it('type environment variables by the schema', () => {
    expect(configFromEnv({ TAP_REPORT_DUMP_LOOKBACK_WINDOW: '60', TAP_REPORT_DUMP_ALLOW_INSECURE_HTTP: 'true', TAP_REPORT_DUMP_FILTERS: '{"training":{"completed":true}}', TAP_REPORT_DUMP_FORMAT: 'csv' })).toEqual({
      lookback_window: 60,
      allow_insecure_http: true,
      filters: { training: { completed: true } },
      format: 'csv',
    });
    expect(() => configFromEnv({ TAP_REPORT_DUMP_MAX_RETRIES: 'many' })).toThrow('Environment variable TAP_REPORT_DUMP_MAX_RETRIES is "many", not a number. Set it to a number, or unset it.');
  });

  it('take --config ENV as no file: the environment alone, or with the files given beside it (as the Meltano SDK reads it)', () => {
    const env = { TAP_REPORT_DUMP_BASE_URL: 'https://api.example.com', TAP_REPORT_DUMP_ACCESS_TOKEN: 'tok-env', TAP_REPORT_DUMP_REQUEST_TIMEOUT: '2.5' };
    const alone = loadConfig(['ENV'], env);
    expect([alone.base_url, alone.access_token, alone.request_timeout]).toEqual(['https://api.example.com', 'tok-env', 2.5]);
    const file = writeTempJson({ base_url: 'https://file.example.com', format: 'csv' });
    const both = loadConfig(['ENV', file], env);
    // The file's settings, with the environment over them, wherever ENV stands among the files.
    expect([both.base_url, both.access_token, both.format]).toEqual(['https://api.example.com', 'tok-env', 'csv']);
    expect(loadConfig([file, 'ENV'], env)).toEqual(both);
    expect(() => loadConfig(['ENV'], {})).toThrow(/missing required setting base_url/);
  });
});
