import { FieldTable, type FieldTransform } from '../../src/records/fields.js';
import { DateDialect } from '../../src/records/date-dialect.js';
import { loadSchema, type JsonSchema } from '../../src/catalog/schemas.js';
import { TRAINING } from '../../src/catalog/reports.js';
import { toSnakeCase } from '../../src/catalog/field-names.js';

/**
 * The field rules of the packaged training schema, or of the part of it named
 * in `fields` (a CSV header naming those columns then lacks no selected field);
 * undeclared fields are pushed to `warnings`.
 */
export function trainingTable(warnings: string[] = [], fields?: readonly string[]): FieldTable {
  return trainingTableFor({ warnings, ...(fields ? { fields } : {}) });
}

export interface TableVariant {
  warnings?: string[];
  fields?: readonly string[];
  /** Output names in snake_case (the field_names setting), the schema's names with them. */
  snakeCase?: boolean;
  /** The source time zone of dates without a zone. */
  timeZone?: string;
  /** Transformations by output name. */
  transforms?: Record<string, FieldTransform>;
}

/** The training table under the settings a stream sync may use. */
export function trainingTableFor(variant: TableVariant): FieldTable {
  const schema = loadSchema(TRAINING.schemaFile);
  const rename = variant.snakeCase ? toSnakeCase : (name: string) => name;
  const properties = Object.fromEntries(
    Object.entries(schema.properties ?? {})
      .filter(([name]) => variant.fields === undefined || variant.fields.includes(name))
      .map(([name, property]) => [rename(name), property]),
  );
  const selected: JsonSchema = { ...schema, properties };
  const warnings = variant.warnings ?? [];
  return new FieldTable(selected, {
    declaredFields: new Set(Object.keys(schema.properties ?? {}).map(rename)),
    keyProperties: TRAINING.keyProperties.map(rename),
    replicationKey: rename(TRAINING.replicationKey),
    personalFields: TRAINING.personalFields,
    onUndeclaredField: (f) => warnings.push(f),
    ...(variant.timeZone ? { dates: new DateDialect(variant.timeZone) } : {}),
    ...(variant.transforms ? { transforms: variant.transforms } : {}),
    ...(variant.snakeCase ? { outputName: toSnakeCase } : {}),
  });
}
