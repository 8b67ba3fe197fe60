import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureBuilt } from './build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder that holds every temp file and folder of the run (helpers/files.ts). */
    tempRoot: string;
  }
}

/**
 * vitest globalSetup: builds dist/ once, before any worker starts, when it is
 * missing or older than src/ (the end-to-end tests spawn dist/src/cli.js),
 * and owns the tests' temp root: made here, removed after the whole run,
 * with the change store's default folder (XDG_STATE_HOME) inside it. The
 * workers cannot remove their own temp files: vitest ends them with SIGTERM,
 * so their exit handlers never run.
 * Wire it with `test: { globalSetup: ['test/helpers/global-setup.ts'] }`.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  await ensureBuilt();
  const tempRoot = mkdtempSync(join(tmpdir(), 'tap-e2e-'));
  project.provide('tempRoot', tempRoot);
  // The change store's default folder, for every run the tests make (workers and the CLI children inherit it): never the user's own.
  process.env.XDG_STATE_HOME = join(tempRoot, 'state-home');
  return () => rmSync(tempRoot, { recursive: true, force: true });
}
