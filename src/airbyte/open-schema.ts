import type { JsonSchema } from '../catalog/schemas.js';

/**
 * A schema as the Airbyte face shows it: the same, without any
 * `additionalProperties: false` at any depth. Airbyte asks every connector
 * for open schemas (its acceptance tests fail on a false): a config saved by
 * another version of the source, holding a field this one does not know,
 * must still pass the platform's check, and a record must stay valid when
 * the service adds a field. The tap's own schemas stay closed, so the Singer
 * face keeps refusing an unknown setting; the Airbyte face drops one with a
 * warning instead (config.ts). Only the value false goes: an
 * `additionalProperties` that is a schema says what the values of a map are.
 */
export function openSchema(schema: JsonSchema): JsonSchema {
  return opened(schema) as JsonSchema;
}

function opened(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(opened);
  if (typeof node !== 'object' || node === null) return node;
  // Object.fromEntries defines each name as its own member, a field named __proto__ included.
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => !(key === 'additionalProperties' && value === false))
      .map(([key, value]) => [key, opened(value)]),
  );
}
