import { configError } from '../errors.js';
import { buildQuery } from '../http/query.js';
import { HttpStatusError } from '../http/responses.js';
import { DateDialect } from '../records/date-dialect.js';
import { REPORTS, type StreamDescriptor } from './reports.js';
import { discoverStream, type DiscoveredStream } from './discovery.js';
import { normalizeFieldName, toSnakeCase } from './field-names.js';
import { inferField } from './infer.js';
import { sampleDump, type Sample } from './sample.js';
import type { PersonalDataSettings } from './personal-data.js';
import { offeredUnderPolicies } from './personal-streams.js';
import type { JsonSchema } from './schemas.js';
import type { DumpClient } from '../http/client.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../observe/log.js';

/**
 * Live discovery: each stream's fields, names and types come from the first
 * records of the tenant's own dump, mapped onto the packaged schema (which
 * says what each documented field means) by normalised name, so a layout the
 * tap has never seen gets its key properties and replication key all the
 * same. A stream the token may not read, or an empty dump, keeps its
 * packaged schema.
 */

/** Discovery stops reading a dump after this many bytes, whatever the record limit. */
const SAMPLE_BYTES = 8 * 1024 * 1024;

export type LiveSettings = Pick<Config, 'format' | 'filters' | 'key_properties' | 'replication_key' | 'field_names' | 'source_timezone' | 'csv_delimiter' | 'discovery_sample_records'>;

/** The streams as the config asks to discover them: live from the service (the default), or packaged; under the personal_data policies. */
export async function discoverAsConfigured(settings: LiveSettings & PersonalDataSettings & Pick<Config, 'discovery'>, client: DumpClient, logger: Logger, reports: readonly StreamDescriptor[] = REPORTS): Promise<DiscoveredStream[]> {
  const streams = settings.discovery === 'packaged' ? reports.map((d) => discoverStream(d, settings)) : await discoverLive(settings, client, logger, reports);
  return offeredUnderPolicies(streams, settings, reports);
}

export async function discoverLive(settings: LiveSettings, client: DumpClient, logger: Logger, reports: readonly StreamDescriptor[] = REPORTS): Promise<DiscoveredStream[]> {
  const streams: DiscoveredStream[] = [];
  for (const descriptor of reports) streams.push(await discoverOne(descriptor, settings, client, logger));
  return streams;
}

async function discoverOne(descriptor: StreamDescriptor, settings: LiveSettings, client: DumpClient, logger: Logger): Promise<DiscoveredStream> {
  const packaged = discoverStream(descriptor, { key_properties: {} });
  const request = { stream: descriptor, format: settings.format, query: buildQuery(descriptor, settings.filters[descriptor.name], undefined).query };
  let sample: Sample;
  try {
    const delimiter = settings.csv_delimiter === undefined ? null : settings.csv_delimiter.charCodeAt(0);
    sample = await sampleDump(client, request, { records: settings.discovery_sample_records, bytes: SAMPLE_BYTES }, delimiter);
  } catch (error) {
    if (!(error instanceof HttpStatusError && error.status === 403)) throw error;
    logger.warn(`${descriptor.name}: the token may not read this dump (HTTP 403), so its packaged schema is used; grant the scope ${descriptor.scope} and discover again to learn the service's layout`);
    return discoverStream(descriptor, settings);
  }
  if (sample.records === 0) {
    logger.warn(`${descriptor.name}: the dump has no records to learn its layout from (with the configured filters), so its packaged schema is used; discover again once it has some`);
    return discoverStream(descriptor, settings);
  }
  return layoutOf(descriptor, packaged.schema, sample, settings);
}

/** The served field a documented or configured name stands for: the same name, or the same after normalisation. */
function servedField(name: string, served: readonly string[]): string | undefined {
  if (served.includes(name)) return name;
  const wanted = normalizeFieldName(name);
  return served.find((s) => normalizeFieldName(s) === wanted);
}

function findKeys(descriptor: StreamDescriptor, settings: LiveSettings, served: readonly string[]): { keys: string[]; fromSettings: boolean } {
  const configured = settings.key_properties[descriptor.name];
  const wanted = configured ?? descriptor.keyProperties;
  const keys = wanted.map((name) => {
    const found = servedField(name, served);
    if (found !== undefined) return found;
    const fix = configured ? `Setting key_properties.${descriptor.name} names ${name}` : `The documented key property ${name}`;
    throw configError(`${fix}, which the service's ${descriptor.name} dump does not send (among its ${served.length} fields). Set key_properties.${descriptor.name} to the fields that identify a record.`);
  });
  return { keys, fromSettings: configured !== undefined };
}

function findReplicationKey(descriptor: StreamDescriptor, settings: LiveSettings, served: readonly string[]): string {
  const configured = settings.replication_key[descriptor.name];
  const found = servedField(configured ?? descriptor.replicationKey, served);
  if (found !== undefined) return found;
  const what = configured ? `Setting replication_key.${descriptor.name} names ${configured}` : `The documented replication key ${descriptor.replicationKey}`;
  throw configError(`${what}, which the service's ${descriptor.name} dump does not send (among its ${served.length} fields). Set replication_key.${descriptor.name} to the field that holds it.`);
}

/** The stream as the service lays it out: its names (or their snake_case), types from the packaged schema and the sample. */
export function layoutOf(descriptor: StreamDescriptor, packaged: JsonSchema, sample: Sample, settings: LiveSettings): DiscoveredStream {
  const served = sample.names;
  const { keys, fromSettings } = findKeys(descriptor, settings, served);
  const replicationKey = findReplicationKey(descriptor, settings, served);
  const output = settings.field_names === 'snake_case' ? toSnakeCase : (name: string) => name;
  const documented = new Map(Object.entries(packaged.properties ?? {}).map(([name, schema]) => [normalizeFieldName(name), schema]));
  const dates = new DateDialect(settings.source_timezone);
  const properties: Record<string, JsonSchema> = {};
  for (const name of served) {
    const out = output(name);
    if (out in properties) throw configError(`The ${descriptor.name} dump has two fields named ${out} in ${settings.field_names}; set field_names to service.`);
    const options = { fromCsv: settings.format === 'csv', dates, key: keys.includes(name) };
    properties[out] = inferField(name, sample.values.get(name) ?? [], documented.get(normalizeFieldName(name)), options);
  }
  const { properties: _packaged, required: _required, ...rest } = packaged;
  const schema: JsonSchema = { ...rest, properties, required: keys.map(output) };
  return { descriptor, schema, keyProperties: keys.map(output), keysFromSettings: fromSettings, replicationKey: output(replicationKey) };
}
