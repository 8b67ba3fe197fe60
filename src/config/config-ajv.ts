import { createRequire } from 'node:module';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { Ajv, CodeOptions, ErrorObject, Format } from 'ajv';
import { parseInstant } from '../dates.js';

/**
 * How the config schema is compiled, one definition for both ways of doing
 * it: ahead of time into standalone code (the build, standalone.ts) and at
 * run time (a report list the build did not know).
 */

/** A compiled config validator: true when the config is valid; otherwise `errors` says why. Fills in defaults. */
export type ConfigValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** Every format the config schema may name: ajv-formats' full set, and dates in any form the tap reads. */
export const CONFIG_FORMATS: Readonly<Record<string, Format>> = {
  ...fullFormats,
  'date-or-date-time': (value: string) => parseInstant(value) !== undefined,
};

// ajv is CommonJS: required synchronously (config loading is synchronous), and only when a schema is compiled here.
const require = createRequire(import.meta.url);

/** An ajv instance set up for the config schema; `code` adds the standalone-code options at build time. */
export function configAjv(code: CodeOptions = {}): Ajv {
  const { Ajv: AjvClass } = require('ajv') as typeof import('ajv');
  const addFormats = require('ajv-formats') as (ajv: Ajv) => Ajv;
  const ajv = new AjvClass({ allErrors: true, useDefaults: true, strict: false, code });
  // The formats plugin also adds its keywords (formatMinimum and the like); the formats themselves come from CONFIG_FORMATS.
  addFormats(ajv);
  for (const [name, format] of Object.entries(CONFIG_FORMATS)) ajv.addFormat(name, format);
  return ajv;
}
