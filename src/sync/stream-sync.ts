import { FieldTable, type FieldTableOptions, type FieldTransform } from '../records/fields.js';
import { Pseudonymiser } from '../records/pseudonymise.js';
import { DateDialect } from '../records/date-dialect.js';
import { outputNameOf } from '../catalog/field-names.js';
import { fieldRecord } from '../catalog/field-keys.js';
import { runtimeError } from '../errors.js';
import { createDecoder, InvalidRecords } from './decoders.js';
import { streamOutput, type BatchRun } from './stream-output.js';
import { IncrementalCursor } from './incremental.js';
import { planStream, type StreamPlan } from './plan.js';
import { readDump, type ReadOutcome } from './resumable-read.js';
import { StreamStats, timedSync, type StreamSummary } from './stream-stats.js';
import type { DumpClient } from '../http/client.js';
import type { OutputProtocol } from '../output/protocol.js';
import type { MessageWriter } from '../output/writer.js';
import type { StateStore, StreamBookmark } from '../state.js';
import type { Config } from '../config/config.js';
import type { SelectedStream } from '../catalog/selection.js';
import type { Logger } from '../observe/log.js';
import { sanitizeServerText } from '../observe/sanitize.js';

export type { StreamSummary } from './stream-stats.js';

export interface SyncContext {
  config: Config;
  protocol: OutputProtocol;
  client: DumpClient;
  writer: MessageWriter;
  state: StateStore;
  logger: Logger;
  /** When the run started (ms): records later than this plus max_future_skew do not move a bookmark. */
  runStartedAt: number;
  /** Set when records go to batch files instead of RECORD messages. */
  batch?: BatchRun;
}

/**
 * One stream's sync, as a coordination of named parts: the plan decides what
 * to ask, the resumable read fetches the dump, the decoder turns its bytes
 * into records, the incremental cursor admits them and yields the bookmark,
 * and the stats count what happened. SCHEMA comes first, STATE last, and the
 * bookmark moves only after the whole dump was read.
 */
export function syncStream(selected: SelectedStream, context: SyncContext): Promise<StreamSummary> {
  return timedSync(context.logger, selected.descriptor.name, () => syncStreamOnce(selected, context));
}

async function syncStreamOnce(selected: SelectedStream, context: SyncContext): Promise<StreamSummary> {
  const { config, writer, state, logger, protocol } = context;
  const name = selected.descriptor.name;
  const plan = planStream(selected, config, state.get(name), context.runStartedAt);
  const schemaLine = protocol.schema(name, selected.schema, selected.keyProperties, plan.bookmarkProperties);
  if (schemaLine !== undefined) writer.line(schemaLine);

  const stats = new StreamStats(logger, name);
  const cursor = new IncrementalCursor(plan);
  const invalid = new InvalidRecords(config.on_invalid_record, `${name} dump (${config.format})`, logger);
  const outcome = await readRecords(selected, context, plan, { cursor, stats, invalid });
  stats.finish(cursor.emitted);
  if (outcome.status === 200) state.update(name, bookmarkChange(selected, plan, cursor, outcome));
  writer.line(protocol.state(name, state.snapshot()));
  await writer.drain();

  stats.report({ invalidSkipped: invalid.skipped, duplicatesSkipped: cursor.duplicatesSkipped, outOfRange: cursor.outOfRange, future: cursor.future }, selected.replicationKey, plan.futureBoundMs);
  const bookmark = state.get(name)?.replication_key_value;
  return stats.summary(invalid.skipped, outcome.status === 304, typeof bookmark === 'string' ? bookmark : null);
}

interface ReadParts {
  cursor: IncrementalCursor;
  stats: StreamStats;
  invalid: InvalidRecords;
}

/** Reads the dump into the stream's output (RECORD messages or batch files); a failure leaves no partial batch file. */
async function readRecords(selected: SelectedStream, context: SyncContext, plan: StreamPlan, { cursor, stats, invalid }: ReadParts): Promise<ReadOutcome> {
  const { config, client, writer, logger, protocol } = context;
  const output = streamOutput(selected.descriptor.name, writer, protocol, logger, context.batch);
  const table = fieldTable(selected, config, logger);
  const request = { stream: selected.descriptor, format: config.format, query: plan.query, ifModifiedSince: plan.ifModifiedSince };
  try {
    const outcome = await readDump(client, request, logger, {
      start: (resume) =>
        createDecoder(config.format, {
          table,
          writer: output.records,
          envelope: output.envelope,
          invalid,
          maxLineBytes: config.max_line_bytes,
          csvDelimiter: config.csv_delimiter === undefined ? null : config.csv_delimiter.charCodeAt(0),
          handlers: { resume, cursor },
        }),
      afterChunk: async (bytes) => {
        if (output.full) await output.drain();
        stats.chunk(bytes, cursor.emitted);
      },
    }, { requireFinalLineBreak: config.require_final_line_break });
    await output.finish();
    return outcome;
  } catch (error) {
    await output.abort();
    throw error;
  }
}

function fieldTable(selected: SelectedStream, config: Config, logger: Logger): FieldTable {
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

/** The bookmark after a dump read to its end, with the Last-Modified it had and what that answered. */
function bookmarkChange(selected: SelectedStream, plan: StreamPlan, cursor: IncrementalCursor, outcome: Extract<ReadOutcome, { status: 200 }>): StreamBookmark {
  const change: StreamBookmark = cursor.bookmark(selected.replicationKey);
  const bookmark = plan.incremental ? (change.replication_key_value ?? plan.previousValue) : undefined;
  change.last_modified = outcome.lastModified;
  change.last_modified_request = outcome.lastModified ? plan.requestFingerprint(bookmark) : undefined;
  return change;
}
