import type { Argv, CommandModule } from 'yargs';
import type { SandboxArgs } from './serve.js';
import type { LayoutName } from './layout.js';

/**
 * `tap-report-dump sandbox`: the command's options. What it runs is in
 * serve.ts, loaded only when the command runs, so that the tap's other
 * commands never load the sandbox's modules.
 */

/** The sandbox's options (also what a misspelt one is compared with). */
export const SANDBOX_OPTIONS = {
  host: { type: 'string', default: '127.0.0.1', describe: 'Interface to listen on' },
  port: { type: 'number', default: 8080, describe: 'TCP port (0: any free port)' },
  seed: { type: 'number', default: 1, describe: 'Seed of the synthetic data' },
  'training-records': { type: 'number', default: 2000, describe: 'Initial number of training records' },
  'phishing-records': { type: 'number', default: 2000, describe: 'Initial number of phishing records' },
  token: {
    type: 'string',
    array: true,
    describe: 'Accepted token as VALUE:SCOPE[,SCOPE...] (repeatable; overrides SANDBOX_TOKENS)',
  },
  'rate-limit': { type: 'number', describe: 'Dump requests allowed per token and window (default: unlimited)' },
  'rate-window': { type: 'number', default: 60, describe: 'Rate-limit window in seconds' },
  'fail-rate': { type: 'number', default: 0, describe: 'Fraction of dump requests answered with an injected error' },
  'fail-statuses': { type: 'string', default: '500,503', describe: 'Statuses of injected errors, comma-separated' },
  'retry-after': { type: 'number', describe: 'Retry-After seconds on injected 503 answers' },
  'drop-after-bytes': { type: 'string', describe: 'Cut the connection after K body bytes, or after MIN-MAX bytes' },
  'drop-rate': { type: 'number', default: 1, describe: 'Fraction of responses cut when --drop-after-bytes is set' },
  'latency-ms': { type: 'number', default: 0, describe: 'Delay before answering dump requests' },
  'body-bytes-per-second': { type: 'number', describe: 'Throttle response bodies to this rate' },
  'fault-seed': { type: 'number', default: 1, describe: 'Seed of the fault-injection PRNG' },
  prerender: { type: 'boolean', default: false, describe: 'Serve unfiltered dumps from pre-rendered temp files' },
  'prerender-gzip': { type: 'boolean', default: false, describe: 'With --prerender, also pre-render gzip variants' },
  'date-offset': { type: 'string', default: 'Z', describe: 'Write record dates with this UTC offset, e.g. +02:00' },
  'extra-fields': { type: 'boolean', default: false, describe: 'Add the undeclared field "department" to every record' },
  layout: { type: 'string', choices: ['packaged', 'snake', 'title', 'epoch'] satisfies LayoutName[], default: 'packaged', describe: 'Field names, dates, booleans and CSV delimiter of the records served' },
  'layout-timezone': { type: 'string', default: 'UTC', describe: 'Time zone of the dates the snake layout writes without a zone, and of the days a date alone names in its filters' },
  order: { type: 'string', choices: ['generated', 'ascending', 'descending', 'shuffled', 'grouped'], default: 'generated', describe: 'Order of the rows in every dump: generated, ascending/descending by the replication key, shuffled (seeded), grouped by user' },
  anchor: { type: 'string', describe: 'Pin the dates: the synthetic history ends before this day (YYYY-MM-DD; 2026-01-01 gives the dates of earlier versions). Default: they end the day before today (UTC)' },
  'simulate-days': { type: 'number', default: 0, describe: 'Simulated days of churn (joiners, progress, completions, corrections, reassignments, phishing waves, late events, leavers) before serving; more with POST /_admin/simulate?days=N' },
  verbose: { type: 'boolean', default: false, describe: 'Log one line per request on stderr' },
} as const;

function builder(yargs: Argv): Argv<SandboxArgs> {
  return yargs
    .usage('$0 sandbox [options]\n\nStarts the reference report dump service. Prints its base URL as the first line on stdout.')
    .options(SANDBOX_OPTIONS) as unknown as Argv<SandboxArgs>;
}

export const sandboxCommand: CommandModule<object, SandboxArgs> = {
  command: 'sandbox',
  describe: 'Start the reference report dump service',
  builder,
  handler: async (args) => (await import('./serve.js')).serve(args),
};
