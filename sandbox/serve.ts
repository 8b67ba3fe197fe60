import { DEMO_TOKEN, parseTokenList, parseTokenSpec, type TokenGrant } from './auth.js';
import { parseByteRange, type Faults } from './faults.js';
import type { Sandbox } from './api.js';
import type { SandboxOptions } from './options.js';
import type { LayoutName } from './layout.js';
import type { OrderName } from './order.js';

/** The options of `tap-report-dump sandbox` (command.ts declares them to yargs). */
export interface SandboxArgs {
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
  'simulate-days': number;
  anchor?: string;
  verbose: boolean;
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
    simulateDays: args['simulate-days'],
    anchor: args.anchor ?? null,
    verbose: args.verbose,
  };
}

/** Why the sandbox could not start, in a sentence: the port taken or not a port, or the error's own words. */
function startFailure(error: unknown, args: SandboxArgs): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') return `port ${args.port} on ${args.host} is already in use (another sandbox?); give another with --port, or --port 0 for any free port`;
  if (code === 'EACCES') return `this user may not listen on port ${args.port} of ${args.host}; give a port above 1023 with --port, or --port 0 for any free port`;
  if (code === 'ERR_SOCKET_BAD_PORT') return `--port must be a whole number from 0 to 65535 (0: any free port)`;
  return error instanceof Error ? error.message : String(error);
}

/** Starts the sandbox from the command's options and serves until SIGINT or SIGTERM. */
export async function serve(args: SandboxArgs): Promise<void> {
  const log = (line: string): void => void process.stderr.write(line + '\n');
  let sandbox: Sandbox;
  try {
    sandbox = await (await import('./server.js')).startSandbox({ ...optionsFromArgs(args, process.env), log });
  } catch (error) {
    // Configuration mistakes deserve one line, not a stack trace.
    log(`sandbox: ${startFailure(error, args)}`);
    process.exitCode = 2;
    return;
  }
  // Listening before the URL goes out: a script may send the signal as soon as it has read it.
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      log(`sandbox: ${signal}, closing`);
      sandbox.close().then(resolve, resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
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
  await stopped;
}
