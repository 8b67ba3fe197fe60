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

export type ErrorKind = 'config' | 'runtime';

/** Whose problem it is, in Airbyte's words: the user's settings, the system, or a passing condition. */
export type FailureType = 'config_error' | 'system_error' | 'transient_error';

export class TapError extends Error {
  readonly exitCode: number;
  readonly kind: ErrorKind;
  readonly failureType: FailureType;
  /** The message in the Airbyte face's words, where they differ: it names the source's config fields where `message` names the tap's config files and TAP_REPORT_DUMP_ variables. */
  readonly airbyteMessage?: string;

  constructor(message: string, kind: ErrorKind, options?: { cause?: unknown; failureType?: FailureType; airbyteMessage?: string }) {
    super(message, options);
    this.name = 'TapError';
    this.kind = kind;
    this.exitCode = kind === 'config' ? EXIT_BAD_INPUT : EXIT_RUNTIME;
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

/** One-line description of any thrown value. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.replace(/\s*\n\s*/g, ' ');
  return String(error);
}

