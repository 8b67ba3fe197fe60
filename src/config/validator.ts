import { fs } from '../builtins.js';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { configFormats, configAjv, type ConfigValidator } from './config-ajv.js';
import { configSchema } from './schema.js';
import type { StreamDescriptor } from '../catalog/reports.js';

/**
 * The config validator for a report list: the one the build compiled ahead
 * of time (standalone.ts) when it was compiled from this very schema, else
 * one compiled now. Running from the sources (tests), or with a report list
 * of one's own (the in-process API), takes the second way.
 */

/** Where the build writes the precompiled validator: next to this module, in dist/. */
export const PRECOMPILED_VALIDATOR = new URL('./config-validator.generated.cjs', import.meta.url);

/** What the generated module exports (see standalone.ts). */
export interface PrecompiledModule {
  schemaText: string;
  create(formats: ReturnType<typeof configFormats>): ConfigValidator;
}

const require = createRequire(import.meta.url);

/** The precompiled validator, if there is one and it was compiled from `schemaText`. */
export function precompiledValidator(schemaText: string): ConfigValidator | undefined {
  const file = fileURLToPath(PRECOMPILED_VALIDATOR);
  if (!fs.existsSync(file)) return undefined;
  const precompiled = require(file) as PrecompiledModule;
  return precompiled.schemaText === schemaText ? precompiled.create(configFormats()) : undefined;
}

/** Validators by report list: compiling (or even loading) takes longer than validating. */
const validators = new WeakMap<readonly StreamDescriptor[], ConfigValidator>();

export function configValidator(reports: readonly StreamDescriptor[]): ConfigValidator {
  let validator = validators.get(reports);
  if (!validator) {
    const schema = configSchema(reports);
    validator = precompiledValidator(JSON.stringify(schema)) ?? configAjv().compile(schema);
    validators.set(reports, validator);
  }
  return validator;
}
