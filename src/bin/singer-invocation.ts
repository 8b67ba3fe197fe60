import type { ParseArgsConfig } from 'node:util';
import { parseArgs } from '../builtins.js';
import { pickSingerArgs, pickSyncArgs, SINGER_OPTIONS, SYNC_OPTIONS, type SingerArgs, type SingerOptionSpec, type SyncArgs } from './singer-options.js';

/**
 * The fast path of the command line: the exact Singer-standard invocations
 * orchestrators make on every scheduled run (`--version`, `--about`,
 * `--discover`, `--config … --catalog … --state …`, and the tap's own `sync
 * --config … --catalog … --state …`), read with node:util
 * parseArgs instead of yargs, whose loading alone costs about as much as
 * starting Node. It accepts only what it reads exactly as yargs does and
 * declines (undefined) everything else - other subcommands, --help, unknown or
 * repeated options, values the options' checks refuse - which the yargs CLI
 * then handles, errors and help included, so users see one behaviour.
 */

export type Invocation = { readonly kind: 'version' } | { readonly kind: 'singer'; readonly args: SingerArgs } | { readonly kind: 'sync'; readonly args: SyncArgs };

type OptionTable = Readonly<Record<string, SingerOptionSpec>>;

/** Every option repeatable here, so that a repetition is seen (parseArgs would keep the last value) and can be left to yargs. */
function parseOptions(table: OptionTable): NonNullable<ParseArgsConfig['options']> {
  return Object.fromEntries(Object.entries(table).map(([name, spec]) => [name, { type: spec.type === 'boolean' ? 'boolean' : 'string', multiple: true }]));
}

/** The value yargs would hand the handler for one option given `given` (as listed by parseArgs), or undefined when it is not ours to judge. */
function accepted(spec: SingerOptionSpec, given: ReadonlyArray<string | boolean>): { value: unknown } | undefined {
  if (spec.type === 'boolean') return given.length === 1 && given[0] === true ? { value: true } : undefined;
  if (!spec.array && given.length !== 1) return undefined;
  // yargs reads a value that starts with a dash (`--state -`) as another option, not as the value.
  if (given.some((value) => typeof value !== 'string' || value.startsWith('-'))) return undefined;
  const raw = spec.array ? [...given] : given[0];
  if (spec.choices && !spec.choices.includes(raw as string)) return undefined;
  try {
    return { value: spec.coerce ? spec.coerce(raw) : raw };
  } catch {
    // yargs words the refusal (the same coercion throws there), with its own prefix and exit code.
    return undefined;
  }
}

export function singerInvocation(argv: readonly string[]): Invocation | undefined {
  if (argv.length === 1 && argv[0] === '--version') return { kind: 'version' };
  if (argv.includes('--')) return undefined;
  if (argv[0] === 'sync') {
    const parsed = readOptions(argv.slice(1), SYNC_OPTIONS);
    return parsed && { kind: 'sync', args: pickSyncArgs(parsed) };
  }
  const parsed = readOptions(argv, SINGER_OPTIONS);
  return parsed && { kind: 'singer', args: pickSingerArgs(parsed) };
}

/** The options of `table` as yargs would hand them over, or undefined where yargs may read `argv` otherwise. */
function readOptions(argv: readonly string[], table: OptionTable): Record<string, unknown> | undefined {
  let values: Record<string, Array<string | boolean> | undefined>;
  try {
    ({ values } = parseArgs({ args: [...argv], options: parseOptions(table), strict: true, allowPositionals: false }) as { values: Record<string, Array<string | boolean> | undefined> });
  } catch {
    return undefined;
  }
  const parsed: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(table)) {
    const given = values[name];
    if (given === undefined) continue;
    const result = accepted(spec, given);
    if (!result) return undefined;
    parsed[name] = result.value;
  }
  return parsed;
}
