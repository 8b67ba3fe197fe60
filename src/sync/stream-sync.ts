import { createDecoder, Envelope, InvalidRecords } from './read/decoders.js';
import { streamOutput, type BatchRun, type StreamOutput } from './output/stream-output.js';
import { IncrementalCursor } from './read/incremental.js';
import { planRun, type ReadPlan, type RunPlan } from './plan/read-plans.js';
import { planLine } from './plan/plan-line.js';
import { futureBookmark, type FutureBookmark } from './plan/plan.js';
import { formatInstant } from '../dates.js';
import { deletionWithheld, passVerdict, type PassFacts, type PassVerdict } from './pass/pass-activation.js';
import { DeleteRecords, withDeletionMember } from './pass/delete-records.js';
import type { StreamStore } from './pass/stream-store.js';
import { checkSource } from './pass/source-check.js';
import { readDump } from './read/resumable-read.js';
import { refusedRead } from './read/refused-read.js';
import { readsChange, runStateChange, storeChange, type ReadResult } from './run-state.js';
import { streamFieldTable } from './read/stream-fields.js';
import { StreamStats, timedSync, type StreamSummary } from './output/stream-stats.js';
import { StreamProgress } from './output/stream-progress.js';
import type { StopSignals } from './stop/stop-signals.js';
import type { ChangeStore } from '../store/change-store.js';
import type { FieldTable } from '../records/fields.js';
import type { RecordSink } from '../output/record-sink.js';
import type { DumpClient, DumpRequest } from '../http/client.js';
import type { OutputProtocol } from '../output/protocol.js';
import type { MessageWriter } from '../output/writer.js';
import { StateStore, storeRecordOf, type StreamBookmark } from '../state.js';
import type { Config } from '../config/config.js';
import type { SelectedStream } from '../catalog/selection.js';
import type { Logger } from '../observe/log.js';

export type { StreamSummary } from './output/stream-stats.js';

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
  /** Paths the run wrote and has not announced, removed if it is stopped (stop-signals.ts). */
  unannounced: Set<string>;
  /** The run's stop handling: a full pass's records after ACTIVATE_VERSION are sent whatever signal comes. */
  stop: StopSignals;
  /** What the target holds (send_changes_only), when the store could be opened. */
  store?: ChangeStore;
}

/** Reads of a full pass that saw the source change between them, at most: then the pass goes out without ACTIVATE_VERSION. */
const PASS_ATTEMPTS = 3;

/**
 * One stream's sync, as a coordination of named parts: the run plan decides
 * which reads to make (read-plans.ts), each read fetches its dump through the
 * resumable read, the decoder turns its bytes into records and the
 * incremental cursor admits them; the stream output holds a full pass until
 * it is known good, the pass's verdict (pass-activation.ts) says whether it
 * may activate its version, and the output sends ACTIVATE_VERSION before its
 * records; the run's state change (run-state.ts) moves the bookmark only
 * after every read was done. SCHEMA comes first, STATE last (with, on a
 * face that wants them, checkpoints between the reads); the stream's
 * status lines (stream-progress.ts), where the protocol has them, frame it.
 */
export async function syncStream(selected: SelectedStream, context: SyncContext): Promise<StreamSummary> {
  const progress = new StreamProgress(selected.descriptor.name, context.protocol, context.writer);
  context.stop.progress.began(selected.descriptor.name);
  progress.started();
  try {
    return await timedSync(context.logger, selected.descriptor.name, (started) => syncStreamOnce(selected, context, started, progress));
  } catch (error) {
    progress.incomplete();
    context.stop.progress.failed();
    throw error;
  }
}

