import { nearestName } from '../config/nearest-name.js';

/**
 * yargs' "Unknown arguments: catlog, x" in words: each name as it was
 * written (`--catlog`, without a value given with `=`, which may be a
 * secret), and the known command or option nearest to it when it looks like
 * a typo of one: `--catlog, -x is not a command or option of tap-report-dump
 * (did you mean --catalog?)`. `known`: commands bare, options with `--`.
 */
export function unknownArguments(names: string, argv: readonly string[], program: string, known: readonly string[]): string {
  const written = names.split(', ').map((name) => argv.map((arg) => arg.split('=')[0]).find((arg) => arg.replace(/^-+/, '') === name) ?? name);
  // A known option yargs calls unknown is one the command does not take (`spec --config`), or one it never reached past an unknown command.
  const strangers = written.filter((name) => !known.includes(name));
  if (strangers.length === 0) return `${written.join(', ')} does not go with ${argv.find((arg) => known.includes(arg) && !arg.startsWith('-')) ?? 'that command'}`;
  const hints = strangers.map((name) => nearest(name, known)).filter((name): name is string => name !== undefined);
  const hint = hints.length === 0 ? '' : ` (did you mean ${hints.join(', ')}?)`;
  return `${strangers.join(', ')} is not a command or option of ${program}${hint}`;
}

/** The known name (as written, dashes and all) a typo of `name` most likely meant. */
function nearest(name: string, known: readonly string[]): string | undefined {
  const bare = new Map(known.map((candidate) => [candidate.replace(/^-+/, ''), candidate]));
  const hit = nearestName(name.replace(/^-+/, ''), bare.keys());
  return hit === undefined ? undefined : bare.get(hit);
}
