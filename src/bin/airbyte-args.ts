import type { Argv } from 'yargs';
import { airbyteCheck, airbyteDiscover, airbyteRead, airbyteSpec } from '../airbyte/commands.js';

/** Registers the Airbyte source commands on a yargs instance (used by `tap-report-dump airbyte` and `source-report-dump`). */
export function airbyteCommands<T>(y: Argv<T>, exit: (code: number) => void): Argv<T> {
  return y
    .command('spec', 'Print the connector specification (SPEC)', {}, async () => exit(await airbyteSpec()))
    .command(
      'check',
      'Check the connection (CONNECTION_STATUS)',
      (c) => c.option('config', { type: 'string', demandOption: true, description: 'Config JSON file' }),
      async (argv) => exit(await airbyteCheck(argv.config)),
    )
    .command(
      'discover',
      'Print the catalog (CATALOG)',
      (c) => c.option('config', { type: 'string', demandOption: true, description: 'Config JSON file' }),
      async (argv) => exit(await airbyteDiscover(argv.config)),
    )
    .command(
      'read',
      'Read records (RECORD, STATE, LOG, TRACE)',
      (c) =>
        c
          .option('config', { type: 'string', demandOption: true, description: 'Config JSON file' })
          .option('catalog', { type: 'string', demandOption: true, description: 'Configured catalog JSON file' })
          .option('state', { type: 'string', description: 'State JSON file (list of per-stream states)' }),
      async (argv) => exit(await airbyteRead(argv.config, argv.catalog, argv.state)),
    );
}
