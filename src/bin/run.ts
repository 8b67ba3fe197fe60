import { describeError, EXIT_RUNTIME, TapError } from '../errors.js';
import { Session } from '../observe/session.js';

/** Runs a handler and turns its outcome into the exit code; errors become one redacted line on stderr. */
export async function run(handler: (session: Session) => Promise<number>): Promise<void> {
  const session = new Session();
  try {
    process.exitCode = await handler(session);
  } catch (error) {
    const code = error instanceof TapError ? error.exitCode : EXIT_RUNTIME;
    const prefix = error instanceof TapError ? 'error' : 'unexpected error';
    // The stack (debug only) comes first, so the one-line error stays the last line of stderr.
    if (process.env.TAP_REPORT_DUMP_DEBUG && error instanceof Error && error.stack) process.stderr.write(`${session.redact(error.stack)}\n`);
    process.stderr.write(session.fatalLine(`tap-report-dump: ${prefix}: ${describeError(error)}`));
    process.exitCode = code;
  }
}
