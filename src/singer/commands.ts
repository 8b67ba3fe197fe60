import { loadConfig, type Config } from '../config/config.js';
import { defaultSelection, discover, readCatalogFile, selectStreams, type SelectedStream } from './catalog.js';
import { readStateFile, type TapState } from '../state.js';
import { createClient, loggerFor, runSync } from '../sync/run.js';
import { about, aboutMarkdown } from './about.js';
import { checkStreams } from '../sync/check.js';
import { EXIT_OK, EXIT_RUNTIME } from '../errors.js';
import { redact, registerSecret, setRunLogFormat } from '../observe/log.js';

/** Handlers behind the CLI; each returns the process exit code. */

function write(text: string): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(text, (error) => (error ? reject(error) : resolve())));
}

export function configFrom(paths: readonly string[] | undefined): Config {
  const config = loadConfig(paths ?? []);
  registerSecret(config.access_token);
  setRunLogFormat(config.log_format);
  return config;
}

function selection(config: Config, catalogPath: string | undefined): SelectedStream[] {
  return catalogPath ? selectStreams(readCatalogFile(catalogPath), config) : defaultSelection(config);
}

export async function discoverCommand(configPaths: readonly string[] | undefined): Promise<number> {
  // Discovery needs no credentials: the catalog comes from the packaged schemas.
  const config = configPaths && configPaths.length > 0 ? configFrom(configPaths) : { key_properties: {} };
  await write(`${JSON.stringify(discover(config), null, 2)}\n`);
  return EXIT_OK;
}

export async function syncCommand(configPaths: readonly string[] | undefined, catalogPath: string | undefined, statePath: string | undefined): Promise<number> {
  const config = configFrom(configPaths);
  const streams = selection(config, catalogPath);
  const state: TapState | undefined = statePath ? readStateFile(statePath) : undefined;
  await runSync({ config, streams, state });
  return EXIT_OK;
}

export async function checkCommand(configPaths: readonly string[] | undefined, catalogPath: string | undefined): Promise<number> {
  const config = configFrom(configPaths);
  const logger = loggerFor(config);
  const client = createClient(config, logger);
  try {
    const results = await checkStreams(config, client, selection(config, catalogPath));
    for (const result of results) await write(redact(`${result.stream}: ${result.ok ? 'OK' : 'FAILED'} - ${result.message}\n`));
    return results.every((r) => r.ok) ? EXIT_OK : EXIT_RUNTIME;
  } finally {
    await client.close();
  }
}

export async function aboutCommand(format: string | undefined): Promise<number> {
  await write(format === 'markdown' ? aboutMarkdown() : `${JSON.stringify(about(), null, 2)}\n`);
  return EXIT_OK;
}
