import type { Writable } from 'node:stream';
import { DumpClient } from '../http/client.js';
import { MessageWriter } from '../output/writer.js';
import { outputClosed } from '../errors.js';
import { foreignState, StateStore, type TapState } from '../state.js';
import { syncStream, type StreamSummary } from './stream-sync.js';
import type { OutputProtocol } from '../output/protocol.js';
import type { Logger } from '../observe/log.js';
import type { Config } from '../config/config.js';
import type { SelectedStream } from '../catalog/selection.js';
import { selectedUnderPolicies } from '../catalog/personal-streams.js';
import { batchRun } from './output/batch-run.js';
import { StopSignals } from './stop/stop-signals.js';
import type { ChangeStore } from '../store/change-store.js';
import { removeDeadSpools } from '../output/spool-leftovers.js';

export interface RunOptions {
  config: Config;
  streams: readonly SelectedStream[];
  protocol: OutputProtocol;
  /** The logger, or how to build it once the writer exists (Airbyte logs travel on stdout). */
  logger: Logger | ((writer: MessageWriter) => Logger);
  /** Masks secrets in server text that reaches errors and logs. */
  redact: (text: string) => string;
  state?: TapState;
  out?: Writable;
  /** A client the caller already uses (for live discovery, say), so requests stay paced as one; closed by the caller. */
  client?: DumpClient;
  /** The clock the run reads once at its start (ms; Date.now by default): the in-process simulation runs its days on the sandbox's calendar. */
  now?: () => number;
}

export function createClient(config: Config, logger: Logger, redact: (text: string) => string): DumpClient {
  return new DumpClient({
    baseUrl: config.base_url,
    accessToken: config.access_token,
    userAgent: config.user_agent,
    gzip: config.compression === 'gzip',
    timeoutMs: config.request_timeout * 1000,
    dumpTimeoutMs: config.dump_timeout === undefined ? undefined : config.dump_timeout * 1000,
    minBytesPerSecond: config.min_throughput > 0 ? config.min_throughput : undefined,
    maxRetries: config.max_retries,
    retryMaxElapsedMs: config.retry_max_elapsed * 1000,
    connectRetryMs: config.connect_retry_seconds * 1000,
    backoffBaseMs: config.backoff_base * 1000,
    minRequestIntervalMs: config.min_request_interval * 1000,
    logger,
    redact,
  });
}

/** Syncs the selected streams one after the other; stdout gets protocol messages only. */
export async function runSync(options: RunOptions): Promise<StreamSummary[]> {
  const { config, protocol } = options;
  const writer = new MessageWriter(options.out ?? process.stdout, (error, records) => outputClosed(error, records, protocol.reader));
  const logger = typeof options.logger === 'function' ? options.logger(writer) : options.logger;
  const unannounced = new Set<string>();
  const batch = await batchRun(config, protocol, logger, unannounced);
  removeSpoolsOfDeadRuns(config, logger);
  const state = new StateStore(options.state);
  const client = options.client ?? createClient(config, logger, options.redact);
  const summaries: StreamSummary[] = [];
  const runStartedAt = (options.now ?? Date.now)();
  const stop = new StopSignals(unannounced, batch?.journal, logger, {
    flushed: () => writer.flushed(),
    lastWords: lastWords(protocol),
    seal: (last) => writer.seal(last),
    sendQueued: () => writer.send(),
    counts: { queued: () => writer.records, written: () => writer.written, handed: () => writer.handed },
  });
  let store: ChangeStore | undefined;
  try {
    // Loaded only for a run that uses it: the store reads and writes files a run without it never opens.
    if (config.send_changes_only) store = await (await import('./pass/stream-store.js')).openRunStore(config, logger);
    // A stop lets go of the streams' locks: the next run need not take over those of a run that no longer runs.
    if (store !== undefined) stop.releaseOnStop(() => store?.releaseLocks());
    if (options.streams.length === 0) logger.warn('no stream is selected; nothing to sync');
    else warnForeignState(options.state, options.streams, logger);
    // Checked before any request: a misspelt field would leave the real one as it is.
    for (const stream of selectedUnderPolicies(options.streams, config)) {
      const summary = await syncStream(stream, { config, protocol, client, writer, state, logger, runStartedAt, batch, unannounced, stop, store });
      summaries.push(summary);
      logger.info(summaryLine(summary));
    }
    await writer.end();
  } finally {
    await stop.ended();
    // Generations this run did not commit go; the lock is released.
    await store?.close();
    stop.uninstall();
    // The run removed what it did not announce (a failed stream aborts its files): nothing is left for a later run to clean.
    batch?.journal.close();
    if (!options.client) await client.close();
  }
  return summaries;
}

/** One warning when the state holds nothing of the selected streams but something else (foreignState). */
function warnForeignState(state: TapState | undefined, streams: readonly SelectedStream[], logger: Logger): void {
  const warning = foreignState(state, streams.map((s) => s.descriptor.name));
  if (warning !== undefined) logger.warn(warning);
}

/** The stop's last lines where the face speaks on stdout (its status lines): the unfinished stream's INCOMPLETE. */
function lastWords(protocol: OutputProtocol): ((unfinished: string | undefined) => string[]) | undefined {
  const status = protocol.streamStatus;
  return status === undefined ? undefined : (unfinished) => (unfinished === undefined ? [] : [status(unfinished, 'incomplete')]);
}

/** Spools of full passes killed outright hold personal data: every run removes those of dead runs, not only a run that makes a full pass. */
function removeSpoolsOfDeadRuns(config: Config, logger: Logger): void {
  const removed = removeDeadSpools(config.spool_directory);
  if (removed > 0) logger.info(`spool: removed ${removed} spool folder(s) that runs left when they died, in ${config.spool_directory ?? 'the temporary directory'}`);
}

function summaryLine(summary: StreamSummary): string {
  const rate = summary.durationMs > 0 ? Math.round((summary.records * 1000) / summary.durationMs) : summary.records;
  const unchanged = summary.notModified ? 'unchanged (HTTP 304), ' : '';
  return `${summary.stream}: ${unchanged}${summary.records} records in ${(summary.durationMs / 1000).toFixed(1)} s (${rate}/s), bookmark ${summary.bookmark ?? 'none'}${runDetail(summary)}`;
}

/** `; full pass (interval), version 1764… activated; full_pass 120, open_rows 8` or `; change pass; 1840 rows read, 1834 unchanged not sent, 3 deleted` */
function runDetail(summary: StreamSummary): string {
  const parts: string[] = [];
  if (summary.fullPass !== undefined) parts.push(`full pass (${summary.fullPass})${summary.activated === undefined ? '' : `, version ${summary.activated} activated`}`);
  if (summary.changePass) parts.push('change pass');
  if (summary.unchanged || summary.changePass) parts.push(`${summary.read} rows read, ${summary.unchanged ?? 0} unchanged not sent${summary.changePass ? `, ${summary.deleted ?? 0} deleted` : ''}`);
  if (summary.reads && summary.reads.length > 1) parts.push(summary.reads.map((r) => `${r.kind} ${r.notModified ? '304' : r.records}`).join(', '));
  return parts.length === 0 ? '' : `; ${parts.join('; ')}`;
}
