import { HIDDEN_BEYOND_C0 } from '../observe/sanitize.js';

/**
 * Field names as the service may spell them: `userId`, `user_id`, `USER_ID`,
 * `User ID` and `user-id` are one field, `E-mail` is `email`. Compared after
 * lower-casing and keeping letters and digits only.
 */
export function normalizeFieldName(name: string): string {
  return name.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
}

/** `userId` → `user_id`, `User ID` → `user_id`, `E-mail` → `e_mail`, `HTTPStatus` → `http_status`, `completed_at` unchanged. */
export function toSnakeCase(name: string): string {
  return name
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1_$2')
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1_$2')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '');
}

/** The field of `names` a documented or configured name stands for: the same name, or the same after normalisation (`user_id` for `userId`). */
export function fieldNamed(name: string, names: readonly string[]): string | undefined {
  if (names.includes(name)) return name;
  const wanted = normalizeFieldName(name);
  return names.find((n) => normalizeFieldName(n) === wanted);
}

/**
 * Control characters (C0, DEL, C1) and the invisible formatting characters
 * that reorder or hide text (zero-width, bidirectional controls, the BOM):
 * in a served name they would reach SCHEMA and RECORD messages, and from
 * there a warehouse's column names.
 */
const UNPRINTABLE = `[\\u0000-\\u001f${HIDDEN_BEYOND_C0}]`;
const ANY_UNPRINTABLE = new RegExp(UNPRINTABLE, 'u');
const UNPRINTABLE_RUNS = new RegExp(`${UNPRINTABLE}+`, 'gu');

/** Whether a served name holds characters `printableName` cleans. */
export function hasUnprintable(name: string): boolean {
  return ANY_UNPRINTABLE.test(name);
}

/**
 * A served name as the tap writes it: each run of control or invisible
 * formatting characters becomes one space, and a name so cleaned loses the
 * spaces at its ends (`Completed\nAt` → `Completed At`, `\u0000email` →
 * `email`). Other names are returned as they are.
 */
export function printableName(name: string): string {
  return hasUnprintable(name) ? name.replace(UNPRINTABLE_RUNS, ' ').trim() : name;
}

export type FieldNaming = 'service' | 'snake_case';

/** The name a served field has in the catalog, SCHEMA and RECORD messages under the field_names setting. */
export function outputNameOf(naming: FieldNaming): (served: string) => string {
  return naming === 'snake_case' ? (served) => toSnakeCase(printableName(served)) : printableName;
}
