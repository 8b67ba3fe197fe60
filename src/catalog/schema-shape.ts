/**
 * Where a catalog's stream schema is not shaped as the tap reads it, as a
 * path under `at` (`streams[0].schema.properties.score`), or undefined. A
 * catalog edited by hand (a property set to null, properties a list) must
 * fail as the catalog's fault, naming the entry, not as an internal error
 * deep in field selection. Booleans are schemas too (JSON Schema's true
 * and false), so they pass.
 */
export function schemaShapeProblem(schema: unknown, at: string): string | undefined {
  if (schema === undefined) return undefined;
  if (!isObject(schema)) return `${at} is not an object`;
  const properties = (schema as { properties?: unknown }).properties;
  if (properties === undefined) return undefined;
  if (!isObject(properties)) return `${at}.properties is not an object of field schemas`;
  for (const [name, field] of Object.entries(properties)) {
    if (!isObject(field) && typeof field !== 'boolean') return `${at}.properties.${name} is not a schema (an object)`;
  }
  return undefined;
}

/** Where a list of field names (key_properties, table-key-properties) holds something else, or undefined. */
export function namesProblem(names: unknown, at: string): string | undefined {
  if (names === undefined) return undefined;
  if (!Array.isArray(names) || !names.every((name) => typeof name === 'string')) return `${at} is not a list of field names`;
  return undefined;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
