import { readJsonFile } from '../config/json-file.js';
import { loadRunConfig } from '../config/load.js';
import { configSchema } from '../config/schema.js';
import { discoverStreams } from '../catalog/discovery.js';
import { discoverAsConfigured } from '../catalog/live-discovery.js';
import { REPORTS } from '../catalog/reports.js';
import { checkStreams } from '../sync/check.js';
import { createClient, runSync } from '../sync/run.js';
import { refuseBatchConfig } from '../sync/output/batch-run.js';
import { parseState } from '../state.js';
import { describeError, EXIT_OK, EXIT_RUNTIME, OutputClosedError, TapError } from '../errors.js';
import { writeStdout } from '../output/stdout.js';
import { airbyteProtocol, connectionStatusMessage, logMessage, specMessage, traceErrorMessage } from './messages.js';
import { airbyteStreams, catalogMessage, checkConfiguredSchemas, configuredSchemas, extractionCursorStreams, replicationKeyCursorWarnings, selectConfiguredStreams } from './catalog.js';
import { stateFromAirbyte } from './state.js';
import { configuredCatalog, type ConfiguredModes } from './configured-catalog.js';
import { stoppableStep } from '../sync/stop/command-stop.js';
import type { Session } from '../observe/session.js';
import type { Logger } from '../observe/log.js';
import type { Config } from '../config/config.js';

/** The Airbyte face: spec, check, discover, read, each writing Airbyte messages on stdout; and configured-catalog, which writes the file read takes. */

function emit(line: string): Promise<void> {
  return writeStdout(`${line}\n`);
}

/** A LOG message out of the run's order (no writer yet): lost with stdout, whose closing the command's next message reports. */
function emitLog(line: string): void {
  emit(line).catch(() => undefined);
}

/** Resolves once stdout has passed on what was written to it before (a stop's LOG line). */
function stdoutFlushed(): Promise<void> {
  return writeStdout('');
}

/** Logs as LOG messages on stdout. */
function airbyteLogger(session: Session, line: (text: string) => void): Logger {
  return session.logger({ sink: (level, message) => line(logMessage(level, message)) });
}

/**
 * Runs an Airbyte command; a failure becomes a TRACE error message and a
 * non-zero exit. With stdout closed by its reader there is nobody to send a
 * TRACE to: one line on stderr says so instead.
 */
async function guarded(session: Session, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    const message = session.redact(airbyteErrorText(error));
    const failureType = error instanceof TapError ? error.failureType : 'system_error';
    try {
      if (error instanceof OutputClosedError) throw error;
      await emit(traceErrorMessage(message, failureType, error instanceof TapError ? undefined : session.redact(String(error))));
    } catch (unsent) {
      process.stderr.write(session.fatalLine(`${session.program}: error: ${error instanceof OutputClosedError ? message : describeError(unsent)}`));
      if (unsent instanceof OutputClosedError) return unsent.exitCode;
    }
    return error instanceof TapError ? error.exitCode : EXIT_RUNTIME;
  }
}

/** A failure in the Airbyte face's words: the source's config fields where the tap's own message names its config files and TAP_REPORT_DUMP_ variables. */
export function airbyteErrorText(error: unknown): string {
  if (error instanceof TapError && error.airbyteMessage !== undefined) return describeError(new Error(error.airbyteMessage));
  // The tap's own messages call a setting by that word; the Airbyte UI calls it a config field.
  return describeError(error).replace(/\b([Ss])etting (?=[a-z][a-z0-9_.]*\b)/g, (_, s: string) => (s === 'S' ? 'Config field ' : 'config field '));
}

const paths = (configPath: string | undefined): string[] => (configPath ? [configPath] : []);

/**
 * The source's config: a field it does not know (saved by another version, or
 * misspelt) is left out with a warning naming it, since its spec is open; the
 * tap refuses one. The warning goes to `logger`: a LOG message by default, on
 * stderr for a command whose stdout is a file (configured-catalog).
 */
function loadAirbyteConfig(configPath: string | undefined, session: Session, logger: () => Logger = () => airbyteLogger(session, emitLog)): Config {
  const unknown: string[] = [];
  try {
    const config = loadRunConfig(paths(configPath), session, process.env, (warning) => unknown.push(warning));
    refuseBatchConfig(config);
    return config;
  } finally {
    // Once the session knows the config's log settings; also before the error of another field, so that one look fixes both.
    const warnings = logger();
    for (const warning of unknown) warnings.warn(warning);
  }
}

