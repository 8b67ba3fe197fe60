import { ENV_PREFIX } from './config.js';
import { nearestName } from './nearest-name.js';

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
  const meant = nearestName(upper.slice(ENV_PREFIX.length), [...variables.values()]);
  if (meant === undefined) return '.';
  return `; did you mean ${ENV_PREFIX}${meant.toUpperCase()} (${meant})?`;
}
