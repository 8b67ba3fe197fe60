import { randomUUID } from 'node:crypto';
import { fs } from '../builtins.js';
import { batchSettings } from '../config/batch.js';
import { configError } from '../errors.js';
import type { Config } from '../config/config.js';
import type { OutputProtocol } from '../output/protocol.js';
import type { BatchRun } from './stream-output.js';

/**
 * The run's batch files, when batch_config is set: the directory exists and
 * is writable before the first request, and the run gets a name part of its
 * own so no file of an earlier run is ever overwritten. The batch file writer
 * (and with it node:zlib and node:fs/promises) is loaded only here, so a run
 * writing RECORD messages does not spend its start-up on it.
 */
export async function batchRun(config: Config, protocol: OutputProtocol): Promise<BatchRun | undefined> {
  const settings = batchSettings(config.batch_config);
  if (settings === undefined) return undefined;
  if (protocol.batch === undefined) refuseBatchConfig(config);
  try {
    fs.mkdirSync(settings.directory, { recursive: true });
    fs.accessSync(settings.directory, fs.constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw configError(`Setting batch_config.storage.root names ${settings.directory}, which cannot be created or written (${code}); choose a directory this user can write.`);
  }
  const { BatchFiles } = await import('../output/batch-files.js');
  return { settings, runId: runId(new Date()), partials: new Set(), Files: BatchFiles };
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * While the run writes batch files: an orchestrator stopping it (SIGTERM,
 * Ctrl-C) has its partial files removed, then the signal takes its default
 * course, so the exit status still says which signal ended the run.
 * Returns the function that uninstalls the handlers.
 */
export function removePartialsOnStop(partials: Set<string>): () => void {
  const stop = (signal: NodeJS.Signals): void => {
    uninstall();
    for (const path of partials) fs.rmSync(path, { force: true });
    process.kill(process.pid, signal);
  };
  const uninstall = (): void => {
    for (const signal of STOP_SIGNALS) process.off(signal, stop);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, stop);
  return uninstall;
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
