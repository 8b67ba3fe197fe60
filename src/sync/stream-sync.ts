import { createDecoder, InvalidRecords } from './decoders.js';
import { streamOutput, type BatchRun, type StreamOutput } from './stream-output.js';
import { IncrementalCursor } from './incremental.js';
import { mayActivate, planRun, type ReadPlan, type RunPlan } from './read-plans.js';
import { readDump } from './resumable-read.js';
import { runStateChange, type PassOutcome, type ReadResult } from './run-state.js';
import { streamFieldTable } from './stream-fields.js';
import { StreamStats, timedSync, type StreamSummary } from './stream-stats.js';
import type { FieldTable } from '../records/fields.js';
import type { DumpClient } from '../http/client.js';
import type { OutputProtocol } from '../output/protocol.js';
import type { MessageWriter } from '../output/writer.js';
import type { StateStore } from '../state.js';
import type { Config } from '../config/config.js';
import type { SelectedStream } from '../catalog/selection.js';
import type { Logger } from '../observe/log.js';

export type { StreamSummary } from './stream-stats.js';

export interface SyncContext {
  config: Config;
  protocol: OutputProtocol;
  client: DumpClient;
  writer: MessageWriter;
  state: StateStore;
  logger: Logger;
  /** When the run started (ms): the clock every decision of the run reads (future dates, the event window, a full pass falling due). */
  runStartedAt: number;
  /** Set when records go to batch files instead of RECORD messages. */
  batch?: BatchRun;
  /** Paths the run wrote and has not announced, removed if it is stopped (batch-run.ts). */
  unannounced: Set<string>;
}

/**
 * One stream's sync, as a coordination of named parts: the run plan decides
 * which reads to make (read-plans.ts), each read fetches its dump through the
 * resumable read, the decoder turns its bytes into records and the
 * incremental cursor admits them; the stream output holds a full pass until
 * it is known good and sends ACTIVATE_VERSION before it; the run's state
 * change (run-state.ts) moves the bookmark only after every read was done.
 * SCHEMA comes first, STATE last.
 */
export function syncStream(selected: SelectedStream, context: SyncContext): Promise<StreamSummary> {
  return timedSync(context.logger, selected.descriptor.name, () => syncStreamOnce(selected, context));
}

async function syncStreamOnce(selected: SelectedStream, context: SyncContext): Promise<StreamSummary> {
  const { config, writer, state, logger, protocol } = context;
  const name = selected.descriptor.name;
  const previous = state.get(name);
  const run = planRun(selected, config, previous, context.runStartedAt, protocol.activateVersion !== undefined);
  const schemaLine = protocol.schema(name, selected.schema, selected.keyProperties, run.bookmarkProperties);
  if (schemaLine !== undefined) writer.line(schemaLine);

  const stats = new StreamStats(logger, name);
  const invalid = new InvalidRecords(config.on_invalid_record, `${name} dump (${config.format})`, logger);
  const table = streamFieldTable(selected, config, logger);
  const output = await streamOutput({ stream: name, writer, protocol, logger, batch: context.batch, version: run.version, hold: heldPass(run, context) });
  const results: ReadResult[] = [];
  try {
    for (const plan of run.reads) results.push(await performRead(plan, selected, context, { output, table, stats, invalid }));
    await output.complete(stats.records);
  } catch (error) {
    await output.abort();
    throw error;
  }
  const pass: PassOutcome = { rows: stats.records, activated: activation(name, run, results, { rows: stats.records, invalidSkipped: invalid.skipped }, context) };
  await output.release(pass.activated);
  stats.finish(stats.records);
  state.update(name, runStateChange(selected, run, previous, results, pass, context.runStartedAt));
  writer.line(protocol.state(name, state.snapshot()));
  await writer.drain();

  const sum = (count: (cursor: IncrementalCursor) => number): number => results.reduce((n, r) => n + count(r.cursor), 0);
  stats.report({ invalidSkipped: invalid.skipped, duplicatesSkipped: sum((c) => c.duplicatesSkipped), outOfRange: sum((c) => c.outOfRange), future: sum((c) => c.future) }, selected.replicationKey, run.futureBoundMs);
  const bookmark = state.get(name)?.replication_key_value;
  const reads = results.map((r) => ({ kind: r.plan.kind, records: r.cursor.emitted, notModified: r.outcome.status === 304 }));
  return stats.summary(invalid.skipped, results.every((r) => r.outcome.status === 304), typeof bookmark === 'string' ? bookmark : null, { reads, fullPass: run.fullPass?.reason, activated: pass.activated });
}

