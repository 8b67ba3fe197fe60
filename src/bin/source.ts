#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=1
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { airbyteCommands } from './airbyte-args.js';
import { EXIT_BAD_INPUT } from '../errors.js';
import { packageVersion } from '../catalog/schemas.js';

/** `source-report-dump`: the connector as an Airbyte source (same as `tap-report-dump airbyte`). */
await airbyteCommands(yargs(hideBin(process.argv)).scriptName('source-report-dump'), (code) => {
  process.exitCode = code;
})
  .demandCommand(1)
  .version(packageVersion())
  .strict()
  .help()
  .fail((message, error) => {
    // yargs' own errors (and those of the options' coercions) are usage errors; anything else is a bug to show.
    if (error && error.name !== 'YError') throw error;
    process.stderr.write(`source-report-dump: error: ${message ?? error.message}. See source-report-dump --help.\n`);
    process.exit(EXIT_BAD_INPUT);
  })
  .parseAsync();
