import { createHash } from 'node:crypto';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * Where the change store lives: `<root>/<tenant>/<stream>/`. The root is the
 * setting store_directory if set, else `$XDG_STATE_HOME/tap-report-dump`,
 * else `~/.local/state/tap-report-dump` (the XDG base directory rules: state
 * that should survive a restart but is no user document). The tenant folder
 * is named by a digest of the normalised base_url, so one root serves every
 * tenant and the folder names say nothing of the tenant.
 */

const APP = 'tap-report-dump';

/** The variables the default root is read from (process.env in a run; a plain object in tests). */
export interface StoreEnvironment {
  readonly XDG_STATE_HOME?: string;
  readonly HOME?: string;
}

/** The store's root folder, or why there is none (the run then goes on as without a store). */
export function storeRoot(setting: string | undefined, env: StoreEnvironment): string | { unwritable: string } {
  if (setting !== undefined && setting !== '') return resolve(setting);
  // XDG: a relative path in these variables is invalid and is ignored.
  if (isAbsolute(env.XDG_STATE_HOME ?? '')) return join(env.XDG_STATE_HOME as string, APP);
  if (isAbsolute(env.HOME ?? '')) return join(env.HOME as string, '.local', 'state', APP);
  return { unwritable: 'The change store has no folder: neither XDG_STATE_HOME nor HOME names an absolute path; set store_directory to a folder this user can write.' };
}

/**
 * base_url as one tenant: scheme, host (lower case, without a default port)
 * and path without trailing slashes; never credentials, query or fragment
 * (the config refuses them, and none of them names another tenant).
 */
export function normaliseBaseUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

/** The tenant's folder name: 16 hex digits of a SHA-256 of the normalised base_url. */
export function tenantName(baseUrl: string): string {
  return createHash('sha256').update(normaliseBaseUrl(baseUrl)).digest('hex').slice(0, 16);
}

export function tenantFolder(root: string, baseUrl: string): string {
  return join(root, tenantName(baseUrl));
}

/** The stream's folder; a byte of the name that is not a letter, digit, `_` or `-` is written `%XX`, so no name leaves the tenant folder. */
export function streamFolder(tenant: string, stream: string): string {
  const safe = [...Buffer.from(stream, 'utf8')].map((byte) => (/[A-Za-z0-9_-]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
  return join(tenant, safe === '' ? '%' : safe);
}
