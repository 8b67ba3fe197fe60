import type { Argv } from 'yargs';
import { Session } from '../observe/session.js';
import { onePath } from './file-options.js';
import { oneChoice } from './choice-option.js';
import { DEFAULT_MODES, DESTINATION_SYNC_MODES, SYNC_MODES } from '../airbyte/configured-catalog.js';

/** The Airbyte face's handlers, loaded when an Airbyte command runs (the tap's other commands never need them). */
const airbyte = () => import('../airbyte/commands.js');

/** Registers the Airbyte source commands on a yargs instance (used by `tap-report-dump airbyte` and `source-report-dump`, which is `program`). */
export function airbyteCommands<T>(y: Argv<T>, program: string, exit: (code: number) => void): Argv<T> {
  return y
    .command('spec', 'Print the connector specification (SPEC)', {}, async () => exit(await (await airbyte()).airbyteSpec(new Session(program))))
    .command(
      'check',
      'Check the connection (CONNECTION_STATUS)',
      (c) => c.option('config', { type: 'string', demandOption: true, coerce: onePath('--config'), description: 'Config JSON file' }),
      async (argv) => exit(await (await airbyte()).airbyteCheck(new Session(program), argv.config)),
    )
    .command(
      'discover',
      'Print the catalog (CATALOG)',
      (c) => c.option('config', { type: 'string', demandOption: true, coerce: onePath('--config'), description: 'Config JSON file' }),
      async (argv) => exit(await (await airbyte()).airbyteDiscover(new Session(program), argv.config)),
    )
    .command(
      'read',
      'Read records (RECORD, STATE, LOG, TRACE)',
      (c) =>
        c
          .option('config', { type: 'string', demandOption: true, coerce: onePath('--config'), description: 'Config JSON file' })
          .option('catalog', { type: 'string', demandOption: true, coerce: onePath('--catalog'), description: 'Configured catalog JSON file' })
          .option('state', { type: 'string', coerce: onePath('--state'), description: 'State JSON file (list of per-stream states)' }),
      async (argv) => exit(await (await airbyte()).airbyteRead(new Session(program), argv.config, argv.catalog!, argv.state)),
    )
    .command(
      'configured-catalog',
      'Print the configured catalog made from discover (a ConfiguredAirbyteCatalog, for read)',
      (c) =>
        c
          .option('config', { type: 'string', demandOption: true, coerce: onePath('--config'), description: 'Config JSON file' })
          .option('sync-mode', { type: 'string', coerce: oneChoice('--sync-mode', SYNC_MODES), description: 'incremental (default) or full_refresh' })
          .option('destination-sync-mode', { type: 'string', coerce: oneChoice('--destination-sync-mode', DESTINATION_SYNC_MODES), description: 'append_dedup (default), append or overwrite' }),
      async (argv) =>
        exit(
          await (await airbyte()).airbyteConfiguredCatalog(new Session(program), argv.config, {
            syncMode: argv.syncMode ?? DEFAULT_MODES.syncMode,
            destinationSyncMode: argv.destinationSyncMode ?? DEFAULT_MODES.destinationSyncMode,
          }),
        ),
    );
}
