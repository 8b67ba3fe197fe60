import { describe, expect, it } from 'vitest';
import { configFromEnv, mergeConfigs, resolveConfig } from '../../src/config/config.js';

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
});