export function airbyteSpec(session: Session): Promise<number> {
  return guarded(session, async () => {
    await emit(specMessage(configSchema()));
    return EXIT_OK;
  });
}

export function airbyteDiscover(session: Session, configPath: string | undefined): Promise<number> {
  return guarded(session, async () => {
    const config = loadAirbyteConfig(configPath, session);
    const logger = airbyteLogger(session, emitLog);
    const client = createClient(config, logger, (text) => session.redact(text));
    try {
      const doing = 'while discovering the streams (no catalog was sent)';
      await emit(catalogMessage(await stoppableStep({ doing, logger, flushed: stdoutFlushed }, () => discoverAsConfigured(config, client, logger))));
    } finally {
      await client.close();
    }
    return EXIT_OK;
  });
}

/**
 * Prints the configured catalog made from discover's streams (not an Airbyte
 * command: the file the platform would write, for CAT and a hand-run read).
 * Its output is a file, not a message stream, so a failure is one line on
 * stderr, as on the Singer face, and the logs go to stderr.
 */
export async function airbyteConfiguredCatalog(session: Session, configPath: string | undefined, modes: ConfiguredModes): Promise<number> {
  try {
    const config = loadAirbyteConfig(configPath, session, () => session.logger());
    const client = createClient(config, session.logger(), (text) => session.redact(text));
    try {
      const catalog = configuredCatalog(airbyteStreams(await discoverAsConfigured(config, client, session.logger())), modes);
      await writeStdout(`${JSON.stringify(catalog, null, 2)}\n`);
    } finally {
      await client.close();
    }
    return EXIT_OK;
  } catch (error) {
    process.stderr.write(session.fatalLine(`${session.program}: error: ${session.redact(airbyteErrorText(error))}`));
    return error instanceof TapError ? error.exitCode : EXIT_RUNTIME;
  }
}

export function airbyteCheck(session: Session, configPath: string | undefined): Promise<number> {
  return guarded(session, async () => {
    let config;
    try {
      config = loadAirbyteConfig(configPath, session);
    } catch (error) {
      // Airbyte wants a failed check reported as a status, not as a crash.
      await emit(connectionStatusMessage(false, session.redact(airbyteErrorText(error))));
      return EXIT_OK;
    }
    const logger = airbyteLogger(session, emitLog);
    const doing = 'while checking the connection (no CONNECTION_STATUS was sent)';
    const results = await stoppableStep({ doing, logger, flushed: stdoutFlushed }, () => checkStreams(config, REPORTS, logger, (text) => session.redact(text)));
    const failed = results.filter((r) => !r.ok);
    await emit(connectionStatusMessage(failed.length === 0, results.map((r) => `${r.stream}: ${r.error?.airbyteMessage === undefined ? r.message : airbyteErrorText(r.error)}`).join('; ')));
    return EXIT_OK;
  });
}

export function airbyteRead(session: Session, configPath: string | undefined, catalogPath: string, statePath: string | undefined): Promise<number> {
  return guarded(session, async () => {
    const config = loadAirbyteConfig(configPath, session);
    const catalog = readJsonFile(catalogPath, 'configured catalog', { unreadable: 'Check the --catalog path.', invalid: 'Fix the file.' });
    checkConfiguredSchemas(catalog, catalogPath);
    const streams = selectConfiguredStreams(catalog, discoverStreams(config, REPORTS, configuredSchemas(catalog)), catalogPath);
    const stateFile = statePath ? readJsonFile(statePath, 'state file', { unreadable: 'Check the --state path.', invalid: 'Fix it, or run without --state.' }) : undefined;
    const state = statePath ? parseState(stateFromAirbyte(stateFile ?? null, statePath), `file ${statePath}`) : undefined;
    const warnings = replicationKeyCursorWarnings(catalog);
    if (warnings.length > 0) {
      const logger = airbyteLogger(session, emitLog);
      for (const warning of warnings) logger.warn(warning);
    }
    await runSync({
      config,
      streams,
      state,
      protocol: airbyteProtocol(extractionCursorStreams(catalog)),
      logger: (writer) => airbyteLogger(session, (line) => writer.message(line)),
      redact: (text) => session.redact(text),
    });
    return EXIT_OK;
  });
}
