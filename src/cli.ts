#!/usr/bin/env node
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { sandboxCommand } from './sandbox/command.js';

await yargs(hideBin(process.argv))
  .scriptName('tap-report-dump')
  .command(sandboxCommand)
  .demandCommand(1)
  .strict()
  .help()
  .parseAsync();
