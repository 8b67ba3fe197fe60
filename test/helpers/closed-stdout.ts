import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { CLI, ROOT } from './build.js';
import { withoutNodeWarning } from './node-warning.js';

/**
 * Runs the CLI with stdout closed by its reader before the CLI writes
 * anything, as `| head -0` or a reader that is gone: the first write fails
 * (EPIPE). For what a command says of an answer nobody can read.
 */
export async function runWithClosedStdout(args: readonly string[], bin = CLI): Promise<{ code: number | null; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TAP_REPORT_DUMP_')));
  const child = spawn(process.execPath, [bin, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  // Closed at once: the child starts Node before it can write, so its first write finds no reader.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stderr: withoutNodeWarning(stderr) };
}
