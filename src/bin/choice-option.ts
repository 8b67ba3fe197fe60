import { nearestName } from '../config/nearest-name.js';

/**
 * A yargs coercion for an option that takes one of a few words: anything else
 * is a one-line error naming the option, the words it takes and, for a typo,
 * the one it most likely meant (yargs' own `choices` error spans lines).
 */
export function oneChoice<T extends string>(flag: string, choices: readonly T[]): (value: unknown) => T | undefined {
  return (value) => {
    if (value === undefined) return undefined;
    if (Array.isArray(value)) throw new Error(`${flag} was given ${value.length} times; give it once`);
    if (typeof value === 'string' && (choices as readonly string[]).includes(value)) return value as T;
    const near = typeof value === 'string' ? nearestName(value, choices) : undefined;
    const given = typeof value === 'string' && /^[\w-]{1,40}$/.test(value) ? `is ${value}` : 'is not a word it takes';
    throw new Error(`${flag} ${given}${near === undefined ? '' : ` (did you mean ${near}?)`}: use ${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`);
  };
}
