#!/usr/bin/env -S node --max-semi-space-size=2
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { sandboxCommand } from '../../sandbox/command.js';
import { aboutCommand, checkCommand, discoverCommand, syncCommand } from '../singer/commands.js';
import { airbyteCommands } from './airbyte-args.js';
import { describeError, EXIT_BAD_INPUT, EXIT_RUNTIME, TapError } from '../errors.js';
import { Session } from '../observe/session.js';
import { onePath, paths } from './file-options.js';
import { packageVersion } from '../catalog/schemas.js';

/** Runs a handler and turns its outcome into the exit code; errors become one redacted line on stderr. */
async function run(handler: (session: Session) => Promise<number>): Promise<void> {
  const session = new Session();
  try {
    process.exitCode = await handler(session);
  } catch (error) {
    const code = error instanceof TapError ? error.exitCode : EXIT_RUNTIME;
    const prefix = error instanceof TapError ? 'error' : 'unexpected error';
    // The stack (debug only) comes first, so the one-line error stays the last line of stderr.
    if (process.env.TAP_REPORT_DUMP_DEBUG && error instanceof Error && error.stack) process.stderr.write(`${session.redact(error.stack)}\n`);
    process.stderr.write(session.fatalLine(`tap-report-dump: ${prefix}: ${describeError(error)}`));
    process.exitCode = code;
  }
}

const configOption = {
  type: 'string',
  array: true,
  coerce: paths('--config'),
  description: 'Config JSON file; repeat to merge several (later wins). TAP_REPORT_DUMP_<SETTING> variables override files.',
} as const;

function withConfig<T>(y: Argv<T>) {
  return y.option('config', configOption);
}

await yargs(hideBin(process.argv))
  .scriptName('tap-report-dump')
  .usage('$0 [command] [options]\n\nSinger tap for the report data dump API. With no command it behaves like a Singer tap: --discover, or sync with --catalog/--properties and --state.')
  .command(
    '$0',
    'Singer-standard invocation (--discover, --about, or sync)',
    (y) =>
      withConfig(y)
        .option('discover', { type: 'boolean', description: 'Print the catalog and exit' })
        .option('catalog', { type: 'string', coerce: onePath('--catalog'), description: 'Catalog file selecting streams and fields' })
        .option('properties', { type: 'string', coerce: onePath('--properties'), description: 'Older name of --catalog' })
        .option('state', { type: 'string', coerce: onePath('--state'), description: 'State file from a previous run' })
        .option('about', { type: 'boolean', description: 'Print name, capabilities and settings' })
        .option('format', { choices: ['json', 'markdown'] as const, description: 'Format of --about' }),
    (argv) =>
      run((session) => {
        if (argv.about) return aboutCommand(argv.format);
        if (argv.discover) return discoverCommand(session, argv.config);
        return syncCommand(session, argv.config, argv.catalog ?? argv.properties, argv.state);
      }),
  )
  .command(
    'discover',
    'Print the catalog of streams, schemas and metadata',
    (y) => withConfig(y),
    (argv) => run((session) => discoverCommand(session, argv.config)),
  )
  .command(
    'sync',
    'Sync the selected streams: Singer messages on stdout',
    (y) =>
      withConfig(y)
        .option('catalog', { type: 'string', coerce: onePath('--catalog'), description: 'Catalog file selecting streams and fields (default: every stream)' })
        .option('state', { type: 'string', coerce: onePath('--state'), description: 'State file from a previous run' }),
    (argv) => run((session) => syncCommand(session, argv.config, argv.catalog, argv.state)),
  )
  .command(
    'check',
    'Check reachability, the token and the scope of each selected dump without downloading it',
    (y) => withConfig(y).option('catalog', { type: 'string', coerce: onePath('--catalog'), description: 'Catalog file selecting streams' }),
    (argv) => run((session) => checkCommand(session, argv.config, argv.catalog)),
  )
  .command(
    'demo',
    'Start the sandbox in-process and sync both streams from it (what npm start runs)',
    (y) => y.option('records', { type: 'number', default: 2000, description: 'Records per stream' }),
    // Loaded on demand: a sync never pays for the sandbox's modules.
    (argv) => run(async (session) => (await import('./demo.js')).demoCommand(session, argv.records)),
  )
  .command('airbyte', 'Run as an Airbyte source: airbyte spec | check | discover | read', (y) =>
    airbyteCommands(y, (code) => {
      process.exitCode = code;
    }).demandCommand(1),
  )
  .command(sandboxCommand)
  .version(packageVersion())
  .strict()
  .help()
  .fail((message, error) => {
    // yargs' own errors (and those of the options' coercions) are usage errors; anything else is a bug to show.
    if (error && error.name !== 'YError') throw error;
    process.stderr.write(`tap-report-dump: error: ${message ?? error.message}. See tap-report-dump --help.\n`);
    process.exit(EXIT_BAD_INPUT);
  })
  .parseAsync();
