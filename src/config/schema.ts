import { loadSchema, type JsonSchema } from '../catalog/schemas.js';
import { DATE_FILTER } from './config-ajv.js';
import { REPORTS, type FilterField, type StreamDescriptor } from '../catalog/reports.js';
import { POLICIES } from '../catalog/personal-data.js';

/**
 * The config JSON Schema: schemas/config.json holds the settings that are the
 * same for every stream; the per-stream parts (each stream's filters and key
 * properties, the scopes and replication keys named in descriptions) come
 * from the stream descriptors, so a new report needs no edit here.
 */


function filterSchema(field: FilterField, descriptor: StreamDescriptor): JsonSchema {
  switch (field.type) {
    case 'string':
      return { type: 'string', minLength: 1, description: field.description };
    case 'boolean':
      return { type: 'boolean', description: field.description };
    case 'date': {
      const bookmark = field.name === descriptor.replicationFilter ? ' Combined with the incremental bookmark.' : '';
      return { type: 'string', format: 'date-filter', pattern: DATE_FILTER, description: `${field.description}${bookmark}` };
    }
  }
}

function streamFilters(descriptor: StreamDescriptor): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    description: `Filters sent as filter[<name>] on every ${descriptor.name} dump request.`,
    properties: Object.fromEntries(descriptor.filters.map((f) => [f.name, filterSchema(f, descriptor)])),
  };
}

const KEY_LIST: JsonSchema = { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, uniqueItems: true };

/** `the a:read scope for the x stream and b:read for the y stream` */
function scopes(reports: readonly StreamDescriptor[]): string {
  const parts = reports.map((d, i) => `${i === 0 ? `the ${d.scope} scope` : d.scope} for the ${d.name} stream`);
  return parts.length <= 1 ? parts.join('') : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

export function configSchema(reports: readonly StreamDescriptor[] = REPORTS): JsonSchema {
  const schema = loadSchema('config.json');
  const properties = schema.properties!;
  properties.access_token.description = `Bearer access token. Needs ${scopes(reports)}.`;
  properties.start_date.description = `Earliest ${reports.map((d) => d.replicationKey).join(' / ')} to replicate on the first incremental run (RFC 3339 date or date-time). Without it the first run reads the whole dump.`;
  properties.filters.properties = Object.fromEntries(reports.map((d) => [d.name, streamFilters(d)]));
  properties.key_properties.properties = Object.fromEntries(reports.map((d) => [d.name, structuredClone(KEY_LIST)]));
  properties.replication_key.properties = Object.fromEntries(reports.map((d) => [d.name, { type: 'string', minLength: 1 }]));
  properties.event_window_days.properties = Object.fromEntries(reports.map((d) => [d.name, { type: 'number', minimum: 0, maximum: 3650, default: d.eventWindowDays ?? 0 }]));
  // A rule's field is any name, since the service's names are learnt at discovery.
  const rule = (properties.personal_data.items as JsonSchema).properties!;
  rule.policy.enum = [...POLICIES];
  rule.stream.enum = reports.map((d) => d.name);
  return schema;
}
