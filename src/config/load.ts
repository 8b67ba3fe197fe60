import { hasObjectFormPersonalData, readRawConfig, resolveConfig, type Config, type UnknownFieldWarning } from './config.js';
import { objectFormWarning } from './personal-data-rules.js';
import { configSchema } from './schema.js';
import { strayVariableWarnings } from './stray-variables.js';
import type { Session } from '../observe/session.js';
import { warnIfUnsupportedNode } from '../observe/node-support.js';

/**
 * Reads a command's config files and environment, and hands the session the
 * secrets and log settings they hold; then, in the log format just learnt,
 * warns when this Node.js is not a supported line (every command that runs
 * against the service comes here once), of variables that look like
 * settings but are none, and of a personal_data in the deprecated object form.
 * `onUnknown`: see UnknownFieldWarning (config.ts).
 */
export function loadRunConfig(paths: readonly string[] | undefined, session: Session, env: NodeJS.ProcessEnv = process.env, onUnknown?: UnknownFieldWarning): Config {
  const raw = readRawConfig(paths ?? [], env);
  const config = resolveConfig(raw, undefined, onUnknown);
  session.adopt(config);
  warnIfUnsupportedNode(session.logger());
  const warnings = strayVariableWarnings(env, Object.keys(configSchema().properties ?? {}));
  if (hasObjectFormPersonalData(raw)) warnings.push(objectFormWarning(config.personal_data));
  if (warnings.length > 0) {
    const logger = session.logger();
    for (const warning of warnings) logger.warn(warning);
  }
  return config;
}
