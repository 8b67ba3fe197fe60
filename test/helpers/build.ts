import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Makes sure dist/ holds a build of the current src/ before the end-to-end
 * tests spawn the real CLI. `npm test` builds first; this covers
 * `npx vitest run test/tap-` after an edit. Several vitest workers may call it
 * at once, so the build runs under a lock directory.
 */

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = join(ROOT, 'dist', 'src', 'bin', 'tap.js');
/** The second command, `source-report-dump` (the Airbyte source). */
export const SOURCE_CLI = join(ROOT, 'dist', 'src', 'bin', 'source.js');
/** The build's second step (after tsc) writes the config validator compiled ahead of time. */
const VALIDATOR_WRITER = join(ROOT, 'dist', 'src', 'bin', 'build-config-validator.js');
const PRECOMPILED_VALIDATOR = join(ROOT, 'dist', 'src', 'config', 'config-validator.generated.cjs');

const LOCK = join(tmpdir(), `tap-report-dump-build-${createHash('sha1').update(ROOT).digest('hex').slice(0, 12)}.lock`);
const LOCK_STALE_MS = 180_000;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** True when some src/**.ts or sandbox/**.ts has no compiled .js in dist/ or is newer than it, or the precompiled config validator is missing. */
export function buildIsStale(): boolean {
  if (!existsSync(CLI) || !existsSync(PRECOMPILED_VALIDATOR)) return true;
  for (const source of [...sourceFiles(join(ROOT, 'src')), ...sourceFiles(join(ROOT, 'sandbox'))]) {
    const compiled = join(ROOT, 'dist', relative(ROOT, source)).replace(/\.ts$/, '.js');
    if (!existsSync(compiled)) return true;
    if (statSync(compiled).mtimeMs < statSync(source).mtimeMs) return true;
  }
  return false;
}

function build(): void {
  try {
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.json')], {
      cwd: ROOT,
      stdio: 'pipe',
    });
  } catch (error) {
    // tsc still emits on type errors; only a missing CLI is fatal.
    if (!existsSync(CLI)) {
      const output = (error as { stdout?: Buffer }).stdout?.toString() ?? String(error);
      throw new Error(`building the tap failed and ${CLI} is missing:\n${output}`);
    }
  }
  execFileSync(process.execPath, [VALIDATOR_WRITER], { cwd: ROOT, stdio: 'pipe' });
}

function tryLock(): boolean {
  try {
    mkdirSync(LOCK);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    try {
      if (Date.now() - statSync(LOCK).mtimeMs > LOCK_STALE_MS) rmSync(LOCK, { recursive: true, force: true });
    } catch {
      // gone meanwhile
    }
    return false;
  }
}

/** Builds dist/ when it is missing or older than src/. Safe to call from every test file. */
export async function ensureBuilt(): Promise<void> {
  const deadline = Date.now() + LOCK_STALE_MS;
  while (buildIsStale()) {
    if (tryLock()) {
      try {
        if (buildIsStale()) build();
      } finally {
        rmSync(LOCK, { recursive: true, force: true });
      }
      return;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for another worker's build (lock ${LOCK})`);
    await sleep(200);
  }
}
