import yargs, { type Argv } from 'yargs';
import { SANDBOX_OPTIONS, sandboxCommand } from '../../sandbox/command.js';
import { EXIT_BAD_INPUT } from '../errors.js';
import { onePath } from './file-options.js';
import { unknownArguments } from './unknown-arguments.js';
import { packageVersion } from '../catalog/schemas.js';
import { run } from './run.js';
import { runSinger, runSync } from './singer-run.js';
import { SINGER_OPTIONS, SYNC_OPTIONS, pickSingerArgs, pickSyncArgs, type SingerArgs, type SyncArgs } from './singer-options.js';

/**
 * The full command line (yargs): subcommands, help, and every usage error.
 * The Singer-standard invocations usually take the fast path
 * (singer-invocation.ts) and never load this module; whatever that path
 * declines lands here.
 */

export interface CliHooks {
  /** Runs a Singer-standard invocation. */
  singer(args: SingerArgs): Promise<void>;
  /** Runs the `sync` subcommand. */
  sync(args: SyncArgs): Promise<void>;
  /** Reports a usage error (yargs' own, or an option's coercion refusing a value); does not return in the real CLI. */
  usageError(message: string): void;
}

export const PROCESS_HOOKS: CliHooks = {
  singer: (args) => run((session) => runSinger(session, args)),
  sync: (args) => run((session) => runSync(session, args)),
  usageError(message) {
    process.stderr.write(`tap-report-dump: error: ${message}. See tap-report-dump --help.\n`);
    process.exit(EXIT_BAD_INPUT);
  },
};

const configOption = SINGER_OPTIONS.config;

function withConfig<T>(y: Argv<T>) {
  return y.option('config', configOption);
}

/** The yargs CLI over `argv` (the arguments after the script); the hooks let a test observe what it would run. */
const COMMANDS = ['discover', 'sync', 'check', 'demo', 'airbyte', 'sandbox'];
const OPTIONS = [...Object.keys(SINGER_OPTIONS), ...Object.keys(SYNC_OPTIONS), 'help', 'version', 'records', 'layout'];

/** `demo --records`: a whole number of records (yargs reads `abc` as NaN), refused as a usage error (exit 2) naming the option. */
function recordCount(value: unknown): number {
  const count = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) throw new Error(`--records must be a whole number of records per stream, such as 2000; got ${JSON.stringify(Array.isArray(value) ? value.join(' ') : String(value))}`);
  return count;
}

/** yargs' usage error, with an unknown command or option named as written and the nearest known one suggested (the sandbox's own options for the sandbox). */
function usageSentence(message: string, argv: readonly string[]): string {
  const unknown = /^Unknown arguments?: (.+)$/.exec(message);
  if (!unknown) return message;
  const options = argv[0] === 'sandbox' ? [...Object.keys(SANDBOX_OPTIONS), 'help'] : OPTIONS;
  return unknownArguments(unknown[1], argv, argv[0] === 'sandbox' ? 'tap-report-dump sandbox' : 'tap-report-dump', [...COMMANDS, ...new Set(options.map((name) => `--${name}`))]);
}

export function tapCli(argv: readonly string[], hooks: CliHooks = PROCESS_HOOKS) {
  return yargs([...argv])
    .scriptName('tap-report-dump')
    .usage('$0 [command] [options]\n\nSinger tap for the report data dump API. With no command it behaves like a Singer tap: --discover, or sync with --catalog/--properties and --state.')
    .command(
      '$0',
      'Singer-standard invocation (--discover, --about, or sync)',
      (y) => y.options(SINGER_OPTIONS),
      (argv) => hooks.singer(pickSingerArgs(argv)),
    )
    .command(
      'discover',
      'Print the catalog of streams, schemas and metadata',
      (y) => withConfig(y),
      (argv) => run(async (session) => (await import('../singer/commands.js')).discoverCommand(session, argv.config)),
    )
    .command(
      'sync',
      'Sync the selected streams: Singer messages on stdout',
      (y) => y.options(SYNC_OPTIONS),
      (argv) => hooks.sync(pickSyncArgs(argv)),
    )
    .command(
      'check',
      'Check reachability, the token and the scope of each selected dump without downloading it',
      (y) => withConfig(y).option('catalog', { type: 'string', coerce: onePath('--catalog'), description: 'Catalog file selecting streams' }),
      (argv) => run(async (session) => (await import('../singer/commands.js')).checkCommand(session, argv.config, argv.catalog)),
    )
    .command(
      'demo',
      'Start the sandbox in-process and sync both streams from it (what npm start runs)',
      (y) =>
        y
          // No yargs type: it would read `abc` as NaN, and the error should show what was written.
          .option('records', { default: 2000, coerce: recordCount, description: 'Records per stream (a whole number)' })
          .option('layout', { type: 'string', choices: ['packaged', 'snake', 'title', 'epoch'] as const, default: 'packaged' as const, description: 'Sandbox layout to sync from (see the sandbox command)' }),
      // Loaded on demand: a sync never pays for the sandbox's modules.
      (argv) => run(async (session) => (await import('./demo.js')).demoCommand(session, argv.records, argv.layout)),
    )
    // Listed for --help only: tap.ts hands `airbyte …` to the Airbyte face's own command line (airbyte-cli.ts) before yargs is loaded here.
    .command('airbyte', 'Run as an Airbyte source: airbyte spec | check | discover | read (airbyte alone prints its usage)', () => undefined)
    .command(sandboxCommand)
    .version(packageVersion())
    .strict()
    .help()
    .fail((message, error) => {
      // yargs' own errors (and those of the options' coercions) are usage errors; anything else is a bug to show.
      if (error && error.name !== 'YError') throw error;
      hooks.usageError(usageSentence(message ?? error.message, argv));
    });
}
