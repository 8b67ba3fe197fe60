import { ENV_PREFIX } from './config.js';

/**
 * Environment variables that look like settings but are none: a misspelt
 * `TAP_REPORT_DUMP_STRAT_DATE` is ignored, so the run goes on without the
 * setting it was meant to be, as silently as a misspelt config key is loud
 * (that one is an error). Each gets a warning naming it, and the setting it
 * most likely meant when one is close.
 */

/** Variables with the prefix that the tap reads and that are no setting. */
const KNOWN = new Set([`${ENV_PREFIX}DEBUG`]);

/**
 * `TAP_REPORT_DUMP__SELECT` and the like (a double underscore) are Meltano's
 * extras for the plugin, which Meltano exports with the settings: not meant
 * for the tap.
 */
const MELTANO_EXTRA = `${ENV_PREFIX}_`;

/** The warnings for `env`, given the setting names (`start_date`); names only, never a value. */
export function strayVariableWarnings(env: NodeJS.ProcessEnv, settings: readonly string[]): string[] {
  const variables = new Map(settings.map((name) => [`${ENV_PREFIX}${name.toUpperCase()}`, name]));
  const warnings: string[] = [];
  for (const variable of Object.keys(env).sort()) {
    const upper = variable.toUpperCase();
    if (!upper.startsWith(ENV_PREFIX) || upper.startsWith(MELTANO_EXTRA) || KNOWN.has(upper)) continue;
    if (variable === upper && variables.has(variable)) continue;
    warnings.push(`Environment variable ${variable} is not a setting and is ignored${suggestion(upper, variables)} tap-report-dump --about lists every setting; each is read from ${ENV_PREFIX}<SETTING> in upper case.`);
  }
  return warnings;
}

/** How the warning's first sentence ends: the setting meant, when one is close. */
function suggestion(upper: string, variables: ReadonlyMap<string, string>): string {
  const exact = variables.get(upper);
  if (exact !== undefined) return ` (names are upper case: ${upper}, for ${exact}).`;
  const name = upper.slice(ENV_PREFIX.length);
  let best: { variable: string; distance: number } | undefined;
  for (const variable of variables.keys()) {
    const distance = editDistance(name, variable.slice(ENV_PREFIX.length));
    if (best === undefined || distance < best.distance) best = { variable, distance };
  }
  // Close: a slip of a key or two, not another word.
  if (best === undefined || best.distance > Math.min(2, Math.floor(name.length / 3))) return '.';
  return `; did you mean ${best.variable} (${variables.get(best.variable)})?`;
}

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}
