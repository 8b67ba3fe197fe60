import { describe, expect, it } from 'vitest';
import { specMessage } from '../../src/airbyte/messages.js';
import { configSchema } from '../../src/config/schema.js';
import { REPORTS } from '../../src/catalog/reports.js';
import type { JsonSchema } from '../../src/catalog/schemas.js';

/**
 * personal_data in the Airbyte spec as Airbyte's acceptance suite (CAT,
 * TestSpec) and its UI need it: no object without properties ("an empty
 * object which will not be represented correctly in the UI"), no property
 * named `*` (CAT's JSON-path helper reads it as a wildcard), no oneOf or
 * anyOf (which CAT accepts only with a const discriminator), and a list whose
 * items are objects.
 */

interface Found {
  path: string;
  schema: JsonSchema;
}

/** Every schema under `schema`, with its path, through properties, items and the combinators. */
function walk(schema: JsonSchema, path: string): Found[] {
  const found: Found[] = [{ path, schema }];
  for (const [name, child] of Object.entries(schema.properties ?? {})) found.push(...walk(child, `${path}.properties.${name}`));
  if (typeof schema.items === 'object' && schema.items !== null && !Array.isArray(schema.items)) found.push(...walk(schema.items as JsonSchema, `${path}.items`));
  for (const keyword of ['oneOf', 'anyOf', 'allOf'] as const) {
    const variants = schema[keyword];
    if (Array.isArray(variants)) variants.forEach((variant, i) => found.push(...walk(variant as JsonSchema, `${path}.${keyword}.${i}`)));
  }
  return found;
}

const spec = JSON.parse(specMessage(configSchema())) as { spec: { connectionSpecification: JsonSchema } };
const personalData = spec.spec.connectionSpecification.properties!.personal_data;

describe('personal_data in the Airbyte spec', () => {
  const nodes = walk(personalData, 'personal_data');

  it('has properties on every object, so the Airbyte UI can render each', () => {
    const objects = nodes.filter((n) => n.schema.type === 'object');
    expect(objects.length).toBeGreaterThan(0);
    for (const { path, schema } of objects) expect(Object.keys(schema.properties ?? {}).length, path).toBeGreaterThan(0);
  });

  it('names no property *, and uses no oneOf or anyOf', () => {
    for (const { path, schema } of nodes) {
      expect(Object.keys(schema.properties ?? {}), path).not.toContain('*');
      expect(schema.oneOf, path).toBeUndefined();
      expect(schema.anyOf, path).toBeUndefined();
    }
  });

  it('is a list of rules: field and policy required, stream one of the streams, and no additionalProperties false', () => {
    expect(personalData.type).toBe('array');
    const item = personalData.items as JsonSchema;
    expect(item.type).toBe('object');
    expect(item.required).toEqual(['field', 'policy']);
    expect(item.properties!.field.type).toBe('string');
    expect(item.properties!.policy.enum).toEqual(['keep', 'drop', 'redact', 'hash', 'hash_keep_domain']);
    expect(item.properties!.stream.enum).toEqual(REPORTS.map((d) => d.name));
    expect(item.additionalProperties).not.toBe(false);
  });
});
