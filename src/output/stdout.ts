import { answerCutOff } from '../errors.js';

/**
 * Writes `text` (the answer of a command that keeps no state: check,
 * discover, spec, --about) to stdout and waits until it was handed on. A
 * reader that closed stdout (`| head`) makes this an OutputClosedError saying
 * the answer was cut off, instead of an 'error' event nobody listens to,
 * which Node would turn into an uncaught exception with a stack trace.
 */
export function writeStdout(text: string, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException): void => reject(answerCutOff(error));
    // Kept when the write fails: the stream's error event comes after the callback, and must find a listener.
    out.once('error', failed);
    out.write(text, (error) => {
      if (error) return failed(error);
      out.off('error', failed);
      resolve();
    });
  });
}
