import { createRequire } from 'node:module';
import type { Ajv, CodeOptions, ErrorObject, Format } from 'ajv';
import { parseInstant } from '../dates.js';

/**
 * How the config schema is compiled, one definition for both ways of doing
 * it: ahead of time into standalone code (the build, standalone.ts) and at
 * run time (a report list the build did not know).
 */

/** A compiled config validator: true when the config is valid; otherwise `errors` says why. Fills in defaults. */
export type ConfigValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

// ajv and ajv-formats are CommonJS: required synchronously (config loading is synchronous) and only when needed.
// require() also spares the ES-module loader's scan of a CommonJS file for its exports, which costs more than the file.
const require = createRequire(import.meta.url);

/**
 * A URL made only of a http(s) scheme, a host of letters, digits, dots and
 * dashes, a port and a path of unreserved characters: every such string
 * matches ajv-formats' full URI expression (each part here is a subset of
 * the same part there), whose first use costs about 10 ms of compiling, a
 * good part of a run that gets a 304. base_url is almost always like this.
 */
const PLAIN_URL = /^https?:\/\/[a-z0-9.-]*(?::\d*)?(?:\/[a-z0-9._~-]*)*$/i;

/** Every format the config schema may name: ajv-formats' full set, and dates in any form the tap reads. */
export function configFormats(): Readonly<Record<string, Format>> {
  const { fullFormats } = require('ajv-formats/dist/formats') as typeof import('ajv-formats/dist/formats.js');
  // ajv-formats defines uri as a function (its Format type also allows regular expressions and definitions).
  const fullUri = fullFormats.uri as (value: string) => boolean;
  return {
    ...fullFormats,
    uri: (value: string) => PLAIN_URL.test(value) || fullUri(value),
    'date-or-date-time': (value: string) => parseInstant(value) !== undefined,
  };
}

/** An ajv instance set up for the config schema; `code` adds the standalone-code options at build time. */
export function configAjv(code: CodeOptions = {}): Ajv {
  const { Ajv: AjvClass } = require('ajv') as typeof import('ajv');
  const addFormats = require('ajv-formats') as (ajv: Ajv) => Ajv;
  const ajv = new AjvClass({ allErrors: true, useDefaults: true, strict: false, code });
  // The formats plugin also adds its keywords (formatMinimum and the like); the formats themselves come from configFormats().
  addFormats(ajv);
  for (const [name, format] of Object.entries(configFormats())) ajv.addFormat(name, format);
  return ajv;
}
