import { fs } from '../builtins.js';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: the nearest folder above this module holding package.json (works from src/ and dist/src/). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(join(dir, 'package.json')) || !fs.existsSync(join(dir, 'schemas'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('tap-report-dump: cannot find the package root holding schemas/');
    dir = parent;
  }
  return dir;
}

const ROOT = packageRoot();

export type JsonSchema = {
  type?: string | string[];
  format?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  [key: string]: unknown;
};

const cache = new Map<string, JsonSchema>();

/**
 * The schemas catalog entries declare, by stream name: the service's fields
 * as discovery learnt them, which the key_properties and replication_key
 * settings name. An entry without a name or an object of properties declares
 * none.
 */
export function schemasByStream(entries: Iterable<readonly [name: unknown, schema: JsonSchema | undefined]>): Map<string, JsonSchema> {
  const declared = new Map<string, JsonSchema>();
  for (const [name, schema] of entries) {
    if (typeof name === 'string' && schema && typeof schema === 'object' && schema.properties && typeof schema.properties === 'object') declared.set(name, schema);
  }
  return declared;
}

/** A JSON Schema file of the package's schemas/ folder, or at an absolute path. */
export function loadSchema(file: string): JsonSchema {
  let schema = cache.get(file);
  if (!schema) {
    schema = JSON.parse(fs.readFileSync(isAbsolute(file) ? file : join(ROOT, 'schemas', file), 'utf8')) as JsonSchema;
    cache.set(file, schema);
  }
  // Callers may narrow the schema for a selection; hand out a copy.
  return structuredClone(schema);
}

interface PackageJson {
  version: string;
  engines: { node: string };
  homepage?: string;
}

function packageJson(): PackageJson {
  return JSON.parse(fs.readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;
}

export function packageVersion(): string {
  return packageJson().version;
}

/** The package's public documentation page, when package.json names one (`homepage`). */
export function packageHomepage(): string | undefined {
  return packageJson().homepage;
}

/** The Node.js versions package.json's `engines` accepts, e.g. `^22.12.0 || ^24.0.0 || >=26.0.0`. */
export function supportedNodeRange(): string {
  return packageJson().engines.node;
}
