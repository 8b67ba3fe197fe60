import { configError } from '../errors.js';
import { normalizeFieldName } from '../catalog/field-names.js';
import { POLICIES, type PersonalDataRule, type PersonalPolicy } from '../catalog/personal-data.js';

/**
 * The personal_data setting's two forms. The list of rules is the one the
 * schema (and so Airbyte's UI) shows; the older object keyed by `"*"` and
 * stream names, each a map of field name to policy, is still read: it is
 * turned into the same rules before the config is validated, and the run
 * warns once that it is deprecated, showing the list to write instead.
 */

/** `"*"` in the object form: every stream. */
const EVERY_STREAM = '*';

const isPolicy = (value: unknown): value is PersonalPolicy => POLICIES.includes(value as PersonalPolicy);

/** The rules an object-form personal_data stands for, in its order; one-line config errors for what the list's schema would have refused. */
export function rulesFromObjectForm(value: Readonly<Record<string, unknown>>, streams: readonly string[]): PersonalDataRule[] {
  const rules: PersonalDataRule[] = [];
  for (const [scope, policies] of Object.entries(value)) {
    const path = `personal_data.${scope === EVERY_STREAM ? '"*"' : scope}`;
    if (scope !== EVERY_STREAM && !streams.includes(scope)) {
      throw configError(`Setting ${path} names no stream; use "*" for every stream or one of ${streams.join(', ')} (or the list form: tap-report-dump --about describes it).`);
    }
    if (typeof policies !== 'object' || policies === null || Array.isArray(policies)) {
      throw configError(`Setting ${path} must be a JSON object of field names and policies, such as {"email": "hash"}.`);
    }
    for (const [field, policy] of Object.entries(policies)) {
      if (!isPolicy(policy)) throw configError(`Setting ${path}.${field} must be one of ${POLICIES.join(', ')}.`);
      rules.push(scope === EVERY_STREAM ? { field, policy } : { field, policy, stream: scope });
    }
  }
  return rules;
}

/** The warning a run logs when personal_data has the object form: the rules to write instead (field names and policies only, never a value). */
export function objectFormWarning(rules: readonly PersonalDataRule[]): string {
  return `Setting personal_data is written in the deprecated object form ({"*": {…}, "<stream>": {…}}); write it as a list of rules instead, the same policies: ${JSON.stringify(rules)}.`;
}

/** Two rules for one field of one stream (or of every stream) would leave which one applies to their order: a config error naming both. */
export function checkRulesDistinct(rules: readonly PersonalDataRule[]): void {
  const first = new Map<string, number>();
  rules.forEach((rule, i) => {
    const key = JSON.stringify([rule.stream ?? null, normalizeFieldName(rule.field)]);
    const earlier = first.get(key);
    if (earlier === undefined) {
      first.set(key, i);
      return;
    }
    const where = rule.stream === undefined ? 'every stream' : `the ${rule.stream} stream`;
    throw configError(
      `Setting personal_data[${earlier}] (field ${rules[earlier].field}) and personal_data[${i}] (field ${rule.field}) are two rules for one field of ${where} (field names match ignoring case and punctuation); keep one.`,
    );
  });
}
