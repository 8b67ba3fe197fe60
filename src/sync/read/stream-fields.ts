import { FieldTable, type FieldTableOptions, type FieldTransform } from '../../records/fields.js';
import { Pseudonymiser } from '../../records/pseudonymise.js';
import { DateDialect } from '../../records/date-dialect.js';
import { outputNameOf } from '../../catalog/field-names.js';
import { fieldRecord } from '../../catalog/field-keys.js';
import { runtimeError } from '../../errors.js';
import { sanitizeServerText } from '../../observe/sanitize.js';
import type { Config } from '../../config/config.js';
import type { SelectedStream } from '../../catalog/selection.js';
import type { Logger } from '../../observe/log.js';

/**
 * The field rules one stream's run reads its records with, built once per
 * run and shared by its reads: the selected schema, the key properties, the
 * personal-data policies as transforms, the date dialect, the output names,
 * and one report per undeclared field for the whole run.
 */
export function streamFieldTable(selected: SelectedStream, config: Config, logger: Logger): FieldTable {
  const undeclared = new UndeclaredFields(logger, selected.descriptor.name, config.schema_drift);
  return new FieldTable(selected.schema, {
    keyProperties: selected.keyProperties,
    replicationKey: selected.replicationKey,
    declaredFields: selected.declaredFields,
    personalFields: [...selected.descriptor.personalFields, ...(selected.personal?.keys() ?? [])],
    onUndeclaredField: (field) => undeclared.note(field),
    ...personalTransforms(selected, config),
    dates: new DateDialect(config.source_timezone),
    ...(config.field_names === 'snake_case' ? { outputName: outputNameOf('snake_case') } : {}),
  });
}

/** The personal_data policies as field transforms: replaced values are read as served (a redacted date need not be a date). */
function personalTransforms(selected: SelectedStream, config: Config): Pick<FieldTableOptions, 'transforms' | 'readAsServed'> {
  if (selected.personal === undefined || selected.personal.size === 0) return {};
  const pseudonyms = config.pseudonymisation_key === undefined ? undefined : new Pseudonymiser(config.pseudonymisation_key);
  const transforms = fieldRecord<FieldTransform>();
  for (const [field, policy] of selected.personal) {
    if (policy === 'redact') transforms[field] = () => null;
    else if (pseudonyms === undefined) throw new Error(`${field} is to be pseudonymised without a key`);
    else transforms[field] = policy === 'hash' ? (value) => pseudonyms.pseudonym(value) : (value) => pseudonyms.pseudonymKeepingDomain(value);
  }
  return { transforms, readAsServed: new Set(selected.personal.keys()) };
}

/**
 * Warns once per field the service sends and the schema does not declare, by
 * its name only (cleaned of control characters, and withheld when it looks
 * like an e-mail address: a data row taken for a header), at most ten a stream.
 */
class UndeclaredFields {
  private static readonly LISTED = 10;
  private count = 0;

  constructor(
    private readonly logger: Logger,
    private readonly stream: string,
    private readonly drift: 'warn' | 'fail',
  ) {}

  note(field: string): void {
    if (this.drift === 'fail') {
      const what = field.includes('@') ? 'a field whose name looks like an e-mail address' : `field ${JSON.stringify(sanitizeServerText(field, 60))}`;
      throw runtimeError(`${this.stream}: the service sends ${what}, which the catalog does not declare (schema_drift: fail). Run discover again to take it in, or set schema_drift to warn.`);
    }
    this.count++;
    if (this.count > UndeclaredFields.LISTED) {
      if (this.count === UndeclaredFields.LISTED + 1) this.logger.warn(`${this.stream}: the service sends more fields the stream's schema does not declare; they are left out of RECORD messages and not listed`);
      return;
    }
    const what = field.includes('@') ? 'a field whose name looks like an e-mail address' : `field ${JSON.stringify(sanitizeServerText(field, 60))}`;
    this.logger.warn(`${this.stream}: the service sends ${what}, which the stream's schema does not declare; it is left out of RECORD messages`);
  }
}

