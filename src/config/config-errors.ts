import type { ErrorObject } from 'ajv';
import type { JsonSchema } from '../catalog/schemas.js';
import { FORMAT_WORDS } from './config-ajv.js';
import { nearestName } from './nearest-name.js';

/**
 * The config validator's errors in words a data engineer reads: one message
 * per setting, however many of its schema's rules failed (a base_url may fail
 * both its pattern and its format), saying what the value must be as the
 * setting's schema describes it (its type, bounds, allowed values, format),
 * never the value itself (it may be a secret or personal) nor a regular
 * expression. `noun` is what a setting is called: `setting` (the tap's
 * config) or `config field` (the Airbyte source's).
 */
export function describeConfigErrors(errors: readonly ErrorObject[], schema: JsonSchema, noun: string): string[] {
  const messages = new Map<string, string>();
  for (const error of errors) {
    const [key, describe] = describer(error, schema, noun);
    if (!messages.has(key)) messages.set(key, describe());
  }
  return [...messages.values()];
}

/** A key that is the same for every error one message covers, and how to word that message. */
function describer(error: ErrorObject, root: JsonSchema, noun: string): [string, () => string] {
  const path = settingPath(error.instancePath);
  const at = schemaAt(root, error.schemaPath);
  switch (error.keyword) {
    case 'required': {
      const name = joinPath(path, (error.params as { missingProperty: string }).missingProperty);
      return [`required ${name}`, () => `missing required ${noun} ${name}`];
    }
    case 'additionalProperties': {
      const extra = (error.params as { additionalProperty: string }).additionalProperty;
      const name = joinPath(path, extra);
      return [`unknown ${name}`, () => `unknown ${noun} ${name}${knownNames(extra, path, at?.properties)}`];
    }
    default:
      return [`value ${path}`, () => `${noun} ${path || '(the whole config)'} must be ${at ? expected(at) : 'valid'}`];
  }
}

/** ` (did you mean email? filters.training takes program, module, …)`: the name meant, and the names a nested object takes. */
function knownNames(extra: string, parent: string, properties: Record<string, JsonSchema> | undefined): string {
  const names = Object.keys(properties ?? {});
  if (names.length === 0) return '';
  const meant = nearestName(extra, names);
  // The top level has too many settings to list; the message's end says where they are listed.
  const list = parent !== '' && names.length <= 12 ? `${parent} takes ${names.join(', ')}` : '';
  const parts = [meant === undefined ? '' : `did you mean ${meant}?`, list].filter(Boolean);
  return parts.length === 0 ? '' : ` (${parts.join(' ')})`;
}

/** What a value of `schema` must be: `a whole number from 0 to 3650`, `one of jsonl, csv`, the words of its format. */
function expected(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map(enumValue).join(', ')}`;
  switch (schema.type) {
    case 'string':
      return stringWords(schema);
    case 'integer':
      return `a whole number${range(schema)}`;
    case 'number':
      return `a number${range(schema)}`;
    case 'boolean':
      return 'true or false';
    case 'array':
      return listWords(schema);
    case 'object':
      return 'a JSON object';
    default:
      return 'valid';
  }
}

function stringWords(schema: JsonSchema): string {
  if (typeof schema.format === 'string') return FORMAT_WORDS[schema.format] ?? `a valid ${schema.format}`;
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  if (minLength > 1) return `a string of at least ${minLength} characters`;
  return minLength === 1 ? 'a non-empty string' : 'a string';
}

function listWords(schema: JsonSchema): string {
  const items = schema.items as JsonSchema | undefined;
  const item = items?.type === 'string' ? (items.minLength === 1 ? 'non-empty string' : 'string') : 'value';
  const minItems = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const count = minItems === 1 ? `at least one ${item}` : minItems > 1 ? `at least ${minItems} ${item}s` : `${item}s`;
  return `a JSON list of ${count}${schema.uniqueItems === true ? ', none repeated' : ''}`;
}

/** ` from 0 to 3650`, ` greater than 0 and at most 86400`, ` of at least 1024`, or nothing. */
function range(schema: JsonSchema): string {
  const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const above = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  const upper = max === undefined ? '' : `at most ${max}`;
  if (min !== undefined) return max === undefined ? ` of at least ${min}` : ` from ${min} to ${max}`;
  if (above !== undefined) return ` greater than ${above}${upper ? ` and ${upper}` : ''}`;
  return upper ? ` of ${upper}` : '';
}

/** An allowed value as a reader types it: words as they are, a delimiter such as `;` or a tab quoted. */
function enumValue(value: unknown): string {
  return typeof value === 'string' && /^[\w.*-]+$/.test(value) ? value : JSON.stringify(value);
}

/** The sub-schema an error's rule belongs to: its schemaPath without the rule's keyword. */
function schemaAt(root: JsonSchema, schemaPath: string): JsonSchema | undefined {
  const steps = schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean).slice(0, -1).map(unescapePointer);
  let node: unknown = root;
  for (const step of steps) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[step];
  }
  return typeof node === 'object' && node !== null ? (node as JsonSchema) : undefined;
}

/** `/filters/training/email` -> `filters.training.email`, `/personal_data/0/policy` -> `personal_data[0].policy` */
function settingPath(instancePath: string): string {
  return pointerSteps(instancePath).reduce((path, step) => (/^\d+$/.test(step) ? `${path}[${step}]` : joinPath(path, step)), '');
}

/** `/filters/training/email` -> `['filters', 'training', 'email']`: the names a JSON pointer steps through. */
export function pointerSteps(instancePath: string): string[] {
  return instancePath.split('/').slice(1).map(unescapePointer);
}

function joinPath(parent: string, name: string): string {
  return parent === '' ? name : `${parent}.${name}`;
}

function unescapePointer(step: string): string {
  return step.replace(/~1/g, '/').replace(/~0/g, '~');
}