async function syncStreamOnce(selected: SelectedStream, context: SyncContext, started: number, progress: StreamProgress): Promise<StreamSummary> {
  const { config, writer, state, logger, protocol } = context;
  const name = selected.descriptor.name;
  const previous = state.get(name);
  const ahead = protocol.skipsFutureBookmarks === true ? futureBookmark(selected, config, previous, context.runStartedAt) : undefined;
  if (ahead !== undefined) return skipAhead(selected, ahead, context, progress);
  const memory = await openStreamStore(selected, previous, context);
  const run = planRun(selected, config, previous, context.runStartedAt, protocol.activateVersion !== undefined, memory?.view);
  announce(selected, run, previous, context);
  const schema = memory === undefined ? selected.schema : withDeletionMember(selected.schema, protocol.deletionMember);
  const schemaLine = protocol.schema(name, schema, selected.keyProperties, run.bookmarkProperties);
  if (schemaLine !== undefined) writer.message(schemaLine);

  const { output, stats, invalid, results, verdict, deleted, checkpointed } = await readRun(run, selected, context, memory, progress);
  if (verdict.withheld !== undefined) logger.warn(`${name}: the full pass sends its ${stats.records} records without ACTIVATE_VERSION, so the target deletes nothing: ${verdict.withheld}`);
  await release(output, verdict, context);
  context.stop.progress.released();
  stats.finish(stats.records, deleted ?? 0);
  const stored = await memory?.commit(verdict.activated !== undefined || deleted !== undefined, logger);
  // A run that sent rows without the store leaves the target holding what no generation records.
  const unrecorded = memory === undefined && stats.sent > 0;
  state.update(name, { ...runStateChange(selected, run, previous, results, { rows: stats.records, ...verdict }, context.runStartedAt), ...storeChange(run, stored, context.runStartedAt, unrecorded) });
  progress.running();
  writer.message(protocol.state(name, state.snapshot(), stats.sent - checkpointed));
  progress.complete();
  context.stop.progress.finished(stats.records);
  await writer.drain();
  await memory?.tidy();

  const sum = (count: (cursor: IncrementalCursor) => number): number => results.reduce((n, r) => n + count(r.cursor), 0);
  stats.report({ invalidSkipped: invalid.skipped, duplicatesSkipped: sum((c) => c.duplicatesSkipped), outOfRange: sum((c) => c.outOfRange), future: sum((c) => c.future) }, selected.replicationKey, run.futureBoundMs);
  const bookmark = state.get(name)?.replication_key_value;
  const reads = results.map((r) => ({ kind: r.plan.kind, records: r.cursor.emitted, notModified: r.outcome.status === 304 }));
  const changes = memory === undefined ? {} : { unchanged: memory.unchanged, deleted: deleted ?? 0 };
  const summary = stats.summary(invalid.skipped, results.every((r) => r.outcome.status === 304), typeof bookmark === 'string' ? bookmark : null, { reads, fullPass: run.fullPass?.reason, changePass: run.changePass, activated: verdict.activated, ...changes });
  // The stream's whole time, as sync_duration counts it: a wait for another run's store lock and a pass read again included.
  return { ...summary, durationMs: Date.now() - started };
}

/**
 * A stream whose bookmark lies in the future, on a face that skips it: no
 * read (no full or change pass either, whatever the change store holds), its
 * state sent back as it came within its usual status lines, so that the next
 * run behaves as this one would have.
 */
async function skipAhead(selected: SelectedStream, ahead: FutureBookmark, { logger, writer, protocol, state, stop }: SyncContext, progress: StreamProgress): Promise<StreamSummary> {
  const name = selected.descriptor.name;
  logger.warn(
    `${name}: the state's bookmark ${ahead.field} ${ahead.value} lies in the future (after ${formatInstant(ahead.boundMs)}, now plus max_future_skew): reading nothing of this stream and sending its state back as it came. Reset the stream in the connection to read it again, or raise max_future_skew if the service's clock is ahead.`,
  );
  const stats = new StreamStats(logger, name);
  stats.finish(0);
  progress.running();
  writer.message(protocol.state(name, state.snapshot(), 0));
  progress.complete();
  stop.progress.finished(0);
  await writer.drain();
  return stats.summary(0, false, ahead.value, { reads: [] });
}

/** The stream's part of the change store, for an incremental stream of a run that has one. */
async function openStreamStore(selected: SelectedStream, previous: StreamBookmark | undefined, context: SyncContext): Promise<StreamStore | undefined> {
  if (context.store === undefined || selected.replicationMethod !== 'INCREMENTAL') return undefined;
  const { StreamStore } = await import('./pass/stream-store.js');
  return StreamStore.open(context.store, selected, storeRecordOf(previous), context.config, context.protocol);
}

