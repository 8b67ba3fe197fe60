import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configFromEnv, readConfigFile, resolveConfig } from '../../src/config/config.js';
import { batchSettings } from '../../src/config/batch.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { layoutOf, type LiveSettings } from '../../src/catalog/live-discovery.js';
import { applyPolicies, checkPolicyNames } from '../../src/catalog/personal-data.js';
import { loadSchema } from '../../src/catalog/schemas.js';
import { selectStream } from '../../src/catalog/selection.js';
import { TRAINING } from '../../src/catalog/reports.js';
import { readCatalogFile, selectFromCatalog, type Catalog } from '../../src/singer/catalog.js';
import { selectConfiguredStreams } from '../../src/airbyte/catalog.js';
import { stateFromAirbyte } from '../../src/airbyte/state.js';
import { parseState, readStateFile } from '../../src/state.js';
import { buildQuery } from '../../src/http/query.js';
import { planStream } from '../../src/sync/plan/plan.js';
import { configErrorOf } from '../helpers/errors.js';
import { tempFolder } from '../helpers/files.js';

/**
 * Every message the config, catalog, state and discovery paths can stop a
 * run with, listed here by what triggers it: each is one line that says what
 * happened, names the setting, file or field, and says what to do, so that
 * whoever reads it at 3 a.m. can act on it.
 */

const dir = tempFolder('messages-');
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const BASE = { base_url: 'https://api.example.com', access_token: 'tok-abc' };
const LIVE: LiveSettings = { format: 'jsonl', filters: {}, filter_date_format: 'rfc3339', key_properties: {}, replication_key: {}, field_names: 'service', source_timezone: 'UTC', discovery_sample_records: 100 };
const packaged = loadSchema('training.json');
const [training] = discoverStreams({});
const catalogOf = (entry: Record<string, unknown>): Catalog => ({ streams: [{ tap_stream_id: 'training', stream: 'training', schema: packaged, key_properties: [], metadata: [], ...entry }] }) as Catalog;
/** A sample of a training dump served with these names; each field's values. */
const sample = (values: Record<string, unknown[]>) => ({ names: Object.keys(values), values: new Map(Object.entries(values)), records: Object.values(values)[0]?.length ?? 0 });
const SERVED = { userId: ['u1'], programId: ['p1'], moduleId: ['m1'], completedAt: ['2025-01-01T00:00:00Z'] };
const POLICY_TARGET = { name: 'training', schema: packaged, keyProperties: training.keyProperties, replicationKey: 'completedAt' };

