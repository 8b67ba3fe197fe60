import { configError } from '../errors.js';
import { fieldNamed, normalizeFieldName } from './field-names.js';
import { fieldRecord } from './field-keys.js';
import { loadSchema, type JsonSchema } from './schemas.js';
import { REPORTS, type StreamDescriptor } from './reports.js';

/**
 * The personal_data setting: what happens to each personal field before it
 * leaves the tap. Policies are given for every stream under `"*"` and per
 * stream (the stream's entry wins), by field name as the catalog spells it
 * or by the same normalised name discovery matches served names with
 * (`email` covers `E-mail`, not `email_address`).
 */

export type PersonalPolicy = 'keep' | 'drop' | 'redact' | 'hash' | 'hash_keep_domain';
/** The policies that change a value (drop removes the field instead). */
export type ValuePolicy = Exclude<PersonalPolicy, 'keep' | 'drop'>;

export const ALL_STREAMS = '*';

export interface PersonalDataSettings {
  personal_data: Readonly<Record<string, Readonly<Record<string, PersonalPolicy>> | undefined>>;
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

/** The policy of a field of a stream: the stream's entry, then `"*"`; by exact name first, then by normalised name. */
export function policyOf(settings: PersonalDataSettings, stream: string, field: string): PersonalPolicy {
  for (const scope of [stream, ALL_STREAMS]) {
    const policies = settings.personal_data[scope];
    if (policies === undefined) continue;
    const match = fieldNamed(field, Object.keys(policies));
    if (match !== undefined) return policies[match];
  }
  return 'keep';
}

export function hasPolicies(settings: PersonalDataSettings): boolean {
  return Object.values(settings.personal_data).some((policies) => policies !== undefined && Object.values(policies).some((p) => p !== 'keep'));
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
 * Every field named in personal_data must name a field of its stream (under
 * `"*"`, of a stream here or a documented field of any report): a misspelt
 * name would otherwise leave the real field as it is, unnoticed. Discovery,
 * which sees every served field, checks every name; the streams of a sync
 * (`selected`) come from a catalog that discovery wrote without the fields
 * it dropped, so a name dropped there may be absent (a field the catalog does
 * not declare never leaves the tap anyway).
 */
export function checkPolicyNames(targets: readonly PolicyTarget[], settings: PersonalDataSettings, reports: readonly StreamDescriptor[] = REPORTS, selected = false): void {
  for (const [scope, policies] of Object.entries(settings.personal_data)) {
    const inScope = scope === ALL_STREAMS ? targets : targets.filter((t) => t.name === scope);
    if (inScope.length === 0) continue;
    const fields = inScope.flatMap((t) => [...(t.declaredFields ?? Object.keys(t.schema.properties ?? {}))]);
    if (scope === ALL_STREAMS) fields.push(...reports.flatMap((d) => Object.keys(loadSchema(d.schemaFile).properties ?? {})));
    const known = new Set(fields.map(normalizeFieldName));
    for (const [name, policy] of Object.entries(policies ?? {})) {
      if (known.has(normalizeFieldName(name)) || (selected && policy === 'drop')) continue;
      const streams = scope === ALL_STREAMS ? 'any stream' : `the ${scope} stream`;
      throw configError(`Setting personal_data.${scope === ALL_STREAMS ? '"*"' : scope} names ${name}, which is not a field of ${streams}; fix the name (fields are matched ignoring case and punctuation: email covers E-mail).`);
    }
  }
}
