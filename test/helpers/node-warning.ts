import { nodeSupported } from '../../src/observe/node-support.js';

/**
 * The warning a run that reads a config logs once at its start on a Node.js
 * line the tap does not support (src/observe/node-support.ts). CI runs the
 * suite on the machine's Node.js too, which may be such a line (20): there
 * every such run starts with it. The helpers that run the CLI hand tests its
 * stderr without that one line, so that what they assert about the rest
 * holds on every line; on a supported Node.js they hand it over untouched.
 * The warning itself is tested with the Node.js version faked
 * (test/e2e/node-support.test.ts).
 */

const WARNING = /^.*Node\.js \S+ is not a line tap-report-dump supports \(package\.json engines: .*$/;

export const RUNNER_SUPPORTED = nodeSupported(process.versions.node);

/** How many lines of `stderr` are the warning. */
export function nodeWarnings(stderr: string): number {
  return stderr.split(/\r?\n/).filter((line) => WARNING.test(line)).length;
}

/** `stderr` as tests read it: on an unsupported runner, without the warning; a run that warned more than once fails here. */
export function withoutNodeWarning(stderr: string): string {
  if (RUNNER_SUPPORTED) return stderr;
  if (nodeWarnings(stderr) > 1) throw new Error(`the run warned about the Node.js version more than once:\n${stderr}`);
  return stderr.replace(/^.*Node\.js \S+ is not a line tap-report-dump supports \(package\.json engines: .*(\r?\n|$)/m, '');
}
