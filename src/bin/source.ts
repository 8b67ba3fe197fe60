#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=1
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { airbyteCommands } from './airbyte-args.js';
import { airbyteUsage, airbyteUsageError, asksForUsage } from './airbyte-usage.js';
import { EXIT_BAD_INPUT } from '../errors.js';
import { packageVersion } from '../catalog/schemas.js';

/** `source-report-dump`: the connector as an Airbyte source (same as `tap-report-dump airbyte`). */
const argv = hideBin(process.argv);
if (asksForUsage(argv)) {
  process.stdout.write(airbyteUsage(packageVersion()));
} else {
  await airbyteCommands(yargs(argv).scriptName('source-report-dump'), (code) => {
    process.exitCode = code;
  })
    .demandCommand(1)
    .version(packageVersion())
    .strict()
    .help()
    .fail((message, error) => {
      // yargs' own errors (and those of the options' coercions) are usage errors; anything else is a bug to show.
      if (error && error.name !== 'YError') throw error;
      process.stderr.write(`${airbyteUsageError(message ?? error.message, argv)}\n`);
      process.exit(EXIT_BAD_INPUT);
    })
    .parseAsync();
}
