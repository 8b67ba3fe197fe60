import { unknownArguments } from './unknown-arguments.js';

/**
 * What the Airbyte face says about itself: its usage in sentences, and
 * yargs' usage errors in the same words. `name` is how it was called:
 * `source-report-dump`, or `tap-report-dump airbyte`.
 */

export const SOURCE_NAME = 'source-report-dump';

export function airbyteUsage(version: string, name = SOURCE_NAME): string {
  return `${name} ${version}: the report data dump API as an Airbyte source. Each command writes Airbyte messages on stdout, one JSON object a line.

${name} spec
  Prints the connector's specification (a SPEC message): the config fields a connection sets, the token marked secret.
${name} check --config <config.json>
  Tries the config with one small request per stream and prints a CONNECTION_STATUS message: SUCCEEDED, or FAILED with the reason per stream.
${name} discover --config <config.json>
  Prints the streams, their fields, keys and cursor (a CATALOG message).
${name} read --config <config.json> --catalog <configured_catalog.json> [--state <state.json>]
  Reads the streams the configured catalog selects: RECORD messages, a STATE message after each stream (with its record count), STREAM_STATUS traces (STARTED, RUNNING, COMPLETE, or INCOMPLETE when it fails) and LOG messages. --state takes the states of the last read (a list of per-stream states); without it every stream starts from start_date.
${name} configured-catalog --config <config.json> [--sync-mode incremental|full_refresh] [--destination-sync-mode append_dedup|append|overwrite]
  Prints the configured catalog read takes (a ConfiguredAirbyteCatalog, as the Airbyte platform writes it; not a message: redirect it to a file): every stream discover finds, with the sync mode (incremental by default), the destination sync mode (append_dedup by default), the source's cursor and primary key.

--config is a JSON file of the fields spec lists (base_url and access_token are required). --catalog is a ConfiguredAirbyteCatalog made from discover's streams: configured-catalog writes one.
--about or --help prints this text; --version prints the version.

Exit codes: 0 when the command did its work, a check that answers FAILED included (Airbyte reads the answer, not the code); 1 a run-time failure (the service, the network); 2 bad input: the config, catalog or state file, or the command line; 3 stdout closed by its reader (the destination stopped reading: one line on stderr, no TRACE). A command that fails ends with a TRACE message of type ERROR on stdout saying what is wrong and what to fix (a config field by its name); a command line that this text does not describe, or a configured-catalog that fails, gets one line on stderr instead.
`;
}

/** Whether the arguments ask what the command does: none at all, or --about / --help alone. */
export function asksForUsage(argv: readonly string[]): boolean {
  return argv.length === 0 || (argv.length === 1 && ['--about', '--help', '-h'].includes(argv[0]));
}

const COMMANDS = ['spec', 'check', 'discover', 'read', 'configured-catalog'];
const KNOWN = [...COMMANDS, '--config', '--catalog', '--state', '--sync-mode', '--destination-sync-mode', '--about', '--help', '--version'];

/** yargs' message for the bad command line `argv`, in sentences, and where to read the usage. */
export function airbyteUsageError(message: string, argv: readonly string[], name = SOURCE_NAME): string {
  return `${name}: error: ${sentence(message, argv, name)}. Run ${name} --about for its usage.`;
}

function sentence(message: string, argv: readonly string[], name: string): string {
  const missing = /^Missing required arguments?: (.+)$/.exec(message);
  const command = argv.find((arg) => COMMANDS.includes(arg)) ?? 'the command';
  if (missing) return `${command} needs ${options(missing[1])}, ${missing[1].includes(',') ? 'each the path of a JSON file' : 'the path of a JSON file'}`;
  const unknown = /^Unknown arguments?: (.+)$/.exec(message);
  if (unknown) return `${unknownArguments(unknown[1], argv, name, KNOWN)}; its commands are ${COMMANDS.join(', ')}`;
  if (/^Not enough non-option arguments/.test(message)) return 'no command given: use spec, check, discover, read or configured-catalog';
  if (/^Too many non-option arguments/.test(message)) return 'one command at a time: spec, check, discover, read or configured-catalog, then its options';
  return message.replace(/\.$/, '');
}

/** `config, catalog` as `--config and --catalog`. */
function options(names: string): string {
  const flags = names.split(', ').map((name) => `--${name}`);
  return flags.length === 1 ? flags[0] : `${flags.slice(0, -1).join(', ')} and ${flags.at(-1)}`;
}
