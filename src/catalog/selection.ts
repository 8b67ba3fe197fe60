import { configError } from '../errors.js';
import type { JsonSchema } from './schemas.js';
import type { DiscoveredStream } from './discovery.js';
import type { StreamDescriptor } from './reports.js';

export type ReplicationMethod = 'INCREMENTAL' | 'FULL_TABLE';

/** What the sync engine needs to know of one stream the consumer selected. */
export interface SelectedStream {
  readonly descriptor: StreamDescriptor;
  /** The stream's schema narrowed to the selected fields. */
  readonly schema: JsonSchema;
  readonly keyProperties: readonly string[];
  readonly replicationKey: string;
  readonly replicationMethod: ReplicationMethod;
  /** Every field the stream declares, selected or not: a served field outside it is reported as undeclared. */
  readonly declaredFields: ReadonlySet<string>;
}

/** What a catalog (Singer or Airbyte) says about one stream, in neither's words. */
export interface StreamChoice {
  readonly method: ReplicationMethod;
  /** The schema to use; the discovered one when absent. */
  readonly schema?: JsonSchema;
  /** The catalog's key properties; the key_properties setting wins over them. */
  readonly keyProperties?: readonly string[];
  /** Whether a field is selected; key properties and the replication key always are. */
  readonly selects: (field: string) => boolean;
}

/**
 * One stream as the engine will sync it: the schema narrowed to the chosen
 * fields, which must include the key properties and the replication key.
 * `where` names the catalog entry in error messages.
 */
export function selectStream(offered: DiscoveredStream, choice: StreamChoice, where: string): SelectedStream {
  const schema = choice.schema ?? offered.schema;
  const catalogKeys = offered.keysFromSettings ? undefined : choice.keyProperties;
  const keyProperties = [...(catalogKeys && catalogKeys.length > 0 ? catalogKeys : offered.keyProperties)];
  const always = new Set([...keyProperties, offered.replicationKey]);
  for (const field of always) {
    if (!schema.properties?.[field]) throw configError(`${where}: the schema has no property ${field}, which is a key or the replication key. Run discover again.`);
  }
  const properties: Record<string, JsonSchema> = {};
  for (const [field, fieldSchema] of Object.entries(schema.properties ?? {})) {
    if (always.has(field) || choice.selects(field)) properties[field] = fieldSchema;
  }
  const narrowed: JsonSchema = { ...schema, properties };
  if (Array.isArray(schema.required)) narrowed.required = schema.required.filter((f) => f in properties);
  return {
    descriptor: offered.descriptor,
    schema: narrowed,
    keyProperties,
    replicationKey: offered.replicationKey,
    replicationMethod: choice.method,
    declaredFields: new Set([...Object.keys(offered.schema.properties ?? {}), ...Object.keys(properties)]),
  };
}

/** Every stream with every field, incremental: what `sync` does without a catalog. */
export function defaultSelection(streams: readonly DiscoveredStream[]): SelectedStream[] {
  return streams.map((offered) => selectStream(offered, { method: 'INCREMENTAL', selects: () => true }, `Stream ${offered.descriptor.name}`));
}
