/**
 * Every failure the tap reports is a TapError: one line naming what is wrong and
 * how to fix it, and the exit code that tells an orchestrator what kind of
 * failure it was.
 */

export const EXIT_OK = 0;
/** A run-time failure: HTTP errors after retries, malformed data, interrupted output. */
export const EXIT_RUNTIME = 1;
/** Bad input: config, state, catalog or command-line arguments. */
export const EXIT_BAD_INPUT = 2;
/** stdout's reader (the target) closed it before the run ended: the tap stopped, the state not advanced. */
export const EXIT_OUTPUT_CLOSED = 3;

export type ErrorKind = 'config' | 'runtime';

/** Whose problem it is, in Airbyte's words: the user's settings, the system, or a passing condition. */
export type FailureType = 'config_error' | 'system_error' | 'transient_error';

export class TapError extends Error {
  readonly exitCode: number;
  readonly kind: ErrorKind;
  readonly failureType: FailureType;
  /** The message in the Airbyte face's words, where they differ: it names the source's config fields where `message` names the tap's config files and TAP_REPORT_DUMP_ variables. */
  readonly airbyteMessage?: string;

  constructor(message: string, kind: ErrorKind, options?: { cause?: unknown; failureType?: FailureType; exitCode?: number; airbyteMessage?: string }) {
    super(message, options);
    this.name = 'TapError';
    this.kind = kind;
    this.exitCode = options?.exitCode ?? (kind === 'config' ? EXIT_BAD_INPUT : EXIT_RUNTIME);
    this.failureType = options?.failureType ?? (kind === 'config' ? 'config_error' : 'system_error');
    if (options?.airbyteMessage !== undefined) this.airbyteMessage = options.airbyteMessage;
  }
}

/** `airbyteMessage`: the message in the Airbyte face's words, when it tells where a setting is set. */
export function configError(message: string, airbyteMessage?: string): TapError {
  return new TapError(message, 'config', { airbyteMessage });
}

export function runtimeError(message: string, cause?: unknown, failureType?: FailureType): TapError {
  return new TapError(message, 'runtime', { cause, failureType });
}

/**
 * stdout's reader went away (a target that crashed or stopped, `| head`):
 * not the tap's failure, and nothing more can be said on stdout, so it is
 * reported on stderr only, by its own exit code.
 */
export class OutputClosedError extends TapError {
  constructor(message: string, cause?: unknown) {
    super(message, 'runtime', { cause, exitCode: EXIT_OUTPUT_CLOSED });
    this.name = 'OutputClosedError';
  }
}

/** What reads a sync's stdout, as the face names it: a Singer target, an Airbyte destination. */
export type StdoutReader = 'target' | 'destination';

/**
 * A sync's write to stdout failed: its reader closed it (EPIPE, a destroyed
 * stream). `records`: how many had gone out; `reader`: what read them.
 */
export function outputClosed(error: NodeJS.ErrnoException, records?: number, reader: StdoutReader = 'target'): OutputClosedError {
  const after = records === undefined ? '' : ` after ${records} records`;
  return new OutputClosedError(
    `Cannot write to stdout (${error.code ?? error.message}): the consumer closed the pipe${after}; the run stopped and the state was not advanced past the last STATE message sent. Check the ${reader}'s log for why it stopped reading.`,
    error,
  );
}

/** A command that keeps no state (check, discover, spec, --about) could not write its answer: it was cut off, and that is all there is to say. */
export function answerCutOff(error: NodeJS.ErrnoException): OutputClosedError {
  return new OutputClosedError(`Cannot write to stdout (${error.code ?? error.message}): the consumer closed the pipe; the output was cut off.`, error);
}

/** One-line description of any thrown value. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.replace(/\s*\n\s*/g, ' ');
  return String(error);
}

