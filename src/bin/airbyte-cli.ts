import yargs from 'yargs';
import { airbyteCommands } from './airbyte-args.js';
import { airbyteUsage, airbyteUsageError, asksForUsage } from './airbyte-usage.js';
import { EXIT_BAD_INPUT } from '../errors.js';
import { packageVersion } from '../catalog/schemas.js';

/**
 * The Airbyte face's command line, whichever way it was called
 * (`source-report-dump …` or `tap-report-dump airbyte …`, which is `name`):
 * its usage in sentences when asked or called bare, yargs for the commands,
 * and yargs' usage errors reworded into one line (exit 2).
 */
export async function airbyteCli(name: string, argv: readonly string[]): Promise<void> {
  if (asksForUsage(argv)) {
    process.stdout.write(airbyteUsage(packageVersion(), name));
    return;
  }
  await airbyteCommands(yargs([...argv]).scriptName(name), name, (code) => {
    process.exitCode = code;
  })
    .demandCommand(1)
    .version(packageVersion())
    .strict()
    .help()
    .fail((message, error) => {
      // yargs' own errors (and those of the options' coercions) are usage errors; anything else is a bug to show.
      if (error && error.name !== 'YError') throw error;
      process.stderr.write(`${airbyteUsageError(message ?? error.message, argv, name)}\n`);
      process.exit(EXIT_BAD_INPUT);
    })
    .parseAsync();
}
