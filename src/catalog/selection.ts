import { configError } from '../errors.js';
import { fieldNamed, normalizeFieldName } from './field-names.js';
import { fieldRecord, hasOwnField, ownValue } from './field-keys.js';
import { isDateSchema } from './infer.js';
import type { JsonSchema } from './schemas.js';
import type { DiscoveredStream } from './discovery.js';
import type { StreamDescriptor } from './reports.js';
import type { ValuePolicy } from './personal-data.js';

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
  /** Fields whose values the personal_data setting replaces (redacted or pseudonymised), by schema name. */
  readonly personal?: ReadonlyMap<string, ValuePolicy>;
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
  /** The catalog's replication key, when it names one; it must stand for the stream's (same name after normalisation, or the replication_key setting). */
  readonly replicationKey?: string;
}

/**
 * One stream as the engine will sync it: the schema narrowed to the chosen
 * fields, which must include the key properties and the replication key.
 * `where` names the catalog entry in error messages.
 */
export function selectStream(offered: DiscoveredStream, choice: StreamChoice, where: string): SelectedStream {
  const schema = choice.schema ?? offered.schema;
  const names = Object.keys(schema.properties ?? {});
  const catalogKeys = offered.keysFromSettings ? undefined : choice.keyProperties;
  const keyProperties = (catalogKeys && catalogKeys.length > 0 ? catalogKeys : offered.keyProperties).map((key) => inSchema(key, names));
  const replicationKey = inSchema(choice.replicationKey ?? offered.replicationKey, names);
  const always = new Set([...keyProperties, replicationKey]);
  const properties = fieldRecord<JsonSchema>();
  for (const [field, fieldSchema] of Object.entries(schema.properties ?? {})) {
    if (always.has(field) || choice.selects(field)) properties[field] = fieldSchema;
  }
  const missing = [...always].filter((field) => !properties[field]);
  for (const field of missing) {
    if (!hasOwnField(offered.schema.properties, field)) throw configError(`${where}: the schema has no property ${field}, which is a key or the replication key. Run discover again.`);
  }
  const narrowed: JsonSchema = { ...schema, properties: missing.length === 0 ? properties : restored(properties, missing, offered.schema) };
  if (choice.method === 'INCREMENTAL') checkBookmarkable(narrowed, replicationKey, where);
  if (Array.isArray(schema.required)) narrowed.required = schema.required.filter((f) => f in narrowed.properties!);
  return {
    descriptor: offered.descriptor,
    schema: narrowed,
    keyProperties,
    replicationKey,
    replicationMethod: choice.method,
    declaredFields: new Set([...Object.keys(offered.schema.properties ?? {}), ...names]),
  };
}

/** An incremental stream keeps its bookmark in the replication key's instants: a key the schema does not type as a date would silently keep none. */
function checkBookmarkable(schema: JsonSchema, replicationKey: string, where: string): void {
  const keySchema = ownValue(schema.properties, replicationKey);
  if (keySchema === undefined || isDateSchema(keySchema)) return;
  const type = JSON.stringify(keySchema.type ?? 'any value');
  throw configError(
    `${where}: the replication key ${replicationKey} is typed ${type}, not as a date-time, so an incremental sync could keep no bookmark. Run discover again (it types a replication key whose values are instants as date-time), or sync the stream as FULL_TABLE (full_refresh).`,
  );
}

/**
 * A catalog that left out a key or the replication key gets it back from
 * discovery (they are always synced), in discovery's field order.
 */
function restored(properties: Record<string, JsonSchema>, missing: readonly string[], discovered: JsonSchema): Record<string, JsonSchema> {
  const out = fieldRecord<JsonSchema>();
  for (const [field, fieldSchema] of Object.entries(discovered.properties ?? {})) {
    if (field in properties) out[field] = properties[field];
    else if (missing.includes(field)) out[field] = fieldSchema;
  }
  for (const [field, fieldSchema] of Object.entries(properties)) if (!(field in out)) out[field] = fieldSchema;
  return out;
}

/** A field name as the schema spells it: itself, or the property with the same normalised name (settings may use the documented spelling). */
function inSchema(name: string, names: readonly string[]): string {
  return fieldNamed(name, names) ?? name;
}

/** Whether a catalog's replication key stands for the stream's: the same field after normalisation. */
export function standsFor(catalogKey: string, streamKey: string): boolean {
  return normalizeFieldName(catalogKey) === normalizeFieldName(streamKey);
}

/** Every stream with every field, incremental: what `sync` does without a catalog. */
export function defaultSelection(streams: readonly DiscoveredStream[]): SelectedStream[] {
  return streams.map((offered) => selectStream(offered, { method: 'INCREMENTAL', selects: () => true }, `Stream ${offered.descriptor.name}`));
}
