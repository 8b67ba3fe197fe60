import { readJsonFile } from '../config/json-file.js';
import { configSchema } from '../config/config.js';
import { configFrom } from '../singer/commands.js';
import { checkStreams } from '../sync/check.js';
import { createClient, runSync } from '../sync/run.js';
import { parseState } from '../state.js';
import { createLogger, redact, type Logger, type LogLevel } from '../observe/log.js';
import { describeError, EXIT_OK, EXIT_RUNTIME, TapError } from '../errors.js';
import { defaultSelection } from '../singer/catalog.js';
import {
  airbyte,
  catalogMessage,
  connectionStatusMessage,
  logMessage,
  selectConfiguredStreams,
  specMessage,
  stateFromAirbyte,
  traceErrorMessage,
} from './messages.js';
import type { MessageWriter } from '../output/writer.js';

/** The Airbyte source commands: spec, check, discover, read. Everything goes to stdout as Airbyte messages. */

function emit(line: string): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(`${line}\n`, (error) => (error ? reject(error) : resolve())));
}

function airbyteLogger(level: LogLevel, line: (text: string) => void): Logger {
  return createLogger({ level, sink: (lvl, message) => line(logMessage(lvl, message)) });
}

/** Runs an Airbyte command; a failure becomes a TRACE error message and a non-zero exit. */
async function guarded(body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    const message = redact(describeError(error));
    const failureType = error instanceof TapError ? error.failureType : 'system_error';
    await emit(traceErrorMessage(message, failureType, error instanceof TapError ? undefined : redact(String(error))));
    return error instanceof TapError ? error.exitCode : EXIT_RUNTIME;
  }
}

export function airbyteSpec(): Promise<number> {
  return guarded(async () => {
    await emit(specMessage(configSchema()));
    return EXIT_OK;
  });
}

export function airbyteDiscover(configPath: string | undefined): Promise<number> {
  return guarded(async () => {
    const config = configFrom(configPath ? [configPath] : []);
    await emit(catalogMessage(config));
    return EXIT_OK;
  });
}

export function airbyteCheck(configPath: string | undefined): Promise<number> {
  return guarded(async () => {
    let config;
    try {
      config = configFrom(configPath ? [configPath] : []);
    } catch (error) {
      // Airbyte wants a failed check reported as a status, not as a crash.
      await emit(connectionStatusMessage(false, redact(describeError(error))));
      return EXIT_OK;
    }
    const logger = airbyteLogger(config.log_level, (line) => void emit(line));
    const client = createClient(config, logger);
    try {
      const results = await checkStreams(config, client, defaultSelection(config));
      const failed = results.filter((r) => !r.ok);
      await emit(connectionStatusMessage(failed.length === 0, results.map((r) => `${r.stream}: ${r.message}`).join('; ')));
      return EXIT_OK;
    } finally {
      await client.close();
    }
  });
}

export function airbyteRead(configPath: string | undefined, catalogPath: string, statePath: string | undefined): Promise<number> {
  return guarded(async () => {
    const config = configFrom(configPath ? [configPath] : []);
    const streams = selectConfiguredStreams(readJsonFile(catalogPath, 'configured catalog', { unreadable: 'Check the --catalog path.', invalid: 'Fix the file.' }), config, catalogPath);
    const state = statePath ? parseState(stateFromAirbyte(readJsonFile(statePath, 'state file', { unreadable: 'Check the --state path.', invalid: 'Fix it, or run without --state.' }) ?? null, statePath), `file ${statePath}`) : undefined;
    await runSync({
      config,
      streams,
      state,
      protocol: airbyte,
      logger: (writer: MessageWriter) => airbyteLogger(config.log_level, (line) => writer.line(line)),
    });
    return EXIT_OK;
  });
}