/** The spool settings when the run is a full pass that may activate its version: its records are held until it is known good. */
function heldPass(run: RunPlan, context: SyncContext): Parameters<typeof streamOutput>[0]['hold'] {
  if (run.fullPass?.version === undefined) return undefined;
  return { directory: context.config.spool_directory, maxBytes: context.config.spool_max_mb * 1_048_576, removeOnStop: context.unannounced };
}

/**
 * The version a full pass activates: none when it is no pass that may, when
 * a read was answered 304 (it holds nothing), or, with a warning naming the
 * counts, when it holds no rows, skipped invalid records (their rows would
 * be deleted), or far fewer rows than the last pass (a truncated or filtered
 * dump must not empty the warehouse).
 */
function activation(stream: string, run: RunPlan, results: readonly ReadResult[], { rows, invalidSkipped }: { rows: number; invalidSkipped: number }, { config, logger }: SyncContext): number | undefined {
  const pass = run.fullPass;
  if (pass?.version === undefined || results.some((r) => r.outcome.status !== 200)) return undefined;
  const withheld = `${stream}: the full pass sends its ${rows} records without ACTIVATE_VERSION, so the target deletes nothing`;
  if (rows === 0) logger.warn(`${withheld}: the dump held no records (an empty dump never empties the warehouse)`);
  else if (invalidSkipped > 0) logger.warn(`${withheld}: ${invalidSkipped} invalid records were skipped (on_invalid_record: skip), and their rows must not be deleted for it`);
  else if (!mayActivate(pass, rows, config.full_pass_min_ratio)) {
    logger.warn(`${withheld}: the last full pass held ${pass.previousRows} records, and ${rows} is fewer than full_pass_min_ratio (${config.full_pass_min_ratio}) of that. If the source really shrank, lower full_pass_min_ratio for one run.`);
  } else return pass.version;
  return undefined;
}

interface ReadParts {
  output: StreamOutput;
  table: FieldTable;
  stats: StreamStats;
  invalid: InvalidRecords;
}

/** One read of the run, its records into the stream's output. */
async function performRead(plan: ReadPlan, selected: SelectedStream, context: SyncContext, { output, table, stats, invalid }: ReadParts): Promise<ReadResult> {
  const { config, client, logger } = context;
  const cursor = new IncrementalCursor(plan);
  const envelope = output.envelope(new Date());
  const before = stats.records;
  const request = { stream: selected.descriptor, format: config.format, query: plan.query, ifModifiedSince: plan.ifModifiedSince };
  if (plan.kind !== 'incremental') logger.info(`${selected.descriptor.name}: ${describeRead(plan)}`);
  const outcome = await readDump(client, request, logger, {
    start: (resume) =>
      createDecoder(config.format, {
        table,
        writer: output.records,
        envelope,
        invalid,
        maxLineBytes: config.max_line_bytes,
        csvDelimiter: config.csv_delimiter === undefined ? null : config.csv_delimiter.charCodeAt(0),
        handlers: { resume, cursor },
      }),
    afterChunk: async (bytes) => {
      if (output.full) await output.drain();
      stats.chunk(bytes, before + cursor.emitted);
    },
  }, { requireFinalLineBreak: config.require_final_line_break });
  stats.chunk(0, before + cursor.emitted);
  return { plan, outcome, cursor };
}

function describeRead(plan: ReadPlan): string {
  switch (plan.kind) {
    case 'full_pass':
      return 'full pass: reading the whole dump';
    case 'event_window':
      return 'reading the event window with the new records';
    case 'open_rows':
      return 'reading the open rows';
    case 'incremental':
      return 'reading the new records';
  }
}
