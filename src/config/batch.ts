import { tmpdir } from 'node:os';
import { resolve, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configError } from '../errors.js';

/** batch_config as the config file spells it (the Meltano SDK's shape). */
export interface BatchConfig {
  encoding?: { format: 'jsonl'; compression?: 'gzip' | 'none' };
  storage?: { root?: string; prefix?: string; params?: Record<string, unknown> };
  batch_size?: number;
}

/** Where and how batch files are written, resolved once at start. */
export interface BatchSettings {
  directory: string;
  prefix: string;
  compression: 'gzip' | 'none';
  batchSize: number;
}

export const DEFAULT_BATCH_SIZE = 100_000;

/**
 * The directory a storage root names. Like the Meltano SDK: `file://` alone
 * is `singer-sdk` in the temporary directory, `file:///abs` an absolute
 * path, `file://rel/path` a path from the working directory.
 */
function directoryOf(root: string, cwd: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(root)?.[1];
  if (scheme === undefined || scheme.toLowerCase() !== 'file' || !root.slice(5).startsWith('//')) {
    const named = scheme === undefined ? 'a path without a scheme' : `${scheme}:// storage`;
    throw configError(`Setting batch_config.storage.root must be a file:// URL of a directory (e.g. file:///var/lib/batches); ${named} is not supported. Point it at a local or mounted directory.`);
  }
  const rest = root.slice('file://'.length);
  if (rest === '') return join(tmpdir(), 'singer-sdk');
  if (rest.startsWith('/')) return fileURLToPath(`file://${rest}`);
  return resolve(cwd, decodeURIComponent(rest));
}

/** batch_config resolved with its defaults, or undefined when it is not set; a config error names what is wrong. */
export function batchSettings(config: BatchConfig | undefined, cwd = process.cwd()): BatchSettings | undefined {
  if (config === undefined) return undefined;
  const prefix = config.storage?.prefix ?? '';
  if (/[/\\]/.test(prefix)) throw configError('Setting batch_config.storage.prefix is put before each file name and must not contain / or \\; put folders in batch_config.storage.root.');
  if (Object.keys(config.storage?.params ?? {}).length > 0) throw configError('Setting batch_config.storage.params is for remote storage; a file:// root takes none: remove it.');
  return {
    directory: directoryOf(config.storage?.root ?? 'file://', cwd),
    prefix,
    compression: config.encoding?.compression ?? 'gzip',
    batchSize: config.batch_size ?? DEFAULT_BATCH_SIZE,
  };
}
