import { configError } from '../errors.js';
import { loadSchema, type JsonSchema } from './schemas.js';
import { REPORTS, type StreamDescriptor } from './reports.js';
import { fieldNamed, normalizeFieldName } from './field-names.js';
import { fieldRecord, ownValue } from './field-keys.js';

/** A stream as the connector offers it, before any catalog narrows it. */
export interface DiscoveredStream {
  readonly descriptor: StreamDescriptor;
  /** Every field the stream has. */
  readonly schema: JsonSchema;
  readonly keyProperties: readonly string[];
  /** True when the key properties come from the key_properties setting, which wins over any catalog. */
  readonly keysFromSettings: boolean;
  readonly replicationKey: string;
}

/** The settings discovery reads. */
export interface DiscoverySettings {
  key_properties?: Readonly<Record<string, readonly string[] | undefined>>;
  replication_key?: Readonly<Record<string, string | undefined>>;
}

/**
 * The fields a catalog declares, and the packaged fields it has under no
 * spelling: a key the catalog's schema left out is taken back from them.
 */
function declaredWithPackaged(declared: JsonSchema, packaged: JsonSchema): JsonSchema {
  const properties = fieldRecord(Object.entries(declared.properties ?? {}));
  const spelled = new Set(Object.keys(properties).map(normalizeFieldName));
  for (const [name, schema] of Object.entries(packaged.properties ?? {})) {
    if (!spelled.has(normalizeFieldName(name))) properties[name] = schema;
  }
  return { ...declared, properties };
}

/**
 * The one place a stream's key properties and replication key are decided
 * from the settings, against the fields a schema has: the packaged schema, or
 * the schema a catalog declares for the stream (`declared`), which holds the
 * service's own names as discovery learnt them. A setting may name a field in
 * the service's spelling or the catalog's (they match after normalisation).
 */
export function discoverStream(descriptor: StreamDescriptor, settings: DiscoverySettings, declared?: JsonSchema): DiscoveredStream {
  const packaged = loadSchema(descriptor.schemaFile);
  const schema = declared === undefined ? packaged : declaredWithPackaged(declared, packaged);
  const names = Object.keys(schema.properties ?? {});
  const source = declared === undefined ? 'packaged' : 'catalog';
  const configured = ownValue(settings.key_properties, descriptor.name);
  const keyProperties = (configured ?? descriptor.keyProperties).map((name) => fieldNamed(name, names) ?? missingField(descriptor, 'key_properties', configured !== undefined, name, source));
  const configuredKey = ownValue(settings.replication_key, descriptor.name);
  const replicationKey = fieldNamed(configuredKey ?? descriptor.replicationKey, names) ?? missingField(descriptor, 'replication_key', configuredKey !== undefined, configuredKey ?? descriptor.replicationKey, source);
  return { descriptor, schema, keyProperties, keysFromSettings: configured !== undefined, replicationKey };
}

/** A named field the schema does not have: a config error when a setting names it, a packaging fault when the descriptor does. */
function missingField(descriptor: StreamDescriptor, setting: 'key_properties' | 'replication_key', configured: boolean, name: string, source: 'packaged' | 'catalog'): never {
  const stream = descriptor.name;
  if (!configured) throw new Error(`The ${stream} report's ${setting === 'key_properties' ? 'key property' : 'replication key'} ${name} is not in its schema ${descriptor.schemaFile}.`);
  if (source === 'catalog') {
    throw configError(`Setting ${setting}.${stream} names ${name}, but the catalog's ${stream} schema has no such field. Run discover again with this config, or set ${setting}.${stream} to a field the catalog declares.`);
  }
  throw configError(
    `Setting ${setting}.${stream} names ${name}, which the packaged ${stream} schema does not have, and this run has not learnt the service's own field names. Run discover (discovery live, with a token that may read the dump) and sync with its catalog, or name a field of the packaged schema.`,
  );
}

/** Every stream, over the packaged schemas, or over the schemas a catalog declares (by stream name) where it declares one. */
export function discoverStreams(settings: DiscoverySettings, reports: readonly StreamDescriptor[] = REPORTS, declared: ReadonlyMap<string, JsonSchema> = new Map()): DiscoveredStream[] {
  return reports.map((descriptor) => discoverStream(descriptor, settings, declared.get(descriptor.name)));
}
