import { supportedNodeRange } from '../catalog/schemas.js';
import type { Logger } from './log.js';

/**
 * Whether this Node.js is one of the lines the tap supports (package.json's
 * `engines`), and the warning a run logs once at its start when it is not:
 * npm only warns about `engines` at install time, and not at all for a
 * checkout, so a tap left on an end-of-life line would otherwise run on
 * silently.
 */

type Version = readonly [number, number, number];

function parseVersion(text: string): Version {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(text.trim());
  if (!match) throw new Error(`not a Node.js version: ${text}`);
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

function atLeast(version: Version, floor: Version): boolean {
  for (let i = 0; i < 3; i++) if (version[i] !== floor[i]) return version[i] > floor[i];
  return true;
}

/** One alternative of the range: `^X.Y.Z` (that major, from X.Y.Z on) or `>=X.Y.Z`, the only forms `engines` uses here. */
function allows(alternative: string, version: Version): boolean {
  const match = /^(\^|>=)(\d+\.\d+\.\d+)$/.exec(alternative.trim());
  if (!match) throw new Error(`unsupported engines range form: ${alternative.trim()}`);
  const floor = parseVersion(match[2]);
  return atLeast(version, floor) && (match[1] === '>=' || version[0] === floor[0]);
}

export function nodeSupported(version: string, range: string = supportedNodeRange()): boolean {
  const parsed = parseVersion(version);
  return range.split('||').some((alternative) => allows(alternative, parsed));
}

/** The majors the range names, as a user reads them: `22, 24 or 26`. */
function supportedLines(range: string): string {
  const majors = range.split('||').map((alternative) => /(\d+)\./.exec(alternative)![1]);
  return majors.length === 1 ? majors[0] : `${majors.slice(0, -1).join(', ')} or ${majors[majors.length - 1]}`;
}

/** The warning for `version`, or undefined on a supported line. */
export function unsupportedNodeWarning(version: string = process.versions.node, range: string = supportedNodeRange()): string | undefined {
  if (nodeSupported(version, range)) return undefined;
  return `Node.js ${version} is not a line tap-report-dump supports (package.json engines: ${range}); run it on Node.js ${supportedLines(range)}, see the README's Install section.`;
}

/** Logs the warning (in the run's log format, at warn level) when this Node.js is unsupported; call once per run. */
export function warnIfUnsupportedNode(logger: Logger): void {
  const warning = unsupportedNodeWarning();
  if (warning !== undefined) logger.warn(warning);
}
