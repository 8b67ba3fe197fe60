import type { Argv, CommandModule } from 'yargs';
import { DEMO_TOKEN, parseTokenList, parseTokenSpec, type TokenGrant } from './auth.js';
import { parseByteRange, type Faults } from './faults.js';
import type { Sandbox } from './api.js';
import type { SandboxOptions } from './options.js';
import type { LayoutName } from './layout.js';
import type { OrderName } from './order.js';

interface SandboxArgs {
  host: string;
  port: number;
  seed: number;
  'training-records': number;
  'phishing-records': number;
  token?: string[];
  'rate-limit'?: number;
  'rate-window': number;
  'fail-rate': number;
  'fail-statuses': string;
  'retry-after'?: number;
  'drop-after-bytes'?: string;
  'drop-rate': number;
  'latency-ms': number;
  'body-bytes-per-second'?: number;
  'fault-seed': number;
  prerender: boolean;
  'prerender-gzip': boolean;
  'date-offset': string;
  'extra-fields': boolean;
  layout: string;
  'layout-timezone': string;
  order: string;
  verbose: boolean;
}

function builder(yargs: Argv): Argv<SandboxArgs> {
  return yargs
    .usage('$0 sandbox [options]\n\nStarts the reference report dump service. Prints its base URL as the first line on stdout.')
    .option('host', { type: 'string', default: '127.0.0.1', describe: 'Interface to listen on' })
    .option('port', { type: 'number', default: 8080, describe: 'TCP port (0: any free port)' })
    .option('seed', { type: 'number', default: 1, describe: 'Seed of the synthetic data' })
    .option('training-records', { type: 'number', default: 2000, describe: 'Initial number of training records' })
    .option('phishing-records', { type: 'number', default: 2000, describe: 'Initial number of phishing records' })
    .option('token', {
      type: 'string',
      array: true,
      describe: 'Accepted token as VALUE:SCOPE[,SCOPE...] (repeatable; overrides SANDBOX_TOKENS)',
    })
    .option('rate-limit', { type: 'number', describe: 'Dump requests allowed per token and window (default: unlimited)' })
    .option('rate-window', { type: 'number', default: 60, describe: 'Rate-limit window in seconds' })
    .option('fail-rate', { type: 'number', default: 0, describe: 'Fraction of dump requests answered with an injected error' })
    .option('fail-statuses', { type: 'string', default: '500,503', describe: 'Statuses of injected errors, comma-separated' })
    .option('retry-after', { type: 'number', describe: 'Retry-After seconds on injected 503 answers' })
    .option('drop-after-bytes', { type: 'string', describe: 'Cut the connection after K body bytes, or after MIN-MAX bytes' })
    .option('drop-rate', { type: 'number', default: 1, describe: 'Fraction of responses cut when --drop-after-bytes is set' })
    .option('latency-ms', { type: 'number', default: 0, describe: 'Delay before answering dump requests' })
    .option('body-bytes-per-second', { type: 'number', describe: 'Throttle response bodies to this rate' })
    .option('fault-seed', { type: 'number', default: 1, describe: 'Seed of the fault-injection PRNG' })
    .option('prerender', { type: 'boolean', default: false, describe: 'Serve unfiltered dumps from pre-rendered temp files' })
    .option('prerender-gzip', { type: 'boolean', default: false, describe: 'With --prerender, also pre-render gzip variants' })
    .option('date-offset', { type: 'string', default: 'Z', describe: 'Write record dates with this UTC offset, e.g. +02:00' })
    .option('extra-fields', { type: 'boolean', default: false, describe: 'Add the undeclared field "department" to every record' })
    .option('layout', { type: 'string', choices: ['packaged', 'snake', 'title'], default: 'packaged', describe: 'Field names, dates, booleans and CSV delimiter of the records served' })
    .option('layout-timezone', { type: 'string', default: 'UTC', describe: 'Time zone of the dates the snake layout writes without a zone' })
    .option('order', { type: 'string', choices: ['generated', 'ascending', 'descending', 'shuffled', 'grouped'], default: 'generated', describe: 'Order of the rows in every dump: generated, ascending/descending by the replication key, shuffled (seeded), grouped by user' })
    .option('verbose', { type: 'boolean', default: false, describe: 'Log one line per request on stderr' }) as unknown as Argv<SandboxArgs>;
}

/** --token flags win over SANDBOX_TOKENS; neither means the demo token. */
export function resolveTokens(flags: readonly string[] | undefined, env: string | undefined): TokenGrant[] {
  if (flags && flags.length > 0) return flags.map(parseTokenSpec);
  if (env && env.trim() !== '') return parseTokenList(env);
  return [];
}

export function optionsFromArgs(args: SandboxArgs, env: NodeJS.ProcessEnv): Partial<SandboxOptions> {
  const faults: Partial<Faults> = {
    failRate: args['fail-rate'],
    failStatuses: args['fail-statuses'].split(',').map((s) => Number(s.trim())),
    retryAfterSeconds: args['retry-after'] ?? null,
    dropAfterBytes: args['drop-after-bytes'] === undefined ? null : parseByteRange(args['drop-after-bytes']),
    dropRate: args['drop-rate'],
    latencyMs: args['latency-ms'],
    bodyBytesPerSecond: args['body-bytes-per-second'] ?? null,
    seed: args['fault-seed'],
  };
  return {
    host: args.host,
    port: args.port,
    seed: args.seed,
    trainingRecords: args['training-records'],
    phishingRecords: args['phishing-records'],
    tokens: resolveTokens(args.token, env.SANDBOX_TOKENS),
    rateLimit: args['rate-limit'] === undefined ? null : { requests: args['rate-limit'], windowSeconds: args['rate-window'] },
    faults,
    prerender: args.prerender,
    prerenderGzip: args['prerender-gzip'],
    dateOffset: args['date-offset'],
    extraFields: args['extra-fields'],
    layout: args.layout as LayoutName,
    layoutTimeZone: args['layout-timezone'],
    order: args.order as OrderName,
    verbose: args.verbose,
  };
}

export const sandboxCommand: CommandModule<object, SandboxArgs> = {
  command: 'sandbox',
  describe: 'Start the reference report dump service',
  builder,
  handler: async (args) => {
    const log = (line: string): void => void process.stderr.write(line + '\n');
    let sandbox: Sandbox;
    try {
      sandbox = await (await import('./server.js')).startSandbox({ ...optionsFromArgs(args, process.env), log });
    } catch (error) {
      // Configuration mistakes deserve one line, not a stack trace.
      log(`sandbox: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 2;
      return;
    }
    // The first stdout line is the contract with scripts: the base URL and nothing else.
    process.stdout.write(sandbox.url + '\n');
    const o = sandbox.options;
    log(
      `sandbox: serving ${o.trainingRecords} training and ${o.phishingRecords} phishing records (seed ${o.seed}${o.order === 'generated' ? '' : `, ${o.order} order`}) at ${sandbox.url}`,
    );
    if (sandbox.usingDemoToken) {
      log(`sandbox: no tokens configured; accepting the demo token "${DEMO_TOKEN}" with scopes report:training:read, report:phishing:read`);
    }
    log('sandbox: admin endpoints at /_admin/ (loopback only); stop with Ctrl-C');
    await new Promise<void>((resolve) => {
      const stop = (signal: string): void => {
        log(`sandbox: ${signal}, closing`);
        sandbox.close().then(resolve, resolve);
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
    });
  },
};
