import { loadConfig, type Config } from './config.js';
import type { Session } from '../observe/session.js';

/** Reads a command's config files and environment, and hands the session the secrets and log settings they hold. */
export function loadRunConfig(paths: readonly string[] | undefined, session: Session): Config {
  const config = loadConfig(paths ?? []);
  session.adopt(config);
  return config;
}
