import { ensureBuilt } from './build.js';

/**
 * vitest globalSetup: builds dist/ once, before any worker starts, when it is
 * missing or older than src/ (the end-to-end tests spawn dist/src/cli.js).
 * Wire it with `test: { globalSetup: ['test/helpers/global-setup.ts'] }`.
 */
export default async function setup(): Promise<void> {
  await ensureBuilt();
}
