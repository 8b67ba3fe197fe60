import { configError } from '../errors.js';
import { buildQuery } from '../http/query.js';
import { HttpStatusError } from '../http/responses.js';
import { DateDialect } from '../records/date-dialect.js';
import { REPORTS, type StreamDescriptor } from './reports.js';
import { discoverStream, type DiscoveredStream } from './discovery.js';
import { fieldNamed, hasUnprintable, normalizeFieldName, outputNameOf, printableName } from './field-names.js';
import { fieldRecord, ownValue } from './field-keys.js';
import { dateTimeSchema, inferField, isBlank, isDateSchema, sampledInstantMs, type InferOptions } from './infer.js';
import { escapedName } from './escaped-name.js';
import { sanitizeServerText } from '../observe/sanitize.js';
import { sampleDump, type Sample } from './sample.js';
import type { PersonalDataSettings } from './personal-data.js';
import { offeredUnderPolicies } from './personal-streams.js';
import { loadSchema, type JsonSchema } from './schemas.js';
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

export type LiveSettings = Pick<Config, 'format' | 'filters' | 'filter_date_format' | 'key_properties' | 'replication_key' | 'field_names' | 'source_timezone' | 'csv_delimiter' | 'discovery_sample_records'>;

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
  const packaged = loadSchema(descriptor.schemaFile);
  const request = { stream: descriptor, format: settings.format, query: buildQuery(descriptor, settings.filters[descriptor.name], undefined, settings.filter_date_format).query };
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
  return layoutOf(descriptor, packaged, sample, settings, logger);
}

function findKeys(descriptor: StreamDescriptor, settings: LiveSettings, served: readonly string[]): { keys: string[]; fromSettings: boolean } {
  const configured = ownValue(settings.key_properties, descriptor.name);
  const keys = (configured ?? descriptor.keyProperties).map((name) => {
    const found = fieldNamed(name, served);
    if (found !== undefined) return found;
    const what = configured ? `Setting key_properties.${descriptor.name} names ${name}, which the service's ${descriptor.name} dump does not send` : `The service's ${descriptor.name} dump sends no field that stands for ${name}, a documented key property`;
    throw configError(`${what} (it sends ${servedList(served)}). Set key_properties.${descriptor.name} to the served fields that together identify a record.`);
  });
  return { keys, fromSettings: configured !== undefined };
}

function findReplicationKey(descriptor: StreamDescriptor, settings: LiveSettings, served: readonly string[]): string {
  const configured = ownValue(settings.replication_key, descriptor.name);
  const found = fieldNamed(configured ?? descriptor.replicationKey, served);
  if (found !== undefined) return found;
  const what = configured ? `Setting replication_key.${descriptor.name} names ${configured}, which the service's ${descriptor.name} dump does not send` : `The service's ${descriptor.name} dump sends no field that stands for ${descriptor.replicationKey}, the documented replication key`;
  throw configError(`${what} (it sends ${servedList(served)}). Set replication_key.${descriptor.name} to the served field that holds ${descriptor.replicationKey}.`);
}

/** Served names for a message: at most ten, escaped, none that looks like an e-mail address (a data row taken for a header). */
function servedList(served: readonly string[]): string {
  const shown = served.filter((name) => !name.includes('@')).slice(0, 10).map((name) => escapedName(name));
  const more = served.length - shown.length;
  return `${served.length} fields: ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** The stream as the service lays it out: its names (printable, or their snake_case), types from the packaged schema and the sample. */
export function layoutOf(descriptor: StreamDescriptor, packaged: JsonSchema, sample: Sample, settings: LiveSettings, logger?: Logger): DiscoveredStream {
  const served = sample.names;
  const { keys, fromSettings } = findKeys(descriptor, settings, served);
  const replicationKey = findReplicationKey(descriptor, settings, served);
  const output = outputNameOf(settings.field_names);
  const documented = new Map(Object.entries(packaged.properties ?? {}).map(([name, schema]) => [normalizeFieldName(name), schema]));
  const dates = new DateDialect(settings.source_timezone);
  const properties = new Map<string, JsonSchema>();
  const servedAs = new Map<string, string>();
  for (const name of served) {
    const out = output(name);
    const other = servedAs.get(out);
    if (other !== undefined) throw sameOutputName(descriptor, settings, other, name, out);
    servedAs.set(out, name);
    if (hasUnprintable(name)) logger?.warn(`${descriptor.name}: the service names a field ${escapedName(name)}, with control or invisible characters; it is called ${escapedName(out)} in the catalog, SCHEMA and RECORD messages`);
    const options = { fromCsv: settings.format === 'csv', dates, key: keys.includes(name) };
    const values = sample.values.get(name) ?? [];
    const known = documented.get(normalizeFieldName(name));
    properties.set(out, name === replicationKey ? replicationKeySchema(descriptor, out, values, known, options) : inferField(name, values, known, options));
  }
  const { properties: _packaged, required: _required, ...rest } = packaged;
  const schema: JsonSchema = { ...rest, properties: fieldRecord(properties), required: keys.map(output) };
  return { descriptor, schema, keyProperties: keys.map(output), keysFromSettings: fromSettings, replicationKey: output(replicationKey) };
}

/** Two served fields that the catalog would name alike: the tap could not tell their values apart. */
function sameOutputName(descriptor: StreamDescriptor, settings: LiveSettings, first: string, second: string, out: string): Error {
  const fields = `${escapedName(first)} and ${escapedName(second)}`;
  if (settings.field_names === 'snake_case' && printableName(first) !== printableName(second)) {
    return configError(`The ${descriptor.name} dump sends the fields ${fields}, which are both ${escapedName(out)} in snake_case, so their values could not be told apart. Set field_names to service to keep the service's own names.`);
  }
  return configError(`The ${descriptor.name} dump sends the fields ${fields}, which are both named ${escapedName(out)} once control characters are cleaned (or the same name twice), so their values could not be told apart. Ask the service to rename one of them.`);
}

/**
 * The replication key's schema: a date-time whenever its sample reads as
 * instants (dates in any dialect the tap reads, or epoch seconds or
 * milliseconds, as numbers or digit strings), whatever the field is called,
 * so that an incremental stream always keeps a bookmark; a config error when
 * some sampled value is not an instant.
 */
function replicationKeySchema(descriptor: StreamDescriptor, name: string, values: readonly unknown[], known: JsonSchema | undefined, options: InferOptions): JsonSchema {
  const inferred = inferField(name, values, known, options);
  if (isDateSchema(inferred)) return inferred;
  const notInstant = values.find((value) => !isBlank(value) && Number.isNaN(sampledInstantMs(value, options.dates)));
  if (notInstant === undefined) return dateTimeSchema(!options.key, typeof known?.description === 'string' ? known.description : undefined);
  const personal = descriptor.personalFields.some((field) => normalizeFieldName(field) === normalizeFieldName(name));
  const text = typeof notInstant === 'string' ? notInstant : JSON.stringify(notInstant);
  const example = personal || text.includes('@') ? 'a value not shown here because it may be personal data' : `${JSON.stringify(sanitizeServerText(text, 40))}`;
  throw configError(
    `The ${descriptor.name} replication key ${escapedName(name)} holds values that are not dates or times, such as ${example}, so no bookmark could be kept. Set replication_key.${descriptor.name} to the served field that holds ${descriptor.replicationKey} (an RFC 3339 or ISO 8601 date, or epoch seconds or milliseconds), or sync the stream FULL_TABLE.`,
  );
}
