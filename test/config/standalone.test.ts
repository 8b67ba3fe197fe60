import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { configValidatorModule } from '../../src/config/standalone.js';
import { configFormats, configAjv, type ConfigValidator } from '../../src/config/config-ajv.js';
import { configSchema } from '../../src/config/schema.js';
import { REPORTS } from '../../src/catalog/reports.js';
import type { PrecompiledModule } from '../../src/config/validator.js';
import { ACKNOWLEDGEMENTS } from '../helpers/third-report.js';

/** The generated module, evaluated as Node would load it (CommonJS, requiring ajv's runtime helpers). */
function load(source: string): PrecompiledModule {
  const module = { exports: {} as PrecompiledModule };
  new Function('exports', 'require', 'module', source)(module.exports, createRequire(import.meta.url), module);
  return module.exports;
}

const VALID: unknown[] = [
  { base_url: 'https://api.example.com', access_token: 't' },
  { base_url: 'http://127.0.0.1:8080/', access_token: 't', start_date: '2025-01-01', format: 'csv', compression: 'none', log_level: 'debug' },
  { base_url: 'https://api.example.com', access_token: 't', start_date: '2025-01-01T10:00:00+02:00', lookback_window: 0, max_retries: 0 },
  {
    base_url: 'https://api.example.com',
    access_token: 't',
    filters: { training: { program: 'prg-01', completed: true, completedAt: '>=2025-01-01' }, phishing: {} },
    key_properties: { training: ['userId', 'moduleId'] },
    replication_key: { phishing: 'sentAt' },
    personal_data: [{ field: 'email', policy: 'hash' }, { field: 'firstName', policy: 'drop', stream: 'training' }, { field: 'lastName', policy: 'redact', stream: 'training' }],
    pseudonymisation_key: 'k'.repeat(32),
    csv_delimiter: ';',
  },
];

const INVALID: unknown[] = [
  {},
  [],
  'text',
  null,
  { access_token: 't' },
  { base_url: 'https://api.example.com' },
  { base_url: 'https://api.example.com', access_token: '' },
  { base_url: 'ftp://example.com', access_token: 't' },
  { base_url: 'not a url', access_token: 't' },
  { base_url: 'https://api.example.com', access_token: 't', bogus: 1, other: 'x' },
  { base_url: 'https://api.example.com', access_token: 't', start_date: 'yesterday' },
  { base_url: 'https://api.example.com', access_token: 't', format: 'xml', compression: 'zip' },
  { base_url: 'https://api.example.com', access_token: 't', lookback_window: -1, max_retries: 1.5, request_timeout: 'slow' },
  { base_url: 'https://api.example.com', access_token: 't', filters: { training: { bogus: 'x', completedAt: 'soon', program: '' } } },
  { base_url: 'https://api.example.com', access_token: 't', filters: { unknown_stream: {} } },
  { base_url: 'https://api.example.com', access_token: 't', key_properties: { training: [] } },
  { base_url: 'https://api.example.com', access_token: 't', key_properties: { training: ['userId', 'userId'] } },
  { base_url: 'https://api.example.com', access_token: 't', replication_key: { training: '' } },
  { base_url: 'https://api.example.com', access_token: 't', personal_data: [{ field: 'email', policy: 'shred', stream: 'training' }, { policy: 'hash', stream: 'widgets' }] },
  // The object form is read as rules before validation (config/personal-data-rules.ts): the validator itself takes the list only.
  { base_url: 'https://api.example.com', access_token: 't', personal_data: { '*': { email: 'hash' } } },
  { base_url: 'https://api.example.com', access_token: 't', allow_insecure_http: 'yes', require_final_line_break: 1 },
  { base_url: 123, access_token: ['t'] },
  { base_url: 'https://api.example.com', access_token: 't', pseudonymisation_key: 'short' },
];

/** Validates a copy (validation fills in defaults) and reports everything the caller sees. */
function outcome(validate: ConfigValidator, config: unknown): { valid: boolean; errors: unknown; data: unknown } {
  const data = structuredClone(config);
  const valid = validate(data);
  return { valid, errors: validate.errors ?? null, data };
}

describe('the config validator compiled ahead of time', () => {
  const precompiled = load(configValidatorModule());
  const generated = precompiled.create(configFormats());
  const compiled = configAjv().compile(configSchema());

  it('accepts the valid configs the runtime-compiled validator accepts, filling in the same defaults', () => {
    for (const config of VALID) {
      const result = outcome(generated, config);
      expect(result.valid, JSON.stringify(config)).toBe(true);
      expect(result).toEqual(outcome(compiled, config));
    }
  });

  it('refuses the invalid configs with the same errors, in the same order', () => {
    for (const config of INVALID) {
      const result = outcome(generated, config);
      expect(result.valid, JSON.stringify(config)).toBe(false);
      expect(result).toEqual(outcome(compiled, config));
    }
  });

  it('carries the schema it was compiled from, so a stale one is recognised', () => {
    expect(precompiled.schemaText).toBe(JSON.stringify(configSchema()));
    expect(load(configValidatorModule([...REPORTS, ACKNOWLEDGEMENTS])).schemaText).not.toBe(precompiled.schemaText);
  });

  it('is compiled for another report list too, with that list\'s filters', () => {
    const reports = [...REPORTS, ACKNOWLEDGEMENTS];
    const other = load(configValidatorModule(reports)).create(configFormats());
    const config = { base_url: 'https://api.example.com', access_token: 't', filters: { acknowledgements: { policy: 'p', bogus: 1 } } };
    expect(outcome(other, config)).toEqual(outcome(configAjv().compile(configSchema(reports)), config));
    expect(other.errors?.map((e) => e.keyword)).toEqual(['additionalProperties']);
  });
});
