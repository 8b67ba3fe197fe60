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

/** A date filter's value: a date or date-time (RFC 3339, or a space for the T), optionally after a comparison. */
export const DATE_FILTER = '^(>=|<=|>|<)?\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?([Zz]|[+-]\\d{2}:?\\d{2})?)?$';

/** Where a change store too large for the state lives: an S3 bucket or an Azure container, with a prefix (the bucket and container naming rules of each). */
export const STORE_URL = '^(s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]|azure://[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62})(/[^\\s]*)?$';

/** Hours of a day on a 24-hour clock, HH:MM-HH:MM. */
export const TIME_WINDOW = '^([01][0-9]|2[0-3]):[0-5][0-9]-([01][0-9]|2[0-3]):[0-5][0-9]$';

/**
 * What a value of each format the config schema names must be, in words, for
 * its error message (config-errors.ts): a new format gets its words here.
 */
export const FORMAT_WORDS: Readonly<Record<string, string>> = {
  'http-url': 'an http:// or https:// URL, such as https://api.example.com',
  'date-or-date-time': 'a date (2025-01-01) or an RFC 3339 date-time (2025-01-01T00:00:00Z)',
  'date-filter': 'a date or date-time, optionally after >=, <=, > or <, such as >=2025-01-01',
  'time-window': 'hours written HH:MM-HH:MM on a 24-hour clock, such as 01:00-05:00',
  'store-url': 's3://bucket/prefix or azure://container/prefix (bucket and container names in lower case)',
  uri: 'a URL, such as https://api.example.com',
  date: 'a date, such as 2025-01-01',
  'date-time': 'an RFC 3339 date-time, such as 2025-01-01T00:00:00Z',
};

/**
 * Every format the config schema may name: ajv-formats' full set, and the
 * tap's own (each also held by a `pattern` beside it, where there is one, for
 * clients that check patterns but not formats, as Airbyte's form does).
 */
export function configFormats(): Readonly<Record<string, Format>> {
  const { fullFormats } = require('ajv-formats/dist/formats') as typeof import('ajv-formats/dist/formats.js');
  // ajv-formats defines uri as a function (its Format type also allows regular expressions and definitions).
  const fullUri = fullFormats.uri as (value: string) => boolean;
  const uri = (value: string): boolean => PLAIN_URL.test(value) || fullUri(value);
  const dateFilter = new RegExp(DATE_FILTER);
  const timeWindow = new RegExp(TIME_WINDOW);
  const storeUrl = new RegExp(STORE_URL);
  return {
    ...fullFormats,
    uri,
    'http-url': (value: string) => /^https?:\/\//.test(value) && uri(value),
    'date-or-date-time': (value: string) => parseInstant(value) !== undefined,
    'date-filter': (value: string) => dateFilter.test(value),
    'time-window': (value: string) => timeWindow.test(value),
    'store-url': (value: string) => storeUrl.test(value),
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
