import { discoverStreams } from '../catalog/discovery.js';
import { defaultSelection, type SelectedStream } from '../catalog/selection.js';
import { EXIT_OK, EXIT_RUNTIME } from '../errors.js';
import { writeStdout } from '../output/stdout.js';
import { declaredSchemas, readCatalogFile, selectFromCatalog, singerCatalog } from './catalog.js';
import { REPORTS } from '../catalog/reports.js';
import type { DumpClient } from '../http/client.js';
import type { Logger } from '../observe/log.js';
import type { TapState } from '../state.js';
import type { Config } from '../config/config.js';
import type { Session } from '../observe/session.js';

/**
 * The Singer face: the handlers behind the CLI; each returns the process exit
 * code. Each imports the modules it needs when it runs, so that start-up
 * pays only for them: --about and discover without a config load no HTTP
 * client and no sync engine, a sync from a catalog no live discovery.
 */

function write(text: string): Promise<void> {
  return writeStdout(text);
}

/** The streams of a catalog file, or, without one, every stream as discovery offers it (live by default). */
async function selection(config: Config, catalogPath: string | undefined, client: DumpClient, logger: Logger): Promise<SelectedStream[]> {
  if (catalogPath) return catalogSelection(config, catalogPath);
  const { discoverAsConfigured } = await import('../catalog/live-discovery.js');
  const doing = 'while discovering the streams, before the sync (nothing was synced; the state is unchanged)';
  return defaultSelection(await stoppable(doing, logger, () => discoverAsConfigured(config, client, logger)));
}

/** `work` with a stop by signal meanwhile logged (`stopping for SIGTERM <doing>`) before the process ends by it. */
async function stoppable<T>(doing: string, logger: Logger, work: () => Promise<T>): Promise<T> {
  const { stoppableStep } = await import('../sync/stop/command-stop.js');
  return stoppableStep({ doing, logger }, work);
}

/** The streams a catalog file selects, their key and replication-key settings resolved against the fields the catalog declares. */
function catalogSelection(config: Config, catalogPath: string): SelectedStream[] {
  const catalog = readCatalogFile(catalogPath);
  return selectFromCatalog(catalog, discoverStreams(config, REPORTS, declaredSchemas(catalog)));
}

/** Runs `body` with a client for the config, closed afterwards. */
async function withClient<T>(config: Config, session: Session, body: (client: DumpClient, logger: Logger) => Promise<T>): Promise<T> {
  const { createClient } = await import('../sync/run.js');
  const logger = session.logger();
  const client = createClient(config, logger, (text) => session.redact(text));
  try {
    return await body(client, logger);
  } finally {
    await client.close();
  }
}

/** The config files and environment, validated, with the session told their secrets. */
async function runConfig(session: Session, configPaths: readonly string[] | undefined): Promise<Config> {
  return (await import('../config/load.js')).loadRunConfig(configPaths, session);
}

export async function discoverCommand(session: Session, configPaths: readonly string[] | undefined): Promise<number> {
  // Without a config there is no token: the catalog comes from the packaged schemas.
  if (!configPaths || configPaths.length === 0) {
    await write(`${JSON.stringify(singerCatalog(discoverStreams({})), null, 2)}\n`);
    return EXIT_OK;
  }
  const config = await runConfig(session, configPaths);
  const { discoverAsConfigured } = await import('../catalog/live-discovery.js');
  const doing = 'while discovering the streams (no catalog was written)';
  const streams = await withClient(config, session, (client, logger) => stoppable(doing, logger, () => discoverAsConfigured(config, client, logger)));
  await write(`${JSON.stringify(singerCatalog(streams), null, 2)}\n`);
  return EXIT_OK;
}

export async function syncCommand(session: Session, configPaths: readonly string[] | undefined, catalogPath: string | undefined, statePath: string | undefined): Promise<number> {
  const config = await runConfig(session, configPaths);
  const state: TapState | undefined = statePath ? (await import('../state.js')).readStateFile(statePath) : undefined;
  const [{ runSync }, { singer }] = await Promise.all([import('../sync/run.js'), import('./messages.js')]);
  await withClient(config, session, async (client, logger) => {
    const streams = await selection(config, catalogPath, client, logger);
    await runSync({ config, streams, state, protocol: singer, logger, client, redact: (text) => session.redact(text) });
  });
  return EXIT_OK;
}

export async function checkCommand(session: Session, configPaths: readonly string[] | undefined, catalogPath: string | undefined): Promise<number> {
  const config = await runConfig(session, configPaths);
  const { checkStreams } = await import('../sync/check.js');
  // check needs no field names: only the streams to request.
  const descriptors = catalogPath ? catalogSelection(config, catalogPath).map((s) => s.descriptor) : REPORTS;
  const logger = session.logger();
  const results = await stoppable('while checking the streams (no result was written)', logger, () => checkStreams(config, descriptors, logger, (text) => session.redact(text)));
  for (const result of results) await write(session.redact(`${result.stream}: ${result.ok ? 'OK' : 'FAILED'} - ${result.message}\n`));
  return results.every((r) => r.ok) ? EXIT_OK : EXIT_RUNTIME;
}

export async function aboutCommand(format: string | undefined): Promise<number> {
  if (format === 'meltano') {
    await write((await import('./meltano.js')).meltanoDefinition());
    return EXIT_OK;
  }
  const { about, aboutMarkdown } = await import('./about.js');
  await write(format === 'markdown' ? aboutMarkdown() : `${JSON.stringify(about(), null, 2)}\n`);
  return EXIT_OK;
}