/** The lines that say, before any record, what the run will do (plan-line.ts) and what is unusual about it. */
function announce(selected: SelectedStream, run: RunPlan, previous: StreamBookmark | undefined, { logger, config }: SyncContext): void {
  const name = selected.descriptor.name;
  if (run.fullPass?.futureDate !== undefined) {
    logger.warn(`${name}: the state dates the last full pass ${run.fullPass.futureDate}, after this run's start (a host clock that ran ahead?); making the pass now, and the state will hold this run's date`);
  }
  if (run.changePassFutureDate !== undefined) {
    logger.warn(`${name}: the state dates the last change pass ${run.changePassFutureDate}, after this run's start (a host clock that ran ahead?); making the change pass now, and the state will hold this run's date`);
  }
  if (run.storeDistrust !== undefined) logger.warn(`${name}: making a full pass instead of sending only what changed. ${run.storeDistrust}`);
  logger.info(planLine(selected.descriptor, run, previous, config));
}

/**
 * Sends what the output holds; after ACTIVATE_VERSION, to its end whatever
 * signal comes (the target deletes what does not follow it), and until all
 * of it has left the process: a last small write may still wait in stdout's
 * stream when the writer says it drained.
 */
async function release(output: StreamOutput, verdict: PassVerdict, { stop, writer }: SyncContext): Promise<void> {
  try {
    if (verdict.activated === undefined) return await output.release(undefined);
    await stop.unstoppable(
      () => output.remaining(),
      async () => {
        await output.release(verdict.activated);
        await writer.flushed();
      },
    );
  } catch (error) {
    // The target went away while the pass was sent: what it held (the spool, with personal data) goes with the run.
    await output.abort();
    throw error;
  }
}

/** A run's reads, done: what they emitted (held, for a pass), how each ended, and whether its pass may activate. */
interface RunReads {
  output: StreamOutput;
  stats: StreamStats;
  invalid: InvalidRecords;
  results: ReadResult[];
  /** Kinds of read the service refused and the run went on without. */
  refused: string[];
  /** Records the STATE checkpoints between the reads counted (checkpoint): the stream's last STATE counts those after them. */
  checkpointed: number;
}

/**
 * Makes the run's reads and judges its pass (pass-activation.ts). A pass
 * that would activate but for the source changing while its reads ran
 * (source-check.ts) is read again: nothing of it went out (it is held), and
 * a row that changed between two reads may be in none of them. After the
 * last attempt it goes out without ACTIVATE_VERSION. A change pass then sends
 * the delete records of the rows it did not see, when it may.
 */
async function readRun(run: RunPlan, selected: SelectedStream, context: SyncContext, memory: StreamStore | undefined, progress: StreamProgress): Promise<RunReads & { verdict: PassVerdict; deleted?: number }> {
  const { config, client, logger } = context;
  const table = streamFieldTable(selected, config, logger);
  for (let attempt = 1; ; attempt++) {
    const reads = await readOnce(run, selected, context, table, memory, progress);
    const { results, stats, invalid, refused } = reads;
    const judged = (run.fullPass?.version !== undefined || run.changePass === true) && results.every((r) => r.outcome.status === 200);
    const source = judged ? await checkSource(results, { client, request: (result) => dumpRequest(result.plan, selected, config) }) : undefined;
    const facts: PassFacts = { rows: stats.records, invalidSkipped: invalid.skipped, refused, minRatio: config.full_pass_min_ratio, source };
    const verdict = passVerdict(run, results, facts);
    if (verdict.retry && attempt < PASS_ATTEMPTS) {
      logger.info(`${selected.descriptor.name}: the source changed while the full pass read it (${source?.detail}); reading the pass again (attempt ${attempt + 1} of ${PASS_ATTEMPTS})`);
      await reads.output.abort();
      await memory?.again();
      continue;
    }
    const deleted = await deletions(run, verdict, selected, context, reads, memory, facts);
    await completed(reads, run.changePass ? (deleted ?? 0) : 0);
    return { ...reads, verdict, ...(deleted === undefined ? {} : { deleted }) };
  }
}

/** The output holds every record the reads sent, and the delete records: it checks so (a spool, batch files). */
async function completed({ output, stats }: RunReads, deleted: number): Promise<void> {
  try {
    await output.complete(stats.sent + deleted);
  } catch (error) {
    await output.abort();
    throw error;
  }
}

