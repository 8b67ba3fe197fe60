import { configError } from '../errors.js';
import { fieldNamed, normalizeFieldName } from './field-names.js';
import { fieldRecord } from './field-keys.js';
import { loadSchema, type JsonSchema } from './schemas.js';
import { REPORTS, type StreamDescriptor } from './reports.js';

/**
 * The personal_data setting: what happens to each personal field before it
 * leaves the tap. It is a list of rules, each for one field of every stream
 * or, with `stream`, of one stream (whose rule wins), by field name as the
 * catalog spells it or by the same normalised name discovery matches served
 * names with (`email` covers `E-mail`, not `email_address`).
 */

export type PersonalPolicy = 'keep' | 'drop' | 'redact' | 'hash' | 'hash_keep_domain';
/** The policies that change a value (drop removes the field instead). */
export type ValuePolicy = Exclude<PersonalPolicy, 'keep' | 'drop'>;

export const POLICIES: readonly PersonalPolicy[] = ['keep', 'drop', 'redact', 'hash', 'hash_keep_domain'];

/** One entry of personal_data: a field's policy, in one stream or (without `stream`) in every stream. */
export interface PersonalDataRule {
  readonly field: string;
  readonly policy: PersonalPolicy;
  readonly stream?: string;
}

export interface PersonalDataSettings {
  personal_data: readonly PersonalDataRule[];
  pseudonymisation_key?: string;
}

/** The parts of a stream the policies apply to. */
export interface PolicyTarget {
  readonly name: string;
  readonly schema: JsonSchema;
  readonly keyProperties: readonly string[];
  readonly replicationKey: string;
  /** Every field the stream has, selected or not (the schema's fields when absent). */
  readonly declaredFields?: Iterable<string>;
}

export interface PolicyEffect {
  /** The schema with dropped fields removed, redacted ones nullable, pseudonymised ones nullable strings. */
  readonly schema: JsonSchema;
  /** Fields whose values are replaced, by the schema's name. */
  readonly values: ReadonlyMap<string, ValuePolicy>;
  /** Fields removed: still the stream's own, so they are not reported as undeclared. */
  readonly dropped: readonly string[];
}

/** The policy of a field of a stream: the stream's rules, then those for every stream; by exact name first, then by normalised name. */
export function policyOf(settings: PersonalDataSettings, stream: string, field: string): PersonalPolicy {
  for (const scope of [stream, undefined]) {
    const rules = settings.personal_data.filter((rule) => rule.stream === scope);
    const match = fieldNamed(field, rules.map((rule) => rule.field));
    if (match !== undefined) return rules.find((rule) => rule.field === match)!.policy;
  }
  return 'keep';
}

export function hasPolicies(settings: PersonalDataSettings): boolean {
  return settings.personal_data.some((rule) => rule.policy !== 'keep');
}

const PSEUDONYM_DESCRIPTION = 'Pseudonymised by tap-report-dump: lowercase hex HMAC-SHA256 of the value under the pseudonymisation key.';
const PSEUDONYM_DOMAIN_DESCRIPTION = `${PSEUDONYM_DESCRIPTION} E-mail addresses keep their domain after the pseudonym (…@example.com).`;
const REDACTED_DESCRIPTION = 'Redacted by tap-report-dump: always null.';

function nullable(schema: JsonSchema): JsonSchema {
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length === 0 || types.includes('null')) return schema;
  return { ...schema, type: [...types, 'null'] };
}

/** A field's schema under its policy; the same when applied twice, so a catalog written by discover may be applied again. */
function fieldSchema(schema: JsonSchema, policy: ValuePolicy): JsonSchema {
  switch (policy) {
    case 'redact':
      return { ...nullable(schema), description: REDACTED_DESCRIPTION };
    case 'hash':
      return { type: ['string', 'null'], description: PSEUDONYM_DESCRIPTION };
    case 'hash_keep_domain':
      return { type: ['string', 'null'], description: PSEUDONYM_DOMAIN_DESCRIPTION };
  }
}

/** What the policies do to one stream; config errors for what would break it (a dropped key, a pseudonymised bookmark). */
export function applyPolicies(target: PolicyTarget, settings: PersonalDataSettings): PolicyEffect {
  const properties = fieldRecord<JsonSchema>();
  const values = new Map<string, ValuePolicy>();
  const dropped: string[] = [];
  for (const [field, schema] of Object.entries(target.schema.properties ?? {})) {
    const policy = policyOf(settings, target.name, field);
    checkAllowed(target, field, policy);
    if (policy === 'keep') properties[field] = schema;
    else if (policy === 'drop') dropped.push(field);
    else {
      properties[field] = fieldSchema(schema, policy);
      values.set(field, policy);
    }
  }
  if (values.size > 0 && [...values.values()].some((p) => p !== 'redact') && !settings.pseudonymisation_key) {
    throw configError(
      `Setting personal_data pseudonymises fields of the ${target.name} stream, but pseudonymisation_key is not set; set it (at least 32 characters, from a secret store) in a --config file or TAP_REPORT_DUMP_PSEUDONYMISATION_KEY.`,
      `Config field personal_data pseudonymises fields of the ${target.name} stream, but the config field pseudonymisation_key is not set; set it (at least 32 characters) in the source's configuration.`,
    );
  }
  const schema: JsonSchema = { ...target.schema, properties };
  if (Array.isArray(target.schema.required)) schema.required = target.schema.required.filter((f) => f in properties);
  return { schema, values, dropped };
}

function checkAllowed(target: PolicyTarget, field: string, policy: PersonalPolicy): void {
  const where = `Setting personal_data gives ${field} of the ${target.name} stream the policy ${policy}`;
  if (field === target.replicationKey && policy !== 'keep') {
    throw configError(`${where}, but it is the replication key: the bookmark needs its dates. Keep it, or set replication_key.${target.name} to another date field.`);
  }
  if (target.keyProperties.includes(field) && (policy === 'drop' || policy === 'redact')) {
    throw configError(`${where}, but it is a key property, which every record needs. Use hash to pseudonymise it (it stays a unique, stable key), or set key_properties.${target.name}.`);
  }
}

/**
 * Every field named in personal_data must name a field of its stream (for
 * every stream, of a stream here or a documented field of any report): a misspelt
 * name would otherwise leave the real field as it is, unnoticed. Discovery,
 * which sees every served field, checks every name; the streams of a sync
 * (`selected`) come from a catalog that discovery wrote without the fields
 * it dropped, so a name dropped there may be absent (a field the catalog does
 * not declare never leaves the tap anyway).
 */
export function checkPolicyNames(targets: readonly PolicyTarget[], settings: PersonalDataSettings, reports: readonly StreamDescriptor[] = REPORTS, selected = false): void {
  const documented = (): string[] => reports.flatMap((d) => Object.keys(loadSchema(d.schemaFile).properties ?? {}));
  settings.personal_data.forEach((rule, i) => {
    const inScope = rule.stream === undefined ? targets : targets.filter((t) => t.name === rule.stream);
    if (inScope.length === 0 || (selected && rule.policy === 'drop')) return;
    const fields = inScope.flatMap((t) => [...(t.declaredFields ?? Object.keys(t.schema.properties ?? {}))]);
    if (rule.stream === undefined) fields.push(...documented());
    if (fields.some((field) => normalizeFieldName(field) === normalizeFieldName(rule.field))) return;
    const streams = rule.stream === undefined ? 'any stream' : `the ${rule.stream} stream`;
    throw configError(`Setting personal_data[${i}].field is ${rule.field}, which is not a field of ${streams}; fix the name (fields are matched ignoring case and punctuation: email covers E-mail).`);
  });
}
