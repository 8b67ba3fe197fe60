import { loadConfig, type Config } from './config.js';
import { configSchema } from './schema.js';
import { strayVariableWarnings } from './stray-variables.js';
import type { Session } from '../observe/session.js';

/**
 * Reads a command's config files and environment, and hands the session the
 * secrets and log settings they hold; then warns, in the run's log format,
 * of variables that look like settings but are none.
 */
export function loadRunConfig(paths: readonly string[] | undefined, session: Session, env: NodeJS.ProcessEnv = process.env): Config {
  const config = loadConfig(paths ?? [], env);
  session.adopt(config);
  const warnings = strayVariableWarnings(env, Object.keys(configSchema().properties ?? {}));
  if (warnings.length > 0) {
    const logger = session.logger();
    for (const warning of warnings) logger.warn(warning);
  }
  return config;
}
