import type { Writable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { DumpClient } from '../http/client.js';
import { MessageWriter } from '../output/writer.js';
import { singer, type OutputProtocol } from '../singer/messages.js';
import { StateStore, type TapState } from '../state.js';
import { syncStream, type StreamSummary } from './stream-sync.js';
import { createLogger, registerSecret, type Logger } from '../observe/log.js';
import type { Config } from '../config/config.js';
import type { SelectedStream } from '../singer/catalog.js';

export interface RunOptions {
  config: Config;
  streams: SelectedStream[];
  state?: TapState;
  out?: Writable;
  /** Singer unless said otherwise. */
  protocol?: OutputProtocol;
  /** Builds the logger once the writer exists (Airbyte logs travel on stdout). */
  logger?: Logger | ((writer: MessageWriter) => Logger);
  dispatcher?: Dispatcher;
}

export function createClient(config: Config, logger: Logger, dispatcher?: Dispatcher): DumpClient {
  registerSecret(config.access_token);
  return new DumpClient({
    baseUrl: config.base_url,
    accessToken: config.access_token,
    userAgent: config.user_agent,
    gzip: config.compression === 'gzip',
    timeoutMs: config.request_timeout * 1000,
    maxRetries: config.max_retries,
    retryMaxElapsedMs: config.retry_max_elapsed * 1000,
    backoffBaseMs: config.backoff_base * 1000,
    minRequestIntervalMs: config.min_request_interval * 1000,
    logger,
    dispatcher,
  });
}

export function loggerFor(config: Pick<Config, 'log_level' | 'log_format'>): Logger {
  return createLogger({ level: config.log_level, format: config.log_format });
}

/** Syncs the selected streams one after the other; stdout gets Singer messages only. */
export async function runSync(options: RunOptions): Promise<StreamSummary[]> {
  const { config } = options;
  const writer = new MessageWriter(options.out ?? process.stdout);
  const logger = typeof options.logger === 'function' ? options.logger(writer) : (options.logger ?? loggerFor(config));
  const protocol = options.protocol ?? singer;
  const state = new StateStore(options.state);
  const client = createClient(config, logger, options.dispatcher);
  const summaries: StreamSummary[] = [];
  try {
    if (options.streams.length === 0) logger.warn('no stream is selected; nothing to sync');
    for (const stream of options.streams) {
      const summary = await syncStream(stream, { config, protocol, client, writer, state, logger });
      summaries.push(summary);
      const rate = summary.durationMs > 0 ? Math.round((summary.records * 1000) / summary.durationMs) : summary.records;
      logger.info(
        `${summary.stream}: ${summary.notModified ? 'unchanged (HTTP 304), ' : ''}${summary.records} records in ${(summary.durationMs / 1000).toFixed(1)} s (${rate}/s), bookmark ${summary.bookmark ?? 'none'}`,
      );
    }
    await writer.end();
  } finally {
    await client.close();
  }
  return summaries;
}
