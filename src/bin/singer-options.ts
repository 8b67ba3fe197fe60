import { onePath, paths } from './file-options.js';

/** The subset of yargs' option settings the table uses; the fast path understands exactly these. */
export interface SingerOptionSpec {
  readonly type?: 'string' | 'boolean';
  /** Repeatable: yargs hands the coercion every value as a list. */
  readonly array?: boolean;
  /** Checks and converts the value; a throw is a usage error. */
  readonly coerce?: (value: unknown) => unknown;
  readonly choices?: readonly string[];
  readonly description: string;
}

/**
 * The options of the Singer-standard invocation (`tap-report-dump --config …
 * --catalog … --state …`, `--discover`, `--about`), defined once: the yargs
 * CLI registers this table as it is, and the fast path
 * (singer-invocation.ts) derives its node:util parseArgs configuration and
 * its checks from it, so the two cannot drift apart.
 */
export const SINGER_OPTIONS = {
  config: {
    type: 'string',
    array: true,
    coerce: paths('--config'),
    description: 'Config JSON file; repeat to merge several (later wins); ENV for none (the environment alone, as Meltano SDK taps take it). TAP_REPORT_DUMP_<SETTING> variables override files.',
  },
  discover: { type: 'boolean', description: 'Print the catalog and exit' },
  catalog: { type: 'string', coerce: onePath('--catalog'), description: 'Catalog file selecting streams and fields' },
  properties: { type: 'string', coerce: onePath('--properties'), description: 'Older name of --catalog' },
  state: { type: 'string', coerce: onePath('--state'), description: 'State file from a previous run' },
  about: { type: 'boolean', description: 'Print name, capabilities and settings' },
  format: { choices: ['json', 'markdown', 'meltano'], description: 'Format of --about (meltano: the plugin definition for meltano.yml)' },
} as const satisfies Record<string, SingerOptionSpec>;

export type SingerOptionName = keyof typeof SINGER_OPTIONS;

/** What one Singer-standard invocation asks for, whichever parser read it. */
export interface SingerArgs {
  config?: string[];
  discover?: boolean;
  catalog?: string;
  properties?: string;
  state?: string;
  about?: boolean;
  format?: 'json' | 'markdown' | 'meltano';
}

/**
 * The options of the `sync` subcommand: the Singer sync's file options under
 * their own names, with --catalog optional (every stream without it). Also
 * read by both parsers.
 */
export const SYNC_OPTIONS = {
  config: SINGER_OPTIONS.config,
  catalog: { ...SINGER_OPTIONS.catalog, description: 'Catalog file selecting streams and fields (default: every stream)' },
  state: SINGER_OPTIONS.state,
} as const satisfies Record<string, SingerOptionSpec>;

/** What one `sync` subcommand asks for, whichever parser read it. */
export interface SyncArgs {
  config?: string[];
  catalog?: string;
  state?: string;
}

/** The options of `table` that a parser set (yargs adds `_`, `$0` and camelCase twins; undefined means not given). */
function pickArgs(table: Readonly<Record<string, SingerOptionSpec>>, parsed: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const name of Object.keys(table)) if (parsed[name] !== undefined) args[name] = parsed[name];
  return args;
}

export function pickSingerArgs(parsed: Readonly<Record<string, unknown>>): SingerArgs {
  return pickArgs(SINGER_OPTIONS, parsed) as SingerArgs;
}

export function pickSyncArgs(parsed: Readonly<Record<string, unknown>>): SyncArgs {
  return pickArgs(SYNC_OPTIONS, parsed) as SyncArgs;
}
