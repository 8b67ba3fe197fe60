import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './build.js';
import { tempFolder } from './files.js';
import { installedCommands } from './reader-shell.js';

/**
 * scripts/run-daily.sh as cron or a systemd timer runs it: by its path, in a
 * folder of its own (the tap's config, the state, the logs), with the tap's
 * command on the PATH as an install puts it there and a fake target
 * (fake-target.mjs) in the target's place.
 */

export const RECIPE = join(ROOT, 'scripts', 'run-daily.sh');
const FAKE_TARGET = join(ROOT, 'test', 'helpers', 'fake-target.mjs');

export type TargetMode = 'ok' | 'fail' | 'silent';

/** The fake target's command line, as a user sets --target. */
export function fakeTarget(mode: TargetMode): string {
  return `node ${JSON.stringify(FAKE_TARGET)} ${mode}`;
}

export interface RecipeFolder {
  readonly path: string;
  readonly statePath: string;
  readonly logDir: string;
  /** Writes the tap's config (tap.json) for the service at `baseUrl` with `token`. */
  writeConfig(baseUrl: string, token: string): void;
  /** The state file's bytes, or undefined when there is none. */
  stateBytes(): Buffer | undefined;
}

export function recipeFolder(): RecipeFolder {
  const path = tempFolder('schedule-recipe-');
  const statePath = join(path, 'state.json');
  return {
    path,
    statePath,
    logDir: join(path, 'logs'),
    writeConfig: (baseUrl, token) => writeFileSync(join(path, 'tap.json'), JSON.stringify({ base_url: baseUrl, access_token: token })),
    stateBytes: () => {
      try {
        return readFileSync(statePath);
      } catch {
        return undefined;
      }
    },
  };
}

export interface RecipeRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RecipeOptions {
  /** Where the fake target writes the counts of the message types it read. */
  seenFile?: string;
  /** The fake target waits for this file before it ends. */
  holdFile?: string;
  /** The script's own arguments beyond --target. */
  args?: string[];
  /** More environment, such as the script's RUN_* settings. */
  env?: Record<string, string>;
}

export interface LiveRecipe {
  readonly finished: Promise<RecipeRun>;
}

let commands: string | undefined;

function recipeEnv(options: RecipeOptions): NodeJS.ProcessEnv {
  commands ??= installedCommands();
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('TAP_REPORT_DUMP_') && !key.startsWith('RUN_') && !key.startsWith('FAKE_TARGET_')) env[key] = value;
  env.PATH = `${commands}:${process.env.PATH}`;
  if (options.seenFile !== undefined) env.FAKE_TARGET_SEEN = options.seenFile;
  if (options.holdFile !== undefined) env.FAKE_TARGET_HOLD = options.holdFile;
  return { ...env, ...options.env };
}

/** Starts the recipe with the fake target in `mode`, and returns at once. */
export function startRecipe(folder: RecipeFolder, mode: TargetMode, options: RecipeOptions = {}): LiveRecipe {
  const child = spawn(RECIPE, ['--target', fakeTarget(mode), ...(options.args ?? [])], { cwd: folder.path, env: recipeEnv(options), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const finished = (once(child, 'close') as Promise<[number | null]>).then(([code]) => ({ code, stdout, stderr }));
  return { finished };
}

/** Runs the recipe to its end. */
export function runRecipe(folder: RecipeFolder, mode: TargetMode, options: RecipeOptions = {}): Promise<RecipeRun> {
  return startRecipe(folder, mode, options).finished;
}
