import { loadConfig, type Config } from './config.js';
import type { Session } from '../observe/session.js';
import { warnIfUnsupportedNode } from '../observe/node-support.js';

/**
 * Reads a command's config files and environment, and hands the session the
 * secrets and log settings they hold; then, in the log format just learnt,
 * warns when this Node.js is not a supported line (every command that runs
 * against the service comes here once).
 */
export function loadRunConfig(paths: readonly string[] | undefined, session: Session): Config {
  const config = loadConfig(paths ?? []);
  session.adopt(config);
  warnIfUnsupportedNode(session.logger());
  return config;
}
