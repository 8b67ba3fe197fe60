import type { Logger } from '../../observe/log.js';
import { LAST_LINES_WAIT_MS, NEVER, PROCESS, STOP_SIGNALS, waitAtMost, type SignalHost } from './stop-signals.js';

export interface StepStop {
  /** What the step does, as the rest of `stopping for SIGTERM …`: `while discovering the streams (nothing was synced; the state is unchanged)`. */
  doing: string;
  logger: Logger;
  /** Waits until the warning line reached stdout, where logs travel there (Airbyte); at most LAST_LINES_WAIT_MS. */
  flushed?: () => Promise<void>;
  host?: SignalHost;
}

/**
 * Runs `work`, a command's talk with the server outside the sync (discovery,
 * a check), so that a stop by signal meanwhile is one warning line saying
 * what it cut short, and the process still ends by that signal (its exit
 * status says which). The sync has its own handling (stop-signals.ts); the
 * two never overlap, so one signal has one handler: this one is installed
 * only while `work` runs. A stopped step neither returns nor fails: nothing
 * of it may go on to stdout while the process ends.
 */
export async function stoppableStep<T>(stop: StepStop, work: () => Promise<T>): Promise<T> {
  const host = stop.host ?? PROCESS;
  let stopping = false;
  const uninstall = (): void => {
    for (const signal of STOP_SIGNALS) host.off(signal, received);
  };
  const end = (signal: NodeJS.Signals): void => {
    uninstall();
    host.end(signal);
  };
  function received(signal: NodeJS.Signals): void {
    // A second signal while the line waits for stdout: the stop happens now.
    if (stopping) return end(signal);
    stopping = true;
    stop.logger.warn(`stopping for ${signal} ${stop.doing}`);
    void waitAtMost((stop.flushed?.() ?? Promise.resolve()).catch(() => undefined), LAST_LINES_WAIT_MS).then(() => end(signal));
  }
  for (const signal of STOP_SIGNALS) host.on(signal, received);
  let result: T;
  try {
    result = await work();
  } catch (error) {
    if (stopping) await NEVER();
    throw error;
  } finally {
    if (!stopping) uninstall();
  }
  if (stopping) await NEVER();
  return result;
}
