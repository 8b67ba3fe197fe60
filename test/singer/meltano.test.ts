import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { meltanoDefinition, meltanoSetting, meltanoSettings } from '../../src/singer/meltano.js';

describe('the Meltano plugin definition', () => {
  it('gives a number with a fraction the decimal kind, a whole number integer, a date date_iso8601', () => {
    expect(meltanoSetting('request_timeout', { type: 'number', exclusiveMinimum: 0 })).toEqual({ name: 'request_timeout', kind: 'decimal' });
    expect(meltanoSetting('max_retries', { type: 'integer' })).toEqual({ name: 'max_retries', kind: 'integer' });
    expect(meltanoSetting('start_date', { type: 'string', format: 'date-or-date-time' })).toEqual({ name: 'start_date', kind: 'date_iso8601' });
    expect(meltanoSetting('base_url', { type: 'string', format: 'uri' })).toEqual({ name: 'base_url', kind: 'string' });
  });

  it('marks a secret sensitive, as a string (Meltano deprecates the password kind)', () => {
    expect(meltanoSetting('access_token', { type: 'string', secret: true })).toEqual({ name: 'access_token', kind: 'string', sensitive: true });
  });

  it("lists an enum's values as options, punctuation under a name", () => {
    expect(meltanoSetting('csv_delimiter', { type: 'string', enum: [',', '\t'] })).toEqual({
      name: 'csv_delimiter',
      kind: 'options',
      options: [
        { label: 'comma', value: ',' },
        { label: 'tab', value: '\t' },
      ],
    });
  });

  it('prints YAML that reads back as the same settings (quoted where YAML would read a value otherwise)', () => {
    const parsed = parseYaml(meltanoDefinition()) as { plugins: { extractors: Array<{ settings: unknown[]; settings_group_validation: string[][]; pip_url: string }> } };
    const [extractor] = parsed.plugins.extractors;
    expect(extractor.settings).toEqual(meltanoSettings());
    expect(extractor.settings_group_validation).toEqual([['base_url', 'access_token']]);
    expect(extractor.pip_url).toBe('');
    const kinds = Object.fromEntries(meltanoSettings().map((s) => [s.name, s.kind]));
    for (const name of ['request_timeout', 'backoff_base', 'min_request_interval', 'spool_max_mb', 'change_pass_interval_days', 'full_pass_min_ratio']) expect(kinds[name], name).toBe('decimal');
  });
});