/** [what triggers it, the trigger, words the message must hold (the setting, file or field it names)] */
const TRIGGERS: Array<[string, () => unknown, string[]]> = [
  ['a config file that is not an object', () => readConfigFile(file('array.json', '[1]')), ['array.json', 'base_url']],
  ['an unreadable config file', () => readConfigFile(join(dir, 'missing.json')), ['missing.json', '--config']],
  ['a config file that is not JSON', () => readConfigFile(file('bad.json', '{"base_url": ')), ['bad.json', 'syntax']],
  ['an empty config file', () => readConfigFile(file('empty.json', ' \n')), ['empty.json', 'is empty', 'base_url']],
  ['a catalog property schema that is null', () => readCatalogFile(file('null-property.json', '{"streams": [{"tap_stream_id": "training", "schema": {"properties": {"score": null}}}]}')), ['null-property.json', 'streams[0].schema.properties.score', 'discover']],
  ['a number variable that is not a number', () => configFromEnv({ TAP_REPORT_DUMP_MAX_RETRIES: 'many' }), ['TAP_REPORT_DUMP_MAX_RETRIES']],
  ['a boolean variable that is not a boolean', () => configFromEnv({ TAP_REPORT_DUMP_ALLOW_INSECURE_HTTP: 'perhaps' }), ['TAP_REPORT_DUMP_ALLOW_INSECURE_HTTP']],
  ['an object variable that is not JSON', () => configFromEnv({ TAP_REPORT_DUMP_FILTERS: '{training' }), ['TAP_REPORT_DUMP_FILTERS']],
  ['a missing token', () => resolveConfig({ base_url: BASE.base_url }), ['access_token']],
  ['an unknown setting', () => resolveConfig({ ...BASE, formt: 'csv' }), ['formt']],
  ['a setting out of its range', () => resolveConfig({ ...BASE, lookback_window: -1 }), ['lookback_window']],
  ['an unknown time zone', () => resolveConfig({ ...BASE, source_timezone: 'Mars/Olympus' }), ['source_timezone']],
  ['off-peak hours written another way', () => resolveConfig({ ...BASE, pass_window: '1-5' }), ['pass_window', '01:00-05:00']],
  ['off-peak hours that start where they end', () => resolveConfig({ ...BASE, pass_window: '01:00-01:00' }), ['pass_window', '01:00-05:00']],
  ['a token with a line break', () => resolveConfig({ ...BASE, access_token: 'tok\n' }), ['access_token']],
  ['a token outside Latin-1', () => resolveConfig({ ...BASE, access_token: 'tök€' }), ['access_token']],
  ['a user agent with a line break', () => resolveConfig({ ...BASE, user_agent: 'a\nb' }), ['user_agent']],
  ['a base URL that is no URL', () => resolveConfig({ ...BASE, base_url: 'https://api.example.com:99999' }), ['base_url', 'port']],
  ['plain http to another host', () => resolveConfig({ ...BASE, base_url: 'http://api.example.com' }), ['base_url', 'allow_insecure_http']],
  ['credentials in the base URL', () => resolveConfig({ ...BASE, base_url: 'https://me:pw@api.example.com' }), ['base_url', 'access_token']],
  ['a query in the base URL', () => resolveConfig({ ...BASE, base_url: 'https://api.example.com/?a=1' }), ['base_url']],
  ['a batch root that is not a file URL', () => batchSettings({ storage: { root: 's3://bucket' } }), ['batch_config.storage.root']],
  ['a batch prefix with a folder', () => batchSettings({ storage: { prefix: 'a/b' } }), ['batch_config.storage.prefix']],
  ['batch storage params', () => batchSettings({ storage: { params: { region: 'eu' } } }), ['batch_config.storage.params']],
  ['a date filter that is not a date', () => buildQuery(TRAINING, { completedAt: '>=soon' }, 0), ['filters.training.completedAt']],
  ['a key override the packaged schema lacks', () => discoverStreams({ key_properties: { training: ['learner'] } }), ['key_properties.training', 'learner']],
  ['a replication key override the catalog lacks', () => discoverStreams({ replication_key: { training: 'finished' } }, undefined, new Map([['training', { properties: { learner: {} } }]])), ['replication_key.training', 'finished']],
  ['a documented key the dump does not send', () => layoutOf(TRAINING, packaged, sample({ learner: ['u1'], programId: ['p1'], moduleId: ['m1'], completedAt: ['2025-01-01T00:00:00Z'] }), LIVE), ['key_properties.training', 'userId', 'learner']],
  ['a key override the dump does not send', () => layoutOf(TRAINING, packaged, sample(SERVED), { ...LIVE, key_properties: { training: ['learnr'] } }), ['key_properties.training', 'learnr']],
  ['a replication key the dump does not send', () => layoutOf(TRAINING, packaged, sample({ userId: ['u1'], programId: ['p1'], moduleId: ['m1'], finished: ['2025-01-01T00:00:00Z'] }), LIVE), ['replication_key.training', 'completedAt']],
  ['a replication key whose values are not instants', () => layoutOf(TRAINING, packaged, sample({ ...SERVED, completedAt: ['soon'] }), LIVE), ['replication_key.training', 'completedAt', 'soon']],
  ['two served names snake_case makes one', () => layoutOf(TRAINING, packaged, sample({ ...SERVED, userID: ['x'], 'user id': ['y'] }), { ...LIVE, field_names: 'snake_case' }), ['field_names', 'userId', 'userID']],
  ['two served names that clean to one', () => layoutOf(TRAINING, packaged, sample({ ...SERVED, 'a\tb': ['x'], 'a\nb': ['y'] }), LIVE), ['a\\u0009b', 'a\\u000ab']],
  ['a policy name that is no field', () => checkPolicyNames([POLICY_TARGET], { personal_data: [{ field: 'emial', policy: 'hash', stream: 'training' }] }), ['personal_data[0].field', 'emial']],
  ['a hash policy without a key', () => applyPolicies(POLICY_TARGET, { personal_data: [{ field: 'email', policy: 'hash', stream: 'training' }] }), ['pseudonymisation_key']],
  ['a policy on the replication key', () => applyPolicies(POLICY_TARGET, { personal_data: [{ field: 'completedAt', policy: 'redact', stream: 'training' }], pseudonymisation_key: 'k'.repeat(32) }), ['completedAt', 'replication_key.training']],
  ['a key property dropped', () => applyPolicies(POLICY_TARGET, { personal_data: [{ field: 'userId', policy: 'drop', stream: 'training' }] }), ['userId', 'key_properties.training']],
  ['a catalog file without streams', () => readCatalogFile(file('empty-catalog.json', '{}')), ['empty-catalog.json', 'discover']],
  ['a catalog entry without an id', () => readCatalogFile(file('no-id.json', '{"streams": [{}]}')), ['no-id.json', 'tap_stream_id']],
  ['catalog metadata that is not a list', () => readCatalogFile(file('metadata.json', '{"streams": [{"tap_stream_id": "training", "metadata": {}}]}')), ['metadata.json', 'metadata']],
  ['an unknown catalog stream', () => selectFromCatalog({ streams: [{ tap_stream_id: 'widgets' }] } as unknown as Catalog, [training]), ['widgets', 'discover']],
  ['an unsupported replication method', () => selectFromCatalog(catalogOf({ replication_method: 'LOG_BASED' }), [training]), ['replication-method', 'LOG_BASED']],
  ['another field as the replication key', () => selectFromCatalog(catalogOf({ replication_key: 'lastActivityAt' }), [training]), ['lastActivityAt', 'completedAt', 'replication_key.training']],
  ['a catalog key the schema lacks', () => selectFromCatalog(catalogOf({ key_properties: ['serial'] }), [training]), ['serial', 'discover']],
  ['a replication key typed as no date', () => selectStream(training, { method: 'INCREMENTAL', schema: { ...packaged, properties: { ...packaged.properties, completedAt: { type: 'integer' } } }, selects: () => true }, 'Catalog stream training'), ['completedAt', 'FULL_TABLE']],
  ['a configured catalog without streams', () => selectConfiguredStreams({}, [training], 'configured.json'), ['configured.json', 'streams']],
  ['a configured stream this source lacks', () => selectConfiguredStreams({ streams: [{ stream: { name: 'widgets' }, sync_mode: 'incremental' }] }, [training], 'configured.json'), ['widgets', 'training']],
  ['a sync mode Airbyte does not have here', () => selectConfiguredStreams({ streams: [{ stream: { name: 'training' }, sync_mode: 'append' }] }, [training], 'configured.json'), ['sync_mode', 'incremental']],
  ['a cursor field of the user\'s choice', () => selectConfiguredStreams({ streams: [{ stream: { name: 'training' }, sync_mode: 'incremental', cursor_field: ['score'] }] }, [training], 'configured.json'), ['cursor_field', '_ab_extracted_at']],
  ['a nested primary key', () => selectConfiguredStreams({ streams: [{ stream: { name: 'training' }, sync_mode: 'incremental', primary_key: [['user', 'id']] }] }, [training], 'configured.json'), ['primary_key', 'key_properties.training']],
  ['a state that is not an object', () => parseState([], 'file s.json'), ['s.json', '--state']],
  ['state bookmarks that are not an object', () => parseState({ bookmarks: [] }, 'file s.json'), ['s.json', 'bookmarks']],
  ['a stream bookmark that is not an object', () => parseState({ bookmarks: { training: 1 } }, 'file s.json'), ['bookmarks.training']],
  ['a bookmark that is not a date', () => parseState({ bookmarks: { training: { replication_key_value: 'last tuesday' } } }, 'file s.json'), ['bookmarks.training.replication_key_value']],
  ['boundary hashes that are not strings', () => parseState({ bookmarks: { training: { boundary_hashes: [1] } } }, 'file s.json'), ['bookmarks.training.boundary_hashes']],
  ['a last_modified that is not a string', () => parseState({ bookmarks: { training: { last_modified: 1 } } }, 'file s.json'), ['bookmarks.training.last_modified']],
  ['a state file that is not JSON', () => readStateFile(file('state.json', '{')), ['state.json', '--state']],
  ['a bookmark in the future', () => planStream({ descriptor: TRAINING, schema: packaged, keyProperties: [], replicationKey: 'completedAt', replicationMethod: 'INCREMENTAL', declaredFields: new Set() }, { filters: {}, lookback_window: 0, max_future_skew: 0 }, { replication_key_value: '2999-01-01T00:00:00Z' }, Date.now()), ['bookmarks.training', 'max_future_skew']],
  ['an Airbyte state that is no list of stream states', () => stateFromAirbyte(7, 'a.json'), ['a.json', '--state']],
  ['an Airbyte stream state without a name', () => stateFromAirbyte([{ type: 'STREAM', stream: {} }], 'a.json'), ['a.json', 'stream_descriptor.name']],
];

/** What a sentence telling the reader what to do starts with. */
const FIX = /(^|[.;:!?] |, or |\(|\bthen )(set|run|fix|remove|use|check|write|grant|regenerate|choose|ask|keep|put|name|raise|pass|point|unset|sync|give|leave|try)\b/i;

describe('messages of the config, catalog, state and discovery paths', () => {
  it.each(TRIGGERS)('%s: one sentence or more, naming what is wrong and what to do', (_what, trigger, names) => {
    const message = configErrorOf(trigger).message;
    expect(message, message).not.toMatch(/\n/);
    expect(message, message).toMatch(/^[A-Z]/);
    expect(message, message).toMatch(/[.)]$/);
    expect(message, `says what to do: ${message}`).toMatch(FIX);
    for (const name of names) expect(message, `names ${name}: ${message}`).toContain(name);
    expect(message.length, message).toBeLessThan(600);
  });
});
