import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { fs } from '../../builtins.js';
import { batchSettings } from '../../config/batch.js';
import { configError } from '../../errors.js';
import type { Config } from '../../config/config.js';
import type { OutputProtocol } from '../../output/protocol.js';
import type { Logger } from '../../observe/log.js';
import type { BatchRun } from './stream-output.js';

/**
 * The run's batch files, when batch_config is set: the directory exists and
 * is writable before the first request, files an earlier run wrote but never
 * announced before it died are removed, and the run gets a name part of its
 * own so no file of an earlier run is ever overwritten. The batch file writer
 * (and with it node:zlib and node:fs/promises) is loaded only here, so a run
 * writing RECORD messages does not spend its start-up on it.
 */
export async function batchRun(config: Config, protocol: OutputProtocol, logger: Logger, unannounced: Set<string>): Promise<BatchRun | undefined> {
  const settings = batchSettings(config.batch_config);
  if (settings === undefined) return undefined;
  if (protocol.batch === undefined) refuseBatchConfig(config);
  try {
    makePrivateDirectory(settings.directory);
    fs.accessSync(settings.directory, fs.constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw configError(`Setting batch_config.storage.root names ${settings.directory}, which cannot be created or written (${code}); choose a directory this user can write.`);
  }
  const [{ BatchFiles }, { BatchJournal, removeOrphans }] = await Promise.all([import('../../output/batch-files.js'), import('../../output/batch-journal.js')]);
  const id = runId(new Date());
  // The run's own journal first: its time on the volume is what the leases of other runs are read against.
  const journal = new BatchJournal(settings.directory, settings.prefix, id);
  const cleanup = removeOrphans(settings.directory, settings.prefix, journal);
  if (cleanup.runs.length > 0) {
    logger.info(`batch files: removed ${cleanup.files} file(s) that ${cleanup.runs.length} earlier run(s) (${cleanup.runs.join(', ')}) wrote but never announced before they died`);
  }
  return { settings, runId: id, unannounced, journal, Files: BatchFiles };
}

/** Directories the tap creates are owner-only whatever the umask (it can only take bits away); one that exists is left as its operator set it. */
function makePrivateDirectory(directory: string): void {
  const first = fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
  if (first === undefined) return;
  for (let dir = directory; ; dir = dirname(dir)) {
    fs.chmodSync(dir, 0o700);
    if (dir === first || dirname(dir) === dir) return;
  }
}

/** Sorts by start time, in UTC; the random part keeps two runs in one second apart. */
function runId(startedAt: Date): string {
  const stamp = startedAt.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomUUID().slice(0, 8)}`;
}

/** For protocols without a BATCH message (Airbyte): batch_config set is a config error, not silently ignored. */
export function refuseBatchConfig(config: Config): void {
  if (config.batch_config !== undefined) throw configError('Setting batch_config is for Singer targets: the Airbyte protocol has no BATCH message. Remove batch_config from this config.');
}
