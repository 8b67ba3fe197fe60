import { fs } from '../builtins.js';
import { configError } from '../errors.js';
import { jsonErrorLocation } from './json-location.js';

/**
 * Reads a JSON input file (config, catalog, state). Failures are config
 * errors naming the file and where it is broken, never quoting its content.
 * An empty or blank file reads as undefined. A leading byte-order mark
 * (Windows editors write one) is not content: it is skipped, as the tap
 * never writes one and an editor does not show it.
 */
export function readJsonFile(path: string, what: string, fix: { unreadable: string; invalid: string }): unknown {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (error) {
    throw configError(`Cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? error}. ${fix.unreadable}`);
  }
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    const title = what.charAt(0).toUpperCase() + what.slice(1);
    throw configError(`${title} ${path} is not valid JSON (${jsonErrorLocation(text)}). ${fix.invalid}`);
  }
}
