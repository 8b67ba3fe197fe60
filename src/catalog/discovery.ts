import { configError } from '../errors.js';
import { loadSchema, type JsonSchema } from './schemas.js';
import { REPORTS, type StreamDescriptor } from './reports.js';

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

/** The one place a stream's schema, key properties and replication key are decided. */
export function discoverStream(descriptor: StreamDescriptor, settings: DiscoverySettings): DiscoveredStream {
  const schema = loadSchema(descriptor.schemaFile);
  const configured = settings.key_properties?.[descriptor.name];
  const keyProperties = [...(configured ?? descriptor.keyProperties)];
  for (const field of keyProperties) {
    if (schema.properties?.[field]) continue;
    if (configured) throw configError(`Setting key_properties.${descriptor.name} names ${field}, which is not a field of the ${descriptor.name} stream.`);
    throw new Error(`The ${descriptor.name} report's key property ${field} is not in its schema ${descriptor.schemaFile}.`);
  }
  const replicationKey = settings.replication_key?.[descriptor.name] ?? descriptor.replicationKey;
  if (!schema.properties?.[replicationKey]) {
    if (replicationKey !== descriptor.replicationKey) throw configError(`Setting replication_key.${descriptor.name} names ${replicationKey}, which is not a field of the ${descriptor.name} stream.`);
    throw new Error(`The ${descriptor.name} report's replication key ${descriptor.replicationKey} is not in its schema ${descriptor.schemaFile}.`);
  }
  return { descriptor, schema, keyProperties, keysFromSettings: configured !== undefined, replicationKey };
}

export function discoverStreams(settings: DiscoverySettings, reports: readonly StreamDescriptor[] = REPORTS): DiscoveredStream[] {
  return reports.map((descriptor) => discoverStream(descriptor, settings));
}
