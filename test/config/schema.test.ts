import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { PHISHING, REPORTS, TRAINING, type StreamDescriptor } from '../../src/catalog/reports.js';
import type { JsonSchema } from '../../src/catalog/schemas.js';

const DATE_PATTERN = '^(>=|<=|>|<)?\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?([Zz]|[+-]\\d{2}:?\\d{2})?)?$';
const KEY_LIST = { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, uniqueItems: true };

/** A made-up third report: only its descriptor, no schema file is read by configSchema. */
const AUDIT: StreamDescriptor = {
  name: 'audit',
  path: '/public/v1/report/audit/dump',
  scope: 'report:audit:read',
  schemaFile: 'audit.json',
  keyProperties: ['eventId'],
  replicationKey: 'loggedAt',
  replicationFilter: 'loggedAt',
  personalFields: [],
  filters: [
    { name: 'actor', type: 'string', recordField: 'actorId', description: 'Actor ID.' },
    { name: 'failed', type: 'boolean', recordField: 'failed', description: 'Whether the action failed.' },
    { name: 'loggedAt', type: 'date', recordField: 'loggedAt', description: 'Log date, optionally prefixed.' },
    { name: 'seenAt', type: 'date', recordField: 'seenAt', description: 'Review date.' },
  ],
};

type Properties = Record<string, JsonSchema>;
const props = (schema: JsonSchema): Properties => schema.properties!;

describe('configSchema() for the shipped reports', () => {
  const schema = configSchema();
  const filters = props(schema).filters;
  const keyProperties = props(schema).key_properties;

  it('has a filters block and a key_properties entry for every report in REPORTS, and for no other', () => {
    expect(Object.keys(props(filters))).toEqual(REPORTS.map((d) => d.name));
    expect(Object.keys(props(keyProperties))).toEqual(['training', 'phishing']);
    expect(filters.additionalProperties).toBe(false);
    expect(keyProperties.additionalProperties).toBe(false);
  });

  it('gives the phishing filters their types: string with minLength 1, and the date filter with the comparison-prefix pattern', () => {
    expect(props(filters).phishing).toEqual({
      type: 'object',
      additionalProperties: false,
      description: 'Filters sent as filter[<name>] on every phishing dump request.',
      properties: {
        user: { type: 'string', minLength: 1, description: 'User ID.' },
        email: { type: 'string', minLength: 1, description: 'User e-mail address.' },
        employeeNumber: { type: 'string', minLength: 1, description: 'User employee number.' },
        group: { type: 'string', minLength: 1, description: 'User group ID.' },
        campaign: { type: 'string', minLength: 1, description: 'Campaign ID.' },
        sentAt: { type: 'string', format: 'date-filter', pattern: DATE_PATTERN, description: 'Sent date, optionally prefixed with >=, >, <=, <. Combined with the incremental bookmark.' },
      },
    });
  });

  it('gives the training filters a boolean, and mentions the bookmark only on the replication filter', () => {
    const training = props(props(filters).training);
    expect(Object.keys(training)).toEqual(TRAINING.filters.map((f) => f.name));
    expect(training.completed).toEqual({ type: 'boolean', description: 'Completion status.' });
    expect(training.program).toEqual({ type: 'string', minLength: 1, description: 'Program ID.' });
    expect(training.completedAt).toEqual({
      type: 'string',
      format: 'date-filter',
      pattern: DATE_PATTERN,
      description: 'Completion date, optionally prefixed with >=, >, <=, <. Combined with the incremental bookmark.',
    });
    expect(training.availableFrom).toEqual({ type: 'string', format: 'date-filter', pattern: DATE_PATTERN, description: 'Module availability date, optionally prefixed with >=, >, <=, <.' });
  });

  it('maps every filter field of every descriptor to the schema its type calls for', () => {
    for (const descriptor of REPORTS) {
      for (const field of descriptor.filters) {
        const property = props(props(filters)[descriptor.name])[field.name];
        const where = `${descriptor.name}.${field.name}`;
        if (field.type === 'string') expect(property, where).toEqual({ type: 'string', minLength: 1, description: field.description });
        else if (field.type === 'boolean') expect(property, where).toEqual({ type: 'boolean', description: field.description });
        else {
          expect(property.type, where).toBe('string');
          expect(property.pattern, where).toBe(DATE_PATTERN);
          expect(String(property.description).includes('bookmark'), where).toBe(field.name === descriptor.replicationFilter);
        }
      }
    }
  });

  it('accepts dates with an optional comparison prefix and rejects other text with the date pattern', () => {
    const date = new RegExp(DATE_PATTERN);
    for (const ok of ['2024-05-01', '>=2024-05-01', '>2024-05-01T08:00', '<=2024-05-01T08:00:00Z', '<2024-05-01 08:00:00.5+02:00', '2024-05-01T08:00:00+0200']) {
      expect(date.test(ok), ok).toBe(true);
    }
    for (const bad of ['=>2024-05-01', '==2024-05-01', '2024-5-1', 'yesterday', '>= 2024-05-01', '2024-05-01T08']) {
      expect(date.test(bad), bad).toBe(false);
    }
  });

  it('gives every report the same key list schema: non-empty, unique, non-empty names', () => {
    expect(props(keyProperties).training).toEqual(KEY_LIST);
    expect(props(keyProperties).phishing).toEqual(KEY_LIST);
    expect(props(keyProperties).training).not.toBe(props(keyProperties).phishing);
  });

  it('names each report\'s scope in the access_token description and each replication key in start_date\'s', () => {
    expect(props(schema).access_token.description).toBe(
      'Bearer access token. Needs the report:training:read scope for the training stream and report:phishing:read for the phishing stream.',
    );
    expect(props(schema).start_date.description).toBe(
      'Earliest completedAt / sentAt to replicate on the first incremental run (RFC 3339 date or date-time). Without it the first run reads the whole dump.',
    );
  });

  it('keeps the settings shared by all streams from schemas/config.json', () => {
    expect(schema.required).toEqual(['base_url', 'access_token']);
    expect(props(schema).access_token.secret).toBe(true);
    expect(props(schema).format.enum).toEqual(['jsonl', 'csv']);
  });
});

