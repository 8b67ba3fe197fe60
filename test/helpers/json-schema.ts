import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

export function schemaValidator(schema: object): ValidateFunction {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const addFormats = addFormatsModule as unknown as (a: Ajv) => Ajv;
  addFormats(ajv);
  return ajv.compile(schema);
}
