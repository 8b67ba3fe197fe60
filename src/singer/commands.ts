import { loadRunConfig } from '../config/load.js';
import { discoverStreams } from '../catalog/discovery.js';
import { defaultSelection, type SelectedStream } from '../catalog/selection.js';
import { readStateFile, type TapState } from '../state.js';
import { createClient, runSync } from '../sync/run.js';
import { checkStreams } from '../sync/check.js';
import { EXIT_OK, EXIT_RUNTIME } from '../errors.js';
import { readCatalogFile, selectFromCatalog, singerCatalog } from './catalog.js';
import { singer } from './messages.js';
import { about, aboutMarkdown } from './about.js';
import type { Config } from '../config/config.js';
import type { Session } from '../observe/session.js';

/** The Singer face: the handlers behind the CLI; each returns the process exit code. */

function write(text: string): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(text, (error) => (error ? reject(error) : resolve())));
}

function selection(config: Config, catalogPath: string | undefined): SelectedStream[] {
  const offered = discoverStreams(config);
  return catalogPath ? selectFromCatalog(readCatalogFile(catalogPath), offered) : defaultSelection(offered);
}

export async function discoverCommand(session: Session, configPaths: readonly string[] | undefined): Promise<number> {
  // Discovery needs no credentials: the catalog comes from the packaged schemas.
  const settings = configPaths && configPaths.length > 0 ? loadRunConfig(configPaths, session) : { key_properties: {} };
  await write(`${JSON.stringify(singerCatalog(discoverStreams(settings)), null, 2)}\n`);
  return EXIT_OK;
}

export async function syncCommand(session: Session, configPaths: readonly string[] | undefined, catalogPath: string | undefined, statePath: string | undefined): Promise<number> {
  const config = loadRunConfig(configPaths, session);
  const streams = selection(config, catalogPath);
  const state: TapState | undefined = statePath ? readStateFile(statePath) : undefined;
  await runSync({ config, streams, state, protocol: singer, logger: session.logger(), redact: (text) => session.redact(text) });
  return EXIT_OK;
}

export async function checkCommand(session: Session, configPaths: readonly string[] | undefined, catalogPath: string | undefined): Promise<number> {
  const config = loadRunConfig(configPaths, session);
  const client = createClient(config, session.logger(), (text) => session.redact(text));
  try {
    const results = await checkStreams(config, client, selection(config, catalogPath));
    for (const result of results) await write(session.redact(`${result.stream}: ${result.ok ? 'OK' : 'FAILED'} - ${result.message}\n`));
    return results.every((r) => r.ok) ? EXIT_OK : EXIT_RUNTIME;
  } finally {
    await client.close();
  }
}

export async function aboutCommand(format: string | undefined): Promise<number> {
  await write(format === 'markdown' ? aboutMarkdown() : `${JSON.stringify(about(), null, 2)}\n`);
  return EXIT_OK;
}