describe('configSchema for more reports', () => {
  const schema = configSchema([...REPORTS, AUDIT]);

  it('adds a filters block for a third descriptor, typed from its filter fields', () => {
    expect(Object.keys(props(props(schema).filters))).toEqual(['training', 'phishing', 'audit']);
    expect(props(props(schema).filters).audit).toEqual({
      type: 'object',
      additionalProperties: false,
      description: 'Filters sent as filter[<name>] on every audit dump request.',
      properties: {
        actor: { type: 'string', minLength: 1, description: 'Actor ID.' },
        failed: { type: 'boolean', description: 'Whether the action failed.' },
        loggedAt: { type: 'string', format: 'date-filter', pattern: DATE_PATTERN, description: 'Log date, optionally prefixed. Combined with the incremental bookmark.' },
        seenAt: { type: 'string', format: 'date-filter', pattern: DATE_PATTERN, description: 'Review date.' },
      },
    });
  });

  it('adds a key_properties entry for the third descriptor', () => {
    expect(props(props(schema).key_properties)).toEqual({ training: KEY_LIST, phishing: KEY_LIST, audit: KEY_LIST });
  });

  it('names the third scope in the access_token description and its replication key in start_date\'s', () => {
    expect(props(schema).access_token.description).toBe(
      'Bearer access token. Needs the report:training:read scope for the training stream, report:phishing:read for the phishing stream and report:audit:read for the audit stream.',
    );
    expect(props(schema).start_date.description).toMatch(/^Earliest completedAt \/ sentAt \/ loggedAt to replicate /);
  });

  it('names a single report\'s scope without a list', () => {
    expect(props(configSchema([PHISHING])).access_token.description).toBe('Bearer access token. Needs the report:phishing:read scope for the phishing stream.');
    expect(Object.keys(props(props(configSchema([PHISHING])).filters))).toEqual(['phishing']);
  });

  it('does not change the schema later calls give for the shipped reports', () => {
    configSchema([...REPORTS, AUDIT]);
    const shipped = configSchema();
    expect(Object.keys(props(props(shipped).filters))).toEqual(['training', 'phishing']);
    expect(Object.keys(props(props(shipped).key_properties))).toEqual(['training', 'phishing']);
    expect(props(shipped).access_token.description).not.toContain('audit');
  });
});
