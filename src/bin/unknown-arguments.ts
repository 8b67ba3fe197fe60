import { nearestName } from '../config/nearest-name.js';

/**
 * yargs' "Unknown arguments: catlog, x" in words: each name as it was
 * written (`--catlog`, without a value given with `=`, which may be a
 * secret), and the known command or option nearest to it when it looks like
 * a typo of one: `--catlog, -x is not a command or option of tap-report-dump
 * (did you mean --catalog?)`. `known`: commands bare, options with `--`.
 * An argument is shown only as an option's name or a plain word: a stray
 * value (a token pasted in the wrong place, a short flag with a value glued
 * on, which yargs splits into letters) is said to exist, never repeated.
 */
export function unknownArguments(names: string, argv: readonly string[], program: string, known: readonly string[]): string {
  const listed = names.split(', ');
  // yargs adds the camelCase twin of an unknown --kebab-case option: one argument, named once.
  const twins = new Set(listed.filter((name) => name.includes('-')).map((name) => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())));
  const written = listed.filter((name) => !twins.has(name)).map((name) => shownName(name, argv));
  // A known option yargs calls unknown is one the command does not take (`spec --config`), or one it never reached past an unknown command.
  const strangers = written.filter((name) => !known.includes(name));
  if (strangers.length === 0) return `${written.join(', ')} does not go with ${argv.find((arg) => known.includes(arg) && !arg.startsWith('-')) ?? 'that command'}`;
  const shown = strangers.filter((name) => name !== HIDDEN);
  const hidden = strangers.length - shown.length;
  const hints = shown.map((name) => nearest(name, known)).filter((name): name is string => name !== undefined);
  const hint = hints.length === 0 ? '' : ` (did you mean ${hints.join(', ')}?)`;
  // yargs splits a short flag with a value glued on into letters: one argument on the command line, said once.
  const what = [...shown, ...(hidden === 0 ? [] : ['an argument (not shown: it may be a secret)'])];
  return `${what.join(', ')} is not a command or option of ${program}${hint}`;
}

const HIDDEN = '';

/** `name` as the command line wrote it when it is an option's name or a plain word; HIDDEN otherwise. */
function shownName(name: string, argv: readonly string[]): string {
  const option = argv.map((arg) => arg.split('=')[0]).find((arg) => arg.startsWith('-') && arg.replace(/^-+/, '') === name);
  if (option !== undefined) return option;
  return argv.includes(name) && /^[a-z][a-z-]{0,23}$/.test(name) ? name : HIDDEN;
}

/** The known name (as written, dashes and all) a typo of `name` most likely meant. */
function nearest(name: string, known: readonly string[]): string | undefined {
  const bare = new Map(known.map((candidate) => [candidate.replace(/^-+/, ''), candidate]));
  const hit = nearestName(name.replace(/^-+/, ''), bare.keys());
  return hit === undefined ? undefined : bare.get(hit);
}