/**
 * The delete records of a pass, once every read is known good: one for each
 * row the target holds (the change store) that no read saw. A change pass
 * sends them among its records, or none, with a warning naming why, when it
 * cannot prove those rows gone (pass-activation.ts). A full pass that
 * activates its version with a trusted store sends them too, on stdout
 * before ACTIVATE_VERSION and with the table's current version: a target
 * that ignores the message (pipelinewise) deletes them by the record, one
 * that marks deletions blanks them, and one that deletes at the message
 * removes them with the other rows of the older version; the store forgets
 * them with this pass. Undefined when no delete record may go out.
 */
async function deletions(run: RunPlan, verdict: PassVerdict, selected: SelectedStream, context: SyncContext, reads: RunReads, memory: StreamStore | undefined, facts: PassFacts): Promise<number | undefined> {
  if (memory === undefined || !memory.view.trusted || reads.results.some((r) => r.outcome.status !== 200)) return undefined;
  const { output } = reads;
  if (run.changePass) {
    const withheld = deletionWithheld({ ...facts, held: memory.held });
    if (withheld !== undefined) {
      context.logger.warn(`${selected.descriptor.name}: the change pass sends no delete records: ${withheld}`);
      return undefined;
    }
    // Extracted now, as every record of the run is: an Airbyte destination ranks a key's rows by the extraction cursor.
    const envelope = output.envelope(new Date());
    return sendDeletes(selected, context, memory, { line: (json) => output.records.line(envelope.line(json)), get full() { return output.full; }, drain: () => output.drain() });
  }
  if (verdict.activated === undefined) return undefined;
  const { protocol, writer } = context;
  const current = context.state.get(selected.descriptor.name)?.full_pass?.version;
  const { head, tail, members } = protocol.recordEnvelope(selected.descriptor.name, new Date(), current);
  const envelope = new Envelope(head, tail, members);
  return sendDeletes(selected, context, memory, { line: (json) => writer.line(envelope.line(json)), get full() { return writer.full; }, drain: () => writer.drain() });
}

