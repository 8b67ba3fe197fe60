import { fs } from '../../builtins.js';
import type { BatchJournal } from '../../output/batch-journal.js';
import type { Logger } from '../../observe/log.js';
import { RunProgress, type OutputCounts } from './run-progress.js';

export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Where signals come from and how the process ends by one: the process itself, but for tests. */
export interface SignalHost {
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  /** Ends the process by `signal` (its handlers uninstalled, the default action runs). */
  end(signal: NodeJS.Signals): void;
}

/** What a stop does with stdout. */
export interface StopOutput {
  /** Waits until everything the run wrote to stdout was passed on, so a stop after it loses nothing of what went out. */
  flushed(): Promise<void>;
  /**
   * Where the face's log and status lines go to stdout (Airbyte): the run's
   * last lines for the stream a stop cuts short, if any (its INCOMPLETE
   * status), sent after the stop's log line before the process ends.
   * Absent where they do not (Singer): the stop is at once.
   */
  lastWords?: (unfinished: string | undefined) => string[];
  /** Queues `last` as the run's last lines: nothing the run writes after them goes out. */
  seal(last: readonly string[]): void;
  /** Hands the records queued to stdout now: a stop that sends last lines (and logs on stdout) sends them too, and its line must count them. */
  sendQueued(): void;
  /** The records queued and written to stdout so far, for the stop line. */
  counts?: OutputCounts;
}

/** How long a stop waits for its last lines to reach stdout's pipe: a target that stopped reading does not hold the stop up. */
export const LAST_LINES_WAIT_MS = 2_000;

export const PROCESS: SignalHost = {
  on: (signal, listener) => process.on(signal, listener),
  off: (signal, listener) => process.off(signal, listener),
  end: (signal) => process.kill(process.pid, signal),
};

/**
 * What a run does when an orchestrator stops it (SIGTERM, Ctrl-C, a closed
 * terminal): it removes what it wrote and has not announced (a full pass's
 * spool, batch files partial or held back; `unannounced`) and the batch
 * journal, then lets the signal take its default course, so the exit status
 * still says which signal ended the run.
 *
 * One stretch of a run may not be cut short: once ACTIVATE_VERSION is out,
 * the target deletes every row the pass does not send after it, so a stop
 * then would leave the table nearly empty until the next good run. A signal
 * during `unstoppable` waits until that stretch is over (logged, with what
 * remains), then stops the run as above. A second signal does not shorten
 * the wait; SIGKILL, which no process can catch, does.
 */
export class StopSignals {
  /** How far the run got: what the stop line says. */
  readonly progress: RunProgress;
  /** What the run holds that a stop lets go of (the change store's locks): released as the process ends, so the next run starts quietly. */
  private readonly held: Array<() => void> = [];
  private deferral: { what: () => string; signal?: NodeJS.Signals } | undefined;
  private readonly handler = (signal: NodeJS.Signals): void => this.received(signal);

  private stopping = false;

  constructor(
    private readonly unannounced: ReadonlySet<string>,
    private readonly journal: BatchJournal | undefined,
    private readonly logger: Logger,
    private readonly output: StopOutput,
    private readonly host: SignalHost = PROCESS,
  ) {
    this.progress = new RunProgress(output.counts);
    for (const signal of STOP_SIGNALS) host.on(signal, this.handler);
  }

  /** `release` runs when a stop ends the run (synchronously, before the process dies): for what the run holds and must let go of. */
  releaseOnStop(release: () => void): void {
    this.held.push(release);
  }

  /** The run is over: signals take their default course again. */
  uninstall(): void {
    for (const signal of STOP_SIGNALS) this.host.off(signal, this.handler);
  }

  /**
   * Runs `work` to its end whatever signal comes meanwhile; `remaining`
   * says what is left of it, for the line that says why the stop waits.
   * A stop that came during it happens once it is over, failed or not.
   */
  async unstoppable<T>(remaining: () => string, work: () => Promise<T>): Promise<T> {
    this.deferral = { what: remaining };
    try {
      return await work();
    } finally {
      const signal = this.deferral.signal;
      if (signal !== undefined) await this.output.flushed().catch(() => undefined);
      this.deferral = undefined;
      if (signal !== undefined) {
        this.logger.warn(`stopping for ${signal} now that the full pass is sent; the state was not advanced, so the next run makes the pass again`);
        await this.end(signal);
      }
    }
  }

  /**
   * A run that a stop cut short ends by its signal: it neither returns nor
   * fails meanwhile (its STATE and its error would say something else).
   */
  async ended(): Promise<void> {
    if (this.stopping) await NEVER();
  }

  private received(signal: NodeJS.Signals): void {
    const deferral = this.deferral;
    // A second signal while the last lines wait for the pipe: the stop happens now.
    if (this.stopping) return this.stop(signal);
    if (deferral === undefined) {
      // Where the stop's log goes to stdout, it takes the queued records with it: they are counted as handed over.
      if (this.output.lastWords !== undefined) this.output.sendQueued();
      this.logger.warn(`stopping for ${signal}${this.progress.describe()}`);
      void this.end(signal, LAST_LINES_WAIT_MS);
      return;
    }
    const again = deferral.signal !== undefined;
    deferral.signal ??= signal;
    this.logger.warn(`${signal} received${again ? ' again' : ''} after ACTIVATE_VERSION: the stop waits for ${deferral.what()} (the target deletes every row the full pass does not send), then the run stops; SIGKILL would stop it now and leave the table without those rows until the next run`);
  }

  /**
   * Ends the run by `signal`. Where the face speaks on stdout, its last
   * lines (a stream cut short: Airbyte's INCOMPLETE) follow the stop's log
   * line and nothing after them, and the stop waits at most `waitMs` for
   * them to reach the pipe; elsewhere it is at once.
   */
  private async end(signal: NodeJS.Signals, waitMs?: number): Promise<void> {
    this.stopping = true;
    const lastWords = this.output.lastWords;
    if (lastWords !== undefined) {
      this.output.seal(lastWords(this.progress.unfinished));
      await waitAtMost(this.output.flushed().catch(() => undefined), waitMs);
    }
    this.stop(signal);
    // The signal ends the process; nothing of this run may go on meanwhile.
    await NEVER();
  }

  private stop(signal: NodeJS.Signals): void {
    this.uninstall();
    for (const path of this.unannounced) fs.rmSync(path, { recursive: true, force: true });
    this.journal?.close();
    for (const release of this.held) {
      try {
        release();
      } catch {
        // Left behind, as by SIGKILL: the next run takes it over.
      }
    }
    this.host.end(signal);
  }
}

export const NEVER = (): Promise<never> => new Promise<never>(() => undefined);

/** `work`, or `ms` later (when given), whichever is first. */
export async function waitAtMost(work: Promise<void>, ms: number | undefined): Promise<void> {
  if (ms === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
