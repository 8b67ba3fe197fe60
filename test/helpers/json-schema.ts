import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

export function schemaValidator(schema: object): ValidateFunction {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const addFormats = addFormatsModule as unknown as (a: Ajv) => Ajv;
  addFormats(ajv);
  return ajv.compile(schema);
}

/**
 * Every value of an `additionalProperties` key at any depth of a schema, with
 * its dotted path: CAT's find_all_values_for_key_in_schema, which walks every
 * object and list (a field named additionalProperties included).
 */
export function additionalPropertiesValues(node: unknown, path = ''): Array<{ path: string; value: unknown }> {
  if (Array.isArray(node)) return node.flatMap((item, i) => additionalPropertiesValues(item, `${path}[${i}]`));
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([key, value]) => {
    const at = path === '' ? key : `${path}.${key}`;
    return [...(key === 'additionalProperties' ? [{ path: at, value }] : []), ...additionalPropertiesValues(value, at)];
  });
}