/** One delete record per row the target holds that no read saw, through `out`. */
function sendDeletes(selected: SelectedStream, { protocol, runStartedAt }: SyncContext, memory: StreamStore, out: { line(json: string): void; readonly full: boolean; drain(): Promise<void> }): Promise<number> {
  const schema = withDeletionMember(selected.schema, protocol.deletionMember);
  const records = new DeleteRecords(schema, selected.keyProperties, protocol.deletionMember);
  const deletedAt = new Date(runStartedAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return memory.deletes(records, deletedAt, out);
}

/** The request a read makes. */
function dumpRequest(plan: ReadPlan, selected: SelectedStream, config: Config): DumpRequest {
  return { stream: selected.descriptor, format: config.format, query: plan.query, ifModifiedSince: plan.ifModifiedSince };
}

async function readOnce(run: RunPlan, selected: SelectedStream, context: SyncContext, table: FieldTable, memory: StreamStore | undefined, progress: StreamProgress): Promise<RunReads> {
  const { config, logger, protocol, writer } = context;
  const name = selected.descriptor.name;
  const stats = new StreamStats(logger, name, memory === undefined ? undefined : () => memory.sent);
  const invalid = new InvalidRecords(config.on_invalid_record, `${name} dump (${config.format})`, logger);
  const hold = heldPass(run, context);
  const output = await streamOutput({ stream: name, writer, protocol, logger, batch: context.batch, version: run.version, hold });
  const records = memory !== undefined && run.store !== undefined ? memory.records(output.records, run.store) : output.records;
  context.stop.progress.reading(name, () => stats.records, hold !== undefined ? 'held' : run.store === 'changes' ? 'compared' : 'sent');
  const results: ReadResult[] = [];
  const refused: string[] = [];
  let checkpointed = 0;
  try {
    for (const [index, plan] of run.reads.entries()) {
      const result = await performRead(plan, selected, context, { output, records, table, stats, invalid, memory, progress });
      if (result === undefined) refused.push(plan.kind.replace('_', ' '));
      else results.push(result);
      const last = index === run.reads.length - 1;
      if (!last && hold === undefined && mayCheckpoint(context, memory)) checkpointed = checkpoint(selected, run, context, { results, sent: stats.sent, checkpointed, unrecorded: memory === undefined });
    }
    await memory?.finishReads();
  } catch (error) {
    await output.abort();
    throw error;
  }
  return { output, stats, invalid, results, refused, checkpointed };
}

/**
 * Whether a STATE may go out now, between two reads: the face wants such
 * checkpoints, and every record the reads let through went out, on stdout,
 * before it (none in batch files announced later, none the change store
 * holds for a key that repeats; a held full pass never checkpoints). Never
 * inside a read: the dump is not ordered by the replication key, so a
 * bookmark at the latest date read so far would skip the rows not read yet.
 */
function mayCheckpoint({ protocol, batch }: SyncContext, memory: StreamStore | undefined): boolean {
  return protocol.checkpointsBetweenReads === true && batch === undefined && memory?.holding !== true;
}

/**
 * A STATE after the reads done so far, when they sent records since the
 * last one; returns the records counted in the stream's STATEs so far. It
 * moves the bookmark by what those reads did (readsChange), never the pass's
 * record nor the change store's generation: a run resumed from it makes the
 * same pass again and compares with the generation the target confirmed,
 * sending at worst some rows twice, never leaving one out. The run's own
 * state is not changed: the stream's last STATE is made as before.
 */
function checkpoint(selected: SelectedStream, run: RunPlan, { state, protocol, writer, runStartedAt, stop }: SyncContext, reads: { results: readonly ReadResult[]; sent: number; checkpointed: number; unrecorded: boolean }): number {
  if (reads.sent === reads.checkpointed) return reads.checkpointed;
  const name = selected.descriptor.name;
  const after = new StateStore(state.snapshot());
  after.update(name, { ...readsChange(selected, run, reads.results), ...storeChange(run, undefined, runStartedAt, reads.unrecorded) });
  writer.message(protocol.state(name, after.snapshot(), reads.sent - reads.checkpointed));
  stop.progress.checkpointed(reads.sent);
  return reads.sent;
}

/** The spool settings when the run is a full pass that may activate its version: its records are held until it is known good. */
function heldPass(run: RunPlan, context: SyncContext): Parameters<typeof streamOutput>[0]['hold'] {
  if (run.fullPass?.version === undefined) return undefined;
  return { directory: context.config.spool_directory, maxBytes: context.config.spool_max_mb * 1_048_576, removeOnStop: context.unannounced };
}

interface ReadParts {
  output: StreamOutput;
  /** Where the decoders put records: the output's, or through the change store. */
  records: RecordSink;
  memory: StreamStore | undefined;
  table: FieldTable;
  stats: StreamStats;
  invalid: InvalidRecords;
  progress: StreamProgress;
}

/** One read of the run, its records into the stream's output; undefined when the service refused a read the run can go on without. */
async function performRead(plan: ReadPlan, selected: SelectedStream, context: SyncContext, { output, records, memory, table, stats, invalid, progress }: ReadParts): Promise<ReadResult | undefined> {
  const { config, client, logger } = context;
  const cursor = new IncrementalCursor(plan);
  const envelope = output.envelope(new Date());
  memory?.envelope(envelope);
  const before = stats.records;
  const request = dumpRequest(plan, selected, config);
  if (plan.kind !== 'incremental') logger.info(`${selected.descriptor.name}: ${describeRead(plan)}`);
  try {
    const outcome = await readDump(client, request, logger, {
      start: (resume) => {
        // The dump answered: its records come after this line, whether they go out now or are held.
        progress.running();
        return createDecoder(config.format, {
          table,
          writer: records,
          envelope,
          invalid,
          maxLineBytes: config.max_line_bytes,
          csvDelimiter: config.csv_delimiter === undefined ? null : config.csv_delimiter.charCodeAt(0),
          handlers: { resume, cursor },
        });
      },
      afterChunk: async (bytes) => {
        if (output.full) await output.drain();
        stats.chunk(bytes, before + cursor.emitted);
      },
    }, { requireFinalLineBreak: config.require_final_line_break });
    stats.chunk(0, before + cursor.emitted);
    return { plan, outcome, cursor };
  } catch (error) {
    return refusedRead(error, plan, selected, config, logger);
  }
}

function describeRead(plan: ReadPlan): string {
  switch (plan.kind) {
    case 'full_pass':
      return 'full pass: reading the whole dump';
    case 'change_pass':
      return 'change pass: reading the whole dump for what changed and what is gone';
    case 'event_window':
      return 'reading the event window with the new records';
    case 'open_rows':
      return 'reading the open rows';
    case 'incremental':
      return 'reading the new records';
  }
}
