/**
 * yargs coercions for options that name files: an empty value (`--state ""`,
 * often an unset shell variable) or a repeated one is an error, not silently
 * a run without the file. yargs turns a thrown error into its one-line
 * failure with exit code 2.
 */

/** For a single-file option: exactly one non-empty path. */
export function onePath(flag: string): (value: unknown) => string | undefined {
  return (value) => {
    if (value === undefined) return undefined;
    if (Array.isArray(value)) throw new Error(`${flag} was given ${value.length} times; give it once`);
    if (typeof value !== 'string' || value.trim() === '') throw new Error(`${flag} needs a file path, got an empty value (an unset variable?)`);
    return value;
  };
}

/** For a repeatable file option: every path non-empty. */
export function paths(flag: string): (value: unknown) => string[] | undefined {
  return (value) => {
    if (value === undefined) return undefined;
    const list = Array.isArray(value) ? value : [value];
    // `--config` last, or before another option (`--config $UNSET --discover`): yargs hands over no value at all.
    if (list.length === 0) throw new Error(`${flag} needs the path of a JSON file, got none (an unset variable?)`);
    if (list.some((v) => typeof v !== 'string' || v.trim() === '')) throw new Error(`${flag} needs a file path, got an empty value (an unset variable?)`);
    return list as string[];
  };
}
